//! Dialing engine benchmark against the local stand-ins (`make bench`, release build). Prints
//! `name value` lines:
//! - a task of `CONTACTS` contacts dialled to COMPLETED by the tick, dialer and call-events
//!   handlers (simulated provider, outcomes at once, the clock moved past each retry's
//!   interval): wall time, calls, outcomes recorded per second, and DynamoDB requests per placed
//!   call, split into the dial runs (claim, placing, the run's reads) and the outcomes (call
//!   record read, outcome transaction);
//! - one tick with 1, 100 and 10,000 RUNNING tasks (and as many DRAFT ones beside them): its
//!   DynamoDB requests and time.
//!
//! moto is single-threaded Python, not DynamoDB: times say what the code costs against it; the
//! request counts are what AWS would see.

use outbound::auth::Tenant;
use outbound::dialing::lambda::DialQueue;
use outbound::dialing::plan::ManualClock;
use outbound::dialing::settings::DialerConfig;
use outbound::model::task::{CallCounters, DialSettings};
use outbound::model::{Contact, DataSource, Id, Name, Phone, Task, TaskStatus, Timestamp};
use outbound::store::keys;
use outbound_local::poller;
use outbound_local::stack::Stack;
use std::error::Error;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const CONTACTS: usize = 1_000;

#[tokio::main]
async fn main() -> Result<()> {
    campaign().await?;
    for running in [1, 100, 10_000] {
        tick(running).await?;
    }
    Ok(())
}

fn task(source: &DataSource, status: TaskStatus, n: usize) -> Result<Task> {
    let now = Timestamp::now();
    Ok(Task {
        id: Id::new(),
        name: Name::parse("taskName", &format!("bench {n}"))?,
        description: Default::default(),
        status,
        data_source_id: source.id.clone(),
        contact_count: source.contact_count,
        counters: CallCounters::default(),
        settings: DialSettings::default(),
        created_at: now,
        updated_at: now,
        started_at: None,
        ended_at: None,
        stop_reason: None,
        fail_reason: None,
        in_flight: 0,
        cursor: None,
        revision: 0,
        pending_recall: None,
        pending_recall_at: None,
    })
}

async fn source_with_contacts(
    stack: &Stack,
    tenant: &Tenant,
    contacts: usize,
) -> Result<DataSource> {
    let now = Timestamp::now();
    let source = DataSource {
        id: Id::new(),
        name: Name::parse("dataSourceName", &format!("bench {}", Id::new()))?,
        description: Default::default(),
        contact_count: 0,
        created_at: now,
        updated_at: now,
        active_tasks: 0,
    };
    stack.store.create_data_source(tenant, &source).await?;
    for n in 0..contacts {
        let contact = Contact {
            id: Id::new(),
            data_source_id: source.id.clone(),
            phone: Phone::parse(&format!("+86138{n:08}")).map_err(|e| e.to_string())?,
            fields: Default::default(),
            status: 0,
            call_count: 0,
            created_at: now,
            updated_at: now,
        };
        stack.store.add_contact(tenant, &contact).await?;
    }
    Ok(stack.store.data_source(tenant, &source.id).await?)
}

/// A task of `CONTACTS` contacts from publish to COMPLETED.
async fn campaign() -> Result<()> {
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let source = source_with_contacts(&stack, &tenant, CONTACTS).await?;
    let draft = task(&source, TaskStatus::Draft, 0)?;
    stack.store.create_task(&tenant, &draft).await?;
    outbound::service::task::publish(&stack.store, &tenant, &draft.id).await?;
    let clock = ManualClock::starting_now();
    let mut settings = DialerConfig {
        rate_per_second: 1000,
        max_in_flight: 100,
        max_in_flight_per_task: 100,
        ..DialerConfig::default()
    };
    settings.simulated.delay = Duration::ZERO;
    let engine = stack.engine(settings, clock.clone());
    let sqs = aws_sdk_sqs::Client::new(&stack.sdk);
    let (mut dial_requests, mut outcome_requests) = (0, 0);
    let (mut outcomes, mut outcome_time) = (0, Duration::ZERO);
    let started = Instant::now();
    stack.calls.take();
    loop {
        engine.tick().await?;
        poller::drain(&sqs, &stack.resources.dial_queue_url, |body| {
            DialQueue::Jobs.handle(&engine, body)
        })
        .await?;
        dial_requests += stack.calls.take();
        let recording = Instant::now();
        outcomes += poller::drain(&sqs, &stack.resources.call_events_queue_url, |body| {
            DialQueue::CallEvents.handle(&engine, body)
        })
        .await?;
        outcome_time += recording.elapsed();
        outcome_requests += stack.calls.take();
        // Past every retry's interval (the task's default, 60 s).
        clock.advance(Duration::from_secs(60));
        let now = stack.store.task(&tenant, &draft.id).await?;
        stack.calls.take();
        if now.status == TaskStatus::Completed {
            let calls = now.counters.calls as f64;
            println!(
                "dial_{CONTACTS}_contacts_to_completed_ms {}",
                started.elapsed().as_millis()
            );
            println!("dial_{CONTACTS}_contacts_calls {}", now.counters.calls);
            println!(
                "dial_outcomes_recorded_per_second {:.0}",
                outcomes as f64 / outcome_time.as_secs_f64()
            );
            println!(
                "dial_dynamodb_requests_per_call_dialer {:.2}",
                dial_requests as f64 / calls
            );
            println!(
                "dial_dynamodb_requests_per_call_outcome {:.2}",
                outcome_requests as f64 / calls
            );
            println!(
                "dial_dynamodb_requests_per_call {:.2}",
                (dial_requests + outcome_requests) as f64 / calls
            );
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(1800) {
            return Err("the task did not complete in 30 minutes".into());
        }
    }
}

/// One tick with `running` RUNNING tasks and as many DRAFT tasks beside them.
async fn tick(running: usize) -> Result<()> {
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let source = source_with_contacts(&stack, &tenant, 1).await?;
    let mut items = Vec::new();
    for n in 0..running * 2 {
        let status = if n % 2 == 0 {
            TaskStatus::Running
        } else {
            TaskStatus::Draft
        };
        let task = task(&source, status, n)?;
        let mut item: outbound::store::Item = serde_dynamo::to_item(&task)?;
        let pk = keys::tenant(&tenant);
        let sk = keys::task(&task.id);
        if status == TaskStatus::Running {
            // What publish writes: the running-task index keys.
            item.insert(
                keys::GSI1_PK.into(),
                s(keys::running_shard(keys::shard_of(&sk))),
            );
            item.insert(keys::GSI1_SK.into(), s(format!("{pk}#{sk}")));
        }
        item.insert(keys::PK.into(), s(pk));
        item.insert(keys::SK.into(), s(sk));
        items.push(item);
    }
    outbound_local::stack::put_items(
        &aws_sdk_dynamodb::Client::new(&stack.sdk),
        &stack.resources.table,
        items,
    )
    .await?;
    let engine = stack.engine(DialerConfig::default(), ManualClock::starting_now());
    stack.calls.take();
    let started = Instant::now();
    let report = engine.tick().await?;
    let elapsed = started.elapsed();
    let calls = stack.calls.take();
    assert_eq!(report.running, running);
    println!("tick_{running}_running_ms {}", elapsed.as_millis());
    println!("tick_{running}_running_dynamodb_requests {calls}");
    println!("tick_{running}_running_dial_jobs {}", report.dial_jobs);
    stack.remove_table().await?;
    Ok(())
}

fn s(value: String) -> aws_sdk_dynamodb::types::AttributeValue {
    aws_sdk_dynamodb::types::AttributeValue::S(value)
}

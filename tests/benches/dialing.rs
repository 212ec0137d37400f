//! Dialing engine benchmark against the local stand-ins (`make bench`, release build). Records
//! (`dialing.*`, see [`record`]):
//! - a task of `CONTACTS` contacts dialled to COMPLETED by the tick, dialer and call-events
//!   handlers (simulated provider, outcomes at once, the clock moved past each retry's
//!   interval): wall time, calls, outcomes recorded per second, and per placed call the DynamoDB
//!   requests, items written and write capacity units ([`outbound_tests::capacity`]), split
//!   into `claim` (the claim transaction), `placing` (the transaction that records the provider's
//!   call id), `outcome` (call record read, outcome transaction) and `run` (the tick, and the
//!   dial runs' reads and cursor); and the units per call of the tenant's own partition, of
//!   its busiest task key and of its busiest do-not-call guard key (docs/scaling.md §5.2g);
//! - one tick with 1, 100 and 10,000 RUNNING tasks (and as many DRAFT ones beside them): its
//!   DynamoDB requests, dial jobs and time;
//! - a recall of 30,000 contacts of a RUNNING task, as three recalls of the most one recall
//!   names (10,000): time from the request to applied, and the requests and items written;
//! - 1, 4 and 16 dial runs of one task at once, each given the task's whole share (as the tick
//!   gives every run of a task): calls placed, claims tried and lost per placed call, and the
//!   transactions a placed call took (D23: each run takes its own slice).
//!
//! - 20 resting RUNNING tasks (every contact called, none answered, an hour's callInterval):
//!   the tick's and the dial runs' DynamoDB requests a minute and the dial runs over the hour
//!   until they are due (D23: none);
//!
//! - a national list (D15-D17): contacts over four US zones, half of them outside a window read
//!   in each contact's local time, the tenant's frequency cap and do-not-call list set: items
//!   read per placed call and per dial run until every contact of the open zones is called, and
//!   the claim's requests, items and write units per call with those checks in it.
//!
//! `BENCH_DIALING=cheap` runs only the ticks with 1 and 100 tasks and the resting tasks
//! (`resting` only those), `expensive` only the campaign,
//! the recall, the concurrent runs, the national list and the 10,000-task tick (`make bench`
//! runs those once), `scale` only the recall and the concurrent runs, `concurrent` only the
//! concurrent runs, `national` only the national list, `campaign` only the campaign, anything
//! else all of them.
//!
//! moto is single-threaded Python, not DynamoDB: times say what the code costs against it; the
//! request and unit counts are what AWS would see.

use outbound_adapters::store::keys;
use outbound_app::config::dialing::DialerConfig;
use outbound_local::inbox::DialInbox;
use outbound_local::poller;
use outbound_model::plan::ManualClock;
use outbound_model::task::DialSettings;
use outbound_model::Tenant;
use outbound_model::{Contact, DataSource, Id, Name, Phone, Task, TaskStatus, Timestamp};
use outbound_tests::bench::record;
use outbound_tests::capacity::{sizes_for, wcus_by_partition, ItemKey, WriteRequest, WriteTotals};
use outbound_tests::stack::Stack;
use std::collections::HashMap;
use std::error::Error;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const CONTACTS: usize = 1_000;

#[tokio::main]
async fn main() -> Result<()> {
    let only = std::env::var("BENCH_DIALING").unwrap_or_default();
    let (cheap, expensive, scale) = match only.as_str() {
        "cheap" => (true, false, false),
        "expensive" => (false, true, true),
        "scale" => (false, false, true),
        "national" | "concurrent" | "resting" | "campaign" => (false, false, false),
        _ => (true, true, true),
    };
    if expensive || only == "campaign" {
        campaign().await?;
    }
    if scale {
        recall(3).await?;
    }
    if cheap || only == "resting" {
        resting_tasks(20).await?;
    }
    if scale || only == "concurrent" {
        for runs in [1, 4, 16] {
            concurrent_runs(runs).await?;
        }
    }
    if expensive || only == "national" {
        national().await?;
    }
    let sizes = [(1, cheap), (100, cheap), (10_000, expensive)];
    for (running, _) in sizes.into_iter().filter(|(_, run)| *run) {
        tick(running).await?;
    }
    Ok(())
}

/// What one part of dialing asked of DynamoDB.
#[derive(Default)]
struct Phase {
    requests: usize,
    writes: Vec<WriteRequest>,
}

impl Phase {
    /// Records its requests, items written and WCUs per placed call, as `dialing.<figure>.<name>`.
    fn record(&self, name: &str, calls: f64, stored: &HashMap<ItemKey, usize>) {
        let writes = WriteTotals::of(&self.writes, stored);
        record(
            &format!("dialing.requests_per_call.{name}"),
            self.requests as f64 / calls,
        );
        record(
            &format!("dialing.items_written_per_call.{name}"),
            writes.items as f64 / calls,
        );
        record(
            &format!("dialing.wcu_per_call.{name}"),
            writes.wcus as f64 / calls,
        );
    }
}

fn task(source: &DataSource, status: TaskStatus, n: usize) -> Result<Task> {
    Ok(Task {
        status,
        ..Task::draft(
            Name::parse("taskName", &format!("bench {n}"))?,
            Default::default(),
            (source.id.clone(), source.contact_count),
            DialSettings::default(),
            Timestamp::now(),
        )
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
        contacts_added: 0,
        default_country: None,
        rules_at: None,
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
/// The engine's settings of the campaigns: 100 calls in flight, no rate limit worth the name,
/// outcomes at once.
fn fast_settings() -> DialerConfig {
    DialerConfig {
        max_in_flight: 100,
        max_in_flight_per_task: 100,
        ..outbound_tests::fast_dialing()
    }
}

async fn campaign() -> Result<()> {
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let source = source_with_contacts(&stack, &tenant, CONTACTS).await?;
    let draft = task(&source, TaskStatus::Draft, 0)?;
    stack.store.create_task(&tenant, &draft).await?;
    outbound_service::task::publish(&stack.store, &tenant, &draft.id, Default::default()).await?;
    let clock = ManualClock::starting_now();
    let engine = stack.engine(fast_settings(), clock.clone());
    let sqs = aws_sdk_sqs::Client::new(&stack.sdk);
    let (mut dialing, mut outcome) = (Phase::default(), Phase::default());
    let (mut outcomes, mut outcome_time) = (0, Duration::ZERO);
    let started = Instant::now();
    let counted = |phase: &mut Phase| {
        phase.requests += stack.calls.take();
        phase.writes.extend(stack.calls.writes().take());
    };
    counted(&mut Phase::default());
    loop {
        engine.tick().await?;
        dial_jobs(&sqs, &stack, &engine).await?;
        counted(&mut dialing);
        let recording = Instant::now();
        outcomes += outcomes_of(&sqs, &stack, &engine).await?;
        outcome_time += recording.elapsed();
        counted(&mut outcome);
        // Past every retry's interval (the task's default, 60 s).
        clock.advance(Duration::from_secs(60));
        let now = stack.store.task(&tenant, &draft.id).await?;
        counted(&mut Phase::default());
        if now.status == TaskStatus::Completed {
            let elapsed = started.elapsed();
            let calls = now.counters.calls as f64;
            record(
                &format!("dialing.campaign_{CONTACTS}_contacts_s"),
                elapsed.as_secs_f64(),
            );
            record(
                &format!("dialing.campaign_{CONTACTS}_contacts_calls"),
                calls,
            );
            record(
                "dialing.calls_recorded_per_s",
                (outcomes as f64 / outcome_time.as_secs_f64()).round(),
            );
            let everything: Vec<WriteRequest> = dialing
                .writes
                .iter()
                .chain(&outcome.writes)
                .cloned()
                .collect();
            let client = aws_sdk_dynamodb::Client::new(&stack.sdk);
            let stored = sizes_for(&client, &stack.resources.table, &everything).await?;
            // Write units a placed call costs each key of the tenant (docs/scaling.md §5.2g):
            // its own partition, its busiest task key, its busiest key of any kind.
            let by_key = wcus_by_partition(&everything, &stored);
            let tenant_pk = keys::tenant(&tenant);
            let of = |pick: &dyn Fn(&str) -> bool| {
                by_key
                    .iter()
                    .filter(|(pk, _)| pick(pk))
                    .map(|(_, units)| *units)
                    .max()
                    .unwrap_or(0) as f64
                    / calls
            };
            record(
                "dialing.wcu_per_call.tenant_partition",
                of(&|pk| pk == tenant_pk),
            );
            record(
                "dialing.wcu_per_call.busiest_task_key",
                of(&|pk| pk.starts_with(&format!("{tenant_pk}#TASK#"))),
            );
            record(
                "dialing.wcu_per_call.busiest_guard_key",
                of(&|pk| pk.starts_with(&format!("{tenant_pk}#DNCN#"))),
            );
            let total = Phase {
                requests: dialing.requests + outcome.requests,
                writes: everything,
            };
            // The claim takes a slot of the second's provider rate; placing writes the call record.
            let (claim, rest): (Vec<_>, Vec<_>) = dialing
                .writes
                .into_iter()
                .partition(|w| w.transactional() && w.writes_sort_key("RATE#"));
            let (placing, run): (Vec<_>, Vec<_>) = rest
                .into_iter()
                .partition(|w| w.transactional() && w.writes_partition("CALL#"));
            let run = Phase {
                requests: dialing.requests - claim.len() - placing.len(),
                writes: run,
            };
            let claim = Phase {
                requests: claim.len(),
                writes: claim,
            };
            let placing = Phase {
                requests: placing.len(),
                writes: placing,
            };
            for (name, phase) in [
                ("claim", &claim),
                ("placing", &placing),
                ("outcome", &outcome),
                ("run", &run),
                ("total", &total),
            ] {
                phase.record(name, calls, &stored);
            }
            stack.remove_table().await?;
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(1800) {
            return Err("the task did not complete in 30 minutes".into());
        }
    }
}

/// A RUNNING task over a data source of `contacts` contacts seeded past the service (items
/// only: no phone guards, which neither recall nor dialing reads), the task put as publish
/// leaves it.
async fn seeded_task(stack: &Stack, tenant: &Tenant, contacts: usize) -> Result<(Task, Vec<Id>)> {
    let phone = |n: usize| format!("+86139{n:08}");
    seeded_task_with(stack, tenant, contacts, phone, DialSettings::default()).await
}

/// [`seeded_task`] with the numbers `phone` gives and the task's `settings`.
async fn seeded_task_with(
    stack: &Stack,
    tenant: &Tenant,
    contacts: usize,
    phone: impl Fn(usize) -> String,
    settings: DialSettings,
) -> Result<(Task, Vec<Id>)> {
    let source = source_with_contacts(stack, tenant, 0).await?;
    let now = Timestamp::now();
    let mut ids = Vec::with_capacity(contacts);
    let mut items = Vec::with_capacity(contacts + 1);
    let shards = stack.store.shards(tenant, &source.id).await?;
    for n in 0..contacts {
        let contact = Contact {
            id: Id::new(),
            data_source_id: source.id.clone(),
            phone: Phone::parse(&phone(n)).map_err(|e| e.to_string())?,
            fields: Default::default(),
            status: 0,
            call_count: 0,
            created_at: now,
            updated_at: now,
        };
        let mut item: outbound_adapters::store::Item = serde_dynamo::to_item(&contact)?;
        item.insert(keys::PK.into(), s(shards.of_contact(&contact.id)));
        item.insert(keys::SK.into(), s(keys::contact(&contact.id)));
        items.push(item);
        ids.push(contact.id);
    }
    let mut task = task(&source, TaskStatus::Running, 0)?;
    task.settings = settings;
    items.extend(task_items(tenant, &task)?);
    outbound_tests::stack::put_items(
        &aws_sdk_dynamodb::Client::new(&stack.sdk),
        &stack.resources.table,
        items,
    )
    .await?;
    Ok((task, ids))
}

/// A recall of `parts` x 10,000 contacts (the most one recall names, D12) of a RUNNING task,
/// one after the other, each applied by its recall jobs through the dial queue in chunks of
/// `DIAL_RECALL_CHUNK` (1,000).
async fn recall(parts: usize) -> Result<()> {
    use outbound_service::task::MAX_RECALL_IDS;
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let (task, ids) = seeded_task(&stack, &tenant, parts * MAX_RECALL_IDS).await?;
    let settings = DialerConfig {
        dial_queue_url: Some(stack.resources.dial_queue_url.clone()),
        ..DialerConfig::default()
    };
    let engine = stack.engine(settings, ManualClock::starting_now());
    let sqs = aws_sdk_sqs::Client::new(&stack.sdk);
    stack.calls.take();
    stack.calls.writes().take();
    let (mut jobs, mut answer) = (0, Duration::ZERO);
    let started = Instant::now();
    for part in ids.chunks(MAX_RECALL_IDS) {
        let named: Vec<&str> = part.iter().map(Id::as_str).collect();
        let asked = Instant::now();
        let recalled = outbound_service::task::recall(
            &engine.store,
            &engine.blob,
            &engine.dial_jobs,
            &tenant,
            &task.id,
            &named,
            3,
        )
        .await?;
        answer += asked.elapsed();
        if recalled.len() != part.len() {
            return Err(format!("recalled {} of {}", recalled.len(), part.len()).into());
        }
        jobs += dial_jobs(&sqs, &stack, &engine).await?;
        let now = stack.store.task(&tenant, &task.id).await?;
        if now.pending_recall.is_some() {
            return Err("the recall was not applied by its jobs".into());
        }
    }
    let elapsed = started.elapsed();
    let contacts = ids.len();
    let requests = stack.calls.take();
    let writes = WriteTotals::of(&stack.calls.writes().take(), &HashMap::new());
    record(
        &format!("dialing.recall_{contacts}_contacts_s"),
        elapsed.as_secs_f64(),
    );
    record(
        &format!("dialing.recall_{contacts}_contacts_answer_s"),
        answer.as_secs_f64(),
    );
    record(
        &format!("dialing.recall_{contacts}_contacts_jobs"),
        jobs as f64,
    );
    record(
        &format!("dialing.recall_{contacts}_contacts_requests"),
        requests as f64,
    );
    record(
        &format!("dialing.recall_{contacts}_contacts_items_written"),
        writes.items as f64,
    );
    stack.remove_table().await?;
    Ok(())
}

/// `runs` dial runs of one task at once, each with the task's whole share and the service's
/// caps far above what they place: how many calls they placed (each run one slice), how many
/// claims they tried per call placed, and every transaction a placed call took. moto applies one request at a time, so
/// no transaction there is ever cancelled for a conflict; DynamoDB's would be retried with
/// jittered backoff on top of these.
async fn concurrent_runs(runs: usize) -> Result<()> {
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let (task, ids) = seeded_task(&stack, &tenant, 2_000).await?;
    let mut settings = DialerConfig {
        rate_per_second: 10_000,
        max_in_flight: 10_000,
        max_in_flight_per_task: 10_000,
        ..DialerConfig::default()
    };
    settings.simulated.delay = Duration::from_secs(3600);
    let engine = stack.engine(settings, ManualClock::starting_now());
    stack.calls.take();
    stack.calls.writes().take();
    let started = Instant::now();
    let mut placed = 0;
    let budget = u32::try_from(ids.len())?;
    let reports =
        futures::future::join_all((0..runs).map(|_| engine.dial(&tenant, &task.id, budget))).await;
    for report in reports {
        placed += report?.placed;
    }
    let elapsed = started.elapsed();
    let writes = stack.calls.writes().take();
    let claims = writes
        .iter()
        .filter(|w| w.transactional() && w.writes_sort_key("RATE#"))
        .count();
    let transactions = writes.iter().filter(|w| w.transactional()).count();
    let requests = stack.calls.take();
    if placed == 0 {
        return Err("no run placed a call".into());
    }
    let per_call = |n: usize| n as f64 / placed as f64;
    record(
        &format!("dialing.concurrent_{runs}_runs.placed"),
        placed as f64,
    );
    record(
        &format!("dialing.concurrent_{runs}_runs.calls_per_s"),
        (placed as f64 / elapsed.as_secs_f64()).round(),
    );
    record(
        &format!("dialing.concurrent_{runs}_runs.claims_tried_per_call"),
        per_call(claims),
    );
    record(
        &format!("dialing.concurrent_{runs}_runs.claims_lost_per_call"),
        per_call(claims - placed),
    );
    record(
        &format!("dialing.concurrent_{runs}_runs.transactions_per_call"),
        per_call(transactions),
    );
    record(
        &format!("dialing.concurrent_{runs}_runs.requests_per_call"),
        per_call(requests),
    );
    stack.remove_table().await?;
    Ok(())
}

/// `tasks` RUNNING tasks of 10 contacts each whose every contact was called and not answered,
/// with an hour's callInterval: what the tick and the dial runs cost each minute of that hour
/// (D23: a resting task gets no dial run until a contact is due).
async fn resting_tasks(tasks: usize) -> Result<()> {
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    let settings = DialSettings {
        call_interval: 3600,
        ..DialSettings::default()
    };
    for n in 0..tasks {
        let phone = move |i: usize| format!("+86137{:04}{i:04}", n);
        seeded_task_with(&stack, &tenant, 10, phone, settings.clone()).await?;
    }
    let clock = ManualClock::starting_now();
    let mut config = fast_settings();
    config.max_in_flight_per_task = 10;
    config.simulated.mix.success = 0;
    config.simulated.mix.failed = 0;
    let engine = stack.engine(config, clock.clone());
    let sqs = aws_sdk_sqs::Client::new(&stack.sdk);
    // Every contact called once (the shares go to the oldest tasks first, D13), and each task's
    // run that finds nothing due: ten minutes.
    for _ in 0..10 {
        one_minute(&stack, &sqs, &engine).await?;
        clock.advance(Duration::from_secs(60));
    }
    stack.calls.take();
    // The next 40 minutes, before the first retries come due.
    let (mut runs, minutes) = (0, 40);
    for _ in 0..minutes {
        runs += one_minute(&stack, &sqs, &engine).await?;
        clock.advance(Duration::from_secs(60));
    }
    let requests = stack.calls.take();
    record(
        &format!("dialing.resting_{tasks}_tasks.dial_runs_per_hour"),
        runs as f64 * 60.0 / minutes as f64,
    );
    record(
        &format!("dialing.resting_{tasks}_tasks.requests_per_minute"),
        requests as f64 / minutes as f64,
    );
    stack.remove_table().await?;
    Ok(())
}

/// A minute of the dialing functions: the tick, its dial jobs, the outcomes. Answers the dial
/// jobs the tick sent.
async fn one_minute(
    stack: &Stack,
    sqs: &aws_sdk_sqs::Client,
    engine: &BenchEngine,
) -> Result<usize> {
    let report = engine.tick().await?;
    dial_jobs(sqs, stack, engine).await?;
    outcomes_of(sqs, stack, engine).await?;
    Ok(report.dial_jobs)
}

/// The dial queue drained through the dialer: the jobs it ran.
async fn dial_jobs(
    sqs: &aws_sdk_sqs::Client,
    stack: &Stack,
    engine: &BenchEngine,
) -> Result<usize> {
    drained(
        sqs,
        &stack.resources.dial_queue_url,
        engine,
        DialInbox::Jobs,
    )
    .await
}

/// The call-events queue drained through call-events: the outcomes it recorded.
async fn outcomes_of(
    sqs: &aws_sdk_sqs::Client,
    stack: &Stack,
    engine: &BenchEngine,
) -> Result<usize> {
    drained(
        sqs,
        &stack.resources.call_events_queue_url,
        engine,
        DialInbox::CallEvents,
    )
    .await
}

type BenchEngine = outbound_dialing::engine::Engine<outbound_adapters::telephony::Telephony>;

/// The messages of queue `url` handled as `inbox` handles them: how many.
async fn drained(
    sqs: &aws_sdk_sqs::Client,
    url: &str,
    engine: &BenchEngine,
    inbox: DialInbox,
) -> Result<usize> {
    Ok(poller::drain(sqs, url, |body| inbox.handle(engine, body)).await?)
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
        items.extend(task_items(&tenant, &task)?);
    }
    outbound_tests::stack::put_items(
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
    if report.running != running {
        return Err(format!("the tick saw {} of {running} running tasks", report.running).into());
    }
    record(
        &format!("dialing.tick_ms.{running}"),
        elapsed.as_secs_f64() * 1000.0,
    );
    record(&format!("dialing.tick.requests.{running}"), calls as f64);
    record(
        &format!("dialing.tick.dial_jobs.{running}"),
        report.dial_jobs as f64,
    );
    stack.remove_table().await?;
    Ok(())
}

/// Contacts of the national list, a quarter in each zone.
const NATIONAL: usize = 2_000;

async fn national() -> Result<()> {
    use chrono::{TimeZone, Timelike};
    use outbound_model::call::Reason;
    use outbound_model::plan::Clock;
    use outbound_model::settings::{Change, FrequencyCap, SettingsChange};
    use outbound_model::time_of_day::{ClockTime, DailyWindow};
    let stack = Stack::provision().await;
    let tenant = Tenant::parse("bench")?;
    // The engine's clock at the next 16:00 UTC: 11:00 in New York and 10:00 in Chicago in
    // winter, an hour later in summer; Denver and Los Angeles are one and two hours behind.
    let clock = ManualClock::starting_now();
    clock.advance_to_utc(16, 0, 0);
    let at = chrono::Utc.timestamp_millis_opt(clock.now().0).unwrap();
    // Opens at Chicago's hour: New York and Chicago are inside, Denver and Los Angeles not yet.
    let chicago = chrono_tz::America::Chicago
        .from_utc_datetime(&at.naive_utc())
        .hour();
    let window = DailyWindow {
        start: ClockTime::parse("start", &format!("{chicago:02}:00"))?,
        end: ClockTime::parse("end", "20:00")?,
    };
    let areas = ["212", "312", "303", "213"];
    let phone = |n: usize| format!("+1{}{}", areas[n % 4], 2_000_000 + n);
    for n in 0..4 {
        let e164 = outbound_model::numbers::e164(&Phone::parse(&phone(n))?, None);
        assert_eq!(
            e164.as_deref(),
            Some(phone(n).as_str()),
            "a valid US number"
        );
    }
    let settings = DialSettings {
        window: Some(window),
        ..DialSettings::default()
    };
    let (task, _) = seeded_task_with(&stack, &tenant, NATIONAL, phone, settings).await?;
    let change = SettingsChange {
        frequency_cap: Change::Set(FrequencyCap::new(3, 24)?),
        ..SettingsChange::default()
    };
    let now = Timestamp::now();
    let actor = outbound_model::Actor::parse("bench")?;
    let event =
        outbound_model::event::Event::settings_changed(&tenant, now, &actor, change.changed());
    stack
        .store
        .update_settings(&tenant, &change, now, &event)
        .await?;
    for n in 0..100 {
        let phone = Phone::parse(&format!("+1646{}", 3_000_000 + n))?;
        let entry = outbound_model::dnc::DncEntry::new(phone, None, None, Default::default())?;
        stack.store.add_dnc(&tenant, &entry, None).await?;
    }
    let mut settings = fast_settings();
    settings.simulated.mix.failed = 0;
    settings.simulated.mix.no_answer = 0;
    let engine = stack.engine(settings, clock.clone());
    let sqs = aws_sdk_sqs::Client::new(&stack.sdk);
    stack.calls.take();
    stack.calls.items().take();
    stack.calls.writes().take();
    let (mut runs, mut read, mut claims) = (0, 0, Vec::new());
    let open = NATIONAL / 2;
    let started = Instant::now();
    loop {
        engine.tick().await?;
        runs += dial_jobs(&sqs, &stack, &engine).await?;
        read += stack.calls.items().take().returned();
        claims.extend(
            stack
                .calls
                .writes()
                .take()
                .into_iter()
                .filter(|w| w.transactional() && w.writes_sort_key("RATE#")),
        );
        outcomes_of(&sqs, &stack, &engine).await?;
        stack.calls.items().take();
        stack.calls.writes().take();
        let (now, counters) = stack.store.task_with_counters(&tenant, &task.id).await?;
        stack.calls.items().take();
        if counters.reason(Reason::Answered) as usize >= open && now.in_flight == 0 {
            let calls = now.counters.calls as f64;
            assert_eq!(calls as usize, open, "only the open zones are called");
            assert_eq!(
                counters.waiting as usize,
                NATIONAL - open,
                "the others wait"
            );
            record("dialing.national_list_s", started.elapsed().as_secs_f64());
            record(
                "dialing.national_list.items_read_per_call",
                read as f64 / calls,
            );
            record(
                "dialing.national_list.items_read_per_run",
                read as f64 / runs as f64,
            );
            let client = aws_sdk_dynamodb::Client::new(&stack.sdk);
            let stored = sizes_for(&client, &stack.resources.table, &claims).await?;
            let claim = Phase {
                requests: claims.len(),
                writes: claims,
            };
            claim.record("claim_checked", calls, &stored);
            stack.remove_table().await?;
            return Ok(());
        }
        if started.elapsed() > Duration::from_secs(1800) {
            return Err("the open zones were not called in 30 minutes".into());
        }
    }
}

/// The stored items of `task`, with the running-task index keys publish writes when it is
/// RUNNING: the task item, and its counters item.
fn task_items(tenant: &Tenant, task: &Task) -> Result<Vec<outbound_adapters::store::Item>> {
    let mut item: outbound_adapters::store::Item = serde_dynamo::to_item(task)?;
    let (pk, sk) = (keys::tenant(tenant), keys::task(&task.id));
    if task.status == TaskStatus::Running {
        item.insert(
            keys::GSI1_PK.into(),
            s(keys::running_partition(keys::index_partition_of(
                &sk,
                keys::INDEX_PARTITIONS,
            ))),
        );
        item.insert(keys::GSI1_SK.into(), s(format!("{pk}#{sk}")));
    }
    item.insert(keys::PK.into(), s(pk));
    item.insert(keys::SK.into(), s(sk));
    let (item, counters) = outbound_adapters::store::counters::split(tenant, task, item);
    Ok([item].into_iter().chain(counters).collect())
}

fn s(value: String) -> aws_sdk_dynamodb::types::AttributeValue {
    aws_sdk_dynamodb::types::AttributeValue::S(value)
}

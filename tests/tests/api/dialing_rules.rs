//! The dialing rules one at a time (D7, D9, D10, D12, D13): retries and their interval, the
//! task states that stop or resume dialing, recall, outcomes delivered twice, early or never,
//! deleted contacts, the cost of a tick, priority between tasks and the daily window. Each test
//! drives the same tick, dialer and call-events handlers the Lambdas run, against moto, with a
//! clock it moves itself.

use crate::dialing_support::*;
use crate::support::{id, phone, tenant, unique, TaskFixture, TestApi};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::dialing::Caps;
use outbound_adapters::store::keys;
use outbound_adapters::store::keys::INDEX_PARTITIONS;
use outbound_adapters::telephony::settings::OutcomeMix;
use outbound_adapters::telephony::simulated::{decide, SimulatedEvent, SimulatedOutcome};
use outbound_adapters::telephony::{CallRequest, Provider};
use outbound_app::config::dialing::DialerConfig;
use outbound_dialing::engine::TickReport;
use outbound_local::inbox::DialInbox;
use outbound_model::call::Outcome;
use outbound_model::error::Error;
use outbound_model::plan::Clock;
use outbound_model::task::Due;
use outbound_model::{Task, TaskStatus, Timestamp};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

const OWNER: &str = "acme";
const MINUTE: Duration = Duration::from_secs(60);

/// A test's API, engine and the clock the engine reads.
struct Rig {
    api: TestApi,
    clock: Arc<ManualClock>,
    engine: TestEngine,
}

/// [`phone`]`(n)` in E.164, as the tenant's country reads it: the number a provider is given.
fn cn(n: usize) -> String {
    format!("+86{}", phone(n))
}

/// A rig whose engine has the fast settings with `mix`, changed by `tweak`; its tenant's numbers
/// are read in China, [`phone`]'s country (D14).
async fn rig(mix: OutcomeMix, tweak: impl FnOnce(&mut DialerConfig)) -> Rig {
    let api = TestApi::start().await;
    api.numbers_read_in(OWNER, "CN").await;
    let mut settings = fast_settings(&api, mix);
    tweak(&mut settings);
    let clock = ManualClock::starting_now();
    let engine = api.engine(settings, clock.clone());
    Rig { api, clock, engine }
}

impl Rig {
    /// A published (RUNNING) task with `extra` body fields on a fresh data source of `contacts`
    /// contacts.
    async fn running(&self, contacts: usize, extra: Value) -> TaskFixture {
        let (source, contacts) = self.api.source_with_contacts(OWNER, contacts).await;
        let id = self.api.task(OWNER, &unique("Task"), &source, extra).await;
        self.op("publish", &id, TaskStatus::Running).await;
        TaskFixture {
            id,
            source,
            contacts,
        }
    }

    /// `POST /api/task/{op}` with `{"id": task}`, which must take the task to `to`.
    async fn op(&self, op: &str, task: &str, to: TaskStatus) {
        let answer = self
            .api
            .post(OWNER, &format!("/api/task/{op}"), json!({"id": task}))
            .await;
        let data = answer.ok();
        assert_eq!(
            (&data["id"], &data["status"]),
            (&json!(task), &json!(to.code()))
        );
    }

    /// `POST /api/task/{task}/recall` with `body`: the recalled ids, sorted.
    async fn recall(&self, task: &str, body: Value) -> Vec<String> {
        let answer = self
            .api
            .post(OWNER, &format!("/api/task/{task}/recall"), body)
            .await;
        let data = answer.ok();
        let mut ids: Vec<String> = data["recallIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|id| id.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(data["recallCount"], ids.len(), "{data}");
        ids.sort();
        ids
    }

    /// The tokens (`{task}-{contact}-{attempt}`) of every call placed so far.
    fn placed(&self) -> Vec<String> {
        self.engine.provider.placed.lock().unwrap().clone()
    }

    /// One round of the dialing functions: a tick, its dial jobs, then the outcomes.
    async fn round(&self) {
        self.api.dial_round(&self.engine).await;
    }

    /// Rounds, the clock moved by `step` after each, until `task` is COMPLETED (at most 6).
    async fn complete(&self, task: &str, step: Duration) {
        self.complete_within(task, step, 6).await;
    }

    /// Rounds, the clock moved by `step` after each, until `task` is COMPLETED (at most
    /// `rounds`).
    async fn complete_within(&self, task: &str, step: Duration, rounds: usize) {
        self.api
            .dial_until(
                &self.engine,
                &self.clock,
                step,
                (OWNER, task),
                TaskStatus::Completed,
                rounds,
            )
            .await;
    }

    /// The task detail (`GET /api/task/detail/{id}`).
    async fn detail(&self, task: &str) -> Value {
        let answer = self
            .api
            .get(OWNER, &format!("/api/task/detail/{task}"))
            .await;
        answer.ok().clone()
    }

    /// Every contact of `source` by id: (status, callCount), as the contact list shows them (D7).
    async fn contacts(&self, source: &str) -> BTreeMap<String, (u64, u64)> {
        self.api
            .all_contacts(OWNER, source)
            .await
            .into_iter()
            .map(|c| {
                let number = |field: &str| c[field].as_u64().unwrap();
                let id = c["id"].as_str().unwrap().to_owned();
                (id, (number("status"), number("callCount")))
            })
            .collect()
    }

    /// Receives and deletes every message waiting on the call-events queue: their bodies.
    async fn take_events(&self) -> Vec<String> {
        self.api
            .take_messages(&self.api.resources.call_events_queue_url)
            .await
    }

    /// Receives and deletes every message waiting on the dial queue: their bodies.
    async fn take_dial_jobs(&self) -> Vec<String> {
        self.api
            .take_messages(&self.api.resources.dial_queue_url)
            .await
    }

    /// Moves the clock to at least the wall clock: the HTTP recall stamps the recalled contacts
    /// due at the wall-clock now, which the test's clock may not have reached.
    fn catch_up(&self) {
        let lag = Timestamp::now().0 - self.clock.now().0;
        if lag > 0 {
            self.clock
                .advance(Duration::from_millis(lag.unsigned_abs() + 1));
        }
    }

    /// Moves the clock forward to the next `hour:minute:second` UTC.
    fn advance_to_utc(&self, hour: i64, minute: i64, second: i64) {
        self.clock.advance_to_utc(hour, minute, second);
    }

    /// A tick, then its dial jobs (the outcomes left waiting on the call-events queue).
    async fn tick_and_dial(&self) -> TickReport {
        let report = self.engine.tick().await.unwrap();
        self.api.drain(&self.engine, DialInbox::Jobs).await;
        report
    }

    /// The stored task, read past the API.
    async fn stored(&self, task: &str) -> Task {
        self.api.stored_task(OWNER, task).await
    }

    /// The calls in flight of the whole service.
    async fn service_in_flight(&self) -> u32 {
        self.engine.store.calls_in_flight().await.unwrap()
    }

    /// Deletes `contact` from `task`'s data source over HTTP.
    async fn delete_contact(&self, task: &TaskFixture, contact: &str) {
        let path = format!("/api/dataSource/{}/contact/delete", task.source);
        let answer = self
            .api
            .post(OWNER, &path, json!({ "contactId": contact }))
            .await;
        assert_eq!(*answer.ok(), Value::Null);
    }
}

/// The token of attempt `attempt` of `contact` in `task`.
fn token(task: &str, contact: &str, attempt: u32) -> String {
    format!("{task}-{contact}-{attempt}")
}

/// The tokens of attempt `attempt` of the contacts of `task` at `indexes`, in that order.
fn calls(task: &TaskFixture, indexes: &[usize], attempt: u32) -> Vec<String> {
    indexes
        .iter()
        .map(|n| token(&task.id, &task.contacts[*n], attempt))
        .collect()
}

/// The items of `items` as a set, for comparisons that ignore order.
fn set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    items.into_iter().collect()
}

/// D13: a contact without an answer is called again only `callInterval` seconds after its last
/// attempt ended, and never more than `maxDialCount` times; then the task is COMPLETED.
#[tokio::test]
async fn retries_wait_the_call_interval_and_stop_at_max_dial_count() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig
        .running(3, json!({"maxDialCount": 2, "callInterval": 30}))
        .await;
    rig.round().await;
    assert_eq!(
        rig.placed(),
        calls(&task, &[0, 1, 2], 1),
        "every contact once"
    );
    rig.round().await;
    assert_eq!(rig.placed().len(), 3, "the clock has not moved");
    rig.clock.advance(Duration::from_secs(29));
    rig.round().await;
    assert_eq!(rig.placed().len(), 3, "29 s is short of callInterval");
    rig.clock.advance(Duration::from_secs(1));
    rig.round().await;
    assert_eq!(
        set(rig.placed()),
        set([calls(&task, &[0, 1, 2], 1), calls(&task, &[0, 1, 2], 2)].concat()),
        "the second attempts at exactly 30 s"
    );

    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.placed().len(), 6, "no third attempt");
    let detail = rig.detail(&task.id).await;
    let counts = ["callCount", "noAnswerCount", "successCount", "failCount"].map(|f| &detail[f]);
    assert_eq!(detail["status"], TaskStatus::Completed.code());
    assert_eq!(counts, [&json!(6), &json!(6), &json!(0), &json!(0)]);
    let contacts = rig.contacts(&task.source).await;
    assert_eq!(set(contacts.keys()), set(&task.contacts));
    assert!(contacts.values().all(|c| *c == (3, 2)), "{contacts:?}");
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    assert_eq!(set(states.keys()), set(&task.contacts));
    for state in states.values() {
        assert_eq!((state.attempts, state.done, state.in_call), (2, true, None));
        assert_eq!(state.next_attempt_at, None);
    }
}

/// D10, D13: a PAUSED task places no call; after resume it dials every contact, those added
/// while it was paused included.
#[tokio::test]
async fn pause_halts_dialing_and_resume_dials_contacts_added_meanwhile() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let mut task = rig.running(3, json!({})).await;
    rig.op("pause", &task.id, TaskStatus::Paused).await;
    let report = rig.engine.tick().await.unwrap();
    assert_eq!((report.running, report.dial_jobs), (0, 0), "{report:?}");
    rig.round().await;
    assert!(rig.placed().is_empty());
    assert_eq!(rig.stored(&task.id).await.counters.calls, 0);

    for n in [100, 101] {
        let added = rig.api.contact(OWNER, &task.source, &phone(n)).await;
        task.contacts.push(added);
    }
    rig.round().await;
    assert!(rig.placed().is_empty(), "still paused");

    rig.op("resume", &task.id, TaskStatus::Running).await;
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.placed(), calls(&task, &[0, 1, 2, 3, 4], 1));
    let contacts = rig.contacts(&task.source).await;
    assert_eq!(set(contacts.keys()), set(&task.contacts));
    assert!(contacts.values().all(|c| *c == (1, 1)), "{contacts:?}");
    assert_eq!(rig.detail(&task.id).await["callCount"], 5);
}

/// D10, D13: stop places no new call, but the outcomes of the calls in flight are still
/// recorded on the STOPPED task, and their places in flight given back.
#[tokio::test]
async fn stop_halts_dialing_and_records_the_calls_in_flight() {
    let rig = rig(ALL_SUCCESS, |s| s.max_in_flight_per_task = 2).await;
    let task = rig.running(5, json!({})).await;
    assert_eq!(rig.tick_and_dial().await.dial_jobs, 1);
    assert_eq!(rig.placed(), calls(&task, &[0, 1], 1));
    assert_eq!(rig.stored(&task.id).await.in_flight, 2);

    let stop = json!({"id": task.id, "reason": "enough"});
    let stopped = rig.api.post(OWNER, "/api/task/stop", stop).await;
    assert_eq!(stopped.ok()["status"], TaskStatus::Stopped.code());
    assert_eq!(rig.api.drain(&rig.engine, DialInbox::CallEvents).await, 2);
    let stored = rig.stored(&task.id).await;
    assert_eq!(stored.status, TaskStatus::Stopped);
    assert_eq!(stored.stop_reason.as_deref(), Some("enough"));
    assert_eq!((stored.counters.calls, stored.counters.success), (2, 2));
    assert_eq!(stored.in_flight, 0);
    assert_eq!(rig.service_in_flight().await, 0);

    for _ in 0..2 {
        rig.clock.advance(MINUTE);
        rig.round().await;
    }
    assert_eq!(rig.placed().len(), 2, "nothing placed after stop");
    let contacts = rig.contacts(&task.source).await;
    let expected = |n: usize| if n < 2 { (1, 1) } else { (0, 0) };
    for (n, contact) in task.contacts.iter().enumerate() {
        assert_eq!(contacts[contact], expected(n), "contact {n}");
    }
    let stored = rig.stored(&task.id).await;
    assert_eq!(
        (stored.status, stored.counters.calls),
        (TaskStatus::Stopped, 2)
    );
}

/// D12, D10: a recall without ids redials exactly the contacts whose outcome was failed, with a
/// fresh allowance, and takes the COMPLETED task back to RUNNING; a recall by id redials a
/// contact that succeeded too.
#[tokio::test]
async fn recall_redials_exactly_the_failed_contacts() {
    let mix = OutcomeMix {
        success: 1,
        failed: 1,
        no_answer: 0,
    };
    let rig = rig(mix, |_| {}).await;
    let task = rig
        .running(6, json!({"maxDialCount": 1, "callInterval": 10}))
        .await;
    rig.complete(&task.id, MINUTE).await;

    // The simulated outcome depends only on the number and the attempt.
    let first = rig.contacts(&task.source).await;
    let fails = |n: &usize| {
        decide(&rig.engine.config.simulated, &phone(*n), 1, None).outcome() == Outcome::Failed
    };
    let expected: BTreeSet<&String> = (0..6).filter(fails).map(|n| &task.contacts[n]).collect();
    let failed: BTreeSet<&String> = first
        .iter()
        .filter(|(_, c)| c.0 == 2)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(failed, expected);
    assert!(!failed.is_empty() && failed.len() < 6, "{first:?}");
    assert!(
        first.values().all(|c| *c == (1, 1) || *c == (2, 1)),
        "{first:?}"
    );

    let recalled = rig.recall(&task.id, json!({})).await;
    assert_eq!(set(&recalled), failed);
    assert_eq!(rig.stored(&task.id).await.status, TaskStatus::Running);
    rig.catch_up();
    rig.complete(&task.id, MINUTE).await;
    let second = rig.contacts(&task.source).await;
    for (contact, (_, count)) in &second {
        let attempts = if failed.contains(contact) { 2 } else { 1 };
        assert_eq!(*count, attempts, "{contact}");
    }
    let redialled = rig.placed().into_iter().filter(|t| t.ends_with("-2"));
    let expected = failed.iter().map(|contact| token(&task.id, contact, 2));
    assert_eq!(set(redialled), set(expected));
    assert_eq!(rig.placed().len(), 6 + failed.len());
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    for (contact, state) in &states {
        let attempts = if failed.contains(contact) { 2 } else { 1 };
        assert_eq!((state.attempts, state.done), (attempts, true), "{contact}");
    }

    let succeeded = first.iter().find(|(_, c)| c.0 == 1).unwrap().0;
    let one = json!({ "contactIds": [succeeded] });
    assert_eq!(rig.recall(&task.id, one).await, vec![succeeded.clone()]);
    rig.catch_up();
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.placed().len(), 7 + failed.len());
    assert_eq!(rig.placed().last(), Some(&token(&task.id, succeeded, 2)));
    assert_eq!(rig.contacts(&task.source).await[succeeded].1, 2);
    assert_eq!(rig.detail(&task.id).await["callCount"], 7 + failed.len());
}

/// D13: an outcome delivered twice (SQS delivers at least once) is recorded once.
#[tokio::test]
async fn an_outcome_delivered_twice_is_recorded_once() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(1, json!({})).await;
    rig.tick_and_dial().await;
    assert_eq!(rig.placed(), calls(&task, &[0], 1));
    let events = rig.take_events().await;
    assert_eq!(events.len(), 1);

    DialInbox::CallEvents
        .handle(&rig.engine, events[0].clone())
        .await
        .unwrap();
    let once = rig.api.snapshot().await;
    DialInbox::CallEvents
        .handle(&rig.engine, events[0].clone())
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, once, "the repeat changed nothing");
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.counters.calls, stored.counters.success), (1, 1));
    assert_eq!(stored.in_flight, 0);
    assert_eq!(rig.service_in_flight().await, 0);
    assert_eq!(rig.contacts(&task.source).await[&task.contacts[0]], (1, 1));
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.detail(&task.id).await["callCount"], 1);
}

/// D13: an outcome naming a call the service does not know, and not saying which attempt it is
/// (an inbound or another application's call on the instance, a message without the attempt),
/// is acknowledged and changes nothing: it is counted as unknown, not redelivered into the
/// dead-letter queue.
#[tokio::test]
async fn an_outcome_of_a_call_that_is_not_ours_changes_nothing() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(1, json!({})).await;
    let contact = &task.contacts[0];
    let unattributed = SimulatedEvent::SimulatedCall(SimulatedOutcome {
        call_id: format!("sim-{}", token(&task.id, contact, 1)),
        report: decide(&rig.engine.config.simulated, &phone(0), 1, None),
        attempt: None,
        signature: None,
    });
    let before = rig.api.snapshot().await;
    for body in [
        include_str!("../../events/connect-disconnected-inbound.json").to_owned(),
        include_str!("../../events/connect-disconnected-agent-outbound.json").to_owned(),
        serde_json::to_string(&unattributed).unwrap(),
    ] {
        DialInbox::CallEvents
            .handle(&rig.engine, body.clone())
            .await
            .unwrap();
    }
    assert_eq!(rig.api.snapshot().await, before);
}

/// The caps of `engine`'s configuration, as a dial run claims under them.
fn caps_of(engine: &TestEngine) -> Caps {
    let config = &engine.config;
    Caps {
        per_task: config.max_in_flight_per_task,
        total: config.max_in_flight,
        rate_per_second: config.rate_per_second,
    }
}

/// D13, D29: a call the provider took whose id was never saved (the run died after placing it,
/// or saving the id failed) still has its outcome recorded, once, from the attempt the call
/// carries when its signature verifies; the late save finds the attempt settled, and the person is not called again.
#[tokio::test]
async fn an_outcome_whose_call_id_was_never_saved_is_recorded_from_the_call() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(1, json!({"maxDialCount": 3})).await;
    let contact = &task.contacts[0];
    let owner = tenant(OWNER);
    let (call, call_id) = placed_unsaved(&rig, &task, 0).await;

    // D29: the same attempt under a signature of another key (a flow that rewrote the
    // attributes, a message someone else sent) settles nothing.
    let attempt = outbound_model::call::CallAttempt {
        tenant: owner.clone(),
        task_id: id(&task.id),
        contact_id: id(contact),
        attempt: 1,
    };
    let forged = SimulatedEvent::SimulatedCall(SimulatedOutcome {
        call_id: call_id.clone(),
        report: decide(&rig.engine.config.simulated, &phone(0), 1, None),
        signature: Some(
            outbound_model::signature::CallSigner::new(b"not the deployment's key").sign(&attempt),
        ),
        attempt: Some(attempt),
    });
    let before = rig.api.snapshot().await;
    let forged = serde_json::to_string(&forged).unwrap();
    DialInbox::CallEvents
        .handle(&rig.engine, forged)
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, before, "ignored");

    assert_eq!(rig.api.drain(&rig.engine, DialInbox::CallEvents).await, 1);
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.in_flight, stored.counters.calls), (0, 1));
    assert_eq!(stored.counters.success, 1);
    assert_eq!(rig.service_in_flight().await, 0);
    assert_eq!(rig.contacts(&task.source).await[contact], (1, 1));
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    let state = &states[contact];
    assert_eq!((state.attempts, state.done, state.in_call), (1, true, None));

    let now = rig.clock.now();
    assert!(!rig
        .engine
        .store
        .mark_placed(&call, &call_id, now)
        .await
        .unwrap());
    let before = rig.api.snapshot().await;
    let attempt = outbound_model::call::CallAttempt {
        tenant: owner,
        task_id: id(&task.id),
        contact_id: id(contact),
        attempt: 1,
    };
    let again = SimulatedEvent::SimulatedCall(SimulatedOutcome {
        call_id,
        report: decide(&rig.engine.config.simulated, &phone(0), 1, None),
        signature: Some(rig.engine.signer.sign(&attempt)),
        attempt: Some(attempt),
    });
    let again = serde_json::to_string(&again).unwrap();
    DialInbox::CallEvents
        .handle(&rig.engine, again.clone())
        .await
        .unwrap();
    assert_eq!(
        rig.api.snapshot().await,
        before,
        "delivered twice, recorded once"
    );
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(
        rig.placed(),
        calls(&task, &[0], 1),
        "answered: never called again"
    );
}

/// Claims and places the call of contact `index` of `task` as a dial run would, and stops
/// there, as a run that dies before it saves the call's id: the call and its provider id.
async fn placed_unsaved(
    rig: &Rig,
    task: &TaskFixture,
    index: usize,
) -> (outbound_model::call::CallRef, String) {
    let (owner, stored) = (tenant(OWNER), rig.stored(&task.id).await);
    let due = Due {
        contact_id: id(&task.contacts[index]),
        attempt: 1,
        state: None,
    };
    let gate = outbound_adapters::store::dialing::Gate::default();
    let claim = rig.engine.store.claim_call(
        &owner,
        &stored,
        &due,
        &gate,
        caps_of(&rig.engine),
        rig.clock.now(),
    );
    let call = claim.await.unwrap();
    let attempt = outbound_model::call::CallAttempt {
        tenant: owner,
        task_id: id(&task.id),
        contact_id: id(&task.contacts[index]),
        attempt: 1,
    };
    let request = CallRequest {
        attributes: attempt
            .attributes()
            .into_iter()
            .chain([rig.engine.signer.attribute(&attempt)])
            .collect(),
        tenant: attempt.tenant,
        task_id: attempt.task_id,
        contact_id: attempt.contact_id,
        attempt: attempt.attempt,
        to: cn(index),
        script: None,
        caller_id: None,
        contact_flow_id: None,
        voicemail: Default::default(),
        simulated_results: None,
        queue_id: None,
    };
    let call_id = rig.engine.provider.place(&request).await.unwrap();
    (call, call_id)
}

/// D13, D28: a call whose id was never saved is in doubt: the next look sends its start again
/// with the same client token, the provider answers the call it placed already (no second
/// call), and its id is saved; it keeps its places while connected, and a person who answered
/// and talks on has the answer recorded when the call ends and is never called again. A call
/// the provider has forgotten is recorded as failed "no outcome" once the ceiling passes.
#[tokio::test]
async fn a_call_whose_id_was_never_saved_is_sent_again_and_placed_once() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.reconcile_after = MINUTE;
        s.max_call = Duration::from_secs(3600);
    })
    .await;
    let task = rig.running(2, json!({"maxDialCount": 3})).await;
    placed_unsaved(&rig, &task, 0).await;
    placed_unsaved(&rig, &task, 1).await;
    let ended = rig.take_events().await;
    assert_eq!(ended.len(), 2, "held back: both calls are connected");

    rig.clock.advance(Duration::from_secs(11 * 60));
    assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 2);
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.in_flight, stored.counters.calls), (2, 0));
    assert_eq!(rig.service_in_flight().await, 2);
    assert_eq!(rig.placed().len(), 2, "nobody is called again meanwhile");
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    assert!(
        states.values().all(|state| state.call_id.is_some()),
        "the answer to the start sent again saved each call's id: {states:?}"
    );

    DialInbox::CallEvents
        .handle(&rig.engine, ended[0].clone())
        .await
        .unwrap();
    let stored = rig.stored(&task.id).await;
    assert_eq!(
        (
            stored.in_flight,
            stored.counters.calls,
            stored.counters.success
        ),
        (1, 1, 1)
    );

    rig.engine
        .provider
        .forgets
        .store(true, std::sync::atomic::Ordering::SeqCst);
    past_the_ceiling_the_other_call_fails(&rig, &task).await;
    let contacts = rig.contacts(&task.source).await;
    assert_eq!(contacts[&task.contacts[0]], (1, 1), "answered: final");
}

/// Of a task's two calls, one answered, the other still in flight: an hour on (the tests'
/// `DIAL_MAX_CALL_SECONDS`), reconcile records it as failed "no outcome" and gives its places back.
async fn past_the_ceiling_the_other_call_fails(rig: &Rig, task: &TaskFixture) {
    rig.clock.advance(Duration::from_secs(3600));
    assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 1);
    let stored = rig.stored(&task.id).await;
    let counters = &stored.counters;
    assert_eq!(
        (
            stored.in_flight,
            counters.calls,
            counters.success,
            counters.failed
        ),
        (0, 2, 1, 1)
    );
    assert_eq!(rig.service_in_flight().await, 0);
}

/// D13: a call whose outcome never arrives is reconciled after `reconcile_after` and recorded
/// as failed ("no outcome"), giving back its places in flight.
#[tokio::test]
async fn a_lost_outcome_is_reconciled_as_failed() {
    let rig = rig(ALL_SUCCESS, |s| s.reconcile_after = MINUTE).await;
    let task = rig.running(3, json!({"maxDialCount": 1})).await;
    rig.tick_and_dial().await;
    assert_eq!(rig.placed().len(), 3);
    assert_eq!(rig.take_events().await.len(), 3, "the outcomes are lost");
    rig.engine
        .provider
        .forgets
        .store(true, std::sync::atomic::Ordering::SeqCst);

    rig.clock.advance(Duration::from_secs(59));
    assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 0, "too early");
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.in_flight, stored.counters.calls), (3, 0));

    rig.clock.advance(Duration::from_secs(2));
    assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 3);
    let stored = rig.stored(&task.id).await;
    let counters = &stored.counters;
    assert_eq!(
        (counters.calls, counters.failed, counters.success),
        (3, 3, 0)
    );
    assert_eq!(stored.in_flight, 0);
    assert_eq!(rig.service_in_flight().await, 0);
    let contacts = rig.contacts(&task.source).await;
    assert!(contacts.values().all(|c| *c == (2, 1)), "{contacts:?}");
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.placed().len(), 3, "maxDialCount 1: no retry");
    assert_eq!(rig.detail(&task.id).await["failCount"], 3);
}

/// D13: a call the provider still reports live keeps its places in flight however many
/// reconcile times pass, up to `DIAL_MAX_CALL_SECONDS`, and its outcome is recorded when it
/// ends; one still live past that ceiling is recorded as failed "no outcome", its places given
/// back.
#[tokio::test]
async fn a_long_live_call_stays_in_flight_until_it_ends() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.reconcile_after = MINUTE;
        s.max_call = Duration::from_secs(3600);
    })
    .await;
    let task = rig.running(2, json!({"maxDialCount": 1})).await;
    rig.tick_and_dial().await;
    let ended = rig.take_events().await;
    assert_eq!(ended.len(), 2, "held back: both calls are still connected");
    rig.engine
        .provider
        .live
        .store(true, std::sync::atomic::Ordering::SeqCst);
    for _ in 0..5 {
        rig.clock.advance(Duration::from_secs(61));
        assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 2);
    }
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.in_flight, stored.counters.calls), (2, 0));
    assert_eq!(rig.service_in_flight().await, 2);

    DialInbox::CallEvents
        .handle(&rig.engine, ended[0].clone())
        .await
        .unwrap();
    let stored = rig.stored(&task.id).await;
    assert_eq!((stored.in_flight, stored.counters.success), (1, 1));

    past_the_ceiling_the_other_call_fails(&rig, &task).await;
}

/// D11, D13: deleting a STOPPED task whose calls are still connected keeps their places among
/// the service's calls in flight until they end: the reclaim leaves their states, each outcome
/// gives its place back, and the reclaim finishes once none is left, so the service's cap holds.
#[tokio::test]
async fn a_deleted_tasks_connected_calls_keep_their_places_until_they_end() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(2, json!({})).await;
    rig.tick_and_dial().await;
    let going = rig.take_events().await;
    assert_eq!(going.len(), 2, "both calls still connected");
    rig.op("stop", &task.id, TaskStatus::Stopped).await;
    let deleted = rig
        .api
        .post(OWNER, "/api/task/delete", json!({"id": task.id}))
        .await;
    assert_eq!(deleted.status, 200, "{:?}", deleted.body);
    let jobs = rig.api.reclaim_jobs().await;
    assert_eq!(jobs.len(), 1);
    let reclaim = || outbound_service::reclaim::run(&rig.api.store, &jobs[0]);

    reclaim().await.unwrap();
    assert_eq!(rig.service_in_flight().await, 2);
    assert_eq!(rig.api.stored_task_contacts(OWNER, &task.id).await.len(), 2);
    DialInbox::CallEvents
        .handle(&rig.engine, going[0].clone())
        .await
        .unwrap();
    assert_eq!(rig.service_in_flight().await, 1);
    DialInbox::CallEvents
        .handle(&rig.engine, going[1].clone())
        .await
        .unwrap();
    assert_eq!(rig.service_in_flight().await, 0);
    assert!(rig
        .api
        .stored_task_contacts(OWNER, &task.id)
        .await
        .is_empty());
    assert_eq!(reclaim().await.unwrap(), 0, "nothing more to delete");
    let swept = outbound_service::reclaim::sweep(
        &rig.api.store,
        &rig.api.app.reclaim,
        Timestamp(Timestamp::now().0 + 60_000),
    );
    assert_eq!(swept.await.unwrap(), 0, "the reclaim is finished");
}

/// A RUNNING task over `count` imported contacts, each already final in the task (their states
/// written past the service, as if dialled) and its cursor past the last: only the completion
/// check is left. Answers the task and the contacts' ids.
async fn dialled_out(rig: &Rig, count: usize) -> (TaskFixture, Vec<String>) {
    let source = rig.api.data_source(OWNER, &unique("Source")).await;
    let mut csv = String::from("phone\n");
    for n in 0..count {
        csv.push_str(&format!("{}\n", phone(n)));
    }
    let imported = rig
        .api
        .batch_import(OWNER, &source, "list.csv", csv.into_bytes())
        .await;
    assert_eq!(imported.ok()["successCount"], count);
    let task_id = rig
        .api
        .task(OWNER, &unique("Task"), &source, json!({}))
        .await;
    rig.op("publish", &task_id, TaskStatus::Running).await;
    let mut contacts: Vec<String> = rig
        .api
        .all_contacts(OWNER, &source)
        .await
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    contacts.sort();
    let (owner, task) = (tenant(OWNER), id(&task_id));
    let states_pk = outbound_adapters::store::keys::task_contacts(&owner, &task);
    let now = rig.clock.now();
    let items = contacts
        .iter()
        .map(|contact| {
            let state = outbound_model::task::TaskContact {
                attempts: 1,
                allowance: 1,
                last_outcome: 1,
                last_duration: 30,
                done: true,
                ..outbound_model::task::TaskContact::undialled(id(contact), 1, 5, now)
            };
            let mut item: outbound_adapters::store::Item = serde_dynamo::to_item(&state).unwrap();
            item.insert("pk".into(), AttributeValue::S(states_pk.clone()));
            item.insert(
                "sk".into(),
                AttributeValue::S(outbound_adapters::store::keys::contact(&id(contact))),
            );
            item
        })
        .collect();
    outbound_tests::stack::put_items(&rig.api.dynamodb(), rig.api.store.table(), items)
        .await
        .unwrap();
    let last = outbound_adapters::store::keys::contact(&id(contacts.last().unwrap()));
    // The cursor past every contact, as a run's slice moves it.
    let stored = rig.engine.store.task(&owner, &task).await.unwrap();
    let now = rig.clock.now();
    let slice = outbound_model::task::RunSlice {
        room: 0,
        until: now,
        from: None,
        to: None,
    };
    let store = &rig.engine.store;
    assert!(store
        .take_slice(&owner, &stored, "fixture", Some(&last), &slice)
        .await
        .unwrap());
    store
        .give_back_room(&owner, &stored.id, "fixture")
        .await
        .unwrap();
    let fixture = TaskFixture {
        id: task_id,
        source,
        contacts: contacts.clone(),
    };
    (fixture, contacts)
}

/// One dial run with nothing to call: whether it completed the task, and its DynamoDB requests.
async fn check_run(rig: &Rig, task: &TaskFixture) -> (bool, usize) {
    rig.api.calls.take();
    let report = rig
        .engine
        .dial(&tenant(OWNER), &id(&task.id), 10)
        .await
        .unwrap();
    (report.completed, rig.api.calls.take())
}

/// D13: the completion check of a large task reads a bounded page of contacts a dial run and
/// resumes where the last run stopped, so its work per run does not grow with the data source:
/// 1,200 contacts at 50 a run complete on the 25th run, each run the same requests at most
/// (the task, its retries and next contacts, the waiting index, the data source, one page of
/// contacts and of their states, the mark; the next contacts and the page of contacts are each
/// one Query a contact shard, seldom two) whatever the data source's size.
#[tokio::test]
async fn completion_reads_a_bounded_page_a_run_and_resumes() {
    let rig = rig(ALL_SUCCESS, |s| s.sweep_page = 50).await;
    let (task, _) = dialled_out(&rig, 1200).await;
    let mut requests = Vec::new();
    for run in 1..=24 {
        let (completed, calls) = check_run(&rig, &task).await;
        assert!(
            !completed,
            "completed at run {run}, before reading every contact"
        );
        requests.push(calls);
    }
    let (completed, calls) = check_run(&rig, &task).await;
    assert!(completed, "the 25th run finds the end of the data source");
    requests.push(calls);
    let shards = outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS as usize;
    assert!(
        requests.iter().all(|n| *n <= 11 + 2 * 2 * shards),
        "requests per run: {requests:?}"
    );
    assert_eq!(rig.stored(&task.id).await.status, TaskStatus::Completed);
}

/// D13: a contact added while the completion check is under way is dialled before the task
/// completes: the check starts over, and a completion that read the data source before the add
/// is refused (409) and changes nothing. A contact found behind the cursor with no state (an
/// import that committed behind the dialer) is dialled too.
#[tokio::test]
async fn contacts_added_during_the_completion_check_are_dialled_first() {
    let rig = rig(ALL_SUCCESS, |s| s.sweep_page = 50).await;
    let (task, contacts) = dialled_out(&rig, 300).await;
    for _ in 0..3 {
        assert!(!check_run(&rig, &task).await.0);
    }
    let (owner, task_id) = (tenant(OWNER), id(&task.id));
    let before_add = rig.stored(&task.id).await;
    let source_before = rig.api.stored_source(OWNER, &task.source).await;

    let added = rig.api.contact(OWNER, &task.source, &phone(5000)).await;
    let late = rig
        .engine
        .store
        .complete_idle(&owner, &before_add, source_before.contacts_added);
    let snapshot = rig.api.snapshot().await;
    assert!(matches!(late.await, Err(Error::Conflict(_))));
    assert_eq!(
        rig.api.snapshot().await,
        snapshot,
        "the refused completion changed nothing"
    );

    // A state lost behind the cursor: the check finds the contact never dialled.
    let behind = &contacts[120];
    rig.api
        .dynamodb()
        .delete_item()
        .table_name(rig.api.store.table())
        .key(
            "pk",
            AttributeValue::S(outbound_adapters::store::keys::task_contacts(
                &owner, &task_id,
            )),
        )
        .key(
            "sk",
            AttributeValue::S(outbound_adapters::store::keys::contact(&id(behind))),
        )
        .send()
        .await
        .unwrap();
    rig.complete_within(&task.id, MINUTE, 15).await;
    let placed = rig.placed();
    assert!(placed.contains(&token(&task.id, &added, 1)), "{placed:?}");
    assert!(placed.contains(&token(&task.id, behind, 1)), "{placed:?}");
    assert_eq!(placed.len(), 2);
}

/// D12: a recall of every failed or unanswered contact takes at most a bounded number of them,
/// the first in contact order, and its read stops there, whatever the task's size.
#[tokio::test]
async fn the_failed_contacts_a_recall_takes_are_bounded() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let (task, contacts) = dialled_out(&rig, 120).await;
    let failed: Vec<String> = contacts.iter().step_by(2).cloned().collect();
    for contact in &failed {
        rig.api.seed_outcome(OWNER, &task.id, contact, 2, 1).await;
    }
    let failed: Vec<outbound_model::Id> = failed.iter().map(|c| id(c)).collect();
    let owner = tenant(OWNER);
    let stored = rig.api.stored_task(OWNER, &task.id).await;
    let store = &rig.engine.store;
    let first = store
        .failed_task_contacts(&owner, &stored, 25)
        .await
        .unwrap();
    assert_eq!(first, failed[..25]);
    let every = store
        .failed_task_contacts(&owner, &stored, 10_000)
        .await
        .unwrap();
    assert_eq!(every, failed);
}

/// Runs the recall jobs among `jobs` (dial queue bodies), as the dialer would: how many.
async fn run_recall_jobs(rig: &Rig, jobs: &[String]) -> usize {
    let mut ran = 0;
    for job in jobs {
        if serde_json::from_str::<Value>(job).unwrap()["kind"] == "recall" {
            DialInbox::Jobs
                .handle(&rig.engine, job.to_owned())
                .await
                .unwrap();
            ran += 1;
        }
    }
    ran
}

/// D12: a large recall is applied in bounded chunks (`DIAL_RECALL_CHUNK`), each job handing the
/// rest to the next through the dial queue, and a lost job is sent again by the tick and
/// resumes where the last one stopped, never from the start.
#[tokio::test]
async fn a_large_recall_is_applied_in_chunks_that_resume() {
    let rig = rig(ALL_SUCCESS, |s| s.recall_chunk = 50).await;
    let (task, contacts) = dialled_out(&rig, 300).await;
    let recalled = rig
        .recall(&task.id, json!({ "contactIds": &contacts }))
        .await;
    assert_eq!(recalled.len(), 300);
    let applied = |stored: &Task| {
        (
            stored.pending_recall.is_some(),
            stored.pending_recall_applied,
        )
    };

    assert_eq!(run_recall_jobs(&rig, &rig.take_dial_jobs().await).await, 1);
    assert_eq!(applied(&rig.stored(&task.id).await), (true, 50));
    let lost = rig.take_dial_jobs().await;
    assert_eq!(lost.len(), 1, "the next chunk's job, lost here");

    rig.clock.advance(Duration::from_secs(61));
    rig.engine.tick().await.unwrap();
    assert_eq!(run_recall_jobs(&rig, &rig.take_dial_jobs().await).await, 1);
    assert_eq!(
        applied(&rig.stored(&task.id).await),
        (true, 100),
        "resumed at 50"
    );

    let mut jobs = 2;
    loop {
        let ran = run_recall_jobs(&rig, &rig.take_dial_jobs().await).await;
        if ran == 0 {
            break;
        }
        jobs += ran;
    }
    assert_eq!(jobs, 6, "300 contacts in chunks of 50");
    assert_eq!(applied(&rig.stored(&task.id).await), (false, 0));
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    assert_eq!(states.len(), 300);
    assert!(
        states
            .values()
            .all(|s| s.recalled && !s.done && s.allowance == s.attempts + 3),
        "every contact recalled once"
    );
}

/// The calls in flight each capacity shard holds now.
async fn shard_counts(rig: &Rig, shards: u32) -> Vec<i64> {
    let mut counts = Vec::new();
    for shard in 0..shards {
        let item = rig
            .api
            .dynamodb()
            .get_item()
            .table_name(rig.api.store.table())
            .key(
                "pk",
                AttributeValue::S(outbound_adapters::store::keys::dialer(shard)),
            )
            .key(
                "sk",
                AttributeValue::S(outbound_adapters::store::keys::CAPACITY.into()),
            )
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        let count = item
            .item()
            .and_then(|item| item.get("in_flight"))
            .and_then(|value| value.as_n().ok())
            .map_or(0, |n| n.parse().unwrap());
        counts.push(count);
    }
    counts
}

/// D13: with the service's calls in flight spread over capacity shards
/// (`DIAL_CAPACITY_SHARDS`), each shard holds its part of the cap, the service never holds more
/// than its cap, and every outcome gives its place back to the shard it was taken in.
#[tokio::test]
async fn capacity_shards_hold_their_parts_and_get_their_places_back() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 6;
        s.rate_per_second = 4;
        s.capacity_shards = 4;
    })
    .await;
    let task = rig.running(12, json!({"maxDialCount": 1})).await;
    rig.tick_and_dial().await;
    let going = rig.take_events().await;
    let counts = shard_counts(&rig, 4).await;
    let parts = [2, 2, 1, 1];
    assert!(
        counts
            .iter()
            .zip(parts)
            .all(|(n, part)| (0..=part).contains(n)),
        "{counts:?}"
    );
    assert_eq!(counts.iter().sum::<i64>(), going.len() as i64);
    assert_eq!(rig.service_in_flight().await as usize, going.len());
    assert!(!going.is_empty() && going.len() <= 6);
    for ended in &going {
        DialInbox::CallEvents
            .handle(&rig.engine, (ended).to_owned())
            .await
            .unwrap();
    }
    assert_eq!(shard_counts(&rig, 4).await, vec![0, 0, 0, 0]);

    rig.complete_within(&task.id, MINUTE, 12).await;
    assert_eq!(rig.placed().len(), 12);
    assert_eq!(shard_counts(&rig, 4).await, vec![0, 0, 0, 0]);
}

/// D13, D11: a contact deleted from the data source before its first call is never dialled and
/// does not keep the task from completing.
#[tokio::test]
async fn a_contact_deleted_before_its_call_is_skipped() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(3, json!({})).await;
    rig.delete_contact(&task, &task.contacts[1]).await;

    rig.complete(&task.id, MINUTE).await;
    assert_eq!(rig.placed(), calls(&task, &[0, 2], 1));
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    assert!(!states.contains_key(&task.contacts[1]));
    assert_eq!(rig.detail(&task.id).await["callCount"], 2);
}

/// D13: a contact deleted while it waits for its retry is not called again, and the task
/// completes without it.
#[tokio::test]
async fn a_contact_deleted_while_waiting_for_a_retry_is_not_redialled() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig
        .running(3, json!({"maxDialCount": 2, "callInterval": 10}))
        .await;
    rig.round().await;
    assert_eq!(rig.placed().len(), 3);
    rig.delete_contact(&task, &task.contacts[0]).await;

    rig.clock.advance(MINUTE);
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(set(&rig.placed()[3..]), set(&calls(&task, &[1, 2], 2)));
    assert_eq!(rig.placed().len(), 5);
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    let deleted = &states[&task.contacts[0]];
    assert_eq!((deleted.attempts, deleted.done), (1, true));
    assert_eq!(rig.detail(&task.id).await["callCount"], 5);
}

/// D19: a deleted contact finished by two runs that read the same state (both found its retry
/// due) moves the diagnostics counters once: the second finish finds it done.
#[tokio::test]
async fn a_deleted_contact_finished_twice_moves_the_counters_once() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig
        .running(2, json!({"maxDialCount": 2, "callInterval": 10}))
        .await;
    rig.round().await;
    rig.delete_contact(&task, &task.contacts[0]).await;
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    let waiting = states[&task.contacts[0]].clone();
    let (owner, task_id) = (tenant(OWNER), id(&task.id));
    let counters = || async {
        let (_, counters) = rig
            .engine
            .store
            .task_with_counters(&owner, &task_id)
            .await
            .unwrap();
        (counters.waiting, counters.final_)
    };
    assert_eq!(counters().await, (2, 0));

    let stored = rig.stored(&task.id).await;
    for _ in 0..2 {
        rig.engine
            .store
            .finish_deleted(&owner, &stored, &waiting)
            .await
            .unwrap();
    }
    assert_eq!(
        counters().await,
        (1, 0),
        "the deleted contact left waiting once"
    );
}

/// D23: a task whose contacts all wait (here an hour's callInterval) asks for nothing: after
/// the run that found nothing due it gets neither a share nor a dial run, and a newer task of the
/// same tenant gets the whole service; an outcome or a recall would make it ask again.
#[tokio::test]
async fn an_idle_task_gives_its_share_to_one_with_work() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let older = rig
        .running(2, json!({"maxDialCount": 3, "callInterval": 3600}))
        .await;
    rig.round().await;
    assert_eq!(rig.placed().len(), 2);
    rig.clock.advance(MINUTE);
    rig.round().await;
    assert_eq!(rig.placed().len(), 2, "nothing due for an hour");
    assert!(rig.stored(&older.id).await.idle_until.is_some());

    let newer = rig.running(12, json!({"maxDialCount": 1})).await;
    let report = rig.tick_and_dial().await;
    assert_eq!((report.in_window, report.idle, report.dial_jobs), (2, 1, 1));
    let placed_newer = rig.placed()[2..].to_vec();
    assert_eq!(
        placed_newer.len(),
        10,
        "the service's ten calls, all the newer task's"
    );
    assert!(placed_newer.iter().all(|call| call.starts_with(&newer.id)));
    assert_eq!(rig.stored(&newer.id).await.in_flight, 10);
}

/// D23: runs of one task that overlap never hold more calls in flight than its share between
/// them: a claim is capped by the run's share, not the per-task cap.
#[tokio::test]
async fn overlapping_runs_of_a_task_stay_within_its_share() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(12, json!({"maxDialCount": 1})).await;
    let (owner, task_id) = (tenant(OWNER), id(&task.id));
    let (first, second) = futures::future::join(
        rig.engine.dial(&owner, &task_id, 4),
        rig.engine.dial(&owner, &task_id, 4),
    )
    .await;
    assert_eq!(first.unwrap().placed + second.unwrap().placed, 4);
    assert_eq!(rig.stored(&task.id).await.in_flight, 4);
}

/// D19, D23: a task that gets no capacity (its tenant's cap is held by an older task) says
/// CAPACITY, not `dialing: true`; the service's total, other tenants' calls included, does not
/// enter into it.
#[tokio::test]
async fn a_task_held_back_by_capacity_says_so() {
    let rig = rig(ALL_SUCCESS, |s| s.tenant_max_in_flight = Some(1)).await;
    let older = rig.running(3, json!({"maxDialCount": 1})).await;
    let newer = rig.running(3, json!({"maxDialCount": 1})).await;
    rig.tick_and_dial().await;
    assert_eq!(rig.placed().len(), 1, "the tenant's one call");
    assert_eq!(rig.stored(&older.id).await.in_flight, 1);
    let diagnostics = rig
        .api
        .get(OWNER, &format!("/api/task/{}/diagnostics", newer.id))
        .await;
    let diagnostics = diagnostics.ok();
    assert_eq!(
        (&diagnostics["dialing"], &diagnostics["blockedBy"]),
        (&json!(false), &json!("CAPACITY"))
    );
}

/// D13: the tick reads the running-task and calls-in-flight indexes only, so its DynamoDB
/// requests do not grow with DRAFT or STOPPED tasks, nor with a few more running ones.
#[tokio::test]
async fn the_tick_reads_only_the_running_and_in_flight_indexes() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let tick_cost = || async {
        rig.api.calls.take();
        let report = rig.engine.tick().await.unwrap();
        (report.running, rig.api.calls.take())
    };
    // One query per shard of the running-task index and one per shard of the in-flight index
    // (each a single page at these sizes): 16 + 16. With running tasks, one BatchGetItem of
    // their counters items, and one of their data sources and tenants' settings, for their
    // demand (D23), whatever their number up to 100 tasks and 50 data sources.
    let idle = 2 * INDEX_PARTITIONS as usize;
    let busy = idle + 2;
    assert_eq!(tick_cost().await, (0, idle));

    rig.running(1, json!({})).await;
    assert_eq!(tick_cost().await, (1, busy));

    let source = rig.api.source_with_contacts(OWNER, 1).await.0;
    for _ in 0..20 {
        rig.api
            .task(OWNER, &unique("Draft"), &source, json!({}))
            .await;
    }
    for _ in 0..5 {
        rig.api.task_in(OWNER, TaskStatus::Stopped, 1).await;
    }
    assert_eq!(
        tick_cost().await,
        (1, busy),
        "DRAFT and STOPPED cost nothing"
    );

    for _ in 0..3 {
        rig.running(1, json!({})).await;
    }
    assert_eq!(
        tick_cost().await,
        (4, busy),
        "nor do three more running tasks"
    );
}

/// D23: a task asks for what it can use: the older task with one contact gets a share of one,
/// and the newer one of the same tenant and priority the other nine at the same tick (it used
/// to get nothing while the older one held the per-task cap).
#[tokio::test]
async fn a_task_asks_only_for_the_contacts_it_has_left() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 10;
        s.max_in_flight_per_task = 10;
    })
    .await;
    let small = rig.running(1, json!({})).await;
    let large = rig.running(12, json!({})).await;
    assert!(small.id < large.id, "the small task is the older");
    let report = rig.tick_and_dial().await;
    assert_eq!((report.running, report.dial_jobs), (2, 2));
    let placed = rig.placed();
    let of = |task: &TaskFixture| placed.iter().filter(|t| t.starts_with(&task.id)).count();
    assert_eq!((of(&small), of(&large)), (1, 9));
}

/// D23: contacts waiting for a later call ask for nothing. A task whose ten calls all ended
/// unanswered, each to be called again in an hour, asks for no share at the next tick (no mark
/// rests it yet: its outcomes cleared it), and a newer task of the same tenant gets the whole
/// service at once. Its demand used to be its contacts not yet final: the two had five each.
#[tokio::test]
async fn contacts_waiting_for_a_later_call_ask_for_nothing() {
    let rig = rig(ALL_NO_ANSWER, |s| {
        s.max_in_flight = 10;
        s.max_in_flight_per_task = 10;
    })
    .await;
    let waiting = rig
        .running(10, json!({"maxDialCount": 2, "callInterval": 3600}))
        .await;
    rig.tick_and_dial().await;
    assert_eq!(rig.placed().len(), 10);
    rig.api.drain(&rig.engine, DialInbox::CallEvents).await;
    let stored = rig.stored(&waiting.id).await;
    assert_eq!(
        (stored.in_flight, stored.idle_until),
        (0, None),
        "ten outcomes, and no mark rests the task"
    );
    let fresh = rig.running(10, json!({})).await;
    rig.tick_and_dial().await;
    let placed = rig.placed();
    let of = |task: &TaskFixture| placed.iter().filter(|t| t.starts_with(&task.id)).count();
    assert_eq!((of(&waiting), of(&fresh)), (10, 10));
}

/// D13: between running tasks, priority 1 goes first when the service's calls in flight are
/// short, even when the priority-5 task is older.
#[tokio::test]
async fn priority_one_goes_first_when_the_budget_is_short() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 2;
        s.max_in_flight_per_task = 2;
    })
    .await;
    let low = rig.running(3, json!({"priority": 5})).await;
    let high = rig.running(3, json!({"priority": 1})).await;
    assert!(low.id < high.id, "the priority-5 task is the older");
    let report = rig.tick_and_dial().await;
    // D29: no dial job for the task left without a share.
    assert_eq!(
        (report.running, report.dial_jobs, report.starved),
        (2, 1, 1)
    );
    assert_eq!(rig.placed(), calls(&high, &[0, 1], 1));
    assert_eq!(rig.stored(&high.id).await.in_flight, 2);
    assert_eq!(rig.stored(&low.id).await.in_flight, 0);
    assert_eq!(rig.service_in_flight().await, 2);
}

/// D29: a tenant's tasks dialling in one tick stay within its share of the dial workers: with
/// 2 workers and 8 calls in flight, a tenant with six one-contact tasks holds 6 of the 7 calls
/// shared out and gets 2 dial jobs (ceil(2 x 6 / 7)), its other tasks marked held back; another
/// tenant's one task gets its job; the next tick dials the tasks that waited.
#[tokio::test]
async fn a_tenants_jobs_stay_within_its_share_of_the_dial_workers() {
    const OTHER: &str = "globex";
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 8;
        s.max_in_flight_per_task = 1;
        s.dial_workers = 2;
    })
    .await;
    let mut many = Vec::new();
    for _ in 0..6 {
        many.push(rig.running(1, json!({})).await);
    }
    rig.api.numbers_read_in(OTHER, "CN").await;
    let (source, _) = rig.api.source_with_contacts(OTHER, 1).await;
    let other = rig
        .api
        .task(OTHER, &unique("Task"), &source, json!({}))
        .await;
    rig.api
        .post(OTHER, "/api/task/publish", json!({"id": other}))
        .await
        .ok();
    let report = rig.tick_and_dial().await;
    assert_eq!(
        (report.running, report.dial_jobs, report.starved),
        (7, 3, 4),
        "2 of the six tasks' jobs and the other tenant's one"
    );
    let placed = rig.placed();
    let dialled = many
        .iter()
        .filter(|task| placed.iter().any(|call| call.starts_with(&task.id)))
        .count();
    assert_eq!(dialled, 2);
    assert!(placed.iter().any(|call| call.starts_with(&other)));
    let waited = &many
        .iter()
        .find(|task| !placed.iter().any(|call| call.starts_with(&task.id)))
        .unwrap()
        .id;
    let diagnostics = rig
        .api
        .get(OWNER, &format!("/api/task/{waited}/diagnostics"))
        .await;
    assert_eq!(diagnostics.ok()["blockedBy"], "CAPACITY");
}

/// D13: tenants share the service's calls in flight by their weights, whatever their tasks'
/// priorities: tenant B's priority-5 task dials from the first tick beside tenant A's
/// priority-1 task over many contacts, and every tick the shares follow `DIAL_TENANT_WEIGHTS`.
#[tokio::test]
async fn tenants_share_the_calls_in_flight_by_weight() {
    const OTHER: &str = "globex";
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 4;
        s.max_in_flight_per_task = 4;
        s.tenant_weights = [(tenant(OWNER), 3), (tenant(OTHER), 1)].into();
    })
    .await;
    let big = rig.running(24, json!({"priority": 1})).await;
    rig.api.numbers_read_in(OTHER, "CN").await;
    let (source, _) = rig.api.source_with_contacts(OTHER, 6).await;
    let small = rig
        .api
        .task(OTHER, &unique("Task"), &source, json!({"priority": 5}))
        .await;
    let published = rig
        .api
        .post(OTHER, "/api/task/publish", json!({"id": small}))
        .await;
    assert_eq!(published.ok()["status"], TaskStatus::Running.code());

    let count = |placed: &[String], task: &str| {
        placed
            .iter()
            .filter(|t| t.starts_with(&format!("{task}-")))
            .count()
    };
    for round in 1..=3 {
        rig.round().await;
        let placed = rig.placed();
        assert_eq!(
            (count(&placed, &big.id), count(&placed, &small)),
            (3 * round, round),
            "round {round}"
        );
        rig.clock.advance(MINUTE);
    }
    assert_eq!(rig.service_in_flight().await, 0);
}

/// D13: a dial run takes the calls in flight freed since the tick: its job carries the task's
/// share of the calls in flight, not the free calls the tick saw, so the runs of a tick that
/// found the service full still place calls once those calls end.
#[tokio::test]
async fn a_run_takes_the_calls_freed_since_the_tick() {
    let rig = rig(ALL_NO_ANSWER, |s| {
        s.max_in_flight = 2;
        s.max_in_flight_per_task = 2;
    })
    .await;
    let task = rig.running(6, json!({"maxDialCount": 1})).await;
    rig.tick_and_dial().await;
    assert_eq!(rig.placed(), calls(&task, &[0, 1], 1));
    let going = rig.take_events().await;
    assert_eq!(going.len(), 2, "both calls still going");

    rig.clock.advance(MINUTE);
    assert_eq!(rig.engine.tick().await.unwrap().dial_jobs, 1);
    assert_eq!(rig.service_in_flight().await, 2, "full when the tick ran");
    for ended in &going {
        DialInbox::CallEvents
            .handle(&rig.engine, (ended).to_owned())
            .await
            .unwrap();
    }
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    assert_eq!(rig.placed(), calls(&task, &[0, 1, 2, 3], 1));
}

/// D9, D13: the daily window (both minutes included, in the task's zone) is checked by the tick
/// and again by the dial run that places the calls.
#[tokio::test]
async fn the_window_is_checked_at_the_tick_and_when_placing() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    // Read in the task's zone (D15's TASK), the window is the task's alone and the tick checks it.
    let window = json!({"dailyStartTime": "10:00", "dailyEndTime": "10:30", "timeZone": "UTC",
        "windowTimeZone": "TASK"});
    let task = rig.running(2, window).await;
    let tick = || async {
        let report = rig.engine.tick().await.unwrap();
        (report.running, report.in_window, report.dial_jobs)
    };

    rig.advance_to_utc(9, 59, 30);
    assert_eq!(tick().await, (1, 0, 0), "before the window");
    assert_eq!(rig.api.drain(&rig.engine, DialInbox::Jobs).await, 0);

    rig.advance_to_utc(10, 30, 30);
    assert_eq!(tick().await, (1, 1, 1), "inside the end minute");
    rig.advance_to_utc(10, 31, 0);
    // The dial job, and the job that copies the tenant's do-not-call guards the first time the
    // tick reads the tenant (D16).
    assert_eq!(rig.api.drain(&rig.engine, DialInbox::Jobs).await, 2);
    assert!(rig.placed().is_empty(), "the window closed before the run");
    assert_eq!(rig.stored(&task.id).await.in_flight, 0);

    rig.advance_to_utc(10, 0, 0);
    assert_eq!(tick().await, (1, 1, 1), "the next day's window");
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    assert_eq!(rig.placed(), calls(&task, &[0, 1], 1));
}

/// D13: a plain retry that is due is called even while a page (100) or more of recalled
/// contacts wait for their own call interval: recalled contacts go first only among those due.
#[tokio::test]
async fn a_due_retry_is_not_starved_by_recalled_contacts_not_yet_due() {
    let rig = rig(ALL_NO_ANSWER, |s| {
        s.max_in_flight = 200;
        s.max_in_flight_per_task = 200;
    })
    .await;
    let task = rig
        .running(101, json!({"maxDialCount": 2, "callInterval": 600}))
        .await;
    let (plain, recalled) = task.contacts.split_first().unwrap();
    let started = rig.clock.now();
    rig.round().await;
    assert_eq!(rig.placed().len(), 101, "every contact once, no answer");

    let ids = json!({ "contactIds": recalled });
    assert_eq!(rig.recall(&task.id, ids).await.len(), 100);
    rig.catch_up();
    rig.clock.advance(Duration::from_secs(5));
    rig.round().await;
    assert_eq!(
        rig.placed().len(),
        201,
        "the recalled ones at once, attempt 2"
    );
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    let at = |contact: &String| states[contact].next_attempt_at.unwrap().0;
    assert_eq!(at(plain), started.0 + 600_000);
    assert!(
        recalled.iter().all(|c| at(c) > at(plain)),
        "they wait longer"
    );

    // The plain retry is due; no recalled contact is.
    let wait = Duration::from_millis((at(plain) - rig.clock.now().0).unsigned_abs());
    rig.clock.advance(wait + Duration::from_secs(1));
    rig.round().await;
    assert_eq!(rig.placed().len(), 202);
    assert_eq!(rig.placed()[201], token(&task.id, plain, 2));
}

/// D10, D12: a recall that commits after the engine completed the task it read as RUNNING
/// cannot queue its contacts on the COMPLETED task, where nothing would dial them: the write is
/// refused and changes nothing, and a recall of the COMPLETED task requeues it and dials them.
#[tokio::test]
async fn a_recall_racing_completion_is_never_lost() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig.running(2, json!({"maxDialCount": 1})).await;
    rig.round().await;
    let read = rig.stored(&task.id).await;
    assert_eq!(
        read.status,
        TaskStatus::Running,
        "every outcome final, not yet completed"
    );
    rig.complete(&task.id, MINUTE).await;

    let before = rig.api.snapshot().await;
    let (owner, contact) = (tenant(OWNER), id(&task.contacts[0]));
    let late = rig.engine.store.queue_recall(
        &owner,
        &read,
        std::slice::from_ref(&contact),
        5,
        Timestamp::now(),
    );
    assert!(matches!(late.await, Err(Error::NotAllowed(_))));
    assert_eq!(
        rig.api.snapshot().await,
        before,
        "nothing queued on the COMPLETED task"
    );

    // The completion committed after the recall below read its clock (a dialer's clock a few
    // seconds ahead, or a completion that won the race): the task's last change is later.
    let completed_at = Timestamp::now().0 + 10_000;
    aws_sdk_dynamodb::Client::new(&rig.api.sdk)
        .update_item()
        .table_name(&rig.api.resources.table)
        .key("pk", AttributeValue::S(keys::tenant(&tenant(OWNER))))
        .key("sk", AttributeValue::S(keys::task(&id(&task.id))))
        .update_expression("SET updated_at = :at")
        .expression_attribute_values(":at", AttributeValue::N(completed_at.to_string()))
        .send()
        .await
        .unwrap();
    let ids = json!({ "contactIds": [&task.contacts[0]] });
    assert_eq!(
        rig.recall(&task.id, ids).await,
        vec![task.contacts[0].clone()]
    );
    let requeued = rig.stored(&task.id).await;
    assert_eq!(requeued.status, TaskStatus::Running);
    assert!(requeued.updated_at.0 > completed_at, "changed after it");
    // D20: `time` orders one task's events: the requeue comes after the completion it undoes,
    // whatever the clock of the request that requeued it read.
    let moves: BTreeMap<(String, String), String> = rig
        .api
        .snapshot()
        .await
        .into_values()
        .filter(|item| item["sk"].as_s().is_ok_and(|sk| sk == "EVENT"))
        .map(|item| serde_json::from_str::<Value>(item["detail"].as_s().unwrap()).unwrap())
        .filter(|detail| detail["taskId"] == task.id.as_str() && detail["to"].is_string())
        .map(|detail| {
            let (from, to) = (detail["from"].as_str(), detail["to"].as_str());
            let time = detail["time"].as_str().unwrap().to_owned();
            ((from.unwrap().to_owned(), to.unwrap().to_owned()), time)
        })
        .collect();
    let completed = &moves[&("RUNNING".to_owned(), "COMPLETED".to_owned())];
    let requeued = &moves[&("COMPLETED".to_owned(), "RUNNING".to_owned())];
    assert!(requeued > completed, "{requeued} after {completed}");
    rig.catch_up();
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(
        rig.placed().last(),
        Some(&token(&task.id, &task.contacts[0], 2))
    );
}

/// D12, D13: a recall made during a call whose outcome is lost grants its fresh attempts after
/// that call all the same: the reconciled call is not one of them, as when the outcome arrives.
#[tokio::test]
async fn a_recall_during_a_lost_call_still_grants_fresh_attempts() {
    let rig = rig(ALL_NO_ANSWER, |s| s.reconcile_after = MINUTE).await;
    let task = rig
        .running(1, json!({"maxDialCount": 1, "callInterval": 10}))
        .await;
    let contact = &task.contacts[0];
    rig.tick_and_dial().await;
    assert_eq!(rig.placed(), calls(&task, &[0], 1));

    let ids = json!({ "contactIds": [contact] });
    assert_eq!(rig.recall(&task.id, ids).await, vec![contact.clone()]);
    assert_eq!(rig.take_events().await.len(), 1, "the outcome is lost");
    rig.catch_up();
    rig.clock.advance(Duration::from_secs(61));
    assert_eq!(rig.tick_and_dial().await.reconcile_jobs, 1);
    let states = rig.api.stored_task_contacts(OWNER, &task.id).await;
    let state = &states[contact];
    assert_eq!(
        (state.attempts, state.done, state.in_call),
        (1, false, None)
    );
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(
        rig.placed(),
        [calls(&task, &[0], 1), calls(&task, &[0], 2)].concat()
    );
}

/// D12: a contact recalled while its call is in flight still gets a fresh allowance of
/// `maxDialCount` attempts after that call: the recall is not used up by the call it overlapped.
#[tokio::test]
async fn a_recall_during_a_call_still_grants_fresh_attempts() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig
        .running(1, json!({"maxDialCount": 1, "callInterval": 10}))
        .await;
    let contact = &task.contacts[0];
    rig.tick_and_dial().await;
    assert_eq!(rig.placed(), calls(&task, &[0], 1));

    let ids = json!({ "contactIds": [contact] });
    assert_eq!(rig.recall(&task.id, ids).await, vec![contact.clone()]);
    assert_eq!(rig.api.drain(&rig.engine, DialInbox::CallEvents).await, 1);
    rig.catch_up();
    rig.complete(&task.id, MINUTE).await;
    assert_eq!(
        rig.placed(),
        [calls(&task, &[0], 1), calls(&task, &[0], 2)].concat()
    );
    assert_eq!(rig.contacts(&task.source).await[contact], (3, 2));
}

/// D23: runs of one task that overlap take different slices of its contacts and its room, so
/// adding runs adds calls, never claims lost to each other.
#[tokio::test]
async fn overlapping_runs_take_different_slices_and_lose_no_claim() {
    let rig = rig(ALL_SUCCESS, |s| {
        s.max_in_flight = 1_000;
        s.max_in_flight_per_task = 1_000;
        s.rate_per_second = 1_000;
    })
    .await;
    let task = rig.running(40, json!({"maxDialCount": 1})).await;
    let (owner, task_id) = (tenant(OWNER), id(&task.id));
    rig.api.calls.writes().take();
    let reports =
        futures::future::join_all((0..4).map(|_| rig.engine.dial(&owner, &task_id, 40))).await;
    let placed: usize = reports.into_iter().map(|r| r.unwrap().placed).sum();
    let claims = rig
        .api
        .calls
        .writes()
        .take()
        .iter()
        .filter(|w| w.transactional() && w.writes_sort_key("RATE#"))
        .count();
    assert_eq!(placed, 40, "every contact called once");
    assert_eq!(claims, placed, "no claim lost to another run");
    let stored = rig.stored(&task.id).await;
    assert_eq!(stored.in_flight, 40);
    assert!(stored.slices.is_empty(), "each run ended its slice");
}

/// D23: a resting task gets no dial run until its earliest contact is due (here an hour's
/// callInterval: none in the 59 ticks before), and a contact added to its data source wakes it
/// at the next tick.
#[tokio::test]
async fn a_resting_task_gets_no_run_until_due_or_a_contact_is_added() {
    let rig = rig(ALL_NO_ANSWER, |_| {}).await;
    let task = rig
        .running(2, json!({"maxDialCount": 3, "callInterval": 3600}))
        .await;
    rig.round().await;
    rig.clock.advance(MINUTE);
    rig.round().await;
    assert_eq!(rig.placed().len(), 2);
    let mut runs = 0;
    for _ in 0..57 {
        rig.clock.advance(MINUTE);
        runs += rig.tick_and_dial().await.dial_jobs;
    }
    assert_eq!(runs, 0, "no dial run between due times");

    let added = rig.api.contact(OWNER, &task.source, &phone(7000)).await;
    rig.clock.advance(MINUTE);
    let report = rig.tick_and_dial().await;
    assert_eq!((report.idle, report.dial_jobs), (0, 1));
    assert_eq!(
        rig.placed().last().unwrap(),
        &token(&task.id, &added, 1),
        "the added contact, at the next tick"
    );
}

/// D23 at more than one task: twenty resting tasks sharing the service's calls get no dial run
/// in the hour before their contacts are due.
#[tokio::test]
async fn twenty_resting_tasks_get_no_run_until_due() {
    let rig = rig(ALL_NO_ANSWER, |s| {
        s.max_in_flight = 100;
        s.max_in_flight_per_task = 10;
    })
    .await;
    for _ in 0..20 {
        rig.running(10, json!({"maxDialCount": 3, "callInterval": 3600}))
            .await;
    }
    // The shares go to the oldest tasks first (D13): every contact is called within a few
    // minutes, and each task rests after the run that finds nothing due.
    let mut minutes = 0;
    while rig.placed().len() < 200 && minutes < 10 {
        rig.round().await;
        rig.clock.advance(MINUTE);
        minutes += 1;
    }
    assert_eq!(rig.placed().len(), 200);
    for _ in 0..2 {
        rig.round().await;
        rig.clock.advance(MINUTE);
    }
    let mut runs = Vec::new();
    for _ in 0..40 {
        runs.push(rig.tick_and_dial().await.dial_jobs);
        rig.clock.advance(MINUTE);
    }
    assert!(
        runs.iter().all(|n| *n == 0),
        "dial runs each minute: {runs:?}"
    );
}

/// D23, D28: a claim the provider refused, given back (as reconcile gives back one whose first
/// give-back failed), wakes a task a run marked idle meanwhile: its contact is due again in 5 s,
/// and the next tick gives the task a run instead of leaving it resting until the mark ends.
#[tokio::test]
async fn a_refused_call_given_back_wakes_its_resting_task() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(1, json!({})).await;
    let stored = rig.stored(&task.id).await;
    let due = Due {
        contact_id: id(&task.contacts[0]),
        attempt: 1,
        state: None,
    };
    let caps = Caps {
        per_task: 10,
        total: 10,
        rate_per_second: 10,
    };
    let store = &rig.engine.store;
    let gate = outbound_adapters::store::dialing::Gate::default();
    let call = store
        .claim_call(&tenant(OWNER), &stored, &due, &gate, caps, rig.clock.now())
        .await
        .unwrap();
    let until = rig.clock.now().0 + 600_000;
    rig.api
        .seed_task_attribute(
            OWNER,
            &task.id,
            "idle_until",
            AttributeValue::N(until.to_string()),
        )
        .await;
    let resting = rig.stored(&task.id).await;
    assert_eq!(
        (resting.idle_until, resting.in_flight),
        (Some(Timestamp(until)), 1)
    );

    let again = Timestamp(rig.clock.now().0 + 5_000);
    store
        .release_call(
            &call,
            again,
            outbound_adapters::store::dialing::GiveBack::Refused,
        )
        .await
        .unwrap();
    let woken = rig.stored(&task.id).await;
    assert_eq!((woken.idle_until, woken.in_flight), (None, 0));
    assert_eq!(
        woken.awake,
        resting.awake + 1,
        "a run that read it before rests it no more"
    );
    rig.clock.advance(Duration::from_secs(6));
    let report = rig.engine.tick().await.unwrap();
    assert_eq!((report.idle, report.dial_jobs), (0, 1));
}

/// D13, D23: a run that finds no contact after the cursor while another run holds its slice
/// (taken, its calls not yet claimed) leaves the slice's contacts to that run: the completion
/// check, which queues contacts it finds behind the cursor with no state, does not run, so the
/// slice's contacts are neither queued under the run nor taken from it.
#[tokio::test]
async fn a_run_leaves_the_contacts_of_a_slice_another_run_holds() {
    let rig = rig(ALL_SUCCESS, |_| {}).await;
    let task = rig.running(3, json!({})).await;
    let (owner, task_id) = (tenant(OWNER), id(&task.id));
    let store = &rig.engine.store;
    let stored = store.task(&owner, &task_id).await.unwrap();
    let last = keys::contact(&id(task.contacts.last().unwrap()));
    // Another run's slice of all three: the cursor past them, its room taken, nothing claimed.
    let slice = outbound_model::task::RunSlice {
        room: 3,
        until: Timestamp(rig.clock.now().0 + 60_000),
        from: None,
        to: Some(last.clone()),
    };
    assert!(store
        .take_slice(&owner, &stored, "other", Some(&last), &slice)
        .await
        .unwrap());
    let report = rig.engine.dial(&owner, &task_id, 10).await.unwrap();
    assert_eq!((report.placed, report.completed), (0, false));
    assert!(
        rig.api
            .stored_task_contacts(OWNER, &task.id)
            .await
            .is_empty(),
        "no contact of the slice was given a state"
    );
    // The slice's run claims and calls each of them.
    store
        .end_slice(&owner, &task_id, "other", Some(&last), Some(None))
        .await
        .unwrap();
    let stored = store.task(&owner, &task_id).await.unwrap();
    assert_eq!(stored.cursor, None, "the slice's contacts come next");
    let report = rig.engine.dial(&owner, &task_id, 10).await.unwrap();
    assert_eq!(report.placed, 3);
}

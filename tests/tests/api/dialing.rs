//! The dialing engine end to end (D13): tasks published over HTTP are dialled by the same tick,
//! dialer and call-events handlers the Lambdas run, against moto, with the simulated provider.

use crate::dialing_support::*;
use crate::support::{id, tenant, unique, TestApi};
use outbound_adapters::telephony::{
    Busy, CallRequest, CallStatus, PlaceError, Provider, ServiceRefusal,
};
use outbound_local::inbox::DialInbox;
use outbound_model::TaskStatus;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

/// A published task on a fresh data source of `contacts` contacts, with `extra` task settings.
async fn running_task(
    api: &TestApi,
    contacts: usize,
    extra: Value,
) -> (String, String, Vec<String>) {
    api.numbers_read_in("acme", "CN").await;
    let (source, ids) = api.source_with_contacts("acme", contacts).await;
    let task = api.task("acme", &unique("Task"), &source, extra).await;
    api.post("acme", "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    (task, source, ids)
}

/// The task export as CSV: phone number -> (status, callCount).
async fn exported(api: &TestApi, task: &str, status: u8) -> BTreeMap<String, (String, String)> {
    let path = format!("/api/task/{task}/export?format=csv&status={status}");
    let (code, _, bytes) = api.download("acme", &path).await;
    assert_eq!(code, 200);
    let text = String::from_utf8(bytes).unwrap();
    let mut reader = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let titles = reader.headers().unwrap().clone();
    let column = |name: &str| titles.iter().position(|t| t == name).unwrap();
    let (phone, state, calls) = (column("phoneNumber"), column("status"), column("callCount"));
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            (
                row[phone].to_owned(),
                (row[state].to_owned(), row[calls].to_owned()),
            )
        })
        .collect()
}

/// D13, D7, D9: a 20-contact task runs to COMPLETED; detail, stat, list, the export's status
/// filters and the contacts' own status and callCount all tell the same story.
#[tokio::test]
async fn a_task_runs_to_completed_with_counters_that_add_up() {
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    let engine = api.engine(fast_settings(&api, DEFAULT_MIX), clock.clone());
    let (task, source, _) = running_task(&api, 20, json!({"callInterval": 10})).await;
    let step = Duration::from_secs(10);
    api.dial_until(
        &engine,
        &clock,
        step,
        ("acme", &task),
        TaskStatus::Completed,
        10,
    )
    .await;
    let detail = api.get("acme", &format!("/api/task/detail/{task}")).await;
    let detail = detail.ok().clone();
    let stat = api.get("acme", &format!("/api/task/{task}/stat")).await;
    let stat = stat.ok().clone();
    let calls = detail["callCount"].as_u64().unwrap();
    let (success, failed, no_answer) = (
        detail["successCount"].as_u64().unwrap(),
        detail["failCount"].as_u64().unwrap(),
        detail["noAnswerCount"].as_u64().unwrap(),
    );
    assert_eq!(detail["status"], 4);
    assert!(detail["endTime"].is_string());
    assert_eq!(success + failed + no_answer, calls);
    assert!(calls >= 20, "every contact at least once: {calls}");
    assert_eq!(stat["callCount"], calls);
    assert_eq!(stat["successCount"], success);
    assert_eq!(stat["totalDuration"], detail["callDuration"]);
    assert_eq!(stat["status"], 4);
    let listed = api.get("acme", "/api/task/list?pageSize=100").await;
    let row = listed.ok()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == task.as_str())
        .cloned()
        .unwrap();
    assert_eq!(
        (row["callCount"].clone(), row["successCount"].clone()),
        (json!(calls), json!(success))
    );

    let all = exported(&api, &task, 0).await;
    assert_eq!(all.len(), 20);
    let total_calls: u64 = all.values().map(|(_, c)| c.parse::<u64>().unwrap()).sum();
    assert_eq!(
        total_calls, calls,
        "the export's callCounts add up to callCount"
    );
    let succeeded = exported(&api, &task, 1).await;
    let unreached = exported(&api, &task, 2).await;
    assert_eq!(
        exported(&api, &task, 3).await.len(),
        0,
        "nobody is left undialled"
    );
    assert_eq!(succeeded.len() + unreached.len(), 20);
    assert!(succeeded.values().all(|(s, _)| s == "1"));
    assert!(
        unreached
            .values()
            .all(|(s, c)| (s == "2" || s == "3") && c == "3"),
        "a contact never reached was called maxDialCount (3) times: {unreached:?}"
    );
    // The contacts' own status and callCount (D7) agree with the export.
    for contact in api.all_contacts("acme", &source).await {
        let phone = contact["phoneNumber"].as_str().unwrap();
        let (status, count) = &all[phone];
        assert_eq!(contact["status"].to_string(), *status, "{phone}");
        assert_eq!(contact["callCount"].to_string(), *count, "{phone}");
    }
    // Nothing is left held: no call in flight, the data source free (D11).
    assert_eq!(api.stored_task("acme", &task).await.in_flight, 0);
    assert_eq!(api.stored_source("acme", &source).await.active_tasks, 0);
    assert_eq!(engine.store.calls_in_flight().await.unwrap(), 0);
}

/// D13: eight dialer runs at once on one task place exactly one call per (contact, attempt),
/// however the claims interleave.
#[tokio::test]
async fn eight_concurrent_dialer_runs_place_one_call_per_attempt() {
    let api = TestApi::start().await;
    let mut settings = fast_settings(&api, ALL_NO_ANSWER);
    settings.max_in_flight = 100;
    settings.max_in_flight_per_task = 100;
    let clock = ManualClock::starting_now();
    let engine = api.engine(settings, clock.clone());
    let (task, _, contacts) =
        running_task(&api, 12, json!({"callInterval": 10, "maxDialCount": 2})).await;
    let (owner, task_id) = (tenant("acme"), id(&task));
    for round in 1..=2 {
        let runs = (0..8).map(|_| engine.dial(&owner, &task_id, 100));
        let placed: usize = futures::future::join_all(runs)
            .await
            .into_iter()
            .map(|report| report.unwrap().placed)
            .sum();
        assert_eq!(placed, 12, "round {round}: one call per contact");
        assert_eq!(api.drain(&engine, DialInbox::CallEvents).await, 12);
        clock.advance(Duration::from_secs(10));
    }
    let tokens = engine.provider.placed.lock().unwrap().clone();
    let distinct: HashSet<&String> = tokens.iter().collect();
    assert_eq!(tokens.len(), 24);
    assert_eq!(
        distinct.len(),
        24,
        "no (task, contact, attempt) was placed twice"
    );
    for contact in &contacts {
        for attempt in 1..=2 {
            assert!(distinct.contains(&format!("{task}-{contact}-{attempt}")));
        }
    }
    let stored = api.stored_task("acme", &task).await;
    assert_eq!((stored.counters.calls, stored.counters.no_answer), (24, 24));
    assert_eq!(stored.in_flight, 0);
}

/// What Amazon Connect says of a contact flow it does not know: the account and the ARNs.
const PROVIDER_WORDS: &str = "Amazon Connect refused the call: ResourceNotFoundException: \
    arn:aws:connect:eu-west-1:482915736204:instance/5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915/\
    contact-flow/9e4a7c12 not found for role arn:aws:iam::482915736204:role/outbound-dialer";

/// A provider that refuses every call as Amazon Connect refuses a contact flow it does not know.
struct RefusesTheTask;

impl Provider for RefusesTheTask {
    async fn place(&self, _call: &CallRequest) -> Result<String, PlaceError> {
        Err(PlaceError::ServiceRefused {
            refusal: ServiceRefusal::Configuration,
            detail: PROVIDER_WORDS.into(),
        })
    }

    async fn describe(&self, _call_id: &str) -> Result<CallStatus, outbound_model::error::Error> {
        Ok(CallStatus::Unknown)
    }
}

/// D10, D13: a task whose calls the provider refuses for the service's configuration becomes
/// FAILED with a fixed failReason that says it is the service's configuration, never the
/// provider's words (account, ARNs); the refused claim is given back, so nothing stays in
/// flight or held.
#[tokio::test]
async fn a_task_the_provider_refuses_fails_with_its_reason() {
    let api = TestApi::start().await;
    let engine = api.engine(
        fast_settings(&api, DEFAULT_MIX),
        ManualClock::starting_now(),
    );
    let engine = engine.with_provider(|_| RefusesTheTask);
    let (task, source, _) = running_task(&api, 3, json!({})).await;
    engine.tick().await.unwrap();
    outbound_local::poller::drain(
        &aws_sdk_sqs::Client::new(&api.sdk),
        &api.resources.dial_queue_url,
        |body| DialInbox::Jobs.handle(&engine, body),
    )
    .await
    .unwrap();
    let detail = api.get("acme", &format!("/api/task/detail/{task}")).await;
    let detail = detail.ok();
    assert_eq!(detail["status"], 5);
    assert_eq!(
        detail["failReason"],
        ServiceRefusal::Configuration.fail_reason()
    );
    let shown = detail.to_string();
    for secret in ["482915736204", "arn:aws", "Amazon Connect refused"] {
        assert!(
            !shown.contains(secret),
            "{secret} shown to the tenant: {shown}"
        );
    }
    assert!(ServiceRefusal::Configuration
        .fail_reason()
        .contains("the service's configuration, not this task's"));
    assert!(detail["endTime"].is_string());
    assert_eq!(detail["callCount"], 0, "a refused call is no attempt");
    let stat = api.get("acme", &format!("/api/task/{task}/stat")).await;
    assert_eq!(stat.ok()["status"], 5);
    assert_eq!(api.stored_task("acme", &task).await.in_flight, 0);
    assert_eq!(engine.store.calls_in_flight().await.unwrap(), 0);
    assert_eq!(api.stored_source("acme", &source).await.active_tasks, 0);
}

/// The simulated provider of `settings`, reporting to this test's call-events queue.
fn simulated(
    api: &TestApi,
    settings: &outbound_app::config::dialing::DialerConfig,
) -> outbound_adapters::telephony::simulated::SimulatedProvider {
    let sdk = api.sdk.clone();
    outbound_adapters::telephony::simulated::SimulatedProvider::new(
        outbound_adapters::queue::Queue::new(
            outbound_adapters::aws::Lazy::new(move || aws_sdk_sqs::Client::new(&sdk)),
            Some(api.resources.call_events_queue_url.clone()),
        ),
        settings.simulated.clone(),
    )
}

/// A provider that refuses every call for quota, as Amazon Connect refuses campaign calls on an
/// instance whose campaign quota was never raised; once it may fall back (`fallback`), it
/// places calls as the simulated provider does.
struct NoCampaignQuota {
    inner: outbound_adapters::telephony::simulated::SimulatedProvider,
    fallback: bool,
    general: std::sync::atomic::AtomicBool,
}

impl Provider for NoCampaignQuota {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        if self.general.load(std::sync::atomic::Ordering::SeqCst) {
            return self.inner.place(call).await;
        }
        Err(PlaceError::Busy {
            kind: Busy::Quota,
            detail: "LimitExceededException: The allowed limit for the resource has been exceeded."
                .into(),
        })
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, outbound_model::error::Error> {
        self.inner.describe(call_id).await
    }

    fn fall_back(&self) -> bool {
        if self.fallback {
            self.general
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        self.fallback
    }
}

/// An engine whose provider has no campaign quota, falling back to general traffic or not.
fn no_campaign_quota(
    api: &TestApi,
    clock: &std::sync::Arc<ManualClock>,
    fallback: bool,
) -> outbound_dialing::engine::Engine<NoCampaignQuota> {
    let settings = fast_settings(api, ALL_NO_ANSWER);
    let inner = simulated(api, &settings);
    api.engine(settings, clock.clone())
        .with_provider(|_| NoCampaignQuota {
            inner,
            fallback,
            general: Default::default(),
        })
}

/// Runs `rounds` ticks of the dialing functions with `engine`, the clock moved past the busy
/// wait (5 s) after each.
async fn busy_rounds<P: Provider>(
    api: &TestApi,
    engine: &outbound_dialing::engine::Engine<P>,
    clock: &ManualClock,
    rounds: usize,
) {
    let sqs = aws_sdk_sqs::Client::new(&api.sdk);
    for _ in 0..rounds {
        engine.tick().await.unwrap();
        for (queue, url) in [
            (DialInbox::Jobs, &api.resources.dial_queue_url),
            (DialInbox::CallEvents, &api.resources.call_events_queue_url),
        ] {
            outbound_local::poller::drain(&sqs, url, |body| queue.handle(engine, body))
                .await
                .unwrap();
        }
        clock.advance(Duration::from_secs(6));
    }
}

/// D13: calls the provider refuses for quota with nothing else in flight, five times in a row,
/// mean the quota is missing (Connect's campaign calls are off until their quota is raised):
/// the task fails with a reason that says it is the service's configuration, no attempt spent,
/// instead of being retried every few seconds for ever.
#[tokio::test]
async fn a_missing_campaign_quota_fails_the_task_after_bounded_tries() {
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    let engine = no_campaign_quota(&api, &clock, false);
    let (task, source, _) = running_task(&api, 2, json!({})).await;
    busy_rounds(&api, &engine, &clock, 4).await;
    assert_eq!(
        api.stored_task("acme", &task).await.status,
        TaskStatus::Running
    );
    busy_rounds(&api, &engine, &clock, 1).await;
    let detail = api.get("acme", &format!("/api/task/detail/{task}")).await;
    let detail = detail.ok();
    assert_eq!(detail["status"], TaskStatus::Failed.code());
    assert_eq!(
        detail["failReason"],
        ServiceRefusal::CampaignQuota.fail_reason()
    );
    assert_eq!(detail["callCount"], 0, "a refused call is no attempt");
    assert_eq!(engine.store.calls_in_flight().await.unwrap(), 0);
    assert_eq!(api.stored_source("acme", &source).await.active_tasks, 0);
}

/// D13: where the deployment allows general traffic (`CONNECT_CAMPAIGN_FALLBACK=general`), a
/// missing campaign quota switches the calls to it instead, and the task dials on.
#[tokio::test]
async fn a_missing_campaign_quota_falls_back_to_general_traffic_where_allowed() {
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    let engine = no_campaign_quota(&api, &clock, true);
    let (task, _, _) = running_task(&api, 2, json!({"maxDialCount": 1})).await;
    busy_rounds(&api, &engine, &clock, 8).await;
    let detail = api.get("acme", &format!("/api/task/detail/{task}")).await;
    let detail = detail.ok();
    assert_eq!(detail["status"], TaskStatus::Completed.code());
    assert_eq!(detail["callCount"], 2);
}

/// Changes acme's settings (D14).
async fn settings(api: &TestApi, change: Value) {
    assert_eq!(
        api.post("acme", "/api/settings/update", change)
            .await
            .status,
        200
    );
}

/// D23: a call the provider refused is never an attempt and never counts toward the frequency
/// cap (D17): with a cap of one call a day, quota refusals still reach the bounded tries and the
/// deployment falls back; and the decision is the service's, not one dialer's: another
/// dialer instance, started afterwards, falls back on its first refusal instead of counting five.
#[tokio::test]
async fn refused_calls_never_count_toward_the_cap_and_the_quota_verdict_is_shared() {
    let api = TestApi::start().await;
    settings(
        &api,
        json!({"frequencyCap": {"maxCalls": 1, "periodHours": 24}}),
    )
    .await;
    let clock = ManualClock::starting_now();
    let engine = no_campaign_quota(&api, &clock, true);
    let (task, _, _) = running_task(&api, 2, json!({"maxDialCount": 1})).await;
    busy_rounds(&api, &engine, &clock, 8).await;
    let detail = api.get("acme", &format!("/api/task/detail/{task}")).await;
    let detail = detail.ok();
    assert_eq!(detail["status"], TaskStatus::Completed.code());
    assert_eq!(detail["callCount"], 2, "each number called once: its cap");

    settings(&api, json!({"frequencyCap": null})).await;
    let fresh = no_campaign_quota(&api, &clock, true);
    let (second, _, _) = running_task(&api, 2, json!({"maxDialCount": 1})).await;
    busy_rounds(&api, &fresh, &clock, 2).await;
    let states = api.stored_task_contacts("acme", &second).await;
    assert!(
        states.values().all(|state| state.quota_refusals == 0),
        "the new dialer counts no refusal of its own: it reads the verdict: {states:?}"
    );
    let detail = api.get("acme", &format!("/api/task/detail/{second}")).await;
    assert_eq!(detail.ok()["callCount"], 2);
}

/// D17: a number's attempts are kept for the longest period a cap may have (30 days), not the
/// cap's own: raising `periodHours` later still counts every attempt within the new period.
#[tokio::test]
async fn attempts_are_kept_for_the_longest_period_a_cap_may_have() {
    let api = TestApi::start().await;
    settings(
        &api,
        json!({"frequencyCap": {"maxCalls": 3, "periodHours": 24}}),
    )
    .await;
    let clock = ManualClock::starting_now();
    let engine = api.engine(fast_settings(&api, ALL_NO_ANSWER), clock.clone());
    let (task, _, _) = running_task(&api, 1, json!({})).await;
    let report = engine.dial(&tenant("acme"), &id(&task), 10).await.unwrap();
    assert_eq!(report.placed, 1);
    let expiries: Vec<i64> = api
        .snapshot()
        .await
        .into_values()
        .filter(|item| item["sk"].as_s().is_ok_and(|sk| sk == "FREQ"))
        .map(|item| item["expires_at"].as_n().unwrap().parse().unwrap())
        .collect();
    assert_eq!(expiries.len(), 1);
    let longest = outbound_model::plan::Clock::now(clock.as_ref()).0 / 1000 + 720 * 3600;
    assert!(expiries[0] >= longest, "{} < {longest}", expiries[0]);
}

/// What Amazon Connect answers a call over its rate: tried again later, not an attempt.
fn rate_refusal() -> PlaceError {
    PlaceError::Busy {
        kind: Busy::Rate,
        detail: "TooManyRequestsException".into(),
    }
}

/// The simulated provider, refusing every call for capacity while `busy` is set.
struct SometimesBusy {
    inner: outbound_adapters::telephony::simulated::SimulatedProvider,
    busy: std::sync::atomic::AtomicBool,
}

impl Provider for SometimesBusy {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        if self.busy.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(rate_refusal());
        }
        self.inner.place(call).await
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, outbound_model::error::Error> {
        self.inner.describe(call_id).await
    }
}

/// D13: a call the provider refuses for rate or capacity is tried again later and is not an
/// attempt: nothing is counted, nothing stays in flight, and the contact is called afterwards.
#[tokio::test]
async fn a_busy_provider_costs_no_attempt() {
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    let settings = fast_settings(&api, ALL_NO_ANSWER);
    let simulated = simulated(&api, &settings);
    let engine = api.engine(settings, clock.clone());
    let engine = engine.with_provider(|_| SometimesBusy {
        inner: simulated,
        busy: std::sync::atomic::AtomicBool::new(true),
    });
    let (task, _, contacts) = running_task(&api, 2, json!({"maxDialCount": 1})).await;
    let (owner, task_id) = (tenant("acme"), id(&task));
    let report = engine.dial(&owner, &task_id, 10).await.unwrap();
    assert_eq!(report.placed, 0);
    let stored = api.stored_task("acme", &task).await;
    assert_eq!((stored.counters.calls, stored.in_flight), (0, 0));
    assert_eq!(engine.store.calls_in_flight().await.unwrap(), 0);
    let states = api.stored_task_contacts("acme", &task).await;
    let waiting: Vec<_> = states
        .values()
        .filter(|s| s.attempts == 0 && !s.done)
        .collect();
    assert_eq!(
        waiting.len(),
        1,
        "the refused contact waits, its attempt not spent: {states:?}"
    );
    // Not before its short wait; then called, once per contact.
    engine
        .provider
        .busy
        .store(false, std::sync::atomic::Ordering::SeqCst);
    clock.advance(Duration::from_secs(5));
    let mut placed = 0;
    for _ in 0..3 {
        placed += engine.dial(&owner, &task_id, 10).await.unwrap().placed;
    }
    assert_eq!(placed, contacts.len());
    outbound_local::poller::drain(
        &aws_sdk_sqs::Client::new(&api.sdk),
        &api.resources.call_events_queue_url,
        |body| DialInbox::CallEvents.handle(&engine, body),
    )
    .await
    .unwrap();
    let stored = api.stored_task("acme", &task).await;
    assert_eq!((stored.counters.calls, stored.counters.no_answer), (2, 2));
}

/// The simulated provider refusing its first call for rate, after which every DynamoDB
/// transaction is cancelled (a storm of conflicts on the shared capacity), until the test lifts it.
struct RefusedThenConflicts {
    inner: outbound_adapters::telephony::simulated::SimulatedProvider,
    proxy: outbound_tests::faults::FaultProxy,
    refused: std::sync::atomic::AtomicBool,
}

impl Provider for RefusedThenConflicts {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        if !self.refused.swap(true, std::sync::atomic::Ordering::SeqCst) {
            self.proxy
                .set_plan(outbound_tests::faults::FaultPlan::CancelTransactions);
            return Err(rate_refusal());
        }
        self.inner.place(call).await
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, outbound_model::error::Error> {
        self.inner.describe(call_id).await
    }
}

/// D13: a refused call is no attempt even when giving its claim back cannot be written: the
/// refusal is marked on the contact's state, and reconcile gives the claim back instead of
/// recording "no outcome". The contact is then called once, its one attempt intact.
#[tokio::test]
async fn a_refused_call_whose_release_fails_costs_no_attempt() {
    let (api, proxy) = TestApi::start_with_faults().await;
    let clock = ManualClock::starting_now();
    let mut settings = fast_settings(&api, ALL_SUCCESS);
    settings.reconcile_after = Duration::from_secs(60);
    let simulated = simulated(&api, &settings);
    let engine = api.engine(settings, clock.clone());
    let engine = engine.with_provider(|_| RefusedThenConflicts {
        inner: simulated,
        proxy: proxy.clone(),
        refused: std::sync::atomic::AtomicBool::new(false),
    });
    let (task, _, contacts) = running_task(&api, 1, json!({"maxDialCount": 1})).await;
    let (owner, task_id) = (tenant("acme"), id(&task));
    let report = engine.dial(&owner, &task_id, 10).await.unwrap();
    assert_eq!(report.placed, 0);
    proxy.set_plan(outbound_tests::faults::FaultPlan::None);
    let states = api.stored_task_contacts("acme", &task).await;
    let state = &states[&contacts[0]];
    assert_eq!(
        (state.in_call, state.refused, state.attempts),
        (Some(1), Some(1), 0),
        "the claim is still held, marked refused: {state:?}"
    );

    clock.advance(Duration::from_secs(61));
    let sqs = aws_sdk_sqs::Client::new(&api.sdk);
    let mut reconciled = 0;
    // A share of one (D23): the run that settles the cursor past the called contact comes a
    // tick after the call.
    for _ in 0..4 {
        let ticked = engine.tick().await.unwrap();
        reconciled += ticked.reconcile_jobs;
        outbound_local::poller::drain(&sqs, &api.resources.dial_queue_url, |body| {
            DialInbox::Jobs.handle(&engine, body)
        })
        .await
        .unwrap();
        outbound_local::poller::drain(&sqs, &api.resources.call_events_queue_url, |body| {
            DialInbox::CallEvents.handle(&engine, body)
        })
        .await
        .unwrap();
        clock.advance(Duration::from_secs(5));
    }
    assert_eq!(reconciled, 1, "the refused claim was reconciled once");
    let stored = api.stored_task("acme", &task).await;
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(
        (
            stored.counters.calls,
            stored.counters.success,
            stored.in_flight
        ),
        (1, 1, 0),
        "one call, the one attempt maxDialCount allows, answered"
    );
    assert_eq!(engine.store.calls_in_flight().await.unwrap(), 0);
}

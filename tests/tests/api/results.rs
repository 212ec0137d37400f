//! What the flow found (D22), over HTTP with the simulated provider, whose flow sets the contact
//! field `simulatedResults` on an answered call: the results a task records on each contact, its
//! counters behind `GET /api/task/{id}/results`, the export's columns, the outcome's event, an
//! outcome delivered twice, a contact answered again after a recall; and Amazon Connect's path,
//! the flow-results function writing onto a placed call's record, which the outcome reads.

use crate::dialing_support::*;
use crate::events::committed;
use crate::files::{csv, read_export};
use crate::rig::{rig, Rig};
use crate::support::{id, tenant, unique, TestApi};
use outbound_dialing::flow_results::{self, ContactFlowEvent, FlowAnswer};
use outbound_local::inbox::DialInbox;
use outbound_model::call::CallAttempt;
use outbound_model::signature::CallSigner;
use outbound_model::{Id, TaskStatus, Tenant};
use outbound_tests::capacity::{sizes_for, WriteTotals};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const OWNER: &str = "acme";

impl Rig {
    /// A data source with a contact for each body of fields, each with a phone number of its
    /// own: its id and the contact ids.
    async fn source_of(&self, contacts: &[Value]) -> (String, Vec<String>) {
        let phones: Vec<String> = (0..contacts.len())
            .map(|n| format!("+1212555{n:04}"))
            .collect();
        let contacts: Vec<(&str, Value)> = phones
            .iter()
            .map(String::as_str)
            .zip(contacts.iter().cloned())
            .collect();
        self.source(&contacts).await
    }

    /// A RUNNING task over `source` recording `results`, one attempt a contact.
    async fn recording(&self, source: &str, results: &[&str]) -> String {
        self.published(
            source,
            json!({"resultAttributes": results, "maxDialCount": 1}),
        )
        .await
    }

    /// A task recording `outcome` over one contact whose start and its re-send both fail, after
    /// the tick and its dial run: in doubt, in flight, no call id saved. Its id and the contact's.
    async fn one_start_in_doubt(&self) -> (String, Vec<String>) {
        let (source, ids) = self
            .source_of(&[json!({"simulatedOutcomes": "START_FAILED,START_FAILED"})])
            .await;
        let task = self.recording(&source, &["outcome"]).await;
        self.engine.tick().await.unwrap();
        self.api.drain(&self.engine, DialInbox::Jobs).await;
        (task, ids)
    }

    /// Sets the contact's `simulatedResults` to `results`, recalls it by name and dials the task
    /// to completion again: the contact is answered once more.
    async fn answer_again(&self, source: &str, task: &str, contact: &str, results: &str) {
        let update = json!({"contactId": contact, "simulatedResults": results});
        let path = format!("/api/dataSource/{source}/contact/update");
        self.api.post(OWNER, &path, update).await.ok();
        let recall = json!({"contactIds": [contact]});
        let path = format!("/api/task/{task}/recall");
        self.api.post(OWNER, &path, recall).await.ok();
        self.complete_in(task, 6).await;
    }

    async fn results(&self, task: &str) -> Value {
        self.api
            .get(OWNER, &format!("/api/task/{task}/results"))
            .await
            .ok()
            .clone()
    }

    /// The task's export in `format` (`csv` or `excel`), direct and by a job, which must agree:
    /// title row first.
    async fn export(&self, task: &str, format: &str) -> Vec<Vec<String>> {
        let path = format!("/api/task/{task}/export?format={format}");
        let (status, _, direct) = self.api.download(OWNER, &path).await;
        assert_eq!(status, StatusCode::OK);
        let direct = read_export(&direct);
        let job = self
            .api
            .post(
                OWNER,
                &format!("/api/task/{task}/exportJob"),
                json!({"format": format}),
            )
            .await;
        let job = job.ok()["exportId"].as_str().unwrap().to_owned();
        assert_eq!(self.api.drain_exports().await, 1);
        let done = self.api.get(OWNER, &format!("/api/export/{job}")).await;
        let url = done.ok()["downloadUrl"].as_str().unwrap().to_owned();
        let file = reqwest::get(&url).await.unwrap().bytes().await.unwrap();
        assert_eq!(
            read_export(&file),
            direct,
            "{format}: the job's file is the direct one"
        );
        direct
    }
}

/// Each row of an export by its contact id, as title -> cell.
fn rows_by_id(rows: &[Vec<String>]) -> BTreeMap<String, BTreeMap<String, String>> {
    let titles = &rows[0];
    rows[1..]
        .iter()
        .map(|row| {
            let cells: BTreeMap<String, String> = titles.iter().cloned().zip(row.clone()).collect();
            (cells["id"].clone(), cells)
        })
        .collect()
}

fn counted(values: &[(&str, u64)]) -> Value {
    values
        .iter()
        .map(|(value, count)| json!({"value": value, "count": count}))
        .collect()
}

#[tokio::test]
async fn a_tasks_results_are_recorded_counted_exported_and_told() {
    let rig = rig().await;
    let long = "é".repeat(300);
    let mut contacts = vec![
        json!({"simulatedOutcomes": "ANSWERED",
            "simulatedResults": "outcome=confirmed;amount=12.50;note=not recorded"}),
        json!({"simulatedOutcomes": "ANSWERED",
            "simulatedResults": format!("outcome=confirmed;amount={long}")}),
        json!({"simulatedOutcomes": "ANSWERED", "simulatedResults": "outcome=declined;amount==1+2"}),
        json!({"simulatedOutcomes": "NO_ANSWER", "simulatedResults": "outcome=confirmed;amount=5"}),
        json!({"simulatedOutcomes": "ANSWERED"}),
    ];
    // 55 more answered contacts, each with an outcome of its own: 57 values in all.
    for n in 0..55 {
        contacts.push(json!({"simulatedResults": format!("outcome=v{n:02}")}));
    }
    let (source, ids) = rig.source_of(&contacts).await;
    let task = rig.recording(&source, &["outcome", "amount"]).await;
    rig.complete_in(&task, 12).await;

    // 59 answered contacts: two confirmed, one declined, 55 of one each, one that set nothing.
    let cut = "é".repeat(256);
    let mut outcomes = vec![("confirmed", 2), ("declined", 1)];
    let others: Vec<String> = (0..48).map(|n| format!("v{n:02}")).collect();
    outcomes.extend(others.iter().map(|value| (value.as_str(), 1)));
    let expected = json!({"attributes": [
        {"name": "outcome", "values": counted(&outcomes), "otherCount": 7, "missingCount": 1},
        {"name": "amount", "values": counted(&[("12.50", 1), ("=1+2", 1), (cut.as_str(), 1)]),
            "otherCount": 0, "missingCount": 56},
    ]});
    rig.api.calls.take();
    assert_eq!(rig.results(&task).await, expected);
    assert_eq!(
        rig.api.calls.take(),
        2,
        "the task, then one BatchGetItem of its result counters"
    );

    // Each contact's state holds what its answered call reported of the task's names.
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    let results = |n: usize| -> Vec<(String, String)> {
        states[&ids[n]].results.clone().into_iter().collect()
    };
    assert_eq!(
        results(0),
        [
            ("amount".to_owned(), "12.50".to_owned()),
            ("outcome".to_owned(), "confirmed".to_owned())
        ]
    );
    assert_eq!(results(1)[0].1, cut, "cut at 256 characters");
    assert_eq!(results(3), [], "not answered: nothing recorded");
    assert_eq!(results(4), []);
    assert!(states[&ids[4]].answered && !states[&ids[3]].answered);
    assert!(states.values().all(|state| !state.message_left));

    // The export: the caller ID and the message left, then a column per result attribute; a
    // result that reads as a formula is guarded in CSV and a plain string cell in XLSX (D27).
    for (format, formula) in [("csv", "'=1+2"), ("excel", "=1+2")] {
        let rows = rig.export(&task, format).await;
        let titles = &rows[0];
        assert_eq!(
            titles[titles.len() - 7..],
            [
                "lastReason",
                "skipReason",
                "callerId",
                "messageLeft",
                "callbackAt",
                "result.outcome",
                "result.amount"
            ],
            "{format}"
        );
        let rows = rows_by_id(&rows);
        let cells = |n: usize| {
            let row = &rows[&ids[n]];
            [
                "lastReason",
                "callerId",
                "messageLeft",
                "result.outcome",
                "result.amount",
            ]
            .map(|title| row[title].as_str())
        };
        assert_eq!(
            cells(0),
            ["ANSWERED", "", "false", "confirmed", "12.50"],
            "{format}"
        );
        assert_eq!(cells(1)[4], cut, "{format}");
        assert_eq!(
            cells(2),
            ["ANSWERED", "", "false", "declined", formula],
            "{format}"
        );
        assert_eq!(cells(3), ["NO_ANSWER", "", "false", "", ""], "{format}");
        assert_eq!(cells(4), ["ANSWERED", "", "false", "", ""], "{format}");
    }

    // The outcome's event carries what the call learnt.
    let events: Vec<Value> = committed(&rig.api)
        .await
        .into_values()
        .filter(|detail| detail["taskId"] == task.as_str() && detail["attempt"] == 1)
        .collect();
    assert_eq!(events.len(), 60);
    let event_of = |n: usize| {
        events
            .iter()
            .find(|event| event["contactId"] == ids[n].as_str())
            .unwrap()
    };
    assert_eq!(
        event_of(0)["results"],
        json!({"outcome": "confirmed", "amount": "12.50"})
    );
    assert_eq!(event_of(0)["messageLeft"], false);
    assert_eq!(event_of(0)["callerId"], Value::Null);
    assert_eq!(event_of(3)["results"], json!({}));
    assert_eq!(event_of(3)["reason"], "NO_ANSWER");

    // Unknown task: 404, as its detail.
    let unknown = format!("/api/task/{}/results", ulid::Ulid::new());
    rig.api.get(OWNER, &unknown).await.code(404);
    let other = rig
        .api
        .get("globex", &format!("/api/task/{task}/results"))
        .await;
    other.code(404);
}

/// An outcome delivered twice moves the counters once; a contact answered again after a recall
/// counts once, with its latest answer's values.
#[tokio::test]
async fn each_answered_contact_counts_once_with_its_latest_answer() {
    let rig = rig().await;
    let (source, ids) = rig
        .source_of(&[
            json!({"simulatedResults": "outcome=yes"}),
            json!({"simulatedResults": "outcome=yes"}),
            json!({"simulatedOutcomes": "NO_ANSWER", "simulatedResults": "outcome=yes"}),
        ])
        .await;
    let task = rig.recording(&source, &["outcome"]).await;
    rig.engine.tick().await.unwrap();
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    let outcomes = rig
        .api
        .take_messages(&rig.api.resources.call_events_queue_url)
        .await;
    assert_eq!(outcomes.len(), 3);
    for body in outcomes.iter().chain(&outcomes) {
        DialInbox::CallEvents
            .handle(&rig.engine, body.clone())
            .await
            .unwrap();
    }
    let once = json!({"attributes": [
        {"name": "outcome", "values": counted(&[("yes", 2)]), "otherCount": 0, "missingCount": 0},
    ]});
    assert_eq!(rig.results(&task).await, once);
    assert_eq!(rig.diagnostics(&task).await["reasons"]["ANSWERED"], 2);

    // The flow says otherwise the second time; a recall names the answered contact (D12).
    rig.answer_again(&source, &task, &ids[0], "outcome=no")
        .await;
    let moved = json!({"attributes": [
        {"name": "outcome", "values": counted(&[("no", 1), ("yes", 1)]), "otherCount": 0,
            "missingCount": 0},
    ]});
    assert_eq!(rig.results(&task).await, moved);
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    assert_eq!(states[&ids[0]].attempts, 2);
    assert_eq!(
        states[&ids[0]].results.get("outcome").map(String::as_str),
        Some("no")
    );

    // Its flow sets nothing the third time: it still counts as answered, setting nothing.
    rig.answer_again(&source, &task, &ids[0], "").await;
    let unset = json!({"attributes": [
        {"name": "outcome", "values": counted(&[("yes", 1)]), "otherCount": 0, "missingCount": 1},
    ]});
    assert_eq!(rig.results(&task).await, unset);
    // D29: "no", which no contact holds any more, left the kept values (one of the 1,000
    // places) and its count with it.
    let counters = rig
        .api
        .snapshot()
        .await
        .into_iter()
        .find(|((_, sk), _)| sk == &outbound_adapters::store::keys::result_counts("outcome"))
        .map(|(_, item)| item)
        .expect("the outcome's counters");
    assert_eq!(counters["vals"].as_ss().unwrap(), &vec!["yes".to_owned()]);
    let counts = counters.keys().filter(|name| name.starts_with('c')).count();
    assert_eq!(counts, 1, "the count of yes only: {counters:?}");
}

/// Dials `task`'s contacts once and answers the provider's id of the call placed to `contact`.
async fn placed_call(rig: &Rig, task: &str, contact: &str) -> String {
    rig.engine.tick().await.unwrap();
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    let state = &rig.api.stored_task_contacts(OWNER, task).await[contact];
    state.call_id.clone().expect("placed")
}

/// The flow's event, as `tests/events/connect-flow-results.json` records it, for the call
/// `call_id` of attempt `attempt` (tenant, task, contact, attempt number), its attributes
/// signed by `signer` as the engine signs them (D29).
fn flow_event(
    signer: &CallSigner,
    call_id: &str,
    attempt: [&str; 4],
    parameters: Value,
) -> ContactFlowEvent {
    let mut event: Value =
        serde_json::from_str(include_str!("../../events/connect-flow-results.json")).unwrap();
    let data = &mut event["Details"]["ContactData"];
    data["ContactId"] = json!(call_id);
    data["InitialContactId"] = json!(call_id);
    for (name, value) in ["tenant", "taskId", "contactId", "attempt"]
        .into_iter()
        .zip(attempt)
    {
        data["Attributes"][name] = json!(value);
    }
    let [tenant, task, contact, number] = attempt;
    if let (Ok(tenant), Some(task_id), Some(contact_id)) =
        (Tenant::parse(tenant), Id::parse(task), Id::parse(contact))
    {
        let signed = CallAttempt {
            tenant,
            task_id,
            contact_id,
            attempt: number.parse().unwrap(),
        };
        data["Attributes"]["signature"] = json!(signer.sign(&signed));
    }
    event["Details"]["Parameters"] = parameters;
    serde_json::from_value(event).unwrap()
}

/// Amazon Connect's path (D22): the flow-results function writes the flow's values onto the
/// placed call's record, adding to what an earlier report wrote; the outcome keeps the task's
/// result attributes among them. A contact id with no record, or a contact that is not the
/// service's, is answered without error and writes nothing.
#[tokio::test]
async fn the_flows_report_reaches_the_call_record_and_its_outcome() {
    let rig = rig().await;
    let (source, ids) = rig
        .source_of(&[json!({"simulatedResults": "amount=3"})])
        .await;
    let task = rig
        .recording(&source, &["outcome", "amount", "extra"])
        .await;
    let call_id = placed_call(&rig, &task, &ids[0]).await;
    let ours = [OWNER, task.as_str(), ids[0].as_str(), "1"];

    let signer = &rig.engine.signer;
    let first = flow_event(
        signer,
        &call_id,
        ours,
        json!({"outcome": "confirmed", "amount": "12.50"}),
    );
    let answer = flow_results::record(&rig.api.store, signer, &first, flow_results::PATIENCE)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&answer).unwrap(),
        json!({"recorded": "true"})
    );
    // A later report: the attributes the flow set by then, and a parameter of its own.
    let mut second = flow_event(signer, &call_id, ours, json!({"extra": "1"}));
    let attributes = &mut second.details.contact_data.attributes;
    attributes.insert("outcome".into(), json!("confirmed"));
    flow_results::record(&rig.api.store, signer, &second, flow_results::PATIENCE)
        .await
        .unwrap();
    let record = rig
        .api
        .store
        .call_by_provider_id(&call_id)
        .await
        .unwrap()
        .unwrap();
    let written: Vec<(&str, &str)> = record
        .results
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        written,
        [
            ("amount", "12.50"),
            ("extra", "1"),
            ("outcome", "confirmed")
        ],
        "the block's parameters only (D29): no contact attribute, not even one the flow set"
    );

    rig.api.drain(&rig.engine, DialInbox::CallEvents).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    let kept: Vec<(&str, &str)> = state
        .results
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    assert_eq!(
        kept,
        [("amount", "3"), ("extra", "1"), ("outcome", "confirmed")],
        "the task's names only; the report at the call's end wins a name both set"
    );

    // No record under that id (never placed, or not yet): waits its patience, writes nothing.
    let before = rig.api.snapshot().await;
    let unknown = flow_event(
        signer,
        "7d1c0b9e-0000-4000-8000-000000000000",
        ours,
        json!({}),
    );
    let patience = Duration::from_millis(300);
    let answer = flow_results::record(&rig.api.store, signer, &unknown, patience)
        .await
        .unwrap();
    assert_eq!(answer, FlowAnswer { recorded: "false" });
    // Not one of the service's calls: no attribute names its attempt.
    let mut theirs = flow_event(signer, &call_id, ours, json!({"outcome": "other"}));
    theirs.details.contact_data.attributes.remove("taskId");
    let answer = flow_results::record(&rig.api.store, signer, &theirs, patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false");
    // Another attempt's values never land on this record.
    let other_attempt = [OWNER, task.as_str(), ids[0].as_str(), "2"];
    let stale = flow_event(signer, &call_id, other_attempt, json!({"outcome": "stale"}));
    let answer = flow_results::record(&rig.api.store, signer, &stale, patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false");
    // D29: a report after the outcome was recorded could be counted no more: refused.
    let late = flow_event(signer, &call_id, ours, json!({"outcome": "late"}));
    let answer = flow_results::record(&rig.api.store, signer, &late, patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false");
    // D29: attributes whose signature does not verify (a flow that changed them, an event
    // someone else sent) name no attempt: ignored, logged and counted.
    for signature in [json!("0".repeat(32)), json!(null)] {
        let mut forged = flow_event(signer, &call_id, ours, json!({"outcome": "forged"}));
        let attributes = &mut forged.details.contact_data.attributes;
        match &signature {
            Value::Null => attributes.remove("signature"),
            _ => attributes.insert("signature".into(), signature.clone()),
        };
        let answer = flow_results::record(&rig.api.store, signer, &forged, patience)
            .await
            .unwrap();
        assert_eq!(answer.recorded, "false", "{signature}");
    }
    assert_eq!(rig.api.snapshot().await, before, "nothing written");
}

/// D29: a report the flow makes after the outcome read the call record but before it was
/// written is not dropped: the outcome's condition on the record sees it, and the outcome is
/// recorded again with it.
#[tokio::test]
async fn a_report_between_the_outcomes_read_and_its_write_is_counted() {
    let rig = rig().await;
    let (source, ids) = rig.source_of(&[json!({})]).await;
    let task = rig.recording(&source, &["outcome"]).await;
    let call_id = placed_call(&rig, &task, &ids[0]).await;
    let ours = [OWNER, task.as_str(), ids[0].as_str(), "1"];
    let signer = &rig.engine.signer;
    let report = |value: &str| flow_event(signer, &call_id, ours, json!({"outcome": value}));
    let store = &rig.api.store;
    let patience = flow_results::PATIENCE;
    flow_results::record(store, signer, &report("maybe"), patience)
        .await
        .unwrap();
    let read = store.call_by_provider_id(&call_id).await.unwrap().unwrap();
    assert_eq!(read.results["outcome"], "maybe");
    flow_results::record(store, signer, &report("yes"), patience)
        .await
        .unwrap();
    let answered = outbound_model::call::Reason::Answered.report(30);
    rig.engine.record(read, &answered).await.unwrap();
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(
        state.results.get("outcome").map(String::as_str),
        Some("yes"),
        "the report that came in between, not the one the outcome read"
    );
    let answer = flow_results::record(store, signer, &report("late"), patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false", "after the outcome: refused");
}

/// The outcome's added cost per answered call with 2 result attributes, beside the same call in
/// a task that records none: the same transaction with 3 more items, the 2 counters and the
/// call record's mark that its reports are counted (D29).
#[tokio::test]
async fn an_answered_outcome_with_two_results_writes_three_more_items() {
    let rig = rig().await;
    let (source, _) = rig
        .source_of(&[json!({"simulatedResults": "outcome=confirmed;amount=12.50"})])
        .await;
    let mut costs = Vec::new();
    for results in [&[][..], &["outcome", "amount"][..]] {
        let task = rig.recording(&source, results).await;
        rig.engine.tick().await.unwrap();
        rig.api.drain(&rig.engine, DialInbox::Jobs).await;
        rig.api.calls.writes().take();
        rig.api.drain(&rig.engine, DialInbox::CallEvents).await;
        let writes = rig.api.calls.writes().take();
        let outcome: Vec<_> = writes
            .into_iter()
            .filter(|write| write.transactional() && write.writes_sort_key("EVENT"))
            .collect();
        assert_eq!(outcome.len(), 1, "one transaction for {task}");
        let stored = sizes_for(&rig.api.dynamodb(), &rig.api.resources.table, &outcome)
            .await
            .unwrap();
        costs.push(WriteTotals::of(&outcome, &stored));
        rig.complete_in(&task, 3).await;
    }
    eprintln!(
        "outcome write without results: {:?}; with 2: {:?}",
        costs[0], costs[1]
    );
    assert_eq!((costs[0].requests, costs[1].requests), (1, 1));
    assert_eq!(costs[1].items, costs[0].items + 3);
    // Each result counter and the call record are items under 1 KB here: 2 WCU each in a
    // transaction; the state and the event stay under their first KB.
    assert_eq!(costs[1].wcus, costs[0].wcus + 6, "{costs:?}");
}

/// `GET /api/task/{id}/results` over 1,000 answered contacts, its reads measured: `cargo test -p
/// outbound-local --test api results_at_a_thousand -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement, 10-25 minutes against moto (1,000 calls dialled)"]
async fn results_at_a_thousand_contacts_read_a_bounded_few_items() {
    let api = TestApi::start().await;
    let clock = ManualClock::starting_now();
    let mut settings = fast_settings(&api, ALL_SUCCESS);
    settings.max_in_flight = 200;
    settings.max_in_flight_per_task = 200;
    let engine = api.engine(settings, clock.clone());
    let source = api.data_source(OWNER, &unique("Thousand")).await;
    let mut rows = vec![vec![
        "phoneNumber".to_owned(),
        "simulatedResults".to_owned(),
    ]];
    for n in 0..1_000 {
        rows.push(vec![
            format!("+1212555{n:04}"),
            format!("outcome=o{};amount={}.00", n % 7, n * 3),
        ]);
    }
    let rows: Vec<Vec<&str>> = rows
        .iter()
        .map(|row| row.iter().map(String::as_str).collect())
        .collect();
    let rows: Vec<&[&str]> = rows.iter().map(Vec::as_slice).collect();
    let imported = api
        .batch_import(OWNER, &source, "thousand.csv", csv(&rows))
        .await;
    assert_eq!(imported.ok()["successCount"], 1_000);
    let extra = json!({"resultAttributes": ["outcome", "amount"], "maxDialCount": 1});
    let task = api.task(OWNER, &unique("Task"), &source, extra).await;
    api.post(OWNER, "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    let started = Instant::now();
    api.dial_until(
        &engine,
        &clock,
        Duration::from_secs(1),
        (OWNER, &task),
        TaskStatus::Completed,
        20,
    )
    .await;
    eprintln!("1,000 answered calls dialled in {:?}", started.elapsed());
    api.calls.take();
    api.calls.items().take();
    let answer = api.get(OWNER, &format!("/api/task/{task}/results")).await;
    let (calls, read) = (api.calls.take(), api.calls.items().take());
    let data = answer.ok();
    assert_eq!(data["attributes"][0]["values"].as_array().unwrap().len(), 7);
    assert_eq!(
        data["attributes"][1]["values"].as_array().unwrap().len(),
        50
    );
    assert_eq!(data["attributes"][1]["otherCount"], 950);
    assert_eq!(calls, 2);
    let partition = outbound_adapters::store::keys::task_contacts(&tenant(OWNER), &id(&task));
    let counters = ["outcome", "amount"].map(|name| {
        (
            partition.clone(),
            outbound_adapters::store::keys::result_counts(name),
        )
    });
    let sizes =
        outbound_tests::capacity::stored_sizes(&api.dynamodb(), &api.resources.table, counters)
            .await
            .unwrap();
    eprintln!("/results at 1,000 contacts: {calls} requests, {read}; counter items {sizes:?}");
}

/// D28: the outcome of a call whose id was never saved and whose flow reported nothing leaves a
/// record holding only that it was recorded; the ended event delivered again reads it as no
/// placed call's record and changes nothing (it failed to decode it, and was redelivered for
/// ever: the simulation found it, seed 8 of `make sim SEEDS=12`).
#[tokio::test]
async fn an_outcome_delivered_again_after_a_call_never_saved_changes_nothing() {
    use outbound_adapters::telephony::simulated::{SimulatedEvent, SimulatedOutcome};
    use outbound_model::call::Reason;
    let rig = rig().await;
    let (task, ids) = rig.one_start_in_doubt().await;
    let attempt = CallAttempt {
        tenant: tenant(OWNER),
        task_id: id(&task),
        contact_id: id(&ids[0]),
        attempt: 1,
    };
    let ended = SimulatedEvent::SimulatedCall(SimulatedOutcome {
        call_id: "5e0c7a12-0000-4000-8000-00000000beef".to_owned(),
        report: Reason::Answered.report(30),
        attempt: Some(attempt.clone()),
        signature: Some(rig.engine.signer.sign(&attempt)),
    });
    let body = serde_json::to_string(&ended).unwrap();
    DialInbox::CallEvents
        .handle(&rig.engine, body.clone())
        .await
        .unwrap();
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!((stored.counters.calls, stored.counters.success), (1, 1));
    let before = rig.api.snapshot().await;
    DialInbox::CallEvents
        .handle(&rig.engine, body)
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, before);
}

/// D28 with D22: with Amazon Connect a flow may report before any record of its call is
/// written: the run died after placing it, or the start's answer was lost and its id never
/// saved. The first report makes a pending record of the attempt while it is in flight; the
/// outcome found from what the call carries keeps what the flow reported (it used to be
/// refused after 2 s, and the outcome recorded with none); a report after that outcome is
/// refused, and one for an attempt not in flight writes nothing.
#[tokio::test]
async fn a_report_before_any_call_record_reaches_the_outcome() {
    use outbound_adapters::telephony::simulated::{SimulatedEvent, SimulatedOutcome};
    use outbound_model::call::Reason;
    let rig = rig().await;
    let (task, ids) = rig.one_start_in_doubt().await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!((state.in_call, state.call_id.as_deref()), (Some(1), None));

    // Yet the provider had placed the call, and its flow reports, twice.
    let call_id = "5e0c7a12-0000-4000-8000-00000000abcd";
    let ours = [OWNER, task.as_str(), ids[0].as_str(), "1"];
    let signer = &rig.engine.signer;
    let patience = Duration::from_millis(300);
    for parameters in [json!({"outcome": "maybe"}), json!({"outcome": "paid"})] {
        let report = flow_event(signer, call_id, ours, parameters);
        let answer = flow_results::record(&rig.api.store, signer, &report, patience)
            .await
            .unwrap();
        assert_eq!(answer.recorded, "true");
    }
    // A report naming an attempt not in flight makes no record.
    let before = rig.api.snapshot().await;
    let other = [OWNER, task.as_str(), ids[0].as_str(), "2"];
    let stray = flow_event(
        signer,
        "5e0c7a12-0000-4000-8000-00000000ffff",
        other,
        json!({"outcome": "stray"}),
    );
    let answer = flow_results::record(&rig.api.store, signer, &stray, patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false");
    assert_eq!(rig.api.snapshot().await, before);

    // The call ends; its event names its attempt, signed, as the contact's attributes do.
    let attempt = CallAttempt {
        tenant: tenant(OWNER),
        task_id: id(&task),
        contact_id: id(&ids[0]),
        attempt: 1,
    };
    let ended = SimulatedEvent::SimulatedCall(SimulatedOutcome {
        call_id: call_id.to_owned(),
        report: Reason::Answered.report(30),
        attempt: Some(attempt.clone()),
        signature: Some(signer.sign(&attempt)),
    });
    DialInbox::CallEvents
        .handle(&rig.engine, serde_json::to_string(&ended).unwrap())
        .await
        .unwrap();
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(state.in_call, None);
    assert_eq!(
        state.results.get("outcome").map(String::as_str),
        Some("paid")
    );
    let results = rig
        .api
        .get(OWNER, &format!("/api/task/{task}/results"))
        .await;
    assert_eq!(
        results.ok()["attributes"][0]["values"][0],
        json!({"value": "paid", "count": 1})
    );

    // The ended event delivered again: the record now says only what was recorded, and the
    // event changes nothing (it was once an error, redelivered for ever).
    let before = rig.api.snapshot().await;
    DialInbox::CallEvents
        .handle(&rig.engine, serde_json::to_string(&ended).unwrap())
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, before);

    // A report after the outcome: refused, nothing written.
    let late = flow_event(signer, call_id, ours, json!({"outcome": "late"}));
    let answer = flow_results::record(&rig.api.store, signer, &late, patience)
        .await
        .unwrap();
    assert_eq!(answer.recorded, "false");
    assert_eq!(rig.api.snapshot().await, before);
}

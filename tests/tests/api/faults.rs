//! A throttled DynamoDB (D1): every endpoint answers 503 with `Retry-After` and changes nothing,
//! never 400/404/405/409; a transaction cancelled by a throttle is not a failed condition; under
//! random throttling every answer is either the right one or a 503 that changed nothing; writes
//! that meet a conflict, or whose answer is lost after they committed, are never reported as a
//! failed condition of their own.
//!
//! The faults come from `outbound_tests::faults::FaultProxy` between the store and the test's
//! DynamoDB, as real DynamoDB error answers, so they pass through the SDK's own parsing and
//! retries.

use crate::support::{assert_id, contact_op, phone, Answer, TestApi};
use outbound_adapters::store::{keys, Item};
use outbound_model::TaskStatus;
use outbound_tests::faults::FaultPlan;
use reqwest::header::RETRY_AFTER;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Every item of the table by (pk, sk), as [`TestApi::snapshot`] answers it.
type Snapshot = BTreeMap<(String, String), Item>;

const TENANT: &str = "acme";

/// One request of the API: what it is, and how to send it.
#[derive(Clone, Debug)]
struct Call {
    what: &'static str,
    method: Method,
    path: String,
    body: Value,
}

impl Call {
    fn get(what: &'static str, path: String) -> Call {
        Call {
            what,
            method: Method::GET,
            path,
            body: Value::Null,
        }
    }

    fn post(what: &'static str, path: String, body: Value) -> Call {
        Call {
            what,
            method: Method::POST,
            path,
            body,
        }
    }

    async fn send(&self, api: &TestApi) -> Answer {
        match self.method {
            Method::GET => api.get(TENANT, &self.path).await,
            _ => api.post(TENANT, &self.path, self.body.clone()).await,
        }
    }
}

/// Asserts D1's answer to a busy dependency: HTTP 503, a `Retry-After` header, and the error
/// envelope with code 503, `data: null` and a message that is not empty (and shows no SDK
/// error type or table name).
fn assert_unavailable(answer: &Answer, what: &str, api: &TestApi) {
    assert_eq!(
        answer.status.as_u16(),
        503,
        "{what}: a throttled DynamoDB is 503, never 400/404/405/409/500: {}",
        answer.body
    );
    let retry_after = answer
        .headers
        .get(RETRY_AFTER)
        .unwrap_or_else(|| panic!("{what}: 503 without Retry-After: {:?}", answer.headers));
    assert!(
        !retry_after.to_str().unwrap_or_default().trim().is_empty(),
        "{what}: empty Retry-After"
    );
    assert_eq!(answer.body["code"], 503, "{what}: {}", answer.body);
    assert_eq!(answer.body["data"], Value::Null, "{what}: {}", answer.body);
    let message = answer.body["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{what}: no message: {}", answer.body));
    assert!(!message.trim().is_empty(), "{what}: empty message");
    assert!(
        !message.contains("amazonaws") && !message.contains(&api.resources.table),
        "{what}: the message leaks internals: {message}"
    );
}

/// The proxy speaks DynamoDB's protocol (the premise of every test here, D1): an injected
/// throttle reaches the SDK as a `ThrottlingException` that it retries (3 attempts in standard
/// mode), an injected cancellation as a `TransactionCanceledException` with one reason per
/// action that it does not retry and that writes nothing, and a `Rate` plan picks the same
/// requests again for the same seed.
#[tokio::test]
async fn the_proxy_answers_as_dynamodb_does() {
    use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
    let (api, proxy) = TestApi::start_with_faults().await;
    let client = api.store.client().clone();
    let table = api.resources.table.clone();
    let key = |sk: &str| {
        [
            (keys::PK.to_owned(), AttributeValue::S("FAULTS".into())),
            (keys::SK.to_owned(), AttributeValue::S(sk.into())),
        ]
    };
    let get = || {
        client
            .get_item()
            .table_name(&table)
            .set_key(Some(key("A").into_iter().collect()))
            .send()
    };
    get()
        .await
        .expect("plan None forwards to the test's DynamoDB");

    proxy.set_plan(FaultPlan::All);
    let error = get().await.expect_err("every request is throttled");
    let service = error.as_service_error().expect("a service error");
    assert!(service.is_throttling_exception(), "{service:?}");
    assert_eq!(error.raw_response().unwrap().status().as_u16(), 400);
    assert_eq!(
        proxy.injected(),
        3,
        "standard mode tries a throttled call 3 times"
    );

    proxy.set_plan(FaultPlan::CancelTransactions);
    let before = api.snapshot().await;
    let put = |sk: &str| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&table)
                    .set_item(Some(key(sk).into_iter().collect()))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    let error = client
        .transact_write_items()
        .transact_items(put("A"))
        .transact_items(put("B"))
        .transact_items(put("C"))
        .send()
        .await
        .expect_err("every transaction is cancelled");
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
    let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
        error.as_service_error()
    else {
        panic!("not a cancellation: {error:?}");
    };
    let codes: Vec<&str> = cancelled
        .cancellation_reasons()
        .iter()
        .map(|reason| reason.code().unwrap())
        .collect();
    assert_eq!(codes, ["None", "ThrottlingError", "None"]);
    assert_eq!(
        proxy.injected(),
        4,
        "a cancelled transaction is not retried"
    );
    get()
        .await
        .expect("reads pass while only transactions are cancelled");
    assert_unchanged(&api, &before, "a cancelled transaction").await;

    let picks = || async {
        proxy.set_plan(FaultPlan::Rate {
            percent: 30,
            seed: 42,
        });
        let (start, requests) = (proxy.injected(), proxy.requests());
        let mut failed = Vec::new();
        for _ in 0..40 {
            failed.push(get().await.is_err());
        }
        assert!(proxy.requests() - requests >= 40, "every read is counted");
        (proxy.injected() - start, failed)
    };
    let (injected, failed) = picks().await;
    assert!(
        (3..=30).contains(&injected),
        "{injected} throttles in 40 reads"
    );
    assert_eq!(
        picks().await,
        (injected, failed),
        "the same seed picks the same requests"
    );
    proxy.set_plan(FaultPlan::None);
    println!(
        "{} faults injected: {:?}",
        proxy.injected(),
        proxy.injected_by_operation()
    );
}

/// Asserts that the table holds what it held in `before`, naming the items that differ.
async fn assert_unchanged(api: &TestApi, before: &Snapshot, what: &str) {
    let after = api.snapshot().await;
    let changed: std::collections::BTreeSet<&(String, String)> = before
        .keys()
        .chain(after.keys())
        .filter(|key| before.get(*key) != after.get(*key))
        .collect();
    assert!(
        changed.is_empty(),
        "{what} changed what is stored (D1: nothing was changed): {changed:?}"
    );
}

/// Adds a task on `source` and takes it into `state` (plan None).
async fn task_in(api: &TestApi, source: &str, name: &str, state: TaskStatus) -> String {
    let task = api.task(TENANT, name, source, json!({})).await;
    api.drive(TENANT, &task, state).await;
    task
}

/// D1: with every DynamoDB request throttled, each endpoint kind — data source add, update,
/// delete, detail, list; contact add, update, delete, list; task add, update, publish, pause,
/// resume, stop, close, delete, detail, list, stat, recall — answers 503 with `Retry-After`, and
/// nothing stored changes. Once DynamoDB is back, the same requests succeed when sent again.
#[tokio::test]
async fn every_endpoint_answers_503_and_changes_nothing_while_dynamodb_throttles() {
    let (api, proxy) = TestApi::start_with_faults().await;
    let calls = every_endpoint(&api).await;
    let before = api.snapshot().await;
    proxy.set_plan(FaultPlan::All);
    for call in &calls {
        let injected = proxy.injected();
        let answer = call.send(&api).await;
        assert!(
            proxy.injected() > injected,
            "{}: reached no DynamoDB, so it proves nothing",
            call.what
        );
        assert_unavailable(&answer, call.what, &api);
    }
    proxy.set_plan(FaultPlan::None);
    assert_unchanged(&api, &before, "a 503").await;
    assert!(
        api.reclaim_jobs().await.is_empty(),
        "a 503 delete queued a reclaim job"
    );
    println!(
        "{} requests answered 503 after {} injected throttles ({:?})",
        calls.len(),
        proxy.injected(),
        proxy.injected_by_operation()
    );

    // D1: "the same request may be sent again".
    for call in &calls {
        let answer = call.send(&api).await;
        assert_eq!(
            answer.status, 200,
            "{} sent again: {}",
            call.what, answer.body
        );
        assert_eq!(
            answer.body["code"], 0,
            "{} sent again: {}",
            call.what, answer.body
        );
    }
}

/// One request of each endpoint kind, on records set up for it: each succeeds on a healthy
/// DynamoDB when they are sent in this order.
async fn every_endpoint(api: &TestApi) -> Vec<Call> {
    let (source, contacts) = api.source_with_contacts(TENANT, 3).await;
    let spare = api.data_source(TENANT, "Spare").await;
    let draft = task_in(api, &source, "Draft", TaskStatus::Draft).await;
    let doomed = task_in(api, &source, "Doomed", TaskStatus::Draft).await;
    let running = task_in(api, &source, "Running", TaskStatus::Running).await;
    let paused = task_in(api, &source, "Paused", TaskStatus::Paused).await;
    let stopped = task_in(api, &source, "Stopped", TaskStatus::Stopped).await;

    // Each would succeed on a healthy DynamoDB, in this order.
    let calls = [
        Call::get("dataSource list", "/api/dataSource/list".into()),
        Call::get(
            "dataSource detail",
            format!("/api/dataSource/detail/{source}"),
        ),
        Call::post(
            "dataSource add",
            "/api/dataSource/add".into(),
            json!({"dataSourceName": "Fresh", "dataSourceDesc": "new"}),
        ),
        Call::post(
            "dataSource update",
            "/api/dataSource/update".into(),
            json!({"id": source, "dataSourceName": "Renamed"}),
        ),
        Call::post(
            "dataSource delete",
            "/api/dataSource/delete".into(),
            json!({"id": spare}),
        ),
        Call::get(
            "contact list",
            format!("/api/dataSource/{source}/contacts?pageSize=10"),
        ),
        Call::post(
            "contact add",
            contact_op(&source, "add"),
            json!({"phoneNumber": "13912345678", "customerName": "Li"}),
        ),
        Call::post(
            "contact update",
            contact_op(&source, "update"),
            json!({"contactId": contacts[0], "phoneNumber": "13912345679"}),
        ),
        Call::post(
            "contact delete",
            contact_op(&source, "delete"),
            json!({"contactId": contacts[1]}),
        ),
        Call::get("task list", "/api/task/list".into()),
        Call::get("task detail", format!("/api/task/detail/{draft}")),
        Call::get("task stat", format!("/api/task/{running}/stat")),
        Call::post(
            "task add",
            "/api/task/add".into(),
            json!({"taskName": "Fresh task", "dataSourceId": source}),
        ),
        Call::post(
            "task update",
            "/api/task/update".into(),
            json!({"id": draft, "taskName": "Renamed task", "priority": 2}),
        ),
        Call::post(
            "task publish",
            "/api/task/publish".into(),
            json!({"id": draft}),
        ),
        Call::post(
            "task recall",
            format!("/api/task/{running}/recall"),
            json!({}),
        ),
        Call::post(
            "task pause",
            "/api/task/pause".into(),
            json!({"id": running}),
        ),
        Call::post(
            "task resume",
            "/api/task/resume".into(),
            json!({"id": paused}),
        ),
        Call::post(
            "task stop",
            "/api/task/stop".into(),
            json!({"id": running, "reason": "enough"}),
        ),
        Call::post(
            "task close",
            "/api/task/close".into(),
            json!({"id": stopped}),
        ),
        Call::post(
            "task delete",
            "/api/task/delete".into(),
            json!({"id": doomed}),
        ),
    ];

    calls.to_vec()
}

/// D1: a TransactWriteItems cancelled with reasons `[None, ThrottlingError, ...]` (no
/// `ConditionalCheckFailed`) is a busy dependency, not a failed condition: contact add, update to
/// a new phone and delete, data source add, rename and delete, task add, update, publish, stop
/// and delete answer 503 with `Retry-After` (never 404/405/409), and nothing stored changes.
#[tokio::test]
async fn a_transaction_cancelled_by_a_throttle_is_503_not_a_failed_condition() {
    let (api, proxy) = TestApi::start_with_faults().await;
    let (source, contacts) = api.source_with_contacts(TENANT, 3).await;
    let spare = api.data_source(TENANT, "Spare").await;
    let draft = task_in(&api, &source, "Draft", TaskStatus::Draft).await;
    let doomed = task_in(&api, &source, "Doomed", TaskStatus::Draft).await;
    let running = task_in(&api, &source, "Running", TaskStatus::Running).await;

    let calls = [
        Call::post(
            "contact delete",
            contact_op(&source, "delete"),
            json!({"contactId": contacts[0]}),
        ),
        Call::post(
            "contact update to a new phone",
            contact_op(&source, "update"),
            json!({"contactId": contacts[1], "phoneNumber": "13912345679"}),
        ),
        Call::post(
            "contact add",
            contact_op(&source, "add"),
            json!({"phoneNumber": "13912345678"}),
        ),
        Call::post(
            "dataSource rename",
            "/api/dataSource/update".into(),
            json!({"id": source, "dataSourceName": "Renamed"}),
        ),
        Call::post(
            "dataSource add",
            "/api/dataSource/add".into(),
            json!({"dataSourceName": "Fresh"}),
        ),
        Call::post(
            "dataSource delete",
            "/api/dataSource/delete".into(),
            json!({"id": spare}),
        ),
        Call::post(
            "task add",
            "/api/task/add".into(),
            json!({"taskName": "Fresh task", "dataSourceId": source}),
        ),
        Call::post(
            "task rename",
            "/api/task/update".into(),
            json!({"id": draft, "taskName": "Renamed task"}),
        ),
        Call::post(
            "task publish",
            "/api/task/publish".into(),
            json!({"id": draft}),
        ),
        Call::post("task stop", "/api/task/stop".into(), json!({"id": running})),
        Call::post(
            "task delete",
            "/api/task/delete".into(),
            json!({"id": doomed}),
        ),
    ];

    let before = api.snapshot().await;
    proxy.set_plan(FaultPlan::CancelTransactions);
    let mut wrong = Vec::new();
    for call in &calls {
        let injected = proxy.injected();
        let answer = call.send(&api).await;
        assert!(
            proxy.injected() > injected,
            "{}: wrote no transaction, so it proves nothing: {}",
            call.what,
            answer.body
        );
        if answer.status != 503 {
            wrong.push(format!(
                "{} -> {} {}",
                call.what, answer.status, answer.body
            ));
            continue;
        }
        assert_unavailable(&answer, call.what, &api);
    }
    proxy.set_plan(FaultPlan::None);
    assert_unchanged(&api, &before, "a cancelled transaction").await;
    assert!(
        wrong.is_empty(),
        "a transaction cancelled by a throttle is 503 (D1), not:\n{}",
        wrong.join("\n")
    );
}

/// What the script believes is stored: every answer that was 200 happened, every 503 did not.
#[derive(Default, Debug)]
struct Model {
    /// Contact id -> phone.
    contacts: BTreeMap<String, String>,
    /// Task id -> state, in the order they were added.
    tasks: Vec<(String, TaskStatus)>,
    source_name: String,
}

impl Model {
    fn nth_contact(&self, n: usize) -> Option<String> {
        let ids: Vec<&String> = self.contacts.keys().collect();
        (!ids.is_empty()).then(|| ids[n % ids.len()].clone())
    }

    fn nth_task_in(&self, n: usize, states: &[TaskStatus]) -> Option<String> {
        let found: Vec<&String> = self
            .tasks
            .iter()
            .filter(|(_, state)| states.contains(state))
            .map(|(id, _)| id)
            .collect();
        (!found.is_empty()).then(|| found[n % found.len()].clone())
    }

    fn set_task(&mut self, id: &str, state: TaskStatus) {
        let task = self.tasks.iter_mut().find(|(task, _)| task == id).unwrap();
        task.1 = state;
    }

    fn active_tasks(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|(_, state)| matches!(state, TaskStatus::Running | TaskStatus::Paused))
            .count() as u64
    }
}

/// Counts of a scripted run.
#[derive(Default, Debug)]
struct Tally {
    ok: usize,
    unavailable: usize,
}

impl Tally {
    /// `Some(data)` for a right answer (checked by the caller), `None` for a 503 (checked here);
    /// anything else fails the test.
    fn judge<'a>(
        &mut self,
        api: &TestApi,
        step: usize,
        what: &str,
        answer: &'a Answer,
    ) -> Option<&'a Value> {
        match answer.status.as_u16() {
            200 => {
                self.ok += 1;
                Some(answer.ok())
            }
            503 => {
                self.unavailable += 1;
                assert_unavailable(answer, &format!("step {step}: {what}"), api);
                None
            }
            _ => panic!(
                "step {step}: {what} is either right or 503 (D1), not {}: {}",
                answer.status, answer.body
            ),
        }
    }
}

/// D1 under random throttling (30 % of DynamoDB requests, a fixed seed; picked transactions
/// are throttled or cancelled with a `ThrottlingError` reason): in a scripted run of contact adds,
/// updates and deletes, data source renames, and task adds, publishes, pauses, resumes and stops,
/// each answer is the right one or a 503. Treating every 503 as "nothing changed", what is stored
/// afterwards is exactly what the successes made: contacts and their phones and phone guards,
/// `contactCount`, tasks and their states and name guards, and the data source's `active_tasks`.
#[tokio::test]
async fn under_random_throttling_every_answer_is_right_or_a_503_that_changed_nothing() {
    const ROUNDS: usize = 9;
    let (api, proxy) = TestApi::start_with_faults().await;
    let mut model = Model {
        source_name: "Throttled".into(),
        ..Model::default()
    };
    let source = api.data_source(TENANT, &model.source_name).await;
    // A few contacts to start with, so that publish always has some.
    for n in 0..4 {
        let number = phone(n);
        let id = api.contact(TENANT, &source, &number).await;
        model.contacts.insert(id, number);
    }
    let seed = 0x005E_EDD1;
    proxy.set_plan(FaultPlan::Rate { percent: 30, seed });
    let mut tally = Tally::default();
    let mut numbers = 4..;
    let mut step = 0;
    let mut next_step = || {
        step += 1;
        step
    };
    for round in 0..ROUNDS {
        // Two contact adds.
        for _ in 0..2 {
            let number = phone(numbers.next().unwrap());
            let step = next_step();
            let answer = api
                .post(
                    TENANT,
                    &contact_op(&source, "add"),
                    json!({"phoneNumber": number}),
                )
                .await;
            if let Some(data) = tally.judge(&api, step, "contact add", &answer) {
                assert_eq!(data["phoneNumber"], number.as_str(), "step {step}");
                let id = assert_id(&data["id"]).to_owned();
                model.contacts.insert(id, number);
            }
        }
        // A contact update to a new phone.
        if let Some(contact) = model.nth_contact(round * 3) {
            let number = phone(numbers.next().unwrap());
            let step = next_step();
            let answer = api
                .post(
                    TENANT,
                    &contact_op(&source, "update"),
                    json!({"contactId": contact, "phoneNumber": number, "customerName": "Wu"}),
                )
                .await;
            if let Some(data) = tally.judge(&api, step, "contact update", &answer) {
                assert_eq!(data["id"], contact.as_str(), "step {step}");
                assert_eq!(data["phoneNumber"], number.as_str(), "step {step}");
                model.contacts.insert(contact, number);
            }
        }
        // A contact delete, keeping a few for publish.
        if model.contacts.len() > 3 {
            let contact = model.nth_contact(round * 5 + 1).unwrap();
            let step = next_step();
            let answer = api
                .post(
                    TENANT,
                    &contact_op(&source, "delete"),
                    json!({"contactId": contact}),
                )
                .await;
            if let Some(data) = tally.judge(&api, step, "contact delete", &answer) {
                assert_eq!(data, &Value::Null, "step {step}");
                model.contacts.remove(&contact);
            }
        }
        // A task add.
        {
            let name = format!("Task {round}");
            let step = next_step();
            let answer = api
                .post(
                    TENANT,
                    "/api/task/add",
                    json!({"taskName": name, "dataSourceId": source}),
                )
                .await;
            if let Some(data) = tally.judge(&api, step, "task add", &answer) {
                assert_eq!(data["taskName"], name.as_str(), "step {step}");
                assert_eq!(data["status"], 0, "step {step}");
                let id = assert_id(&data["id"]).to_owned();
                model.tasks.push((id, TaskStatus::Draft));
            }
        }
        // A publish of a DRAFT task.
        if let Some(task) = model.nth_task_in(round, &[TaskStatus::Draft]) {
            let step = next_step();
            let answer = api
                .post(TENANT, "/api/task/publish", json!({"id": task}))
                .await;
            if let Some(data) = tally.judge(&api, step, "task publish", &answer) {
                assert_eq!(data["id"], task.as_str(), "step {step}");
                assert_eq!(data["status"], 1, "step {step}");
                model.set_task(&task, TaskStatus::Running);
            }
        }
        // A pause, a resume or a stop, in turn.
        let (what, path, from, to): (&str, &str, &[TaskStatus], TaskStatus) = match round % 3 {
            0 => (
                "task pause",
                "/api/task/pause",
                &[TaskStatus::Running],
                TaskStatus::Paused,
            ),
            1 => (
                "task resume",
                "/api/task/resume",
                &[TaskStatus::Paused],
                TaskStatus::Running,
            ),
            _ => (
                "task stop",
                "/api/task/stop",
                &[TaskStatus::Running, TaskStatus::Paused],
                TaskStatus::Stopped,
            ),
        };
        if let Some(task) = model.nth_task_in(round, from) {
            let step = next_step();
            let answer = api.post(TENANT, path, json!({"id": task})).await;
            if let Some(data) = tally.judge(&api, step, what, &answer) {
                assert_eq!(data["id"], task.as_str(), "step {step}");
                assert_eq!(data["status"], to.code(), "step {step}");
                model.set_task(&task, to);
            }
        }
        // Now and then a data source rename.
        if round % 3 == 2 {
            let name = format!("Throttled {round}");
            let step = next_step();
            let answer = api
                .post(
                    TENANT,
                    "/api/dataSource/update",
                    json!({"id": source, "dataSourceName": name}),
                )
                .await;
            if let Some(data) = tally.judge(&api, step, "dataSource rename", &answer) {
                assert_eq!(data["dataSourceName"], name.as_str(), "step {step}");
                model.source_name = name;
            }
        }
    }
    let steps = next_step() - 1;
    proxy.set_plan(FaultPlan::None);
    println!(
        "{steps} operations: {} right, {} answered 503; {} of {} DynamoDB requests faulted ({:?})",
        tally.ok,
        tally.unavailable,
        proxy.injected(),
        proxy.requests(),
        proxy.injected_by_operation()
    );
    assert!(steps >= 50, "the script ran only {steps} operations");
    assert!(proxy.injected() > 0, "no fault was injected");
    assert!(tally.unavailable > 0, "no answer was a 503: {tally:?}");
    assert!(tally.ok > 0, "no answer was a success: {tally:?}");

    // Contacts: the list, the count and the phones are the model's.
    let listed: BTreeMap<String, String> = api
        .all_contacts(TENANT, &source)
        .await
        .into_iter()
        .map(|contact| {
            (
                contact["id"].as_str().unwrap().to_owned(),
                contact["phoneNumber"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(listed, model.contacts, "the contacts are the model's");
    let detail = api.detail(TENANT, &source).await;
    let detail = detail.ok();
    assert_eq!(detail["contactCount"], model.contacts.len(), "contactCount");
    assert_eq!(detail["dataSourceName"], model.source_name.as_str());

    // Phone guards: exactly one per stored contact, for its current number.
    let stored = api.snapshot().await;
    let shards = api
        .store
        .shards(
            &crate::support::tenant(TENANT),
            &crate::support::id(&source),
        )
        .await
        .unwrap();
    let partitions: Vec<String> = shards.partitions().collect();
    let mut guards: Vec<String> = stored
        .keys()
        .filter(|(pk, sk)| partitions.contains(pk) && sk.starts_with("P#"))
        .map(|(_, sk)| sk.clone())
        .collect();
    guards.sort();
    let mut expected: Vec<String> = model
        .contacts
        .values()
        .map(|number| format!("P#{number}"))
        .collect();
    expected.sort();
    assert_eq!(guards, expected, "the phone guards are the model's numbers");
    assert_eq!(
        api.partition_len(TENANT, &source).await,
        1 + 2 * model.contacts.len(),
        "the head, each contact and its phone guard, nothing else"
    );

    // Tasks: the same ones, in the model's states, and one name guard each.
    let list = api.get(TENANT, "/api/task/list?pageSize=100").await;
    let mut listed: Vec<(String, u64)> = list.ok()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["id"].as_str().unwrap().to_owned(),
                task["status"].as_u64().unwrap(),
            )
        })
        .collect();
    listed.sort();
    let mut expected: Vec<(String, u64)> = model
        .tasks
        .iter()
        .map(|(id, state)| (id.clone(), u64::from(state.code())))
        .collect();
    expected.sort();
    assert_eq!(
        listed, expected,
        "the tasks and their states are the model's"
    );
    for (task, state) in &model.tasks {
        assert_eq!(api.stored_task(TENANT, task).await.status, *state, "{task}");
    }
    let tenant_pk = keys::tenant(&crate::support::tenant(TENANT));
    let task_names = stored
        .keys()
        .filter(|(pk, sk)| *pk == tenant_pk && sk.starts_with("TASKNAME#"))
        .count();
    assert_eq!(task_names, model.tasks.len(), "one name guard per task");
    assert_eq!(
        api.stored_source(TENANT, &source).await.active_tasks,
        model.active_tasks(),
        "active_tasks counts the model's RUNNING and PAUSED tasks"
    );
}

/// What a run of contact and data source adds answered, under a fault plan.
#[derive(Debug, Default)]
struct Adds {
    /// The numbers of the contacts whose add answered 200.
    added: Vec<String>,
    /// Adds answered 503 (in doubt: the write may have committed).
    unavailable: usize,
}

/// `count` contact adds of distinct numbers to `source` and as many data source adds, each
/// answer asserted to be 200 or a 503 with `Retry-After`, never another code.
async fn adds_under(api: &TestApi, source: &str, count: usize) -> Adds {
    let mut adds = Adds::default();
    for n in 0..count {
        let number = phone(100 + n);
        let answers = [
            api.post(
                TENANT,
                &contact_op(source, "add"),
                json!({"phoneNumber": number}),
            )
            .await,
            api.post(
                TENANT,
                "/api/dataSource/add",
                json!({"dataSourceName": format!("In doubt {n}")}),
            )
            .await,
        ];
        for (place, answer) in answers.iter().enumerate() {
            match answer.status.as_u16() {
                200 if place == 0 => adds.added.push(number.clone()),
                200 => {}
                503 => {
                    assert!(answer.headers.contains_key(RETRY_AFTER), "{answer:?}");
                    adds.unavailable += 1;
                }
                other => panic!("add {n}: {other} {}", answer.body),
            }
        }
    }
    adds
}

/// Every contact of `source` is stored once, with its phone guard, and the count says so:
/// those whose add answered 200 among them.
async fn assert_stored_once(api: &TestApi, source: &str, adds: &Adds) {
    let listed: Vec<String> = api
        .all_contacts(TENANT, source)
        .await
        .iter()
        .map(|contact| contact["phoneNumber"].as_str().unwrap().to_owned())
        .collect();
    let mut unique = listed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        listed.len(),
        "a contact stored twice: {listed:?}"
    );
    for number in &adds.added {
        assert!(
            listed.contains(number),
            "{number} answered 200 but is not stored"
        );
    }
    assert_eq!(api.contact_count(TENANT, source).await, listed.len() as u64);
}

/// A write whose answer is lost after it committed (a timeout whose write happened) is sent
/// again by the SDK, and meets its own write: the add answers 200 (or 503 when every try lost
/// its answer), never 409 "already exists" for its own write (D1), and the contact is stored
/// once: the SDK gives each transaction a client request token of its own and sends it again
/// with the retry, so DynamoDB answers the retry as it answered the first instead of failing its
/// phone guard on the write it made itself.
#[tokio::test]
async fn a_write_whose_answer_was_lost_after_it_committed_is_answered_as_done() {
    let (api, proxy) = TestApi::start_with_faults().await;
    let source = api.data_source(TENANT, "Lost answers").await;
    proxy.set_plan(FaultPlan::LoseAnswersAfterCommit {
        percent: 40,
        seed: 0x0105_7A45,
    });
    let adds = adds_under(&api, &source, 12).await;
    proxy.set_plan(FaultPlan::None);
    println!(
        "{adds:?}; {} of {} DynamoDB requests answered as lost after commit",
        proxy.injected(),
        proxy.requests()
    );
    assert!(proxy.injected() >= 5, "{} lost", proxy.injected());
    assert!(adds.added.len() >= 9, "{adds:?}");
    assert_stored_once(&api, &source, &adds).await;
}

/// DynamoDB cancels a transaction that meets another on one of its items with a
/// `TransactionConflict` reason, and refuses a single-item write in the same case with
/// `TransactionConflictException`: the store tries again, so the adds answer 200 (or 503 when
/// every try conflicted), never 409, and each is stored once.
#[tokio::test]
async fn writes_that_meet_a_conflict_are_tried_again_and_stored_once() {
    let (api, proxy) = TestApi::start_with_faults().await;
    let source = api.data_source(TENANT, "Conflicts").await;
    proxy.set_plan(FaultPlan::Conflicts {
        percent: 50,
        seed: 0x0C0F_11C7,
    });
    let adds = adds_under(&api, &source, 12).await;
    proxy.set_plan(FaultPlan::None);
    println!(
        "{adds:?}; {} of {} DynamoDB requests conflicted ({:?})",
        proxy.injected(),
        proxy.requests(),
        proxy.injected_by_operation()
    );
    assert!(
        proxy
            .injected_by_operation()
            .get("TransactWriteItems")
            .is_some_and(|&n| n >= 5),
        "{:?}",
        proxy.injected_by_operation()
    );
    assert!(adds.added.len() >= 10, "{adds:?}");
    assert_stored_once(&api, &source, &adds).await;
}

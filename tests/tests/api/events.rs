//! Domain events (D20): each committed change is on the bus once, a refused request puts none
//! there, and an event the publisher could not put (the bus down, or refusing part of a batch)
//! is put later, not lost; one the bus refuses for good is in the publisher's dead-letter queue,
//! once, and holds nothing up. The events are read as a subscriber reads them: a rule on the bus
//! sends them to a queue.

use crate::dialing_support::{fast_settings, ManualClock, ALL_SUCCESS};
use crate::support::{unique, TestApi};
use outbound_local::provision::{self, EventResources};
use outbound_local::stream::{Pumped, StreamMapping};
use outbound_model::TaskStatus;
use outbound_tests::faults::{FaultPlan, FaultProxy};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A test's events: its table's stream and bus, the mapping that publishes, and the queue
/// every event of the bus reaches.
pub(crate) struct Events {
    resources: EventResources,
    mapping: StreamMapping,
    sqs: aws_sdk_sqs::Client,
}

impl Events {
    /// Events on `api`'s table, published through `proxy` when one is given.
    pub(crate) async fn on(api: &TestApi, proxy: Option<&FaultProxy>) -> Events {
        let resources = provision::ensure_events(&api.sdk, &api.resources.table, &unique("bus"))
            .await
            .unwrap();
        let sdk = match proxy {
            Some(proxy) => api.sdk.to_builder().endpoint_url(proxy.url()).build(),
            None => api.sdk.clone(),
        };
        let publisher = outbound_local::events::publisher(&api.sdk, &sdk, &resources);
        Events {
            mapping: StreamMapping::new(&api.sdk, &resources.stream_arn, publisher),
            resources,
            sqs: aws_sdk_sqs::Client::new(&api.sdk),
        }
    }

    /// A queue the bus sends one tenant's events to.
    async fn tenant_queue(&self, api: &TestApi, tenant: &str) -> String {
        let url = provision::ensure_queue(&self.sqs, &unique("tenant-events"))
            .await
            .unwrap();
        provision::subscribe(
            &api.sdk,
            &self.resources.bus,
            &unique("tenant-rule"),
            &url,
            Some(tenant),
        )
        .await
        .unwrap();
        url
    }

    pub(crate) async fn pump(&mut self) -> Pumped {
        self.mapping.pump().await.unwrap()
    }

    /// Every message waiting on the publisher's dead-letter queue, in arrival order.
    async fn dead_letters(&self, api: &TestApi) -> Vec<Value> {
        let bodies = api
            .take_messages(&self.resources.dead_letter_queue_url)
            .await;
        bodies
            .iter()
            .map(|body| serde_json::from_str(body).unwrap())
            .collect()
    }

    /// Every event waiting on `queue` (the bus's log queue when `None`), in arrival order.
    pub(crate) async fn received(&self, api: &TestApi, queue: Option<&str>) -> Vec<Value> {
        let url = queue.unwrap_or(&self.resources.log_queue_url);
        let bodies = api.take_messages(url).await;
        bodies
            .iter()
            .map(|body| serde_json::from_str(body).unwrap())
            .collect()
    }
}

/// The outbox items in the table: the events committed, by id.
pub(crate) async fn committed(api: &TestApi) -> BTreeMap<String, Value> {
    api.snapshot()
        .await
        .into_values()
        .filter(|item| item["sk"].as_s().is_ok_and(|sk| sk == "EVENT"))
        .map(|item| {
            let detail: Value = serde_json::from_str(item["detail"].as_s().unwrap()).unwrap();
            (detail["eventId"].as_str().unwrap().to_owned(), detail)
        })
        .collect()
}

/// `(detail-type, detail)` of each event, with the envelope's `source` checked.
pub(crate) fn details(events: &[Value]) -> Vec<(String, Value)> {
    events
        .iter()
        .map(|event| {
            assert_eq!(event["source"], "outbound", "{event}");
            (
                event["detail-type"].as_str().unwrap().to_owned(),
                event["detail"].clone(),
            )
        })
        .collect()
}

fn of_kind<'a>(events: &'a [(String, Value)], kind: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, detail)| detail)
        .collect()
}

/// The `(from, to, cause)` of the TaskStateChanged events of `task`, in order.
fn moves(events: &[(String, Value)], task: &str) -> Vec<(String, String, String)> {
    of_kind(events, "TaskStateChanged")
        .into_iter()
        .filter(|detail| detail["taskId"] == task)
        .map(|detail| {
            (
                detail["from"].as_str().unwrap().to_owned(),
                detail["to"].as_str().unwrap().to_owned(),
                detail["cause"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn step(from: &str, to: &str, cause: &str) -> (String, String, String) {
    (from.to_owned(), to.to_owned(), cause.to_owned())
}

/// A task of acme's `source`, published then paused: two TaskStateChanged events.
async fn published_and_paused(api: &TestApi, source: &str) -> String {
    let task = api.task("acme", &unique("Task"), source, json!({})).await;
    for action in ["publish", "pause"] {
        api.post("acme", &format!("/api/task/{action}"), json!({"id": task}))
            .await
            .ok();
    }
    task
}

const CSV: &[u8] = b"phoneNumber,name\n+14155550101,Ada\n+14155550102,Grace\n+14155550103,Alan\n";

/// D20: a whole campaign (an import, a refused file, a task published, paused, resumed, dialled
/// to COMPLETED, an export job) and another tenant's publish. Every change is on the bus once
/// with what it changed; the requests the state machine refused put nothing there; a rule on the
/// tenant sees that tenant's events only; a second pump publishes nothing again.
#[tokio::test]
async fn each_committed_change_is_on_the_bus_once_and_a_refused_request_puts_nothing() {
    let api = TestApi::start().await;
    let mut events = Events::on(&api, None).await;
    let acme_queue = events.tenant_queue(&api, "acme").await;

    let source = api.data_source("acme", &unique("Source")).await;
    let import = api
        .upload_and_import("acme", &source, "list.csv", CSV.to_vec())
        .await;
    let refused_file = api
        .upload_and_import("acme", &source, "list.csv", b"\x00\x01not a file".to_vec())
        .await;
    let task = api
        .task("acme", &unique("Task"), &source, json!({"maxDialCount": 1}))
        .await;
    let by_id = json!({"id": task});
    api.post("acme", "/api/task/publish", by_id.clone())
        .await
        .ok();
    // Refused by the state machine: nothing committed, nothing published.
    api.post("acme", "/api/task/publish", by_id.clone())
        .await
        .code(405);
    api.post("acme", "/api/task/resume", by_id.clone())
        .await
        .code(405);
    api.post("acme", "/api/task/close", by_id.clone())
        .await
        .code(405);
    api.post("acme", "/api/task/pause", by_id.clone())
        .await
        .ok();
    api.post("acme", "/api/task/pause", by_id.clone())
        .await
        .code(405);
    api.post("acme", "/api/task/resume", by_id.clone())
        .await
        .ok();
    let clock = ManualClock::starting_now();
    let engine = api.engine(fast_settings(&api, ALL_SUCCESS), clock.clone());
    api.dial_until(
        &engine,
        &clock,
        Duration::from_secs(60),
        ("acme", &task),
        TaskStatus::Completed,
        10,
    )
    .await;
    let job = api
        .post(
            "acme",
            &format!("/api/task/{task}/exportJob"),
            json!({"format": "csv"}),
        )
        .await;
    let export = job.ok()["exportId"].as_str().unwrap().to_owned();
    assert_eq!(api.drain_exports().await, 1);
    let other_source = api.source_with_contacts("globex", 1).await.0;
    let other_task = api
        .task("globex", &unique("Task"), &other_source, json!({}))
        .await;
    api.post("globex", "/api/task/publish", json!({"id": other_task}))
        .await
        .ok();

    // 2 imports, 4 moves of the task, 3 calls, 1 export, 1 move of the other tenant's task.
    let committed = committed(&api).await;
    assert_eq!(committed.len(), 11, "{committed:#?}");
    assert_eq!(
        events.pump().await,
        Pumped {
            published: 11,
            failed: 0
        }
    );
    let received = events.received(&api, None).await;
    let all = details(&received);
    let ids: Vec<&str> = all
        .iter()
        .map(|(_, detail)| detail["eventId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids.iter().copied().collect::<BTreeSet<_>>(),
        committed.keys().map(String::as_str).collect(),
        "the bus carries exactly the committed events"
    );
    assert_eq!(ids.len(), 11, "each once");
    for (_, detail) in &all {
        assert_eq!(
            Some(detail),
            committed.get(detail["eventId"].as_str().unwrap())
        );
    }

    assert_eq!(
        moves(&all, &task),
        [
            step("DRAFT", "RUNNING", "publish"),
            step("RUNNING", "PAUSED", "pause"),
            step("PAUSED", "RUNNING", "resume"),
            step("RUNNING", "COMPLETED", "complete"),
        ]
    );
    let publish = of_kind(&all, "TaskStateChanged")[0];
    assert_eq!(publish["tenant"], "acme");
    assert_eq!(
        (publish["fromCode"].clone(), publish["toCode"].clone()),
        (json!(0), json!(1))
    );
    assert_eq!(publish["reason"], Value::Null);
    assert_eq!(
        moves(&all, &other_task),
        [step("DRAFT", "RUNNING", "publish")]
    );

    let calls = of_kind(&all, "CallCompleted");
    assert_eq!(calls.len(), 3);
    let contacts: BTreeSet<&str> = calls
        .iter()
        .map(|call| call["contactId"].as_str().unwrap())
        .collect();
    let stored: BTreeSet<String> = api
        .all_contacts("acme", &source)
        .await
        .iter()
        .map(|contact| contact["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        contacts,
        stored.iter().map(String::as_str).collect(),
        "one call a contact"
    );
    for call in &calls {
        assert_eq!(call["taskId"], task.as_str());
        assert_eq!(call["attempt"], 1);
        assert_eq!(call["outcome"], "SUCCESS");
        assert_eq!(call["outcomeCode"], 1);
        assert_eq!(call["reason"], "ANSWERED");
        assert_eq!(call["final"], true);
        assert!(call["durationSeconds"].as_u64().is_some(), "{call}");
    }

    let imports = of_kind(&all, "ImportFinished");
    assert_eq!(imports.len(), 2);
    let done = imports
        .iter()
        .find(|i| i["importId"] == import.as_str())
        .unwrap();
    assert_eq!(
        (
            done["status"].clone(),
            done["importCount"].clone(),
            done["successCount"].clone(),
            done["failCount"].clone(),
            done["dataSourceId"].clone(),
            done["fileName"].clone(),
        ),
        (
            json!("SUCCEEDED"),
            json!(3),
            json!(3),
            json!(0),
            json!(source),
            json!("list.csv")
        )
    );
    let failed = imports
        .iter()
        .find(|i| i["importId"] == refused_file.as_str())
        .unwrap();
    assert_eq!(failed["status"], "FAILED");
    assert!(
        failed["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{failed}"
    );

    let exports = of_kind(&all, "ExportFinished");
    assert_eq!(exports.len(), 1);
    assert_eq!(
        (
            exports[0]["exportId"].clone(),
            exports[0]["subject"].clone(),
            exports[0]["subjectId"].clone(),
            exports[0]["status"].clone(),
            exports[0]["rowCount"].clone(),
            exports[0]["format"].clone(),
        ),
        (
            json!(export),
            json!("task"),
            json!(task),
            json!("SUCCEEDED"),
            json!(3),
            json!("csv")
        )
    );

    // A rule on the tenant: its own 10 events, none of the other tenant's.
    let acme = details(&events.received(&api, Some(&acme_queue)).await);
    assert_eq!(acme.len(), 10);
    assert!(acme.iter().all(|(_, detail)| detail["tenant"] == "acme"));

    // Read to its end: nothing is published twice.
    assert_eq!(events.pump().await, Pumped::default());
    assert!(events.received(&api, None).await.is_empty());
}

/// D20: the publisher dies with the bus down (every PutEvents fails) after changes were
/// committed. The changes stand, their events wait in the outbox and the stream, and once the
/// bus answers again each is published, once, in order.
#[tokio::test]
async fn events_committed_while_the_bus_is_down_are_published_once_it_is_back() {
    let api = TestApi::start().await;
    let proxy = FaultProxy::start(api.dynamodb.url()).await;
    let mut events = Events::on(&api, Some(&proxy)).await;
    proxy.set_plan(FaultPlan::EventsDown);

    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    api.post("acme", "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    api.post("acme", "/api/task/pause", json!({"id": task}))
        .await
        .ok();
    for _ in 0..2 {
        assert_eq!(
            events.pump().await,
            Pumped {
                published: 0,
                failed: 1
            }
        );
    }
    assert!(proxy.injected() >= 2, "{proxy:?}");
    assert!(
        events.received(&api, None).await.is_empty(),
        "nothing reached the bus"
    );
    assert_eq!(
        committed(&api).await.len(),
        2,
        "the events wait in the outbox"
    );

    proxy.set_plan(FaultPlan::None);
    assert_eq!(
        events.pump().await,
        Pumped {
            published: 2,
            failed: 0
        }
    );
    let all = details(&events.received(&api, None).await);
    assert_eq!(
        moves(&all, &task),
        [
            step("DRAFT", "RUNNING", "publish"),
            step("RUNNING", "PAUSED", "pause"),
        ]
    );
    assert_eq!(events.pump().await, Pumped::default());
}

/// D20: the bus refuses part of each PutEvents (EventBridge answers per entry). The publisher
/// sends the refused entries again until each is on the bus: every committed event arrives once.
#[tokio::test]
async fn events_the_bus_refuses_in_part_are_sent_again_until_each_is_on_it() {
    let api = TestApi::start().await;
    let proxy = FaultProxy::start(api.dynamodb.url()).await;
    let mut events = Events::on(&api, Some(&proxy)).await;
    proxy.set_plan(FaultPlan::RefuseOddEvents);

    let (source, _) = api.source_with_contacts("acme", 1).await;
    let mut tasks = Vec::new();
    for _ in 0..3 {
        tasks.push(published_and_paused(&api, &source).await);
    }
    let committed = committed(&api).await;
    assert_eq!(committed.len(), 6);
    let mut pumped = Pumped::default();
    for _ in 0..10 {
        let round = events.pump().await;
        pumped.published += round.published;
        pumped.failed += round.failed;
        if round.failed == 0 {
            break;
        }
    }
    assert_eq!(pumped.published, 6, "{pumped:?}");
    assert!(proxy.injected() >= 1, "{proxy:?}");
    let all = details(&events.received(&api, None).await);
    let mut ids: Vec<&str> = all
        .iter()
        .map(|(_, detail)| detail["eventId"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        committed.keys().map(String::as_str).collect::<Vec<_>>(),
        "each committed event once"
    );
    // Refused entries go again after the accepted ones: arrival order is not commit order, and
    // consumers order a task's moves by `time` (or by the states themselves).
    for task in &tasks {
        let arrived: BTreeSet<_> = moves(&all, task).into_iter().collect();
        assert_eq!(
            arrived,
            BTreeSet::from([
                step("DRAFT", "RUNNING", "publish"),
                step("RUNNING", "PAUSED", "pause"),
            ])
        );
    }
}

/// D20: the bus refuses the events of one kind for good (per entry `ValidationException`, as it
/// does an entry too large or a detail it will not take). The publisher does not send them again
/// but to its dead-letter queue, each once, with its entry and the error code; the events around
/// them are on the bus once; no record is reported failed, the mapping moves past them, and a
/// second pump has nothing left to do.
#[tokio::test]
async fn events_the_bus_refuses_for_good_are_dead_lettered_once_and_hold_nothing_up() {
    let api = TestApi::start().await;
    let proxy = FaultProxy::start(api.dynamodb.url()).await;
    let mut events = Events::on(&api, Some(&proxy)).await;
    proxy.set_plan(FaultPlan::RejectEventsOfKind("ImportFinished"));

    // Four rounds of an import, a task published and paused: 12 events, the refused kind
    // among the others (two PutEvents: 10 entries, then 2).
    let source = api.data_source("acme", &unique("Source")).await;
    let mut imports = Vec::new();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        imports.push(
            api.upload_and_import("acme", &source, "list.csv", CSV.to_vec())
                .await,
        );
        tasks.push(published_and_paused(&api, &source).await);
    }
    let committed = committed(&api).await;
    assert_eq!(committed.len(), 12, "{committed:#?}");

    assert_eq!(
        events.pump().await,
        Pumped {
            published: 12,
            failed: 0
        },
        "no record reported failed: the mapping is past all of them"
    );
    assert_eq!(
        proxy.injected_by_operation().get("PutEvents"),
        Some(&2),
        "one PutEvents a batch: an entry refused for good is not sent again"
    );

    let all = details(&events.received(&api, None).await);
    let mut on_bus: Vec<&str> = all
        .iter()
        .map(|(_, detail)| detail["eventId"].as_str().unwrap())
        .collect();
    on_bus.sort_unstable();
    let mut moved: Vec<&str> = committed
        .iter()
        .filter(|(_, detail)| detail["taskId"].is_string())
        .map(|(id, _)| id.as_str())
        .collect();
    moved.sort_unstable();
    assert_eq!(on_bus.len(), 8);
    assert_eq!(on_bus, moved, "every other event on the bus, once");
    for task in &tasks {
        assert_eq!(
            moves(&all, task),
            [
                step("DRAFT", "RUNNING", "publish"),
                step("RUNNING", "PAUSED", "pause"),
            ]
        );
    }

    let dead = events.dead_letters(&api).await;
    assert_eq!(dead.len(), 4, "each refused event once: {dead:#?}");
    let mut refused_imports = Vec::new();
    for letter in &dead {
        assert_eq!(letter["errorCode"], "ValidationException", "{letter}");
        let entry = &letter["entry"];
        assert_eq!(entry["Source"], "outbound", "{letter}");
        assert_eq!(entry["DetailType"], "ImportFinished", "{letter}");
        assert_eq!(
            entry["EventBusName"],
            events.resources.bus.as_str(),
            "{letter}"
        );
        let detail: Value = serde_json::from_str(entry["Detail"].as_str().unwrap()).unwrap();
        assert_eq!(
            Some(&detail),
            committed.get(detail["eventId"].as_str().unwrap()),
            "the event as committed, to be put again as it is"
        );
        assert_eq!(
            letter.as_object().unwrap().len(),
            2,
            "the entry and its error code, nothing else: {letter}"
        );
        refused_imports.push(detail["importId"].as_str().unwrap().to_owned());
    }
    refused_imports.sort_unstable();
    imports.sort_unstable();
    assert_eq!(refused_imports, imports);

    // The mapping is past them: nothing is read, sent or dead-lettered again.
    assert_eq!(events.pump().await, Pumped::default());
    assert!(events.received(&api, None).await.is_empty());
    assert!(events.dead_letters(&api).await.is_empty());
    assert_eq!(proxy.injected_by_operation().get("PutEvents"), Some(&2));
}

/// D20: an event the bus refuses for good while the dead-letter queue does not take it is
/// neither on the bus nor dropped: its record is reported failed and read again, and once the
/// queue is back it is dead-lettered, once, and the mapping moves on.
#[tokio::test]
async fn an_event_refused_for_good_waits_in_the_stream_while_the_dead_letter_queue_is_gone() {
    let api = TestApi::start().await;
    let proxy = FaultProxy::start(api.dynamodb.url()).await;
    let mut events = Events::on(&api, Some(&proxy)).await;
    proxy.set_plan(FaultPlan::RejectEventsOfKind("ImportFinished"));
    let sqs = aws_sdk_sqs::Client::new(&api.sdk);
    sqs.delete_queue()
        .queue_url(&events.resources.dead_letter_queue_url)
        .send()
        .await
        .unwrap();

    // A task's publish, an import (refused for good), the task's pause.
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    api.post("acme", "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    let import = api
        .upload_and_import("acme", &source, "list.csv", CSV.to_vec())
        .await;
    api.post("acme", "/api/task/pause", json!({"id": task}))
        .await
        .ok();
    assert_eq!(committed(&api).await.len(), 3);

    // The publish is on the bus; the mapping waits at the import's event, read again each time.
    for published in [1, 0] {
        assert_eq!(
            events.pump().await,
            Pumped {
                published,
                failed: 1
            },
            "the mapping waits at the import's event"
        );
    }

    // The queue is back (the same name, the same URL).
    provision::ensure_events(&api.sdk, &api.resources.table, &events.resources.bus)
        .await
        .unwrap();
    assert_eq!(
        events.pump().await,
        Pumped {
            published: 2,
            failed: 0
        }
    );
    let dead = events.dead_letters(&api).await;
    assert_eq!(dead.len(), 1, "{dead:#?}");
    let detail: Value = serde_json::from_str(dead[0]["entry"]["Detail"].as_str().unwrap()).unwrap();
    assert_eq!(detail["importId"], import.as_str());
    // Put again with its batch while the import's event waited: consumers drop the second
    // delivery by its eventId.
    let all = details(&events.received(&api, None).await);
    let distinct: BTreeSet<(String, String, String)> = moves(&all, &task).into_iter().collect();
    assert_eq!(
        distinct,
        BTreeSet::from([
            step("DRAFT", "RUNNING", "publish"),
            step("RUNNING", "PAUSED", "pause"),
        ])
    );
    assert!(of_kind(&all, "ImportFinished").is_empty());
    assert_eq!(events.pump().await, Pumped::default());
    assert!(events.dead_letters(&api).await.is_empty());
}

/// D20 with D10's conditional transitions: eight pauses of one RUNNING task at once all read it
/// RUNNING; one transaction commits, seven are cancelled by their condition, and the bus gets
/// one event, from the one that committed.
#[tokio::test]
async fn of_concurrent_pauses_the_one_that_commits_is_the_one_event() {
    let api = TestApi::start().await;
    let mut events = Events::on(&api, None).await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    api.post("acme", "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    let answers = futures::future::join_all(
        (0..8).map(|_| api.post("acme", "/api/task/pause", json!({"id": task}))),
    )
    .await;
    let statuses: Vec<u16> = answers.iter().map(|a| a.status.as_u16()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 405).count(),
        7,
        "{statuses:?}"
    );
    assert_eq!(committed(&api).await.len(), 2);
    events.pump().await;
    let all = details(&events.received(&api, None).await);
    assert_eq!(
        moves(&all, &task),
        [
            step("DRAFT", "RUNNING", "publish"),
            step("RUNNING", "PAUSED", "pause"),
        ]
    );
}

/// What is logged on this thread while the guard lives, as plain text.
pub(crate) fn capture_logs() -> (
    std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    tracing::subscriber::DefaultGuard,
) {
    #[derive(Clone)]
    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Sink {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let logs = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Sink(logs.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || sink.clone())
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

/// D20, D8: the publisher logs an event by its id and kind, never its detail; a file without
/// a title row is refused with an `ImportFinished.error` (and import state) that says so and
/// where, without quoting the cell that is there (a phone number).
#[tokio::test]
async fn the_publisher_logs_ids_and_kinds_and_an_import_error_quotes_no_cell() {
    let api = TestApi::start().await;
    let mut events = Events::on(&api, None).await;
    let source = api.data_source("acme", &unique("No titles")).await;
    let file = b"+14155550123,Ada Lovelace\n+14155550124,Grace Hopper\n".to_vec();
    let import = api
        .upload_and_import("acme", &source, "ada lovelace.csv", file)
        .await;
    let expected = "file has no title row: column 1 of the first row holds a phone number; \
                    put a row of titles (phoneNumber, customerName, ...) first";
    let state = api.import_status("acme", &source, &import).await;
    assert_eq!(state.ok()["status"], "FAILED");
    assert_eq!(state.ok()["error"], expected);

    let committed = committed(&api).await;
    assert_eq!(committed.len(), 1, "{committed:?}");
    let (logs, guard) = capture_logs();
    events.pump().await;
    drop(guard);
    let logs = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let published: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains("event published"))
        .collect();
    let id = committed.keys().next().unwrap();
    assert_eq!(published.len(), 1, "{logs}");
    assert!(
        published[0].contains(&format!("event_id={id}"))
            && published[0].contains("event_type=ImportFinished")
            && published[0].contains("tenant=acme"),
        "{logs}"
    );
    for secret in ["4155550123", "Ada", "ada lovelace", "first row", "fileName"] {
        assert!(!logs.contains(secret), "{secret} logged: {logs}");
    }

    let received = details(&events.received(&api, None).await);
    let imports = of_kind(&received, "ImportFinished");
    assert_eq!(imports.len(), 1, "{received:?}");
    assert_eq!(imports[0]["status"], "FAILED");
    assert_eq!(imports[0]["error"], expected);
    assert_eq!(imports[0]["importId"], import.as_str());
}

//! Per-tenant limits (D26) over HTTP: data sources, tasks and do-not-call entries stop at the
//! deployment's limit with a 409 naming it, nothing changed, and another tenant is unaffected;
//! so do RUNNING tasks, whose places every way out of RUNNING gives back, and direct exports
//! and do-not-call imports, each holding one of its tenant's slots while it runs.

use crate::support::{count_status, id, tenant, unique, Answer, TestApi};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::limits::TenantLimits;
use outbound_model::{TaskStatus, Timestamp};
use outbound_service::task as engine;
use serde_json::json;

async fn small_limits() -> TestApi {
    TestApi::start_with(|config| {
        config.tenant_limits = TenantLimits {
            data_sources: 2,
            tasks: 1,
            dnc_entries: 2,
            ..TenantLimits::default()
        }
    })
    .await
}

#[tokio::test]
async fn data_sources_and_tasks_stop_at_the_tenants_limit() {
    let api = small_limits().await;
    let first = api.data_source("acme", &unique("Source")).await;
    api.data_source("acme", &unique("Source")).await;
    let before = api.snapshot().await;
    api.post(
        "acme",
        "/api/dataSource/add",
        json!({"dataSourceName": "one too many"}),
    )
    .await
    .err(
        409,
        "tenant limit reached: at most 2 data sources (TENANT_MAX_DATA_SOURCES); delete some first",
    );
    assert_eq!(api.snapshot().await, before, "nothing changed");
    assert_eq!(
        api.get("acme", "/api/dataSource/list").await.ok()["total"],
        2
    );
    // Another tenant holds its own.
    api.data_source("other", &unique("Source")).await;

    let task = api.task("acme", &unique("Task"), &first, json!({})).await;
    api.post(
        "acme",
        "/api/task/add",
        json!({"taskName": "second", "dataSourceId": first}),
    )
    .await
    .err(
        409,
        "tenant limit reached: at most 1 tasks (TENANT_MAX_TASKS); delete some first",
    );
    // A deleted task frees its place.
    api.post("acme", "/api/task/delete", json!({"id": task}))
        .await
        .ok();
    api.task("acme", &unique("Task"), &first, json!({})).await;
}

#[tokio::test]
async fn do_not_call_entries_stop_at_the_tenants_limit() {
    let api = small_limits().await;
    for phone in ["+12125550101", "+12125550102"] {
        api.post("acme", "/api/dnc/add", json!({"phoneNumber": phone}))
            .await
            .ok();
    }
    api.post(
        "acme",
        "/api/dnc/add",
        json!({"phoneNumber": "+12125550103"}),
    )
    .await
    .err(
        409,
        "tenant limit reached: at most 2 do-not-call entries (TENANT_MAX_DNC_ENTRIES); delete some first",
    );
    // A file's rows past the limit are reported, never listed.
    let csv = "phoneNumber\n+12125550104\n+12125550101\n";
    let answer = api.import_dnc("acme", csv).await;
    assert_eq!(
        answer.ok(),
        &json!({"importCount": 2, "successCount": 0, "failCount": 2, "details": [
            {"row": 2, "phoneNumber": "+12125550104", "reason": "tenant limit reached"},
            {"row": 3, "phoneNumber": "+12125550101", "reason": "already exists"},
        ]})
    );
    assert_eq!(api.get("acme", "/api/dnc/list").await.ok()["total"], 2);
    api.post(
        "other",
        "/api/dnc/add",
        json!({"phoneNumber": "+12125550103"}),
    )
    .await
    .ok();
}

const RUNNING_FULL: &str =
    "tenant limit reached: at most 1 RUNNING tasks (TENANT_MAX_RUNNING_TASKS); pause or stop one first";

/// The tenant's count of RUNNING tasks holding a place, as stored (`None`: never counted).
async fn running_count(api: &TestApi, tenant: &str) -> Option<i64> {
    let item = api
        .dynamodb()
        .get_item()
        .table_name(&api.resources.table)
        .key("pk", AttributeValue::S(format!("T#{tenant}")))
        .key("sk", AttributeValue::S("COUNTS".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item?;
    item.get("running_tasks")
        .map(|count| count.as_n().unwrap().parse().unwrap())
}

async fn act(api: &TestApi, action: &str, task: &str) -> Answer {
    api.post("acme", &format!("/api/task/{action}"), json!({"id": task}))
        .await
}

/// D26: a publish, resume or recall that would run more tasks than the tenant may is 409 naming
/// the limit, and changes nothing; pause, stop, completion and failure each give the place back.
#[tokio::test]
async fn running_tasks_stop_at_the_tenants_limit_and_every_way_out_gives_the_place_back() {
    let api = TestApi::start_with(|config| config.tenant_limits.running_tasks = 1).await;
    let (source, contacts) = api.source_with_contacts("acme", 2).await;
    let first = api.task("acme", &unique("Task"), &source, json!({})).await;
    let second = api.task("acme", &unique("Task"), &source, json!({})).await;
    act(&api, "publish", &first).await.ok();
    assert_eq!(running_count(&api, "acme").await, Some(1));

    let before = api.snapshot().await;
    act(&api, "publish", &second).await.err(409, RUNNING_FULL);
    assert_eq!(api.snapshot().await, before, "nothing changed");
    // Another tenant runs its own.
    let (theirs, _) = api.source_with_contacts("other", 1).await;
    let their_task = api.task("other", &unique("Task"), &theirs, json!({})).await;
    api.post("other", "/api/task/publish", json!({"id": their_task}))
        .await
        .ok();

    // A pause gives the place back; a second pause is refused and gives back nothing.
    act(&api, "pause", &first).await.ok();
    act(&api, "pause", &first)
        .await
        .err(405, "cannot pause a task in state PAUSED");
    assert_eq!(running_count(&api, "acme").await, Some(0));
    act(&api, "publish", &second).await.ok();
    let before = api.snapshot().await;
    act(&api, "resume", &first).await.err(409, RUNNING_FULL);
    assert_eq!(api.snapshot().await, before, "nothing changed");
    assert_eq!(
        api.stored_task("acme", &first).await.status,
        TaskStatus::Paused
    );
    // A stop does too.
    act(&api, "stop", &second).await.ok();
    act(&api, "resume", &first).await.ok();
    assert_eq!(running_count(&api, "acme").await, Some(1));

    // So does the dialing engine's completion; a recall that runs the task again takes one.
    engine::complete(&api.store, &tenant("acme"), &id(&first))
        .await
        .unwrap();
    assert_eq!(running_count(&api, "acme").await, Some(0));
    let third = api.task("acme", &unique("Task"), &source, json!({})).await;
    act(&api, "publish", &third).await.ok();
    let recall = format!("/api/task/{first}/recall");
    let before = api.snapshot().await;
    api.post("acme", &recall, json!({"contactIds": contacts}))
        .await
        .err(409, RUNNING_FULL);
    assert_eq!(api.snapshot().await, before, "nothing changed");
    assert_eq!(
        api.stored_task("acme", &first).await.status,
        TaskStatus::Completed
    );
    act(&api, "stop", &third).await.ok();
    let recalled = api
        .post("acme", &recall, json!({"contactIds": contacts}))
        .await;
    assert_eq!(recalled.ok()["recallCount"], 2);
    assert_eq!(
        api.stored_task("acme", &first).await.status,
        TaskStatus::Running
    );
    assert_eq!(running_count(&api, "acme").await, Some(1));

    // And the engine's failure of the task.
    engine::fail(
        &api.store,
        &tenant("acme"),
        &id(&first),
        "carrier refused".into(),
    )
    .await
    .unwrap();
    assert_eq!(running_count(&api, "acme").await, Some(0));
    assert_eq!(running_count(&api, "other").await, Some(1));
}

/// D26: of concurrent publishes past the limit exactly the limit's number run; the count is
/// moved in the same transaction as each status, so it never passes the limit.
#[tokio::test]
async fn concurrent_publishes_run_no_more_tasks_than_the_limit() {
    let api = TestApi::start_with(|config| config.tenant_limits.running_tasks = 2).await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let mut tasks = Vec::new();
    for _ in 0..5 {
        tasks.push(api.task("acme", &unique("Task"), &source, json!({})).await);
    }
    let answers: Vec<Answer> =
        futures::future::join_all(tasks.iter().map(|task| act(&api, "publish", task))).await;
    assert_eq!(count_status(&answers, 200), 2, "{answers:?}");
    assert_eq!(count_status(&answers, 409), 3, "{answers:?}");
    for refused in answers
        .iter()
        .filter(|answer| answer.status.as_u16() == 409)
    {
        refused.err(
            409,
            "tenant limit reached: at most 2 RUNNING tasks (TENANT_MAX_RUNNING_TASKS); pause or stop one first",
        );
    }
    let mut running = 0;
    for task in &tasks {
        running += usize::from(api.stored_task("acme", task).await.status == TaskStatus::Running);
    }
    assert_eq!(running, 2);
    assert_eq!(running_count(&api, "acme").await, Some(2));
}

/// A task RUNNING from before places were counted holds none: leaving RUNNING gives none back
/// (the count never goes below what runs), and running again takes one like any other.
#[tokio::test]
async fn a_task_running_before_places_were_counted_gives_none_back() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    act(&api, "publish", &task).await.ok();
    // As such a task is stored: no mark, and a count that does not include it.
    let key = |sk: String| {
        [
            ("pk".to_owned(), AttributeValue::S("T#acme".into())),
            ("sk".to_owned(), AttributeValue::S(sk)),
        ]
        .into()
    };
    api.dynamodb()
        .update_item()
        .table_name(&api.resources.table)
        .set_key(Some(key(format!("TASK#{task}"))))
        .update_expression("REMOVE run_place")
        .send()
        .await
        .unwrap();
    api.dynamodb()
        .update_item()
        .table_name(&api.resources.table)
        .set_key(Some(key("COUNTS".into())))
        .update_expression("REMOVE running_tasks")
        .send()
        .await
        .unwrap();

    act(&api, "pause", &task).await.ok();
    assert_eq!(
        running_count(&api, "acme").await,
        None,
        "nothing given back"
    );
    act(&api, "resume", &task).await.ok();
    assert_eq!(running_count(&api, "acme").await, Some(1));
    act(&api, "stop", &task).await.ok();
    assert_eq!(running_count(&api, "acme").await, Some(0));
}

/// A slot of `tenant`'s (`JOBSLOT#{kind}#000`) held by another request until `held_until`
/// (epoch milliseconds): one running in another function instance, or one that died.
async fn hold_slot(api: &TestApi, tenant: &str, kind: &str, held_until: i64) {
    let item = [
        ("pk", AttributeValue::S(format!("T#{tenant}"))),
        ("sk", AttributeValue::S(format!("JOBSLOT#{kind}#000"))),
        (
            "job_id",
            AttributeValue::S(outbound_model::Id::new().to_string()),
        ),
        ("held_until", AttributeValue::N(held_until.to_string())),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value))
    .collect();
    api.put_directly(vec![item]).await;
}

/// The tenant-partition slot items of `kind` left in the table.
async fn slots_left(api: &TestApi, tenant: &str, kind: &str) -> usize {
    let prefix = format!("JOBSLOT#{kind}#");
    api.snapshot()
        .await
        .keys()
        .filter(|(pk, sk)| *pk == format!("T#{tenant}") && sk.starts_with(&prefix))
        .count()
}

/// D26: a direct export holds one of its tenant's slots while it is built and gives it back
/// after; with every slot held it is 409 naming the limit, nothing changed; a slot whose holder
/// died lapses. Another tenant has slots of its own.
#[tokio::test]
async fn direct_exports_hold_one_of_the_tenants_slots_while_they_run() {
    let api = TestApi::start_with(|config| config.tenant_limits.direct_exports = 1).await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let export = format!("/api/dataSource/{source}/contact/batchExport?format=csv");
    let task_export = format!("/api/task/{task}/export?format=csv");
    let full =
        "tenant limit reached: at most 1 direct exports at once (TENANT_MAX_DIRECT_EXPORTS); \
                try again when one has finished";

    let (status, _, _) = api.download("acme", &export).await;
    assert_eq!(status, 200);
    assert_eq!(
        slots_left(&api, "acme", "DIRECT_EXPORT").await,
        0,
        "given back"
    );

    // Another request holds the only slot.
    hold_slot(&api, "acme", "DIRECT_EXPORT", Timestamp::now().0 + 60_000).await;
    let before = (api.snapshot().await, api.object_keys().await);
    api.get("acme", &export).await.err(409, full);
    api.get("acme", &task_export).await.err(409, full);
    assert_eq!(
        (api.snapshot().await, api.object_keys().await),
        before,
        "nothing changed, no file written"
    );
    let (theirs, _) = api.source_with_contacts("other", 1).await;
    let (status, _, _) = api
        .download(
            "other",
            &format!("/api/dataSource/{theirs}/contact/batchExport?format=csv"),
        )
        .await;
    assert_eq!(status, 200, "another tenant's exports are not held back");

    // Its holder died: the slot lapsed, and the next export takes it and gives it back.
    hold_slot(&api, "acme", "DIRECT_EXPORT", Timestamp::now().0 - 1).await;
    let (status, _, body) = api.download("acme", &task_export).await;
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&body).contains("phoneNumber"));
    assert_eq!(
        slots_left(&api, "acme", "DIRECT_EXPORT").await,
        0,
        "given back"
    );
}

/// A slot taken within a request lapses two minutes after it was taken, not an hour: only a
/// function that died leaves it held, and not for long.
#[tokio::test]
async fn a_slot_taken_within_a_request_lapses_within_minutes() {
    use outbound_adapters::store::slots::{JobKind, REQUEST_SLOT_LEASE_MILLIS};
    let api = TestApi::start().await;
    let holder = outbound_model::Id::new();
    let now = Timestamp::now();
    let slot = api
        .store
        .take_request_slot(&tenant("acme"), JobKind::DirectExport, &holder, 4, now)
        .await
        .unwrap();
    assert_eq!(slot, 0);
    let stored = api.snapshot().await;
    let item = &stored[&("T#acme".to_owned(), "JOBSLOT#DIRECT_EXPORT#000".to_owned())];
    assert_eq!(item["job_id"].as_s().unwrap(), holder.as_str());
    assert_eq!(
        item["held_until"].as_n().unwrap(),
        &(now.0 + REQUEST_SLOT_LEASE_MILLIS).to_string()
    );
    assert_eq!(REQUEST_SLOT_LEASE_MILLIS, 120_000);
}

/// D26: a do-not-call import holds one of the tenant's import slots (`TENANT_RUNNING_IMPORTS`)
/// while it lists its rows and gives it back after; with every one held it is 409 and nothing
/// is listed.
#[tokio::test]
async fn do_not_call_imports_hold_an_import_slot() {
    let api = TestApi::start_with(|config| config.tenant_running_imports = 1).await;
    let import = |csv: &'static str| api.import_dnc("acme", csv);
    hold_slot(&api, "acme", "IMPORT", Timestamp::now().0 + 60_000).await;
    let before = api.snapshot().await;
    import("phoneNumber\n+12125550101\n").await.err(
        409,
        "this tenant already has 1 imports running, the most it may; try again when one has finished",
    );
    assert_eq!(api.snapshot().await, before, "nothing listed");

    hold_slot(&api, "acme", "IMPORT", Timestamp::now().0 - 1).await;
    let answer = import("phoneNumber\n+12125550101\n").await;
    assert_eq!(
        answer.ok(),
        &json!({"importCount": 1, "successCount": 1, "failCount": 0, "details": []})
    );
    assert_eq!(slots_left(&api, "acme", "IMPORT").await, 0, "given back");
    assert_eq!(api.get("acme", "/api/dnc/list").await.ok()["total"], 1);
}

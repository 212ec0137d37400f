//! Export jobs (D8): `POST .../exportJob` stores a PROCESSING record and queues the job; the
//! exporter (its handler fed from the export queue, as the Lambda is) builds the file the direct
//! export would, and `GET /api/export/{id}` hands it out presigned. Also: refusals recorded as
//! FAILED, redeliveries, tenant isolation, the 413 of the direct exports above the threshold,
//! and the task export's merge join against the per-contact states, page boundaries included.

use crate::files::{csv, read_export};
use crate::support::{phone, unique, TestApi};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::{keys, Item};
use outbound_model::{Contact, ContactFields, Id, Phone, Timestamp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Starts an export job at `path` with `body` and answers its id.
async fn start_job(api: &TestApi, tenant: &str, path: &str, body: Value) -> String {
    let answer = api.post(tenant, path, body).await;
    let data = answer.ok();
    assert_eq!(data.as_object().unwrap().len(), 1, "only exportId: {data}");
    data["exportId"].as_str().unwrap().to_owned()
}

fn source_job(source: &str) -> String {
    format!("/api/dataSource/{source}/contact/exportJob")
}

fn task_job(task: &str) -> String {
    format!("/api/task/{task}/exportJob")
}

/// `GET /api/export/{id}` as `tenant`: the data of a success answer.
async fn job_state(api: &TestApi, tenant: &str, id: &str) -> Value {
    api.get(tenant, &format!("/api/export/{id}"))
        .await
        .ok()
        .clone()
}

/// The file of a SUCCEEDED job, fetched from its presigned URL without the API's token.
async fn job_file(state: &Value) -> Vec<u8> {
    let url = state["downloadUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("no downloadUrl: {state}"));
    let response = reqwest::get(url).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    response.bytes().await.unwrap().to_vec()
}

/// The file of a direct export at `path`.
async fn direct_file(api: &TestApi, tenant: &str, path: &str) -> Vec<u8> {
    let (status, _, bytes) = api.download(tenant, path).await;
    assert_eq!(status, StatusCode::OK, "{path}");
    bytes
}

/// Asserts `name` is `{prefix}YYYYMMDDHHMMSS.{extension}` with a time within a minute of now.
fn assert_file_name(name: &Value, prefix: &str, extension: &str) {
    let name = name.as_str().unwrap_or_else(|| panic!("{name} is no name"));
    let stamp = name
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(&format!(".{extension}")))
        .unwrap_or_else(|| panic!("{name} is not {prefix}<time>.{extension}"));
    let at = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%d%H%M%S")
        .unwrap_or_else(|_| panic!("{stamp} is not YYYYMMDDHHMMSS"))
        .and_utc();
    assert!(
        (chrono::Utc::now() - at).num_seconds().abs() <= 60,
        "{name}"
    );
}

/// A data source of acme with three contacts whose cells need guarding, and two custom fields.
async fn tricky_source(api: &TestApi) -> String {
    let source = api.data_source("acme", &unique("Jobs")).await;
    let file = csv(&[
        &["phoneNumber", "customerName", "address", "vip", "note"],
        &[
            "+8613800138000",
            "=SUM(A1)",
            "Road 1, Block 2",
            "gold",
            "-5",
        ],
        &["13900139000", "李四", "line one\nline two", "", "@home"],
        &["13700137000", "Plain", "", "", ""],
    ]);
    let answer = api.batch_import("acme", &source, "tricky.csv", file).await;
    assert_eq!(answer.ok()["successCount"], 3, "{}", answer.body);
    source
}

#[tokio::test]
async fn a_data_source_export_job_builds_the_file_the_direct_export_gives() {
    // D8: POST .../contact/exportJob -> {exportId}; PROCESSING until the exporter ran, then
    // SUCCEEDED with fileName, rowCount and a presigned download of the same rows.
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    for (body, extension, query) in [
        (json!({"format": "csv"}), "csv", "?format=csv"),
        (json!({"format": "excel"}), "xlsx", "?format=excel"),
        (json!({}), "xlsx", ""),
    ] {
        let id = start_job(&api, "acme", &source_job(&source), body.clone()).await;
        let queued = job_state(&api, "acme", &id).await;
        assert_eq!(queued["exportId"], id.as_str());
        assert_eq!(queued["status"], "PROCESSING", "{queued}");
        for field in ["fileName", "rowCount", "downloadUrl", "error"] {
            assert_eq!(queued[field], Value::Null, "{field}: {queued}");
        }
        assert_eq!(api.drain_exports().await, 1);
        let done = job_state(&api, "acme", &id).await;
        assert_eq!(done["status"], "SUCCEEDED", "{done}");
        assert_eq!(done["rowCount"], 3);
        assert_eq!(done["error"], Value::Null);
        assert_eq!(done["createTime"], queued["createTime"]);
        assert_file_name(&done["fileName"], "contacts_", extension);
        let url = done["downloadUrl"].as_str().unwrap();
        assert!(url.contains(&format!("/exports/acme/{id}/")), "{url}");
        let file = job_file(&done).await;
        let direct = direct_file(
            &api,
            "acme",
            &format!("/api/dataSource/{source}/contact/batchExport{query}"),
        )
        .await;
        assert_eq!(read_export(&file), read_export(&direct), "{body}");
    }
    // A job request without any body is an Excel export too.
    let answer = api
        .send(api.request("acme", reqwest::Method::POST, &source_job(&source)))
        .await;
    let id = answer.ok()["exportId"].as_str().unwrap().to_owned();
    api.drain_exports().await;
    let done = job_state(&api, "acme", &id).await;
    assert_file_name(&done["fileName"], "contacts_", "xlsx");
}

/// A task on a data source of `count` contacts, with states (outcome, attempts) seeded for
/// some: success, failed, no answer, and a recalled contact not dialled yet. Answers the task,
/// its data source and the contact ids.
async fn task_with_outcomes(api: &TestApi, count: usize) -> (String, String, Vec<String>) {
    let (source, contacts) = api.source_with_contacts("acme", count).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    for (n, contact) in contacts.iter().enumerate() {
        let outcome = match n % 5 {
            0 => Some((1, 1)),
            1 => Some((2, 3)),
            2 => Some((3, 2)),
            3 => Some((0, 0)),
            _ => None,
        };
        if let Some((outcome, attempts)) = outcome {
            api.seed_outcome("acme", &task, contact, outcome, attempts)
                .await;
        }
    }
    (task, source, contacts)
}

#[tokio::test]
async fn a_task_export_job_builds_the_file_the_direct_export_gives_for_each_filter() {
    // D8: POST /api/task/{id}/exportJob with format and status (0-3, as the task export).
    let api = TestApi::start().await;
    let (task, _, _) = task_with_outcomes(&api, 12).await;
    for status in [None, Some(0), Some(1), Some(2), Some(3)] {
        let mut body = json!({"format": "csv"});
        let mut query = "?format=csv".to_owned();
        if let Some(status) = status {
            body["status"] = json!(status);
            query.push_str(&format!("&status={status}"));
        }
        let id = start_job(&api, "acme", &task_job(&task), body).await;
        assert_eq!(api.drain_exports().await, 1);
        let done = job_state(&api, "acme", &id).await;
        assert_eq!(done["status"], "SUCCEEDED", "{done}");
        assert_file_name(&done["fileName"], &format!("task_contacts_{task}_"), "csv");
        let file = read_export(&job_file(&done).await);
        let direct = read_export(
            &direct_file(&api, "acme", &format!("/api/task/{task}/export{query}")).await,
        );
        assert_eq!(file, direct, "status {status:?}");
        assert_eq!(done["rowCount"], file.len() as u64 - 1, "{status:?}");
    }
    let id = start_job(&api, "acme", &task_job(&task), json!({"status": 2})).await;
    api.drain_exports().await;
    let done = job_state(&api, "acme", &id).await;
    assert_file_name(&done["fileName"], &format!("task_contacts_{task}_"), "xlsx");
    // 12 contacts: n % 5 = 1 or 2 -> failed or no answer: 1, 2, 6, 7, 11.
    assert_eq!(done["rowCount"], 5);
}

#[tokio::test]
async fn a_job_whose_data_source_or_task_is_gone_when_it_runs_fails_with_the_reason() {
    // D8: refused jobs end FAILED with a message; nothing is stored for them.
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let for_source = start_job(&api, "acme", &source_job(&source), json!({})).await;
    let for_task = start_job(&api, "acme", &task_job(&task), json!({})).await;
    api.post("acme", "/api/task/delete", json!({"id": task}))
        .await
        .ok();
    api.post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await
        .ok();
    assert_eq!(api.drain_exports().await, 2, "refusals are not retried");
    for (id, message) in [
        (&for_source, format!("dataSource {source} not found")),
        (&for_task, format!("task {task} not found")),
    ] {
        let failed = job_state(&api, "acme", id).await;
        assert_eq!(failed["status"], "FAILED", "{failed}");
        assert_eq!(failed["error"], message.as_str());
        for field in ["fileName", "rowCount", "downloadUrl"] {
            assert_eq!(failed[field], Value::Null, "{field}: {failed}");
        }
    }
    assert!(
        !api.object_keys()
            .await
            .iter()
            .any(|k| k.starts_with("exports/")),
        "no file for a refused job"
    );

    // A task whose data source went away (it can, once the task is stopped) fails the same way.
    let source = tricky_source(&api).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let id = start_job(&api, "acme", &task_job(&task), json!({})).await;
    api.post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await
        .ok();
    api.drain_exports().await;
    let failed = job_state(&api, "acme", &id).await;
    assert_eq!(failed["status"], "FAILED", "{failed}");
    assert_eq!(
        failed["error"],
        format!("dataSource {source} not found").as_str()
    );
}

#[tokio::test]
async fn a_redelivered_or_concurrent_job_message_builds_nothing_twice() {
    // D8: the exporter claims the record: a second delivery of a settled job changes nothing,
    // and a delivery while another holds the claim builds nothing and is retried later.
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let id = start_job(&api, "acme", &source_job(&source), json!({"format": "csv"})).await;
    let message = json!({"tenant": "acme", "id": id}).to_string();

    // Another worker holds a fresh claim: this delivery fails (to be redelivered), builds nothing.
    let owner = outbound_model::Tenant::parse("acme").unwrap();
    let job_id = Id::parse(&id).unwrap();
    let claimed = api
        .store
        .claim_export(&owner, &job_id, Timestamp::now())
        .await
        .unwrap()
        .expect("the first claim wins");
    assert!(api
        .store
        .claim_export(&owner, &job_id, Timestamp::now())
        .await
        .unwrap()
        .is_none());
    let busy = outbound_workers::export_message(&api.app, message.clone()).await;
    assert!(busy.is_err(), "retried while another delivery builds it");
    assert!(api
        .object_keys()
        .await
        .iter()
        .all(|k| !k.starts_with("exports/")));
    assert_eq!(job_state(&api, "acme", &id).await["status"], "PROCESSING");
    // A claim gone stale (its worker died) is taken over; the old holder can then settle nothing.
    use outbound_adapters::store::export::{ExportSettlement, STALE_EXPORT_CLAIM_MILLIS};
    let later = Timestamp(claimed.claimed_at.unwrap().0 + STALE_EXPORT_CLAIM_MILLIS + 1_000);
    let taken = api
        .store
        .claim_export(&owner, &job_id, later)
        .await
        .unwrap()
        .expect("a stale claim is taken over");
    assert_eq!(taken.attempts, 2);
    let settle = |claim: Option<Timestamp>| {
        let (store, owner, job) = (&api.store, &owner, &taken);
        async move {
            store
                .settle_export(
                    owner,
                    job,
                    claim,
                    ExportSettlement::Released,
                    Timestamp::now(),
                )
                .await
                .unwrap()
        }
    };
    assert!(!settle(claimed.claimed_at).await, "the old claim is gone");
    assert!(!settle(None).await, "a claimed job is not unclaimed");
    // The holder gives up its claim (a retryable failure); the queued message then builds it.
    assert!(settle(taken.claimed_at).await);
    assert_eq!(api.drain_exports().await, 1);
    let done = job_state(&api, "acme", &id).await;
    assert_eq!(done["status"], "SUCCEEDED", "{done}");

    // Delivered again, twice: nothing changes, in the table or in the bucket.
    let before = (api.snapshot().await, api.object_keys().await);
    for _ in 0..2 {
        outbound_workers::export_message(&api.app, message.clone())
            .await
            .unwrap();
    }
    assert_eq!((api.snapshot().await, api.object_keys().await), before);
    let exports: Vec<String> = before
        .1
        .iter()
        .filter(|k| k.starts_with("exports/"))
        .cloned()
        .collect();
    assert_eq!(exports.len(), 1, "{exports:?}");
    assert_eq!(
        exports[0],
        format!("exports/acme/{id}/{}", done["fileName"].as_str().unwrap())
    );

    // A FAILED job delivered again stays as it is too.
    let gone = tricky_source(&api).await;
    let failed = start_job(&api, "acme", &source_job(&gone), json!({})).await;
    api.post("acme", "/api/dataSource/delete", json!({"id": gone}))
        .await
        .ok();
    api.drain_exports().await;
    let before = api.snapshot().await;
    let again = json!({"tenant": "acme", "id": failed}).to_string();
    outbound_workers::export_message(&api.app, again)
        .await
        .unwrap();
    assert_eq!(api.snapshot().await, before);
}

#[tokio::test]
async fn a_job_that_cannot_be_queued_is_recorded_failed_and_answered_503() {
    // D8, D1: never a PROCESSING record without a job: the record, written first, is marked
    // FAILED when the queue refuses the job, and the request answers 503.
    let api = TestApi::start_with(|config| {
        config.export_queue_url = config
            .export_queue_url
            .take()
            .map(|url| format!("{url}-gone"));
        // The queue the API is told to use, for the least-privilege check.
        if let Some(url) = &config.export_queue_url {
            outbound_adapters::aws::actions::name_resources(&[("EXPORT_QUEUE_URL", url)]);
        }
    })
    .await;
    let source = tricky_source(&api).await;
    let answer = api.post("acme", &source_job(&source), json!({})).await;
    answer.err(
        503,
        "the service is busy; nothing was changed, try again shortly",
    );
    let jobs: Vec<Item> = api
        .snapshot()
        .await
        .into_iter()
        .filter(|((_, sk), _)| sk.starts_with("EXPORT#"))
        .map(|(_, item)| item)
        .collect();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let text = |name: &str| jobs[0][name].as_s().unwrap().clone();
    assert_eq!(text("status"), "FAILED");
    assert_eq!(
        text("error"),
        "the export could not be queued; request it again"
    );
    let id = text("sk").trim_start_matches("EXPORT#").to_owned();
    let state = job_state(&api, "acme", &id).await;
    assert_eq!(state["status"], "FAILED", "{state}");
    assert_eq!(state["downloadUrl"], Value::Null);
}

#[tokio::test]
async fn export_jobs_are_the_tenants_own() {
    // D3: another tenant's job, data source or task answers exactly as a missing one.
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let id = start_job(&api, "acme", &source_job(&source), json!({})).await;
    api.drain_exports().await;
    let missing = ulid::Ulid::new().to_string();
    for probe in [&id, &missing] {
        api.get("globex", &format!("/api/export/{probe}"))
            .await
            .err(404, &format!("export {probe} not found"));
    }
    api.get("acme", &format!("/api/export/{missing}"))
        .await
        .err(404, &format!("export {missing} not found"));
    api.get("acme", "/api/export/not-an-id")
        .await
        .err(404, "export not-an-id not found");
    api.post("globex", &source_job(&source), json!({}))
        .await
        .err(404, &format!("dataSource {source} not found"));
    api.post("globex", &task_job(&task), json!({}))
        .await
        .err(404, &format!("task {task} not found"));
    for (path, message) in [
        (
            source_job(&missing),
            format!("dataSource {missing} not found"),
        ),
        (task_job(&missing), format!("task {missing} not found")),
    ] {
        api.post("acme", &path, json!({})).await.err(404, &message);
    }
    // Refused requests queue nothing and store nothing.
    let before = api.snapshot().await;
    assert_eq!(api.drain_exports().await, 0);
    assert_eq!(api.snapshot().await, before);
    assert_eq!(job_state(&api, "acme", &id).await["status"], "SUCCEEDED");
}

#[tokio::test]
async fn export_job_format_and_status_are_checked_as_the_direct_exports_check_them() {
    // D8: format csv or excel (default excel); task status 0-3; anything else 400, nothing queued.
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let before = api.snapshot().await;
    for format in [
        json!("pdf"),
        json!("xlsx"),
        json!("CSV"),
        json!(""),
        json!(5),
        json!(["csv"]),
    ] {
        for path in [source_job(&source), task_job(&task)] {
            api.post("acme", &path, json!({"format": format}))
                .await
                .err(400, "format must be csv or excel");
        }
    }
    for status in [json!(4), json!(-1), json!("1"), json!(1.5), json!(true)] {
        api.post("acme", &task_job(&task), json!({"status": status}))
            .await
            .err(
                400,
                "status must be 0 (all), 1 (success), 2 (failed or no answer) or 3 (not dialled)",
            );
    }
    api.post_raw("acme", &source_job(&source), "[1]")
        .await
        .err(400, "request body must be a JSON object");
    // Whitespace is not JSON; only an empty body is no body.
    let blank = api.post_raw("acme", &source_job(&source), "\r").await;
    assert_eq!(blank.status.as_u16(), 400, "{}", blank.body);
    assert_eq!(api.snapshot().await, before, "nothing stored");
    assert_eq!(api.drain_exports().await, 0, "nothing queued");
}

#[tokio::test]
async fn direct_exports_answer_413_above_the_threshold_and_name_the_job_endpoint() {
    // D8: up to the threshold the direct exports answer the file; above it 413, naming the job
    // endpoint, which still exports it.
    let api = TestApi::start_with(|config| config.export_job_threshold = 5).await;
    let (source, _) = api.source_with_contacts("acme", 5).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let direct = [
        format!("/api/dataSource/{source}/contact/batchExport?format=csv"),
        format!("/api/task/{task}/export?format=csv"),
    ];
    for path in &direct {
        let rows = read_export(&direct_file(&api, "acme", path).await);
        assert_eq!(rows.len(), 6, "{path}: title and 5 rows at the threshold");
    }
    api.contact("acme", &source, &phone(5)).await;
    api.get("acme", &direct[0]).await.err(
        413,
        &format!(
            "dataSource has 6 contacts, more than 5 exported directly; \
             use POST /api/dataSource/{source}/contact/exportJob"
        ),
    );
    api.get("acme", &direct[1]).await.err(
        413,
        &format!(
            "task has 6 contacts, more than 5 exported directly; use POST /api/task/{task}/exportJob"
        ),
    );
    // Even with a filter that would keep few rows: the work is reading every contact.
    api.get("acme", &format!("{}&status=1", direct[1]))
        .await
        .code(413);
    for path in [source_job(&source), task_job(&task)] {
        let id = start_job(&api, "acme", &path, json!({"format": "csv"})).await;
        api.drain_exports().await;
        let done = job_state(&api, "acme", &id).await;
        assert_eq!(done["status"], "SUCCEEDED", "{done}");
        assert_eq!(done["rowCount"], 6);
        assert_eq!(read_export(&job_file(&done).await).len(), 7);
    }
}

/// Writes `contacts` straight to the data source partition with BatchWriteItem (25 a request)
/// and counts them on its head, much faster than adding them one by one through the API.
async fn write_contacts(api: &TestApi, tenant: &str, source: &str, contacts: &[Contact]) {
    let owner = outbound_model::Tenant::parse(tenant).unwrap();
    let shards = api
        .store
        .shards(&owner, &Id::parse(source).unwrap())
        .await
        .unwrap();
    let pk = shards.home().to_owned();
    let items = contacts.iter().map(|contact| {
        let mut item: Item = serde_dynamo::to_item(contact).unwrap();
        item.insert(
            keys::PK.into(),
            AttributeValue::S(shards.of_contact(&contact.id)),
        );
        item.insert(
            keys::SK.into(),
            AttributeValue::S(keys::contact(&contact.id)),
        );
        item
    });
    api.put_directly(items.collect()).await;
    api.dynamodb()
        .update_item()
        .table_name(&api.resources.table)
        .key(keys::PK, AttributeValue::S(pk))
        .key(keys::SK, AttributeValue::S(keys::HEAD.into()))
        .update_expression("ADD contact_count :n")
        .expression_attribute_values(":n", AttributeValue::N(contacts.len().to_string()))
        .send()
        .await
        .unwrap();
}

/// `count` contacts of `source`, ids ascending, each with `custom_chars` characters in each of
/// two custom fields (so a Query page holds few of them).
fn contacts_of(source: &str, count: usize, custom_chars: usize) -> Vec<Contact> {
    let source = Id::parse(source).unwrap();
    let now = Timestamp::now();
    (0..count)
        .map(|n| {
            let mut fields = ContactFields::default();
            fields.set("customerName", &format!("Name {n}")).unwrap();
            if custom_chars > 0 {
                fields.set("memo", &"m".repeat(custom_chars)).unwrap();
                fields
                    .set("zone", &format!("{n:0>width$}", width = custom_chars))
                    .unwrap();
            }
            Contact {
                id: Id::new(),
                data_source_id: source.clone(),
                phone: Phone::parse(&format!("1{:010}", 3_000_000_000u64 + n as u64)).unwrap(),
                fields,
                status: (n % 4) as u8,
                call_count: (n % 7) as u32,
                created_at: now,
                updated_at: now,
            }
        })
        .collect()
}

/// The item of a contact's state in a task, as the dialing engine stores it.
fn state_item(tenant: &str, task: &str, contact: &Id, outcome: u8, attempts: u32) -> Item {
    let owner = outbound_model::Tenant::parse(tenant).unwrap();
    let task = Id::parse(task).unwrap();
    let mut item: Item = HashMap::new();
    let mut put = |name: &str, value: AttributeValue| item.insert(name.to_owned(), value);
    put(
        keys::PK,
        AttributeValue::S(keys::task_contacts(&owner, &task)),
    );
    put(keys::SK, AttributeValue::S(keys::contact(contact)));
    put("contact_id", AttributeValue::S(contact.to_string()));
    put("last_outcome", AttributeValue::N(outcome.to_string()));
    put("attempts", AttributeValue::N(attempts.to_string()));
    put("allowance", AttributeValue::N("3".into()));
    put("priority", AttributeValue::N("3".into()));
    put("updated_at", AttributeValue::N("0".into()));
    put("done", AttributeValue::Bool(true));
    item
}

/// The old task export, computed from the data source export: every row with the contact's
/// outcome and attempts in the task from `states` (absent: 0, 0), kept when `filter` admits it.
fn expected_task_rows(
    source_rows: &[Vec<String>],
    states: &HashMap<String, (u8, u32)>,
    filter: u8,
) -> Vec<Vec<String>> {
    // A task's export is the data source's with its outcome, attempts, the reason and skip
    // columns (D18, empty here: the seeded states have neither), the caller ID (none here) and
    // whether a message was left (D22: `false` once attempted).
    let mut titles = source_rows[0].clone();
    titles.extend(
        [
            "lastReason",
            "skipReason",
            "callerId",
            "messageLeft",
            "callbackAt",
        ]
        .map(str::to_owned),
    );
    let column = |name: &str| titles.iter().position(|t| t == name).unwrap();
    let (status, calls) = (column("status"), column("callCount"));
    let mut rows = vec![titles.clone()];
    for row in &source_rows[1..] {
        let (outcome, attempts) = states.get(&row[0]).copied().unwrap_or((0, 0));
        let admitted = match filter {
            1 => outcome == 1,
            2 => outcome == 2 || outcome == 3,
            3 => outcome == 0,
            _ => true,
        };
        if admitted {
            let mut row = row.clone();
            row[status] = outcome.to_string();
            row[calls] = attempts.to_string();
            let left = if attempts > 0 { "false" } else { "" };
            row.extend(["", "", "", left, ""].map(str::to_owned));
            rows.push(row);
        }
    }
    rows
}

#[tokio::test]
async fn the_task_export_joins_states_page_by_page_as_the_whole_map_did() {
    // The task export reads the data source's contacts and the task's states with two
    // ascending Queries and matches them in order. Contacts and states here span several 1 MB
    // pages each (moto pages as DynamoDB does), with states of contacts no longer in the data
    // source in between; every filter gives what the in-memory join gave.
    let api = TestApi::start().await;
    let source = api.data_source("acme", &unique("Paged")).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let contacts = contacts_of(&source, 1_200, 1_000);
    write_contacts(&api, "acme", &source, &contacts).await;
    let mut states = HashMap::new();
    let mut state_items = Vec::new();
    let mut state = |contact: &Id, outcome: u8, attempts: u32| {
        let mut item = state_item("acme", &task, contact, outcome, attempts);
        // Large enough that the states too take several pages.
        item.insert("pad".into(), AttributeValue::S("p".repeat(3_000)));
        state_items.push(item);
    };
    for (n, contact) in contacts.iter().enumerate() {
        // Runs of dialled contacts, runs of undialled ones, and the odd orphan state.
        let outcome = match (n / 37) % 4 {
            0 => None,
            block => Some((((block + n) % 4) as u8, (n % 5) as u32)),
        };
        if let Some((outcome, attempts)) = outcome {
            state(&contact.id, outcome, attempts);
            states.insert(contact.id.to_string(), (outcome, attempts));
        }
        if n % 97 == 0 {
            state(&Id::new(), 1, 9);
        }
    }
    assert!(states.len() > 800 && state_items.len() > 850);
    api.put_directly(state_items).await;

    let source_rows = read_export(
        &direct_file(
            &api,
            "acme",
            &format!("/api/dataSource/{source}/contact/batchExport?format=csv"),
        )
        .await,
    );
    assert_eq!(source_rows.len(), 1_201);
    for filter in 0..=3u8 {
        let path = format!("/api/task/{task}/export?format=csv&status={filter}");
        let ((status, _, bytes), calls) = {
            api.calls.take();
            let download = api.download("acme", &path).await;
            (download, api.calls.take())
        };
        assert_eq!(status, StatusCode::OK);
        // Two GetItems (task, data source), then 3 pages of contacts per pass and 3 of states.
        assert!(
            calls >= 2 + 3 + 3 + 3,
            "{calls} calls: the pages are not what this test needs"
        );
        let rows = read_export(&bytes);
        assert_eq!(
            rows,
            expected_task_rows(&source_rows, &states, filter),
            "status {filter}"
        );
    }
}

/// This process's peak resident memory since the last reset, in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
#[ignore = "a measurement, about 6 minutes against moto: cargo test -p outbound-local --test api export_job_of_100k -- --ignored --nocapture"]
async fn export_job_of_100k_contacts_time_and_memory() {
    // Writes 100,000 contacts straight to the table, then runs one export job of a task over
    // them (states for every third contact) and prints the time and peak memory it took.
    let api = TestApi::start().await;
    let source = api.data_source("acme", &unique("Big")).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let started = std::time::Instant::now();
    let contacts = contacts_of(&source, 100_000, 0);
    write_contacts(&api, "acme", &source, &contacts).await;
    let states = contacts
        .iter()
        .step_by(3)
        .map(|contact| state_item("acme", &task, &contact.id, 2, 1))
        .collect();
    api.put_directly(states).await;
    println!("seeded 100,000 contacts in {:?}", started.elapsed());
    drop(contacts);
    for (kind, path) in [
        ("data source", source_job(&source)),
        ("task", task_job(&task)),
    ] {
        // Linux: writing 5 to clear_refs resets the peak (VmHWM) to the current RSS.
        std::fs::write("/proc/self/clear_refs", "5").ok();
        let before = peak_rss_kib();
        let started = std::time::Instant::now();
        let id = start_job(&api, "acme", &path, json!({"format": "csv"})).await;
        assert_eq!(api.drain_exports().await, 1);
        let took = started.elapsed();
        let done = job_state(&api, "acme", &id).await;
        assert_eq!(done["status"], "SUCCEEDED", "{done}");
        assert_eq!(done["rowCount"], 100_000);
        println!(
            "{kind} export job of 100,000 contacts (CSV): {took:?}, peak RSS {} MiB (before {} MiB)",
            peak_rss_kib() / 1024,
            before / 1024
        );
    }
}

/// D8: while an export job of a subject and format runs, asking again answers that job (no
/// second job is queued); another format is another job; once it has ended, a new one starts.
#[tokio::test]
async fn a_second_export_of_a_running_subject_answers_the_running_job() {
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let first = start_job(&api, "acme", &source_job(&source), json!({"format": "csv"})).await;
    let again = start_job(&api, "acme", &source_job(&source), json!({"format": "csv"})).await;
    assert_eq!(again, first, "the running job is the answer");
    let excel = start_job(
        &api,
        "acme",
        &source_job(&source),
        json!({"format": "excel"}),
    )
    .await;
    assert_ne!(excel, first, "another format is another job");
    assert_eq!(api.drain_exports().await, 2, "two jobs queued, not three");
    assert_eq!(job_state(&api, "acme", &first).await["status"], "SUCCEEDED");
    let after = start_job(&api, "acme", &source_job(&source), json!({"format": "csv"})).await;
    assert_ne!(after, first, "the first has ended: a new job");
    assert_eq!(
        job_state(&api, "acme", &after).await["status"],
        "PROCESSING"
    );
}

/// A tenant runs at most `TENANT_RUNNING_EXPORTS` export jobs at once (2 here): a third is 409
/// and starts nothing, another tenant is not held back, and a slot is free again once a job has
/// ended.
#[tokio::test]
async fn a_tenant_runs_at_most_its_cap_of_export_jobs() {
    let api = TestApi::start_with(|config| config.tenant_running_exports = 2).await;
    let sources = [
        tricky_source(&api).await,
        tricky_source(&api).await,
        tricky_source(&api).await,
    ];
    start_job(&api, "acme", &source_job(&sources[0]), json!({})).await;
    start_job(&api, "acme", &source_job(&sources[1]), json!({})).await;
    api.post("acme", &source_job(&sources[2]), json!({}))
        .await
        .err(
            409,
            "this tenant already has 2 export jobs running, the most it may; try again when one has finished",
        );
    let other = api.data_source("globex", "Other tenant").await;
    api.contact("globex", &other, "13800000001").await;
    start_job(&api, "globex", &source_job(&other), json!({})).await;
    assert_eq!(
        api.drain_exports().await,
        3,
        "the refused one was never queued"
    );
    start_job(&api, "acme", &source_job(&sources[2]), json!({})).await;
}

/// D8: simultaneous requests for one subject and format get one job: every one of them is
/// answered 200 with the same `exportId`, one record is stored, one slot and the subject's key
/// are held by it, and one job is queued. Rounds for a data source (CSV, then Excel) and a task.
#[tokio::test]
async fn simultaneous_requests_for_one_subject_get_one_job() {
    const REQUESTS: usize = 4;
    let api = TestApi::start().await;
    let source = tricky_source(&api).await;
    let task = api.task("acme", &unique("Task"), &source, json!({})).await;
    let rounds = [
        (source_job(&source), json!({"format": "csv"})),
        (source_job(&source), json!({"format": "excel"})),
        (task_job(&task), json!({"format": "csv", "status": 2})),
    ];
    let mut ids = Vec::new();
    for (path, body) in &rounds {
        let answers =
            futures::future::join_all((0..REQUESTS).map(|_| api.post("acme", path, body.clone())))
                .await;
        let answered: Vec<String> = answers
            .iter()
            .map(|answer| {
                assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.body);
                answer.ok()["exportId"].as_str().unwrap().to_owned()
            })
            .collect();
        assert!(
            answered.iter().all(|id| *id == answered[0]),
            "{path} {body}: {answered:?}"
        );
        ids.push(answered[0].clone());
    }
    let snapshot = api.snapshot().await;
    let stored = |prefix: &str| -> Vec<&Item> {
        snapshot
            .iter()
            .filter(|((_, sk), _)| sk.starts_with(prefix))
            .map(|(_, item)| item)
            .collect()
    };
    let jobs: Vec<String> = stored("EXPORT#")
        .iter()
        .map(|item| {
            item["sk"]
                .as_s()
                .unwrap()
                .trim_start_matches("EXPORT#")
                .to_owned()
        })
        .collect();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(jobs, expected, "one record a subject and format");
    for prefix in ["JOBSLOT#EXPORT#", "EXPORTING#"] {
        let mut holders: Vec<String> = stored(prefix)
            .iter()
            .map(|item| item["job_id"].as_s().unwrap().clone())
            .collect();
        holders.sort();
        assert_eq!(holders, expected, "{prefix}");
    }
    for id in &ids {
        assert_eq!(job_state(&api, "acme", id).await["status"], "PROCESSING");
    }
    assert_eq!(
        api.drain_exports().await,
        rounds.len(),
        "one job queued a subject"
    );
}

/// D8: with one slot left, simultaneous requests for one subject still get its one job (the
/// slot its job holds is no reason to refuse them); a subject whose key names a job that has
/// gone is started afresh; another subject meets the cap.
#[tokio::test]
async fn simultaneous_requests_at_the_tenants_cap_get_the_one_job() {
    let api = TestApi::start_with(|config| config.tenant_running_exports = 1).await;
    let source = tricky_source(&api).await;
    let other = tricky_source(&api).await;
    let path = source_job(&source);
    let answers = futures::future::join_all(
        (0..4).map(|_| api.post("acme", &path, json!({"format": "csv"}))),
    )
    .await;
    let ids: Vec<&str> = answers
        .iter()
        .map(|answer| answer.ok()["exportId"].as_str().unwrap())
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    api.post("acme", &source_job(&other), json!({"format": "csv"}))
        .await
        .err(
            409,
            "this tenant already has 1 export jobs running, the most it may; try again when one has finished",
        );
    assert_eq!(api.drain_exports().await, 1);
    assert_eq!(job_state(&api, "acme", ids[0]).await["status"], "SUCCEEDED");

    // A key that names a job no longer stored (its record gone) is taken over at once.
    let ghost = Id::new();
    let until = Timestamp::now().0 + 60_000;
    let key = |sk: String| -> Item {
        [
            (keys::PK.to_owned(), AttributeValue::S("T#acme".into())),
            (keys::SK.to_owned(), AttributeValue::S(sk)),
            ("job_id".to_owned(), AttributeValue::S(ghost.to_string())),
            (
                "held_until".to_owned(),
                AttributeValue::N(until.to_string()),
            ),
        ]
        .into()
    };
    api.put_directly(vec![key(format!("EXPORTING#DS#{other}#csv"))])
        .await;
    let fresh = start_job(&api, "acme", &source_job(&other), json!({"format": "csv"})).await;
    assert_ne!(fresh, ghost.to_string());
    assert_eq!(
        job_state(&api, "acme", &fresh).await["status"],
        "PROCESSING"
    );
    let snapshot = api.snapshot().await;
    let held = &snapshot[&("T#acme".to_owned(), format!("EXPORTING#DS#{other}#csv"))];
    assert_eq!(
        held["job_id"].as_s().unwrap(),
        &fresh,
        "the key names the new job"
    );
    assert_eq!(api.drain_exports().await, 1);
}

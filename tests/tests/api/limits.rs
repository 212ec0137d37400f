//! Per-tenant limits (D26) over HTTP: data sources, tasks and do-not-call entries stop at the
//! deployment's limit with a 409 naming it, nothing changed, and another tenant is unaffected.

use crate::support::{unique, TestApi};
use outbound_model::limits::TenantLimits;
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
    let part = reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("dnc.csv");
    let form = reqwest::multipart::Form::new().part("file", part);
    let answer = api
        .send(
            api.request("acme", reqwest::Method::POST, "/api/dnc/batchImport")
                .multipart(form),
        )
        .await;
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

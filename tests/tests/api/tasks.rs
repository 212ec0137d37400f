//! Task endpoints (D9, D10, D12).

use crate::support::TestApi;
use serde_json::json;

#[tokio::test]
async fn lifecycle_publish_pause_resume_stop_close_delete() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Leads").await;
    api.contact("acme", &source, "13800138000").await;
    let added = api
        .post(
            "acme",
            "/api/task/add",
            json!({"taskName": "Spring", "dataSourceId": source}),
        )
        .await;
    let task = added.ok().clone();
    assert_eq!(task["status"], 0);
    assert_eq!(task["contactCount"], 1);
    assert_eq!(task["priority"], 3);
    assert_eq!(task["maxDialCount"], 3);
    assert_eq!(task["callInterval"], 60);
    assert_eq!(task["startTime"], json!(null));
    let id = task["id"].as_str().unwrap();
    api.calls.take();
    let published = api
        .post("acme", "/api/task/publish", json!({"id": id}))
        .await;
    assert_eq!(published.ok()["status"], 1);
    assert!(published.ok()["startTime"].is_string());
    api.post("acme", "/api/task/publish", json!({"id": id}))
        .await
        .err(405, "cannot publish a task in state RUNNING");
    // D11: a RUNNING task holds its data source.
    api.post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await
        .err(
            409,
            &format!("dataSource {source} is used by a running or paused task"),
        );
    assert_eq!(
        api.post("acme", "/api/task/pause", json!({"id": id}))
            .await
            .ok(),
        &json!({"id": id, "status": 2})
    );
    assert_eq!(
        api.post("acme", "/api/task/resume", json!({"id": id}))
            .await
            .ok(),
        &json!({"id": id, "status": 1})
    );
    let stopped = api
        .post(
            "acme",
            "/api/task/stop",
            json!({"id": id, "reason": "enough"}),
        )
        .await;
    assert_eq!(stopped.ok(), &json!({"id": id, "status": 3}));
    let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
    assert_eq!(detail.ok()["stopReason"], "enough");
    assert!(detail.ok()["endTime"].is_string());
    assert_eq!(
        api.post("acme", "/api/task/close", json!({"id": id}))
            .await
            .ok()["status"],
        6
    );
    api.post("acme", "/api/task/resume", json!({"id": id}))
        .await
        .err(405, "cannot resume a task in state CLOSED");
    api.calls.take();
    assert_eq!(
        api.post("acme", "/api/task/delete", json!({"id": id}))
            .await
            .ok(),
        &json!(null)
    );
    assert!(api.calls.take() <= 2);
    api.get("acme", &format!("/api/task/detail/{id}"))
        .await
        .err(404, &format!("task {id} not found"));
    // Released: the data source can go now.
    api.post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await
        .ok();
}

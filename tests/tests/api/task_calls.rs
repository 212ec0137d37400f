//! DynamoDB calls per task request, counted at the SDK: each endpoint's cost is part of its
//! design (pause, resume and close are one conditional write with no read, D10), so a change
//! to any of them shows up here.

use crate::support::TestApi;
use outbound_model::TaskStatus;
use serde_json::json;

/// Sends one request and answers the DynamoDB calls it made; it must succeed.
async fn calls_of(api: &TestApi, method: &str, path: &str, body: serde_json::Value) -> usize {
    api.calls.take();
    let answer = match method {
        "GET" => api.get("acme", path).await,
        _ => api.post("acme", path, body).await,
    };
    answer.ok();
    api.calls.take()
}

#[tokio::test]
async fn dynamodb_calls_per_task_request() {
    let api = TestApi::start().await;
    let (source, contacts) = api.source_with_contacts("acme", 2).await;
    let body = |id: &str| json!({"id": id});

    let add = json!({"taskName": "Counted", "dataSourceId": source});
    assert_eq!(
        calls_of(&api, "POST", "/api/task/add", add.clone()).await,
        2
    );
    let id = api.get("acme", "/api/task/list").await.ok()["rows"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = id.as_str();
    let update = json!({"id": id, "taskName": "Renamed", "priority": 1});
    assert_eq!(calls_of(&api, "POST", "/api/task/update", update).await, 2);
    let update = json!({"id": id, "taskDesc": "same name"});
    assert_eq!(calls_of(&api, "POST", "/api/task/update", update).await, 2);
    let detail = format!("/api/task/detail/{id}");
    assert_eq!(calls_of(&api, "GET", &detail, json!(null)).await, 1);
    let stat = format!("/api/task/{id}/stat");
    assert_eq!(calls_of(&api, "GET", &stat, json!(null)).await, 1);
    // The task, and one Query of its history's partition (D31).
    let history = format!("/api/task/{id}/history");
    assert_eq!(calls_of(&api, "GET", &history, json!(null)).await, 2);
    // The page, then one BatchGetItem of its tasks' counters items (`callCount`,
    // `successCount`), which their calls move apart from the task items.
    assert_eq!(
        calls_of(&api, "GET", "/api/task/list", json!(null)).await,
        2
    );
    // The task, the tenant's settings (what the task leaves to its defaults is fixed at
    // publish, D28), its data source, and the transition.
    assert_eq!(
        calls_of(&api, "POST", "/api/task/publish", body(id)).await,
        4
    );
    assert_eq!(calls_of(&api, "POST", "/api/task/pause", body(id)).await, 1);
    assert_eq!(
        calls_of(&api, "POST", "/api/task/resume", body(id)).await,
        1
    );
    // Recall of named ids: read the task, check the ids, read their states in the task (the
    // counters of D19 move by what the recall makes of each), write them with the task.
    let recall = format!("/api/task/{id}/recall");
    let named = json!({"contactIds": contacts});
    assert_eq!(calls_of(&api, "POST", &recall, named).await, 4);
    assert_eq!(calls_of(&api, "POST", "/api/task/stop", body(id)).await, 2);
    assert_eq!(calls_of(&api, "POST", "/api/task/close", body(id)).await, 1);
    assert_eq!(
        calls_of(&api, "POST", "/api/task/delete", body(id)).await,
        2
    );

    // A refused change costs no more than its success: pause of a DRAFT is still one call.
    let draft = api.task_in("acme", TaskStatus::Draft, 1).await;
    api.calls.take();
    api.post("acme", "/api/task/pause", body(&draft.id))
        .await
        .code(405);
    assert_eq!(api.calls.take(), 1);

    // Recall of failed contacts on a COMPLETED task: read, query, check, the requeue that
    // commits the recall (D12: its list is in S3 first), the contact's state read and written
    // with the task's counters (D19), the pending recall cleared.
    let done = api.task_in("acme", TaskStatus::Completed, 1).await;
    api.seed_task_contact("acme", &done.id, &done.contacts[0], 2, 1)
        .await;
    let recall = format!("/api/task/{}/recall", done.id);
    assert_eq!(calls_of(&api, "POST", &recall, json!({})).await, 7);
}

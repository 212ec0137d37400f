//! Task endpoints: the lifecycle end to end, add and update with their input rules (D6, D9),
//! names, contactCount, and tenant isolation (D3).

use crate::support::{phone, TaskFixture, TestApi};
use outbound_model::{Id, TaskStatus};
use serde_json::{json, Value};

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

/// A task body with every field valid, to break one field at a time.
fn valid_add(source: &str) -> Value {
    json!({
        "taskName": "Valid",
        "dataSourceId": source,
        "priority": 2,
        "maxDialCount": 5,
        "callInterval": 120,
        "dailyStartTime": "09:00",
        "dailyEndTime": "18:00",
        "timeZone": "Asia/Shanghai",
    })
}

/// `base` with each change applied: `Some(value)` sets the field, `None` removes it.
fn with(base: &Value, changes: &[(&str, Option<Value>)]) -> Value {
    let mut body = base.clone();
    for (field, value) in changes {
        match value {
            Some(value) => body[*field] = value.clone(),
            None => {
                body.as_object_mut().unwrap().remove(*field);
            }
        }
    }
    body
}

/// Field changes to a body: a value sets the field, `None` removes it.
type Changes = Vec<(&'static str, Option<Value>)>;

/// The D9 / D6 refusals shared by add and update: (changes, message).
fn settings_refusals() -> Vec<(Changes, &'static str)> {
    const PRIORITY: &str = "priority must be an integer from 1 to 5";
    const DIALS: &str = "maxDialCount must be an integer from 1 to 10";
    const INTERVAL: &str = "callInterval must be an integer from 10 to 86400";
    const START: &str = "dailyStartTime must be HH:MM from 00:00 to 23:59";
    const END: &str = "dailyEndTime must be HH:MM from 00:00 to 23:59";
    const ORDER: &str = "dailyStartTime must be before dailyEndTime";
    const TOGETHER: &str = "dailyStartTime and dailyEndTime must be given together";
    let set = |field, value: Value| vec![(field, Some(value))];
    let mut cases = Vec::new();
    for bad in [
        json!(0),
        json!(6),
        json!(-1),
        json!("3"),
        json!(3.5),
        json!(true),
    ] {
        cases.push((set("priority", bad), PRIORITY));
    }
    for bad in [json!(0), json!(11), json!("3"), json!(2.5)] {
        cases.push((set("maxDialCount", bad), DIALS));
    }
    for bad in [json!(9), json!(86401), json!("60"), json!(60.5)] {
        cases.push((set("callInterval", bad), INTERVAL));
    }
    for bad in ["9:00", "24:00", "09:60", "0900", "09:0a", "noon"] {
        cases.push((set("dailyStartTime", json!(bad)), START));
        cases.push((set("dailyEndTime", json!(bad)), END));
    }
    cases.push((
        set("dailyStartTime", json!(900)),
        "dailyStartTime must be a string",
    ));
    for (start, end) in [("18:00", "09:00"), ("09:00", "09:00"), ("23:59", "00:00")] {
        cases.push((
            vec![
                ("dailyStartTime", Some(json!(start))),
                ("dailyEndTime", Some(json!(end))),
            ],
            ORDER,
        ));
    }
    cases.push((vec![("dailyEndTime", None)], TOGETHER));
    cases.push((vec![("dailyStartTime", None)], TOGETHER));
    cases.push((
        set("timeZone", json!("Mars/Base")),
        "timeZone must be an IANA time zone name, e.g. Asia/Shanghai",
    ));
    cases.push((set("taskName", json!("")), "taskName is empty"));
    cases.push((set("taskName", json!("   ")), "taskName is empty"));
    cases.push((
        set("taskName", json!("n".repeat(101))),
        "taskName must be 1-100 characters",
    ));
    cases.push((set("taskName", json!(42)), "taskName must be a string"));
    cases.push((
        set("taskDesc", json!("d".repeat(501))),
        "taskDesc must be at most 500 characters",
    ));
    cases.push((set("taskDesc", json!(["x"])), "taskDesc must be a string"));
    cases
}

/// D9, D6: every malformed or out-of-range field of an add is 400 naming it, and nothing is stored.
#[tokio::test]
async fn add_refuses_each_invalid_field() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let base = valid_add(&source);
    for (changes, message) in settings_refusals() {
        let body = with(&base, &changes);
        api.post("acme", "/api/task/add", body.clone())
            .await
            .err(400, message);
    }
    let other = api.data_source("globex", "Theirs").await;
    let unknown = Id::new().to_string();
    let long = "x".repeat(100);
    for (changes, message) in [
        (vec![("taskName", None)], "taskName is required".to_owned()),
        (
            vec![("dataSourceId", None)],
            "dataSourceId is required".to_owned(),
        ),
        (
            vec![("dataSourceId", Some(json!(7)))],
            "dataSourceId must be a string".to_owned(),
        ),
        (
            vec![("dataSourceId", Some(json!(unknown)))],
            format!("dataSource {unknown} does not exist"),
        ),
        (
            vec![("dataSourceId", Some(json!("nope")))],
            "dataSource nope does not exist".to_owned(),
        ),
        // A client-chosen id is shown, but never more than 64 characters of it.
        (
            vec![("dataSourceId", Some(json!(long)))],
            format!("dataSource {} does not exist", &long[..64]),
        ),
        // D3: another tenant's data source does not exist for this one.
        (
            vec![("dataSourceId", Some(json!(other)))],
            format!("dataSource {other} does not exist"),
        ),
    ] {
        api.post("acme", "/api/task/add", with(&base, &changes))
            .await
            .err(400, &message);
    }
    let list = api.get("acme", "/api/task/list").await;
    assert_eq!(
        list.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );
    // The valid body itself is accepted, with every setting as sent.
    let added = api.post("acme", "/api/task/add", base).await;
    let task = added.ok();
    assert_eq!(task["priority"], 2);
    assert_eq!(task["maxDialCount"], 5);
    assert_eq!(task["callInterval"], 120);
    assert_eq!(task["dailyStartTime"], "09:00");
    assert_eq!(task["dailyEndTime"], "18:00");
    assert_eq!(task["timeZone"], "Asia/Shanghai");
}

/// D9: the bounds themselves are allowed; an absent window is all day.
#[tokio::test]
async fn add_accepts_the_bounds_and_defaults() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 2).await;
    let lows = json!({"priority": 1, "maxDialCount": 1, "callInterval": 10,
        "dailyStartTime": "00:00", "dailyEndTime": "00:01"});
    let highs = json!({"priority": 5, "maxDialCount": 10, "callInterval": 86400,
        "dailyStartTime": "23:58", "dailyEndTime": "23:59"});
    for (name, extra) in [("Lows", lows), ("Highs", highs)] {
        let id = api.task("acme", name, &source, extra.clone()).await;
        let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
        for (field, value) in extra.as_object().unwrap() {
            assert_eq!(&detail.ok()[field], value, "{name} {field}");
        }
    }
    let added = api
        .post(
            "acme",
            "/api/task/add",
            json!({"taskName": "  Plain  ", "dataSourceId": source, "status": 4,
                "contactCount": 99, "callCount": 7, "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}),
        )
        .await;
    let task = added.ok();
    // D6: names are trimmed; read-only fields are ignored.
    assert_eq!(task["taskName"], "Plain");
    assert_ne!(task["id"], "01ARZ3NDEKTSV4RRFFQ69G5FAV");
    assert_eq!(task["status"], 0);
    assert_eq!(task["callCount"], 0);
    assert_eq!(task["taskDesc"], "");
    // D9 defaults, and contactCount from the data source.
    assert_eq!(task["priority"], 3);
    assert_eq!(task["maxDialCount"], 3);
    assert_eq!(task["callInterval"], 60);
    assert_eq!(task["dailyStartTime"], Value::Null);
    assert_eq!(task["dailyEndTime"], Value::Null);
    assert_eq!(task["timeZone"], Value::Null);
    assert_eq!(task["contactCount"], 2);
    assert_eq!(task["dataSourceId"], source);
    assert_eq!(task["startTime"], Value::Null);
    assert_eq!(task["endTime"], Value::Null);
    assert_eq!(task["createTime"], task["updateTime"]);
}

/// D9: contactCount is taken on add and refreshed on publish; an empty data source cannot be
/// published (400, nothing changes, the data source is not held).
#[tokio::test]
async fn contact_count_is_taken_on_add_and_refreshed_on_publish() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 0).await;
    let id = api.task("acme", "Empty", &source, json!({})).await;
    let before = api.stored_task("acme", &id).await;
    assert_eq!(before.contact_count, 0);
    api.post("acme", "/api/task/publish", json!({"id": id}))
        .await
        .err(400, &format!("dataSource {source} has no contacts"));
    assert_eq!(api.stored_task("acme", &id).await, before);
    assert_eq!(api.stored_source("acme", &source).await.active_tasks, 0);
    for n in 0..3 {
        api.contact("acme", &source, &phone(n)).await;
    }
    let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
    assert_eq!(
        detail.ok()["contactCount"],
        0,
        "a DRAFT keeps the count of its add"
    );
    api.post("acme", "/api/task/publish", json!({"id": id}))
        .await
        .ok();
    let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
    assert_eq!(detail.ok()["contactCount"], 3);
    assert_eq!(api.stored_task("acme", &id).await.contact_count, 3);
    // A draft whose data source was deleted cannot be published either.
    let (gone, _) = api.source_with_contacts("acme", 1).await;
    let orphan = api.task("acme", "Orphan", &gone, json!({})).await;
    api.post("acme", "/api/dataSource/delete", json!({"id": gone}))
        .await
        .ok();
    api.post("acme", "/api/task/publish", json!({"id": orphan}))
        .await
        .err(400, &format!("dataSource {gone} does not exist"));
}

/// D6, D10: names are unique per tenant, free again after delete and after a rename.
#[tokio::test]
async fn task_names_are_unique_until_deleted_or_renamed() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let first = api.task("acme", "Spring", &source, json!({})).await;
    for taken in ["Spring", "  Spring "] {
        api.post(
            "acme",
            "/api/task/add",
            json!({"taskName": taken, "dataSourceId": source}),
        )
        .await
        .err(409, "taskName \"Spring\" already exists");
    }
    let second = api.task("acme", "Summer", &source, json!({})).await;
    let before = api.stored_task("acme", &second).await;
    api.post(
        "acme",
        "/api/task/update",
        json!({"id": second, "taskName": "Spring", "priority": 1}),
    )
    .await
    .err(409, "taskName \"Spring\" already exists");
    assert_eq!(api.stored_task("acme", &second).await, before);
    // Renaming frees the old name and takes the new one.
    api.post(
        "acme",
        "/api/task/update",
        json!({"id": second, "taskName": "Autumn"}),
    )
    .await
    .ok();
    api.task("acme", "Summer", &source, json!({})).await;
    api.post(
        "acme",
        "/api/task/add",
        json!({"taskName": "Autumn", "dataSourceId": source}),
    )
    .await
    .err(409, "taskName \"Autumn\" already exists");
    // Keeping one's own name is no conflict.
    api.post(
        "acme",
        "/api/task/update",
        json!({"id": second, "taskName": "Autumn", "taskDesc": "kept"}),
    )
    .await
    .ok();
    // Deleting frees the name at once.
    api.post("acme", "/api/task/delete", json!({"id": first}))
        .await
        .ok();
    api.task("acme", "Spring", &source, json!({})).await;
}

/// D9, D6: update checks every field like add does, and a refused update changes nothing.
#[tokio::test]
async fn update_refuses_each_invalid_field() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let id = api.task("acme", "Valid", &source, valid_add(&source)).await;
    let before = api.stored_task("acme", &id).await;
    let base = with(&valid_add(&source), &[("dataSourceId", None)]);
    let base = with(&base, &[("id", Some(json!(id)))]);
    for (changes, message) in settings_refusals() {
        // On update an absent bound keeps the stored one: only a cleared bound breaks the pair.
        let changes: Vec<_> = changes
            .into_iter()
            .map(|(field, value)| (field, value.or_else(|| Some(json!("")))))
            .collect();
        api.post("acme", "/api/task/update", with(&base, &changes))
            .await
            .err(400, message);
    }
    for (body, code, message) in [
        (json!({}), 400, "id is required".to_owned()),
        (json!({"id": 5}), 400, "id must be a string".to_owned()),
        (json!({"id": "nope"}), 404, "task nope not found".to_owned()),
    ] {
        api.post("acme", "/api/task/update", body)
            .await
            .err(code, &message);
    }
    assert_eq!(api.stored_task("acme", &id).await, before);
}

/// D9: update patches what it names and keeps the rest; "" clears the window and the zone.
#[tokio::test]
async fn update_patches_settings() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let id = api.task("acme", "Valid", &source, valid_add(&source)).await;
    let before = api.get("acme", &format!("/api/task/detail/{id}")).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let updated = api
        .post(
            "acme",
            "/api/task/update",
            json!({"id": id, "dailyStartTime": "10:30", "taskDesc": " new ", "status": 3}),
        )
        .await;
    let data = updated.ok().clone();
    let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
    assert_eq!(&data, detail.ok());
    let mut expected = before.ok().clone();
    expected["dailyStartTime"] = json!("10:30");
    expected["taskDesc"] = json!("new");
    expected["updateTime"] = data["updateTime"].clone();
    assert_eq!(data, expected);
    assert_ne!(data["updateTime"], before.ok()["updateTime"]);
    // A start at or after the kept end is refused.
    api.post(
        "acme",
        "/api/task/update",
        json!({"id": id, "dailyStartTime": "18:00"}),
    )
    .await
    .err(400, "dailyStartTime must be before dailyEndTime");
    let cleared = api
        .post(
            "acme",
            "/api/task/update",
            json!({"id": id, "dailyStartTime": "", "dailyEndTime": " ", "timeZone": ""}),
        )
        .await;
    assert_eq!(cleared.ok()["dailyStartTime"], Value::Null);
    assert_eq!(cleared.ok()["dailyEndTime"], Value::Null);
    assert_eq!(cleared.ok()["timeZone"], Value::Null);
    assert_eq!(cleared.ok()["priority"], 2);
    let stored = api.stored_task("acme", &id).await;
    assert_eq!(stored.settings.window, None);
    assert_eq!(stored.settings.time_zone, None);
    assert_eq!(stored.settings.max_dial_count, 5);
}

/// D3: another tenant's task is 404 on every task endpoint, even where its owner would succeed,
/// and nothing changes; the other tenant sees none of them and can use the same names.
#[tokio::test]
async fn other_tenants_cannot_see_or_touch_tasks() {
    let api = TestApi::start().await;
    let draft = api.task_in("acme", TaskStatus::Draft, 1).await;
    let running = api.task_in("acme", TaskStatus::Running, 1).await;
    let paused = api.task_in("acme", TaskStatus::Paused, 1).await;
    let stopped = api.task_in("acme", TaskStatus::Stopped, 1).await;
    let all = [&draft, &running, &paused, &stopped];
    let mut before = Vec::new();
    for task in all {
        before.push(api.stored_task("acme", &task.id).await);
    }
    let post = |op: &str, task: &TaskFixture| (format!("/api/task/{op}"), json!({"id": task.id}));
    let mut posts = vec![
        post("update", &draft),
        post("publish", &draft),
        post("delete", &draft),
        post("pause", &running),
        post("stop", &running),
        post("resume", &paused),
        post("close", &stopped),
        post("delete", &stopped),
    ];
    posts.push((
        format!("/api/task/{}/recall", running.id),
        json!({"contactIds": running.contacts}),
    ));
    posts[0].1["taskName"] = json!("Mine now");
    for (path, body) in posts {
        let id = body["id"]
            .as_str()
            .unwrap_or_else(|| path.split('/').nth(3).unwrap());
        api.post("globex", &path, body.clone())
            .await
            .err(404, &format!("task {id} not found"));
    }
    for task in all {
        for path in [
            format!("/api/task/detail/{}", task.id),
            format!("/api/task/{}/stat", task.id),
        ] {
            api.get("globex", &path)
                .await
                .err(404, &format!("task {} not found", task.id));
        }
    }
    let list = api.get("globex", "/api/task/list").await;
    assert_eq!(
        list.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );
    for (task, before) in all.iter().zip(&before) {
        assert_eq!(&api.stored_task("acme", &task.id).await, before);
    }
    assert!(api
        .stored_task_contacts("acme", &running.id)
        .await
        .is_empty());
    // Names are per tenant.
    let name = before[0].name.as_str();
    let (theirs, _) = api.source_with_contacts("globex", 1).await;
    api.task("globex", name, &theirs, json!({})).await;
    let list = api.get("globex", "/api/task/list").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(api.get("acme", "/api/task/list").await.ok()["total"], 4);
}

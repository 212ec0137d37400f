//! What the task list, detail and stat endpoints show: fields exactly as the reference lists
//! them, filters, paging and order (D5), and the rates (D9).

use crate::support::TestApi;
use outbound_model::task::CallCounters;
use outbound_model::TaskStatus;
use serde_json::{json, Value};

/// The fields of a list row, as the reference lists them.
const LIST_FIELDS: [&str; 11] = [
    "id",
    "taskName",
    "taskDesc",
    "status",
    "dataSourceId",
    "contactCount",
    "callCount",
    "successCount",
    "createTime",
    "startTime",
    "endTime",
];

/// The list row a task must have, cut from its detail.
fn row_of(detail: &Value) -> Value {
    LIST_FIELDS
        .iter()
        .map(|field| (field.to_string(), detail[field].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn ids(page: &Value) -> Vec<&str> {
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap())
        .collect()
}

/// D5: newest first, rows exactly as the reference lists them, total over every match, paging,
/// fuzzy case-insensitive name filter, status filter.
#[tokio::test]
async fn list_filters_pages_and_rows() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 2).await;
    let mut created = Vec::new();
    for (name, state) in [
        ("Spring Sale", TaskStatus::Draft),
        ("spring follow-up", TaskStatus::Running),
        ("Summer", TaskStatus::Paused),
        ("SPRINGTIME", TaskStatus::Stopped),
        ("Autumn", TaskStatus::Completed),
    ] {
        let id = api
            .task(
                "acme",
                name,
                &source,
                json!({"taskDesc": format!("about {name}")}),
            )
            .await;
        api.drive("acme", &id, state).await;
        created.push(id);
    }
    let newest_first: Vec<&str> = created.iter().rev().map(String::as_str).collect();
    let all = api.get("acme", "/api/task/list").await;
    assert_eq!(all.ok()["total"], 5);
    assert_eq!(ids(all.ok()), newest_first);
    for row in all.ok()["rows"].as_array().unwrap() {
        let id = row["id"].as_str().unwrap();
        let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
        assert_eq!(row, &row_of(detail.ok()));
    }
    let page = api.get("acme", "/api/task/list?pageNum=2&pageSize=2").await;
    assert_eq!(page.ok()["total"], 5);
    assert_eq!(ids(page.ok()), newest_first[2..4]);
    let last = api.get("acme", "/api/task/list?pageNum=3&pageSize=2").await;
    assert_eq!(ids(last.ok()), newest_first[4..]);
    let beyond = api.get("acme", "/api/task/list?pageNum=4&pageSize=2").await;
    assert_eq!(
        beyond.ok(),
        &json!({"total": 5, "rows": [], "nextToken": null})
    );

    let springs = api.get("acme", "/api/task/list?taskName=sPrInG").await;
    assert_eq!(springs.ok()["total"], 3);
    assert_eq!(
        ids(springs.ok()),
        [&created[3], &created[1], &created[0]].map(String::as_str)
    );
    let narrow = api
        .get(
            "acme",
            "/api/task/list?taskName=spring&pageSize=1&pageNum=2",
        )
        .await;
    assert_eq!(narrow.ok()["total"], 3);
    assert_eq!(ids(narrow.ok()), [created[1].as_str()]);
    let none = api.get("acme", "/api/task/list?taskName=winter").await;
    assert_eq!(
        none.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );
    let blank = api.get("acme", "/api/task/list?taskName=%20%20").await;
    assert_eq!(blank.ok()["total"], 5);

    for (code, expected) in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)] {
        let found = api
            .get("acme", &format!("/api/task/list?status={code}"))
            .await;
        let matching: Vec<&str> = newest_first
            .iter()
            .enumerate()
            .filter(|(i, _)| 4 - i == expected)
            .map(|(_, id)| *id)
            .collect();
        assert_eq!(ids(found.ok()), matching, "status {code}");
        assert_eq!(found.ok()["total"], matching.len());
    }
    let both = api
        .get("acme", "/api/task/list?status=3&taskName=spring")
        .await;
    assert_eq!(ids(both.ok()), [created[3].as_str()]);
    let neither = api
        .get("acme", "/api/task/list?status=2&taskName=spring")
        .await;
    assert_eq!(neither.ok()["total"], 0);
}

/// D5: bad filters and paging are 400 naming the parameter.
#[tokio::test]
async fn list_refuses_bad_status_and_paging() {
    let api = TestApi::start().await;
    for status in ["7", "-1", "x", "1.0", "256"] {
        api.get("acme", &format!("/api/task/list?status={status}"))
            .await
            .err(400, "status must be an integer from 0 to 6");
    }
    for page in ["0", "-1", "x"] {
        api.get("acme", &format!("/api/task/list?pageNum={page}"))
            .await
            .err(400, "pageNum must be an integer >= 1");
    }
    for size in ["0", "101", "x"] {
        api.get("acme", &format!("/api/task/list?pageSize={size}"))
            .await
            .err(400, "pageSize must be an integer from 1 to 100");
    }
}

/// The detail fields of the reference, plus the D9 / D10 additions (timeZone, stopReason,
/// failReason); the stat record exactly, with rates 0 (not null, not NaN) before any call.
#[tokio::test]
async fn detail_and_stat_fields() {
    let api = TestApi::start().await;
    let task = api.task_in("acme", TaskStatus::Draft, 0).await;
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", task.id))
        .await;
    let data = detail.ok();
    let mut fields: Vec<&str> = data
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort_unstable();
    let mut expected = vec![
        "id",
        "taskName",
        "taskDesc",
        "status",
        "dataSourceId",
        "contactCount",
        "callCount",
        "successCount",
        "failCount",
        "noAnswerCount",
        "dialRate",
        "successRate",
        "callDuration",
        "avgCallDuration",
        "priority",
        "maxDialCount",
        "callInterval",
        "dailyStartTime",
        "dailyEndTime",
        "timeZone",
        "windowTimeZone",
        "retryRules",
        "callerId",
        "contactFlowId",
        "callAttributes",
        "resultAttributes",
        "voicemail",
        "dialingMode",
        "queueId",
        "callsPerAgent",
        "abandonmentTarget",
        "abandonCount",
        "abandonRate",
        "callbackCount",
        "startAt",
        "endAt",
        "filter",
        "createTime",
        "startTime",
        "endTime",
        "updateTime",
        "stopReason",
        "failReason",
    ];
    expected.sort_unstable();
    assert_eq!(fields, expected);
    for rate in ["dialRate", "successRate", "avgCallDuration"] {
        assert_eq!(data[rate].as_f64(), Some(0.0), "{rate}: {}", data[rate]);
    }
    let stat = api
        .get("acme", &format!("/api/task/{}/stat", task.id))
        .await;
    let stored = api.stored_task("acme", &task.id).await;
    assert_eq!(
        stat.ok(),
        &json!({
            "taskId": task.id,
            "taskName": stored.name.as_str(),
            "status": 0,
            "totalContacts": 0,
            "callCount": 0,
            "successCount": 0,
            "failCount": 0,
            "noAnswerCount": 0,
            "dialRate": 0.0,
            "successRate": 0.0,
            "totalDuration": 0,
            "avgDuration": 0.0,
            "abandonCount": 0,
            "abandonRate": 0.0,
            "filteredCount": 0,
            "callbackCount": 0,
            "lastUpdateTime": data["updateTime"],
        })
    );
    // Timestamps are `YYYY-MM-DD HH:MM:SS`.
    let time = data["createTime"].as_str().unwrap();
    assert_eq!(time.len(), 19, "{time}");
    assert!(time.chars().enumerate().all(|(i, c)| match i {
        4 | 7 => c == '-',
        10 => c == ' ',
        13 | 16 => c == ':',
        _ => c.is_ascii_digit(),
    }));
    for id in ["nope", "01ARZ3NDEKTSV4RRFFQ69G5FAV"] {
        for path in [
            format!("/api/task/detail/{id}"),
            format!("/api/task/{id}/stat"),
        ] {
            api.get("acme", &path)
                .await
                .err(404, &format!("task {id} not found"));
        }
    }
}

/// D9: rates are fractions rounded to 4 decimals, from the counters the dialing engine keeps.
#[tokio::test]
async fn rates_follow_the_counters() {
    let api = TestApi::start().await;
    let task = api.task_in("acme", TaskStatus::Running, 3).await;
    // Of the two calls answered by a person (D30), one an agent took and one was abandoned.
    let counters = CallCounters {
        calls: 3,
        success: 1,
        failed: 0,
        no_answer: 2,
        duration: 125,
        abandoned: 1,
        callbacks: 1,
    };
    api.seed_counters("acme", &task.id, &counters).await;
    let stat = api
        .get("acme", &format!("/api/task/{}/stat", task.id))
        .await;
    let stat = stat.ok();
    assert_eq!(stat["totalContacts"], 3);
    assert_eq!(stat["callCount"], 3);
    assert_eq!(stat["callbackCount"], 1);
    assert_eq!(stat["successCount"], 1);
    assert_eq!(stat["failCount"], 0);
    assert_eq!(stat["noAnswerCount"], 2);
    assert_eq!(stat["dialRate"], 1.0);
    assert_eq!(stat["successRate"], 0.3333);
    assert_eq!(stat["totalDuration"], 125);
    assert_eq!(stat["avgDuration"], 41.6667);
    assert_eq!(stat["abandonCount"], 1);
    assert_eq!(stat["abandonRate"], 0.5);
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", task.id))
        .await;
    let detail = detail.ok();
    assert_eq!(detail["dialRate"], 1.0);
    assert_eq!(detail["successRate"], 0.3333);
    assert_eq!(detail["callDuration"], 125);
    assert_eq!(detail["avgCallDuration"], 41.6667);
    assert_eq!(detail["abandonCount"], 1);
    assert_eq!(detail["abandonRate"], 0.5);
    let list = api.get("acme", "/api/task/list").await;
    assert_eq!(list.ok()["rows"][0]["callCount"], 3);
    assert_eq!(list.ok()["rows"][0]["successCount"], 1);
}

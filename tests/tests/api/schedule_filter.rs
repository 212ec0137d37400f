//! A task's schedule and filter (D31) over HTTP with the simulated provider: no call before
//! `startAt` (diagnostics `NOT_STARTED`), stopped at `endAt` with its calls in flight recorded,
//! and only the contacts its filter matches dialled, the others final as `FILTERED`, contacts
//! added while it runs judged the same way. Times are set against the engine's clock.

use crate::compliance::export_rows;
use crate::rig::{rig, Rig};
use crate::support::{contact_op, unique, with_fields};
use outbound_local::inbox::DialInbox;
use outbound_model::call::Skip;
use outbound_model::plan::Clock;
use outbound_model::{TaskStatus, Timestamp};
use serde_json::{json, Value};
use std::time::Duration;

const OWNER: &str = "acme";
const HOUR: i64 = 3_600_000;

fn at(millis: i64) -> String {
    Timestamp(millis).rfc3339()
}

async fn stored_status(rig: &Rig, task: &str) -> TaskStatus {
    rig.api.stored_task(OWNER, task).await.status
}

async fn detail(rig: &Rig, task: &str) -> Value {
    (rig.api)
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await
        .ok()
        .clone()
}

async fn stat(rig: &Rig, task: &str) -> Value {
    (rig.api)
        .get(OWNER, &format!("/api/task/{task}/stat"))
        .await
        .ok()
        .clone()
}

/// D31: before `startAt` a published task is RUNNING and places no call, its diagnostics
/// saying `NOT_STARTED` until the start; from the start it dials; at `endAt` the tick stops
/// it (`stopReason` `schedule ended`), and the calls then in flight are recorded when they end.
#[tokio::test]
async fn a_task_dials_only_between_its_start_and_its_end() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let now = rig.clock.now().0;
    let (start, end) = (now + HOUR, now + 2 * HOUR);
    let contacts: Vec<(&str, Value)> = ["2125550101", "2125550102", "2125550103"]
        .iter()
        .map(|n| (*n, json!({})))
        .collect();
    let (task, _) = rig
        .running(&contacts, json!({"startAt": at(start), "endAt": at(end)}))
        .await;
    let shown = detail(&rig, &task).await;
    assert_eq!(
        (&shown["startAt"], &shown["endAt"]),
        (&json!(at(start)), &json!(at(end)))
    );
    for _ in 0..3 {
        rig.api.dial_round(&rig.engine).await;
        rig.clock.advance(Duration::from_secs(60));
    }
    assert!(rig.placed().is_empty(), "no call before the start");
    assert_eq!(stored_status(&rig, &task).await, TaskStatus::Running);
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["blockedBy"], "NOT_STARTED");
    assert_eq!(diagnostics["dialing"], false);
    assert_eq!(
        diagnostics["nextDialTime"],
        json!(Timestamp(start).display(rig.api.app.zone()))
    );
    // The start comes: one tick's calls are placed, their outcomes not yet told.
    rig.clock
        .advance(Duration::from_millis((start - rig.clock.now().0) as u64));
    rig.engine.tick().await.unwrap();
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    assert_eq!(rig.placed().len(), 3);
    assert_eq!(rig.api.stored_task(OWNER, &task).await.in_flight, 3);
    // The end comes while they are in flight: the tick stops the task.
    rig.clock
        .advance(Duration::from_millis((end - rig.clock.now().0) as u64));
    let report = rig.engine.tick().await.unwrap();
    assert_eq!(report.ended, 1);
    assert_eq!(stored_status(&rig, &task).await, TaskStatus::Stopped);
    assert_eq!(detail(&rig, &task).await["stopReason"], "schedule ended");
    // Their outcomes are recorded all the same, and nothing more is placed.
    rig.api.drain(&rig.engine, DialInbox::CallEvents).await;
    rig.api.dial_round(&rig.engine).await;
    let stat = stat(&rig, &task).await;
    assert_eq!(
        (&stat["callCount"], &stat["successCount"]),
        (&json!(3), &json!(3))
    );
    assert_eq!(rig.api.stored_task(OWNER, &task).await.in_flight, 0);
    assert_eq!(rig.placed().len(), 3);
}

/// D31: a task whose end comes before it dialled everyone leaves the rest undialled, and one
/// paused at its end stays PAUSED (no call is placed while paused) until resumed, when the tick
/// stops it.
#[tokio::test]
async fn the_end_stops_a_task_with_contacts_left() {
    let rig = rig().await;
    let now = rig.clock.now().0;
    let contacts: Vec<(&str, Value)> = (0..3)
        .map(|n| (["2125550111", "2125550112", "2125550113"][n], json!({})))
        .collect();
    let (task, _) = rig
        .running(&contacts, json!({"endAt": at(now + HOUR)}))
        .await;
    let (paused, _) = rig
        .running(&contacts, json!({"endAt": at(now + HOUR)}))
        .await;
    (rig.api)
        .post(OWNER, "/api/task/pause", json!({"id": paused}))
        .await
        .ok();
    rig.clock.advance(Duration::from_secs(3_600));
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.placed().is_empty());
    assert_eq!(stored_status(&rig, &task).await, TaskStatus::Stopped);
    assert_eq!(detail(&rig, &task).await["stopReason"], "schedule ended");
    assert_eq!(stored_status(&rig, &paused).await, TaskStatus::Paused);
    (rig.api)
        .post(OWNER, "/api/task/resume", json!({"id": paused}))
        .await
        .ok();
    rig.api.dial_round(&rig.engine).await;
    assert!(
        rig.placed().is_empty(),
        "a resumed task past its end calls no one"
    );
    assert_eq!(stored_status(&rig, &paused).await, TaskStatus::Stopped);
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["contacts"]["notDialled"], 3);
}

/// D31: the schedule is checked when set (RFC 3339 with an offset, the end after the start)
/// and at publish (the end ahead); a refusal changes nothing, and `""` clears a time.
#[tokio::test]
async fn a_schedule_is_checked_when_set_and_at_publish() {
    let rig = rig().await;
    let (source, _) = rig.source(&[("2125550121", json!({}))]).await;
    let add = |extra: Value| {
        let body = json!({"taskName": unique("Task"), "dataSourceId": source});
        rig.api
            .post(OWNER, "/api/task/add", with_fields(body, &extra))
    };
    let in_a_day = Timestamp::now().0 + 24 * HOUR;
    add(json!({"startAt": "2026-12-01 09:00"})).await.err(
        400,
        "startAt must be an RFC 3339 time with its offset, e.g. 2026-12-01T15:00:00+01:00",
    );
    add(json!({"endAt": "2026-12-01T09:00:00"})).await.err(
        400,
        "endAt must be an RFC 3339 time with its offset, e.g. 2026-12-01T15:00:00+01:00",
    );
    add(json!({"startAt": at(in_a_day), "endAt": at(in_a_day)}))
        .await
        .err(400, "endAt must be after startAt");
    add(json!({"startAt": 5})).await.code(400);
    // An offset is read as sent, and shown in UTC.
    let task = add(json!({"startAt": "2030-01-01T09:00:00+01:00"}))
        .await
        .ok()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        detail(&rig, &task).await["startAt"],
        "2030-01-01T08:00:00.000Z"
    );
    // An end before the start on update is refused, and the task is as it was.
    (rig.api)
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": task, "endAt": "2029-12-31T00:00:00Z"}),
        )
        .await
        .err(400, "endAt must be after startAt");
    let shown = detail(&rig, &task).await;
    assert_eq!(
        (&shown["startAt"], &shown["endAt"]),
        (&json!("2030-01-01T08:00:00.000Z"), &Value::Null)
    );
    // "" clears the start; an end already past is refused at publish, the task left in DRAFT.
    let past = at(Timestamp::now().0 - HOUR);
    (rig.api)
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": task, "startAt": "", "endAt": past}),
        )
        .await
        .ok();
    assert_eq!(detail(&rig, &task).await["startAt"], Value::Null);
    (rig.api)
        .post(OWNER, "/api/task/publish", json!({"id": task}))
        .await
        .err(400, "endAt must be in the future at publish");
    assert_eq!(stored_status(&rig, &task).await, TaskStatus::Draft);
}

/// D31: only the contacts matching every condition are dialled; the others are final with
/// `skipReason` `FILTERED`, counted in `filteredCount` and the diagnostics, never called; a
/// contact added while the task runs is judged the same way.
#[tokio::test]
async fn a_filter_dials_only_the_contacts_it_matches() {
    let rig = rig().await;
    // National numbers, read in the tenant's country (D14); the filter reads them as stored.
    rig.settings(json!({"defaultCountry": "US"})).await;
    let (source, ids) = rig
        .source(&[
            ("2125550131", json!({"region": "north"})),
            ("2125550132", json!({"region": "south"})),
            ("3125550133", json!({"region": "east"})),
            ("2125550134", json!({})),
            ("2125550135", json!({"region": "east"})),
        ])
        .await;
    let filter = json!([
        {"field": "region", "op": "in", "value": ["north", "east"]},
        {"field": "phoneNumber", "op": "prefix", "value": "212"},
    ]);
    let task = rig
        .published(&source, json!({"filter": filter, "maxDialCount": 1}))
        .await;
    assert_eq!(detail(&rig, &task).await["filter"], filter);
    rig.api.dial_round(&rig.engine).await;
    // Added while it runs: one that matches, one that does not.
    let mut added = Vec::new();
    for (phone, region) in [("2125550136", "north"), ("2125550137", "west")] {
        let body = json!({"phoneNumber": phone, "region": region});
        let answer = rig.api.post(OWNER, &contact_op(&source, "add"), body).await;
        added.push(answer.ok()["id"].as_str().unwrap().to_owned());
    }
    rig.complete_in(&task, 6).await;
    let mut placed = rig.placed();
    placed.sort();
    let mut expected: Vec<String> = [&ids[0], &ids[4], &added[0]]
        .iter()
        .map(|contact| format!("{task}-{contact}-1"))
        .collect();
    expected.sort();
    assert_eq!(placed, expected);
    for contact in [&ids[1], &ids[2], &ids[3], &added[1]] {
        assert_eq!(
            rig.state(&task, contact).await,
            (0, None, Some(Skip::Filtered), true),
            "{contact}"
        );
    }
    let stat = stat(&rig, &task).await;
    assert_eq!(
        (
            &stat["filteredCount"],
            &stat["callCount"],
            &stat["totalContacts"]
        ),
        (&json!(4), &json!(3), &json!(5))
    );
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["skips"]["FILTERED"], 4);
    assert_eq!(diagnostics["contacts"]["final"], 7);
    let rows = export_rows(&rig.api, &task, "").await;
    let filtered: Vec<&str> = rows
        .iter()
        .filter(|row| row["skipReason"] == "FILTERED")
        .map(|row| row["phoneNumber"].as_str())
        .collect();
    assert_eq!(
        filtered,
        ["2125550132", "3125550133", "2125550134", "2125550137"]
    );
}

/// D31: a bad condition is 400 naming it, and the task is as it was; the filter is fixed at
/// publish (an update of a running task is 405).
#[tokio::test]
async fn a_bad_filter_is_refused_and_changes_nothing() {
    let rig = rig().await;
    let (source, _) = rig.source(&[("2125550141", json!({}))]).await;
    let task = rig
        .api
        .task(OWNER, &unique("Task"), &source, json!({}))
        .await;
    let update = |filter: Value| {
        rig.api.post(
            OWNER,
            "/api/task/update",
            json!({"id": task, "filter": filter}),
        )
    };
    let cases = [
        (json!({"field": "a"}), "filter must be a list of conditions"),
        (
            json!([{"field": "a", "op": "like", "value": "x"}]),
            "filter[0].op must be one of eq, ne, in, prefix, exists",
        ),
        (
            json!([{"field": "a", "op": "exists"}, {"field": "b", "op": "eq"}]),
            "filter[1].value is required for eq",
        ),
        (
            json!([{"field": "a", "op": "in", "value": []}]),
            "filter[0].value must be a list of 1 to 100 strings for in",
        ),
        (
            json!([{"field": "a", "op": "eq", "value": {"x": 1}}]),
            "filter[0].value must be a string of at most 1000 characters",
        ),
    ];
    for (filter, message) in cases {
        update(filter).await.err(400, message);
    }
    let eleven: Vec<Value> = (0..11)
        .map(|_| json!({"field": "a", "op": "exists"}))
        .collect();
    update(Value::from(eleven))
        .await
        .err(400, "filter holds at most 10 conditions");
    assert_eq!(detail(&rig, &task).await["filter"], json!([]));
    let kept = json!([{"field": "vip", "op": "exists"}]);
    update(kept.clone()).await.ok();
    (rig.api)
        .post(OWNER, "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    update(json!([]))
        .await
        .err(405, "cannot update a task in state RUNNING");
    assert_eq!(detail(&rig, &task).await["filter"], kept);
}

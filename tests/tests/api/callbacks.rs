//! Callbacks (D31) over HTTP with the simulated provider: set, moved, cancelled and listed by
//! the API; placed at their time and never before, ahead of the task's other contacts, past
//! `maxDialCount`, the daily window and the frequency cap but never outside the calling hours
//! or to a listed number; tried once more when not answered; a COMPLETED task requeued.
//! Times are set against the engine's clock (16:00 UTC: 11:00 in New York).

use crate::compliance::export_rows;
use crate::rig::{rig, Rig};
use outbound_model::call::Skip;
use outbound_model::plan::Clock;
use outbound_model::{TaskStatus, Timestamp};
use serde_json::{json, Value};
use std::time::Duration;

const OWNER: &str = "acme";
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;

fn at(millis: i64) -> String {
    Timestamp(millis).rfc3339()
}

async fn callbacks(rig: &Rig, task: &str, query: &str) -> Vec<Value> {
    let answer = (rig.api)
        .get(
            OWNER,
            &format!("/api/task/{task}/callbacks?pageSize=50{query}"),
        )
        .await;
    answer.ok()["rows"].as_array().unwrap().clone()
}

async fn set(rig: &Rig, task: &str, contact: &str, when: i64) -> crate::support::Answer {
    (rig.api)
        .post(
            OWNER,
            "/api/task/callback",
            json!({"taskId": task, "contactId": contact, "at": at(when)}),
        )
        .await
}

async fn stat(rig: &Rig, task: &str) -> Value {
    (rig.api)
        .get(OWNER, &format!("/api/task/{task}/stat"))
        .await
        .ok()
        .clone()
}

/// Moves the engine's clock to `when` and runs a round of the dialing functions.
async fn round_at(rig: &Rig, when: i64) {
    let now = rig.clock.now().0;
    if when > now {
        rig.clock
            .advance(Duration::from_millis((when - now) as u64));
    }
    rig.api.dial_round(&rig.engine).await;
}

/// D31: a callback on a COMPLETED task makes it RUNNING; nothing is placed before its time; at
/// its time it is placed (its contact had used its one attempt), recorded as `callback` and
/// counted in `callbackCount`, and the task completes again.
#[tokio::test]
async fn a_callback_is_placed_at_its_time_past_the_contacts_attempts() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let (task, ids) = rig
        .running(
            &[("2125550201", json!({})), ("2125550202", json!({}))],
            json!({"maxDialCount": 1}),
        )
        .await;
    rig.complete(&task).await;
    let when = rig.clock.now().0 + 2 * HOUR;
    let answer = set(&rig, &task, &ids[0], when).await;
    assert_eq!(
        answer.ok(),
        &json!({"contactId": ids[0], "phoneNumber": "2125550201", "at": at(when),
                "source": "API", "status": "PENDING", "reason": null})
    );
    let detail = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        detail.status,
        TaskStatus::Running,
        "a COMPLETED task requeued"
    );
    // Before its time: nothing is placed, the task waits.
    round_at(&rig, when - MINUTE).await;
    assert_eq!(rig.placed().len(), 2);
    assert_eq!(
        rig.api.stored_task(OWNER, &task).await.status,
        TaskStatus::Running
    );
    // At its time: its call, the contact's second attempt though `maxDialCount` is 1.
    round_at(&rig, when).await;
    assert_eq!(
        rig.placed().last().unwrap(),
        &format!("{task}-{}-2", ids[0])
    );
    let listed = callbacks(&rig, &task, "").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (&listed[0]["status"], &listed[0]["reason"]),
        (&json!("DONE"), &Value::Null)
    );
    let stat = stat(&rig, &task).await;
    assert_eq!(
        (&stat["callbackCount"], &stat["callCount"]),
        (&json!(1), &json!(3))
    );
    rig.complete(&task).await;
    let rows = export_rows(&rig.api, &task, "").await;
    let shown: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| (row["phoneNumber"].as_str(), row["callbackAt"].as_str()))
        .collect();
    let local = Timestamp(when).display(rig.api.app.zone());
    assert_eq!(shown, [("2125550201", local.as_str()), ("2125550202", "")]);
}

/// D31: a callback comes before the task's other due contacts, and neither the daily window nor
/// the frequency cap holds it back; the calling hours do, read in the contact's own zone.
#[tokio::test]
async fn a_callback_goes_first_and_keeps_only_the_calling_hours() {
    let rig = rig().await;
    // 11:00 in New York: calling hours open until 21:00 there; a cap of one call a day.
    rig.settings(
        json!({"defaultCountry": "US", "callingHours": {"start": "08:00", "end": "21:00"},
                        "frequencyCap": {"maxCalls": 1, "periodHours": 24}}),
    )
    .await;
    let numbers = ["2125550211", "2125550212", "2125550213", "2125550214"];
    let contacts: Vec<(&str, Value)> = numbers.iter().map(|n| (*n, json!({}))).collect();
    // The task's daily window, in each contact's zone: 09:00-12:00, open now, closed at 13:00.
    let window = json!({"maxDialCount": 1, "dailyStartTime": "09:00", "dailyEndTime": "12:00"});
    let (task, ids) = rig.running(&contacts, window).await;
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 4);
    // Outside the calling hours in New York (23:00 there): refused.
    let late = rig.clock.now().0 + 12 * HOUR;
    set(&rig, &task, &ids[0], late).await.err(
        400,
        "at is outside the contact's calling hours in its local time",
    );
    let when = rig.clock.now().0 + 2 * HOUR;
    set(&rig, &task, &ids[0], when).await.ok();
    set(&rig, &task, &ids[1], when + MINUTE).await.ok();
    round_at(&rig, when).await;
    // Placed outside the task's window, though its number had its one call of the day (the
    // cap does not hold either); the other not before its own time.
    assert_eq!(
        rig.placed().last().unwrap(),
        &format!("{task}-{}-2", ids[0])
    );
    assert_eq!(rig.placed().len(), 5);
    let listed = callbacks(&rig, &task, "&status=DONE").await;
    assert_eq!(listed.len(), 1);
    round_at(&rig, when + MINUTE).await;
    assert_eq!(
        rig.placed().last().unwrap(),
        &format!("{task}-{}-2", ids[1])
    );
    assert_eq!(callbacks(&rig, &task, "&status=DONE").await.len(), 2);
}

/// D31: a task whose daily window is read in its own zone (`windowTimeZone: TASK`) gets a dial
/// run for its callbacks while the window is closed, and calls them alone: a contact added
/// meanwhile waits for the window to open.
#[tokio::test]
async fn a_callback_is_placed_while_the_tasks_own_window_is_closed() {
    let rig = rig().await;
    rig.settings(
        json!({"defaultCountry": "US", "callingHours": {"start": "08:00", "end": "21:00"}}),
    )
    .await;
    let contacts: Vec<(&str, Value)> = ["2125550261", "2125550262"]
        .iter()
        .map(|n| (*n, json!({})))
        .collect();
    // 09:00-12:00 in New York, read in the task's zone: open now (11:00 there).
    let window = json!({"maxDialCount": 1, "dailyStartTime": "09:00", "dailyEndTime": "12:00",
                        "timeZone": "America/New_York", "windowTimeZone": "TASK"});
    let (source, ids) = rig.source(&contacts).await;
    let task = rig.published(&source, window).await;
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 2);
    // A callback at 13:00 in New York, the window closed then; the task is requeued, and a
    // contact added to its data source meanwhile.
    let when = rig.clock.now().0 + 2 * HOUR;
    set(&rig, &task, &ids[0], when).await.ok();
    let added = (rig.api)
        .post(
            OWNER,
            &crate::support::contact_op(&source, "add"),
            json!({"phoneNumber": "2125550263"}),
        )
        .await
        .ok()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    round_at(&rig, when - MINUTE).await;
    assert_eq!(
        rig.placed().len(),
        2,
        "nothing before its time, nothing outside the window"
    );
    round_at(&rig, when).await;
    assert_eq!(
        rig.placed().last().unwrap(),
        &format!("{task}-{}-2", ids[0])
    );
    assert_eq!(rig.placed().len(), 3, "the callback alone");
    assert_eq!(callbacks(&rig, &task, "&status=DONE").await.len(), 1);
    assert_eq!(
        rig.api.stored_task(OWNER, &task).await.status,
        TaskStatus::Running,
        "not completed while a contact waits for the window"
    );
    // The window opens the next morning: the added contact is called.
    round_at(&rig, when + 21 * HOUR).await;
    round_at(&rig, when + 21 * HOUR + 1_000).await;
    assert_eq!(rig.placed().last().unwrap(), &format!("{task}-{added}-1"));
}

/// D31: a callback not answered is tried once more after `callInterval`, then is MISSED with
/// the reason of its last try, and the contact is final.
#[tokio::test]
async fn a_callback_not_answered_is_tried_once_more_then_missed() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let script = json!({"simulatedOutcomes": "ANSWERED,NO_ANSWER,NO_ANSWER,ANSWERED"});
    let (task, ids) = rig
        .running(
            &[("2125550221", script), ("2125550222", json!({}))],
            json!({"maxDialCount": 3, "callInterval": 600}),
        )
        .await;
    rig.complete(&task).await;
    let when = rig.clock.now().0 + HOUR;
    set(&rig, &task, &ids[0], when).await.ok();
    round_at(&rig, when).await;
    assert_eq!(rig.placed().len(), 3);
    let pending = callbacks(&rig, &task, "&status=PENDING").await;
    assert_eq!(pending.len(), 1, "still pending after its first try");
    // Not again before the interval.
    round_at(&rig, when + 9 * MINUTE).await;
    assert_eq!(rig.placed().len(), 3);
    round_at(&rig, when + 11 * MINUTE).await;
    assert_eq!(
        rig.placed().last().unwrap(),
        &format!("{task}-{}-3", ids[0])
    );
    let missed = callbacks(&rig, &task, "&status=MISSED").await;
    assert_eq!(missed.len(), 1);
    assert_eq!(missed[0]["reason"], "NO_ANSWER");
    let (attempts, reason, _, done) = rig.state(&task, &ids[0]).await;
    assert_eq!(
        (attempts, reason.map(|r| r.name()), done),
        (3, Some("NO_ANSWER"), true)
    );
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 4, "no third try");
}

/// D31: a callback is never placed to a number listed after it was set: MISSED with `DNC`.
#[tokio::test]
async fn a_callback_to_a_listed_number_is_missed() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let (task, ids) = rig
        .running(&[("2125550231", json!({}))], json!({"maxDialCount": 1}))
        .await;
    rig.complete(&task).await;
    let when = rig.clock.now().0 + HOUR;
    set(&rig, &task, &ids[0], when).await.ok();
    (rig.api)
        .post(OWNER, "/api/dnc/add", json!({"phoneNumber": "2125550231"}))
        .await
        .ok();
    round_at(&rig, when).await;
    rig.complete(&task).await;
    assert_eq!(rig.placed().len(), 1);
    let missed = callbacks(&rig, &task, "").await;
    assert_eq!(
        (&missed[0]["status"], &missed[0]["reason"]),
        (&json!("MISSED"), &json!("DNC"))
    );
    assert_eq!(rig.state(&task, &ids[0]).await.2, Some(Skip::Dnc));
}

/// D31: what a callback request may be. Each refusal changes nothing; a pending callback set
/// again moves; cancelled, the contact is back where it stood; a fourth is 409.
#[tokio::test]
async fn callbacks_are_checked_moved_cancelled_and_limited() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let (source, ids) = rig
        .source(&[("2125550241", json!({})), ("2125550242", json!({}))])
        .await;
    let (_, others) = rig.source(&[("2125550243", json!({}))]).await;
    let draft = rig
        .api
        .task(OWNER, &crate::support::unique("Task"), &source, json!({}))
        .await;
    let now = rig.clock.now().0;
    set(&rig, &draft, &ids[0], now + HOUR)
        .await
        .err(405, "cannot schedule a callback for a task in state DRAFT");
    let task = rig.published(&source, json!({})).await;
    let body = |value: Value| rig.api.post(OWNER, "/api/task/callback", value);
    body(json!({"taskId": task, "contactId": ids[0], "at": "tomorrow"}))
        .await
        .err(
            400,
            "at must be an RFC 3339 time with its offset, e.g. 2026-12-01T15:00:00+01:00",
        );
    body(json!({"taskId": task, "contactId": ids[0]}))
        .await
        .code(400);
    let wall = Timestamp::now().0;
    for too in [wall + 30_000, wall + 31 * 24 * HOUR] {
        set(&rig, &task, &ids[0], too).await.err(
            400,
            "at must be at least 60 seconds and at most 30 days ahead",
        );
    }
    set(&rig, &task, &others[0], now + HOUR).await.err(
        404,
        &format!("contact {} not found in the task's data source", others[0]),
    );
    set(&rig, "01J00000000000000000000000", &ids[0], now + HOUR)
        .await
        .code(404);
    assert!(callbacks(&rig, &task, "").await.is_empty());
    // Set, then set again: moved, not a second one.
    set(&rig, &task, &ids[0], now + HOUR).await.ok();
    set(&rig, &task, &ids[0], now + 2 * HOUR).await.ok();
    let listed = callbacks(&rig, &task, "").await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["at"], json!(at(now + 2 * HOUR)));
    // Cancelled: listed as such, and the contact is as it was (never dialled).
    let cancel = json!({"taskId": task, "contactId": ids[0]});
    (rig.api)
        .post(OWNER, "/api/task/callback/cancel", cancel.clone())
        .await
        .ok();
    (rig.api)
        .post(OWNER, "/api/task/callback/cancel", cancel.clone())
        .await
        .err(
            404,
            &format!("contact {} has no pending callback in task {task}", ids[0]),
        );
    let listed = callbacks(&rig, &task, "&status=CANCELLED").await;
    assert_eq!(listed.len(), 1);
    assert!(callbacks(&rig, &task, "&status=PENDING").await.is_empty());
    (rig.api)
        .get(OWNER, &format!("/api/task/{task}/callbacks?status=LATE"))
        .await
        .err(
            400,
            "status must be one of PENDING, DONE, MISSED, CANCELLED",
        );
    // Two more make three; a fourth is refused.
    for hours in [3, 4] {
        set(&rig, &task, &ids[0], now + hours * HOUR).await.ok();
        (rig.api)
            .post(OWNER, "/api/task/callback/cancel", cancel.clone())
            .await
            .ok();
    }
    set(&rig, &task, &ids[0], now + 5 * HOUR).await.err(
        409,
        &format!(
            "contact {} has had 3 callbacks in this task, the most it may",
            ids[0]
        ),
    );
    assert_eq!(callbacks(&rig, &task, "").await.len(), 3);
    // The task dials its contacts as if none had been set.
    rig.complete(&task).await;
    let mut placed = rig.placed();
    placed.sort();
    let mut expected = vec![
        format!("{task}-{}-1", ids[0]),
        format!("{task}-{}-1", ids[1]),
    ];
    expected.sort();
    assert_eq!(placed, expected);
    // A STOPPED task takes none; its pending ones are missed.
    let (stopped, stopped_ids) = rig.running(&[("2125550244", json!({}))], json!({})).await;
    set(&rig, &stopped, &stopped_ids[0], now + HOUR).await.ok();
    (rig.api)
        .post(
            OWNER,
            "/api/task/stop",
            json!({"id": stopped, "reason": "done for today"}),
        )
        .await
        .ok();
    set(&rig, &stopped, &stopped_ids[0], now + 2 * HOUR)
        .await
        .err(
            405,
            "cannot schedule a callback for a task in state STOPPED",
        );
    let missed = callbacks(&rig, &stopped, "&status=MISSED").await;
    assert_eq!(missed.len(), 1);
    assert_eq!(missed[0]["reason"], "done for today");
}

/// D31: the flow asks for a callback with `callbackInMinutes` (or `callbackAt`) whether or not
/// the task keeps it among its results: the answered contact waits for it instead of being
/// final, listed with `source: FLOW`; each callback's flow asking again is heard until the
/// contact had three.
#[tokio::test]
async fn the_flow_asks_for_callbacks_up_to_three() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let asks = json!({"simulatedResults": "outcome=later;callbackInMinutes=90"});
    let at_noon = Timestamp(rig.clock.now().0 + 3 * HOUR).rfc3339();
    let exact = json!({"simulatedResults": format!("callbackAt={at_noon}")});
    let (task, ids) = rig
        .running(
            &[("2125550251", asks), ("2125550252", exact)],
            json!({"maxDialCount": 1, "resultAttributes": ["outcome"]}),
        )
        .await;
    let started = rig.clock.now().0;
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.placed().len(), 2);
    let listed = callbacks(&rig, &task, "").await;
    assert_eq!(listed.len(), 2);
    let by_phone = |phone: &str| {
        listed
            .iter()
            .find(|row| row["phoneNumber"] == phone)
            .cloned()
            .unwrap()
    };
    let first = by_phone("2125550251");
    assert_eq!(
        (&first["source"], &first["status"], &first["contactId"]),
        (&json!("FLOW"), &json!("PENDING"), &json!(ids[0]))
    );
    let asked_at = Timestamp::parse_rfc3339("at", first["at"].as_str().unwrap())
        .unwrap()
        .0;
    assert!((started + 90 * MINUTE..started + 91 * MINUTE).contains(&asked_at));
    assert_eq!(by_phone("2125550252")["at"], json!(at_noon));
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(stored.status, TaskStatus::Running, "it waits for them");
    // Each callback's flow asks again: three callbacks in all for the first contact.
    for round in 1..=3 {
        round_at(&rig, asked_at + (round - 1) * 91 * MINUTE + MINUTE).await;
        let placed = rig.placed();
        assert!(
            placed.contains(&format!("{task}-{}-{}", ids[0], round + 1)),
            "{placed:?}"
        );
    }
    round_at(&rig, started + 6 * HOUR).await;
    rig.complete(&task).await;
    let first: Vec<Value> = callbacks(&rig, &task, "")
        .await
        .into_iter()
        .filter(|row| row["contactId"] == json!(ids[0]))
        .collect();
    assert_eq!(first.len(), 3);
    assert!(first.iter().all(|row| row["status"] == "DONE"));
    let placed = rig.placed();
    let of_first = placed.iter().filter(|t| t.contains(&ids[0])).count();
    let of_second = placed.iter().filter(|t| t.contains(&ids[1])).count();
    assert_eq!((of_first, of_second), (4, 2));
    assert_eq!(stat(&rig, &task).await["callbackCount"], 4);
}

/// D31: at a task's `endAt` its pending callbacks are missed, with the stop's reason.
#[tokio::test]
async fn a_schedules_end_misses_the_pending_callbacks() {
    let rig = rig().await;
    rig.settings(json!({"defaultCountry": "US"})).await;
    let end = rig.clock.now().0 + HOUR;
    let (task, ids) = rig
        .running(
            &[("2125550261", json!({})), ("2125550262", json!({}))],
            json!({"endAt": at(end)}),
        )
        .await;
    rig.api.dial_round(&rig.engine).await;
    set(&rig, &task, &ids[0], end + HOUR).await.ok();
    round_at(&rig, end).await;
    assert_eq!(
        rig.api.stored_task(OWNER, &task).await.status,
        TaskStatus::Stopped
    );
    let missed = callbacks(&rig, &task, "&status=MISSED").await;
    assert_eq!(missed.len(), 1);
    assert_eq!(
        (&missed[0]["contactId"], &missed[0]["reason"]),
        (&json!(ids[0]), &json!("schedule ended"))
    );
    assert!(callbacks(&rig, &task, "&status=PENDING").await.is_empty());
    round_at(&rig, end + 2 * HOUR).await;
    assert_eq!(rig.placed().len(), 2, "never placed");
}

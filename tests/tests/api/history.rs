//! A task's own history (D31) over HTTP with the simulated provider: the tick keeps a snapshot
//! of a running task's counters only when they moved, `GET /api/task/{id}/history` answers the
//! counts of each interval (summing to its statistics, the outcomes since the newest snapshot
//! included) and every change of its state, and the task's delete reclaims it.

use crate::rig::{rig, Rig};
use outbound_adapters::aws::actions::Function;
use outbound_model::history::Grain;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::{Id, TaskStatus, Tenant};
use outbound_service::reclaim;
use serde_json::{json, Value};

const OWNER: &str = "acme";

async fn history(rig: &Rig, task: &str) -> Value {
    (rig.api)
        .get(OWNER, &format!("/api/task/{task}/history"))
        .await
        .ok()
        .clone()
}

fn code(status: TaskStatus) -> Value {
    json!(status.code())
}

async fn post(rig: &Rig, path: &str, task: &str) {
    rig.api.post(OWNER, path, json!({"id": task})).await.ok();
}

/// Dial rounds a second apart until `task` has placed `calls` calls, their outcomes recorded.
async fn calls_until(rig: &Rig, task: &str, calls: u64) {
    for _ in 0..5 {
        rig.api.dial_round(&rig.engine).await;
        if rig.api.stored_task(OWNER, task).await.counters.calls >= calls {
            return;
        }
        rig.clock.advance(std::time::Duration::from_secs(1));
    }
    panic!("task {task} did not reach {calls} calls");
}

/// The tick keeps one snapshot when outcomes moved the counters and none when nothing did; the
/// history's intervals are its counts since the start and since each snapshot, the last one
/// closed by the counters as they are; pauses and the stop are its states.
#[tokio::test]
async fn the_history_counts_every_outcome_and_every_change_of_state() {
    let rig = rig().await;
    let contacts: Vec<(&str, Value)> = ["+12125550141", "+12125550142", "+12125550143"]
        .iter()
        .map(|n| (*n, json!({})))
        .collect();
    let (task, ids) = rig.running(&contacts, json!({"maxDialCount": 3})).await;
    let tenant = Tenant::parse(OWNER).unwrap();
    let task_id = Id::parse(&task).unwrap();
    let started = rig.api.stored_task(OWNER, &task).await.started_at.unwrap();

    // Nothing recorded yet: no interval, the publish as the one state.
    let empty = history(&rig, &task).await;
    assert_eq!(empty["intervals"], json!([]));
    assert_eq!(empty["startTime"], json!(started.rfc3339()));
    assert_eq!(empty["states"].as_array().unwrap().len(), 1);
    assert_eq!(empty["states"][0]["status"], code(TaskStatus::Running));

    // Three calls answered; the next tick keeps one snapshot, the one after none.
    calls_until(&rig, &task, 3).await;
    let report = rig.engine.tick().await.unwrap();
    assert_eq!(report.snapshots, 1);
    assert_eq!(rig.engine.tick().await.unwrap().snapshots, 0);
    let stored = rig.api.store.history(&tenant, &task_id).await.unwrap();
    assert_eq!(stored.snapshots.len(), 1);
    let first = stored.snapshots[0];
    assert_eq!((first.counts.calls, first.counts.success), (3, 3));
    assert_eq!(first.grain, Grain::Day, "a task's first snapshot is kept");

    let shown = history(&rig, &task).await;
    assert_eq!(
        shown["intervals"],
        json!([{
            "from": started.rfc3339(), "to": first.at.rfc3339(),
            "callCount": 3, "successCount": 3, "failCount": 0, "noAnswerCount": 0,
            "abandonCount": 0, "callbackCount": 0
        }])
    );

    // Two contacts called again; their outcomes, not yet in a snapshot, close the history.
    (rig.api)
        .post(
            OWNER,
            &format!("/api/task/{task}/recall"),
            json!({"contactIds": &ids[..2]}),
        )
        .await
        .ok();
    calls_until(&rig, &task, 5).await;
    let after = rig.api.stored_task(OWNER, &task).await;
    let latest = after.last_outcome_at.unwrap();
    let shown = history(&rig, &task).await;
    let intervals = shown["intervals"].as_array().unwrap();
    assert_eq!(intervals.len(), 2);
    assert_eq!(intervals[1]["from"], json!(first.at.rfc3339()));
    assert_eq!(intervals[1]["to"], json!(latest.rfc3339()));
    assert_eq!(
        (&intervals[1]["callCount"], &intervals[1]["successCount"]),
        (&json!(2), &json!(2))
    );
    let stat = (rig.api)
        .get(OWNER, &format!("/api/task/{task}/stat"))
        .await
        .ok()
        .clone();
    let summed: u64 = intervals
        .iter()
        .map(|i| i["callCount"].as_u64().unwrap())
        .sum();
    assert_eq!(json!(summed), stat["callCount"]);

    // A minute on, the second snapshot is a minute's, kept a day.
    rig.clock.advance(std::time::Duration::from_secs(60));
    assert_eq!(rig.engine.tick().await.unwrap().snapshots, 1);
    let stored = rig.api.store.history(&tenant, &task_id).await.unwrap();
    assert_eq!(stored.snapshots.len(), 2);
    assert_eq!(stored.snapshots[1].grain, Grain::Minute);

    // A pause, a resume, a stop: each a state, in order.
    post(&rig, "/api/task/pause", &task).await;
    post(&rig, "/api/task/resume", &task).await;
    post(&rig, "/api/task/stop", &task).await;
    let states: Vec<Value> = history(&rig, &task).await["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|state| state["status"].clone())
        .collect();
    assert_eq!(
        states,
        [
            TaskStatus::Running,
            TaskStatus::Paused,
            TaskStatus::Running,
            TaskStatus::Stopped
        ]
        .map(code)
    );

    // Deleted, its history goes with its contacts' states.
    post(&rig, "/api/task/delete", &task).await;
    let job = ReclaimJob::Task {
        tenant: tenant.clone(),
        id: task_id.clone(),
    };
    Function::Reclaim
        .scope(reclaim::run(&rig.api.store, &job))
        .await
        .unwrap();
    let stored = rig.api.store.history(&tenant, &task_id).await.unwrap();
    assert!(stored.snapshots.is_empty() && stored.states.is_empty());
}

/// An unknown task has no history (404), and a DRAFT one an empty history.
#[tokio::test]
async fn a_draft_has_an_empty_history_and_an_unknown_task_none() {
    let rig = rig().await;
    let unknown = Id::new();
    (rig.api)
        .get(OWNER, &format!("/api/task/{unknown}/history"))
        .await
        .code(404);
    let (source, _) = rig.source(&[("+12125550151", json!({}))]).await;
    let draft = rig
        .api
        .task(OWNER, &crate::support::unique("Draft"), &source, json!({}))
        .await;
    let shown = history(&rig, &draft).await;
    assert_eq!(
        shown,
        json!({"taskId": draft, "status": code(TaskStatus::Draft), "startTime": null,
               "endTime": null, "intervals": [], "states": []})
    );
}

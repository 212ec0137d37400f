//! Every operation in every task state, over HTTP (D10): the allowed ones move the task exactly
//! as the table says, the others answer 405 and change nothing. COMPLETED and FAILED are reached
//! and left through the dialing engine's entry points, which are part of the same table.

use crate::support::{state_name, TaskFixture, TestApi};
use outbound_model::{Task, TaskStatus};
use serde_json::{json, Value};
use TaskStatus::*;

/// The operations a task knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Update,
    Publish,
    Pause,
    Resume,
    Stop,
    Close,
    Delete,
    Recall,
    Complete,
    Fail,
}

const OPS: [Op; 10] = [
    Op::Update,
    Op::Publish,
    Op::Pause,
    Op::Resume,
    Op::Stop,
    Op::Close,
    Op::Delete,
    Op::Recall,
    Op::Complete,
    Op::Fail,
];

impl Op {
    /// The word of the 405 message.
    fn word(self) -> &'static str {
        match self {
            Op::Update => "update",
            Op::Publish => "publish",
            Op::Pause => "pause",
            Op::Resume => "resume",
            Op::Stop => "stop",
            Op::Close => "close",
            Op::Delete => "delete",
            Op::Recall => "recall",
            Op::Complete => "complete",
            Op::Fail => "fail",
        }
    }

    /// D10, restated here on its own: the state each operation leads to from each state it is
    /// allowed in (`None`: refused with 405). Delete leads nowhere (`Some(None)`).
    fn target(self, from: TaskStatus) -> Option<Option<TaskStatus>> {
        let to = match (self, from) {
            (Op::Update, Draft) => Draft,
            (Op::Publish, Draft) => Running,
            (Op::Pause, Running) => Paused,
            (Op::Resume, Paused) => Running,
            (Op::Stop, Running | Paused) => Stopped,
            (Op::Close, Stopped | Completed | Failed) => Closed,
            (Op::Delete, Draft | Stopped | Completed | Failed | Closed) => return Some(None),
            // A recall that queued something makes a COMPLETED task RUNNING again.
            (Op::Recall, Running | Paused) => from,
            (Op::Recall, Completed) => Running,
            (Op::Complete, Running) => Completed,
            (Op::Fail, Running | Paused) => Failed,
            _ => return None,
        };
        Some(Some(to))
    }
}

const REASON: &str = "enough for today";
const FAIL_REASON: &str = "provider refused the task";

/// Runs `op` on the fixture's task: the `data` of a success, or the code and message of an error.
async fn run(api: &TestApi, fixture: &TaskFixture, op: Op) -> Result<Value, (u16, String)> {
    let id = &fixture.id;
    let (path, body) = match op {
        Op::Update => ("/api/task/update", json!({"id": id, "taskName": "Renamed"})),
        Op::Publish => ("/api/task/publish", json!({"id": id})),
        Op::Pause => ("/api/task/pause", json!({"id": id})),
        Op::Resume => ("/api/task/resume", json!({"id": id})),
        Op::Stop => ("/api/task/stop", json!({"id": id, "reason": REASON})),
        Op::Close => ("/api/task/close", json!({"id": id})),
        Op::Delete => ("/api/task/delete", json!({"id": id})),
        Op::Recall => (
            "/api/task/{id}/recall",
            json!({"contactIds": [fixture.contacts[0]]}),
        ),
        Op::Complete | Op::Fail => {
            use outbound_service::task as engine;
            let (tenant, task) = (crate::support::tenant("acme"), crate::support::id(id));
            let result = if op == Op::Complete {
                engine::complete(&api.store, &tenant, &task).await
            } else {
                engine::fail(&api.store, &tenant, &task, FAIL_REASON.into()).await
            };
            return result
                .map(|task| json!({"id": task.id, "status": task.status}))
                .map_err(|error| (error.status_code(), error.to_string()));
        }
    };
    let answer = api.post("acme", &path.replace("{id}", id), body).await;
    if answer.status == 200 {
        Ok(answer.ok().clone())
    } else {
        let message = answer.code(answer.status.as_u16()).to_owned();
        Err((answer.status.as_u16(), message))
    }
}

/// What an allowed operation must have answered and stored, given the task before it.
fn expected_task(op: Op, before: &Task, after: &Task, to: TaskStatus) -> Task {
    let mut expected = before.clone();
    expected.status = to;
    let state_changed = to != before.status;
    if op == Op::Update || state_changed {
        assert!(
            after.updated_at > before.updated_at,
            "{op:?} from {}: updated_at must move",
            before.status
        );
        expected.updated_at = after.updated_at;
    }
    // Every change of state and every recall group wakes the task (D23): a run that read it
    // before marks it idle no more.
    if state_changed {
        expected.awake += 1;
    }
    match op {
        Op::Update => expected.name = outbound_model::Name::parse("taskName", "Renamed").unwrap(),
        Op::Publish => expected.started_at = Some(after.updated_at),
        Op::Stop => {
            expected.ended_at = Some(after.updated_at);
            expected.stop_reason = Some(REASON.into());
        }
        Op::Complete => expected.ended_at = Some(after.updated_at),
        Op::Fail => {
            expected.ended_at = Some(after.updated_at);
            expected.fail_reason = Some(FAIL_REASON.into());
        }
        // Every recall moves the revision, so a completion racing it is refused (D13); the
        // requeued task is running again and has not ended (`endTime` is null).
        // A finished task's recall is applied by its job, whose group moves the revision once
        // more, so a run that read the task before it cannot rest it.
        Op::Recall => {
            expected.revision = before.revision + 1;
            expected.awake += 1;
            if before.status == Completed {
                expected.ended_at = None;
                expected.revision += 1;
            }
        }
        _ => {}
    }
    expected
}

/// The `data` an allowed operation answers.
async fn expected_data(api: &TestApi, fixture: &TaskFixture, op: Op, to: TaskStatus) -> Value {
    let id = fixture.id.as_str();
    match op {
        Op::Update => api
            .get("acme", &format!("/api/task/detail/{id}"))
            .await
            .ok()
            .clone(),
        Op::Publish => {
            let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
            let start = detail.ok()["startTime"].clone();
            assert!(start.is_string(), "publish sets startTime");
            json!({"id": id, "status": 1, "startTime": start})
        }
        Op::Delete => Value::Null,
        Op::Recall => json!({"recallCount": 1, "recallIds": [fixture.contacts[0]]}),
        _ => json!({"id": id, "status": to.code()}),
    }
}

/// Runs every operation on a fresh task in `from` and checks answer, stored task, the data
/// source's hold (D11) and recall's per-contact state.
async fn every_operation_from(from: TaskStatus) {
    let api = TestApi::start().await;
    for op in OPS {
        let fixture = api.task_in("acme", from, 1).await;
        let before = api.stored_task("acme", &fixture.id).await;
        // Timestamps are milliseconds: make sure a change can be seen.
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        let outcome = run(&api, &fixture, op).await;
        let now = match (op.target(from), outcome) {
            (None, Err((code, message))) => {
                let expected = format!("cannot {} a task in state {}", op.word(), state_name(from));
                assert_eq!((code, message.as_str()), (405, expected.as_str()));
                assert_eq!(api.stored_task("acme", &fixture.id).await, before, "{op:?}");
                Some(from)
            }
            (Some(None), Ok(data)) => {
                assert_eq!(data, Value::Null);
                api.get("acme", &format!("/api/task/detail/{}", fixture.id))
                    .await
                    .err(404, &format!("task {} not found", fixture.id));
                None
            }
            (Some(Some(to)), Ok(data)) => {
                assert_eq!(data, expected_data(&api, &fixture, op, to).await, "{op:?}");
                let after = api.stored_task("acme", &fixture.id).await;
                assert_eq!(after, expected_task(op, &before, &after, to), "{op:?}");
                Some(to)
            }
            (expected, got) => panic!("{op:?} from {from}: expected {expected:?}, got {got:?}"),
        };
        // D11: exactly the RUNNING and PAUSED tasks hold their data source.
        let holds = now.is_some_and(|s| matches!(s, Running | Paused));
        let source = api.stored_source("acme", &fixture.source).await;
        assert_eq!(source.active_tasks, u64::from(holds), "{op:?} from {from}");
        // Only an allowed recall writes per-contact state.
        let written = api.stored_task_contacts("acme", &fixture.id).await;
        let recalled = op == Op::Recall && op.target(from).is_some();
        assert_eq!(written.len(), usize::from(recalled), "{op:?} from {from}");
    }
}

// D10, one test per source state.

#[tokio::test]
async fn every_operation_on_a_draft_task() {
    every_operation_from(Draft).await;
}

#[tokio::test]
async fn every_operation_on_a_running_task() {
    every_operation_from(Running).await;
}

#[tokio::test]
async fn every_operation_on_a_paused_task() {
    every_operation_from(Paused).await;
}

#[tokio::test]
async fn every_operation_on_a_stopped_task() {
    every_operation_from(Stopped).await;
}

#[tokio::test]
async fn every_operation_on_a_completed_task() {
    every_operation_from(Completed).await;
}

#[tokio::test]
async fn every_operation_on_a_failed_task() {
    every_operation_from(Failed).await;
}

#[tokio::test]
async fn every_operation_on_a_closed_task() {
    every_operation_from(Closed).await;
}

/// D10: a stop without a reason keeps none; the reason survives close; endTime shows over HTTP.
#[tokio::test]
async fn stop_reason_and_end_time_over_http() {
    let api = TestApi::start().await;
    let paused = api.task_in("acme", Paused, 1).await;
    api.post(
        "acme",
        "/api/task/stop",
        json!({"id": paused.id, "reason": "   "}),
    )
    .await
    .ok();
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", paused.id))
        .await;
    assert_eq!(detail.ok()["stopReason"], Value::Null);
    assert!(detail.ok()["endTime"].is_string());

    let running = api.task_in("acme", Running, 1).await;
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", running.id))
        .await;
    assert_eq!(detail.ok()["endTime"], Value::Null);
    api.post(
        "acme",
        "/api/task/stop",
        json!({"id": running.id, "reason": " done "}),
    )
    .await
    .ok();
    api.post("acme", "/api/task/close", json!({"id": running.id}))
        .await
        .ok();
    let closed = api
        .get("acme", &format!("/api/task/detail/{}", running.id))
        .await;
    assert_eq!(closed.ok()["status"], 6);
    assert_eq!(closed.ok()["stopReason"], "done");
    assert!(closed.ok()["endTime"].is_string());
    assert!(closed.ok()["startTime"].is_string());

    let failed = api.task_in("acme", Failed, 1).await;
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", failed.id))
        .await;
    assert_eq!(detail.ok()["failReason"], "carrier refused");
    assert!(detail.ok()["endTime"].is_string());
}

/// D10: an unknown or malformed id is 404 on every state change, not 405.
#[tokio::test]
async fn state_changes_of_missing_tasks_are_404() {
    let api = TestApi::start().await;
    let missing = outbound_model::Id::new().to_string();
    for op in [
        "update", "publish", "pause", "resume", "stop", "close", "delete",
    ] {
        for id in [missing.as_str(), "nope"] {
            api.post("acme", &format!("/api/task/{op}"), json!({"id": id}))
                .await
                .err(404, &format!("task {id} not found"));
        }
        api.post("acme", &format!("/api/task/{op}"), json!({}))
            .await
            .err(400, "id is required");
    }
}

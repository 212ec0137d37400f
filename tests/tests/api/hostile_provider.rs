//! A hostile provider and dying runs (D28), one path at a time: server errors that leave starts
//! in doubt, lost answers, late outcomes and a run killed in its slice. The seeded simulation
//! (`simulation.rs`) mixes them all; each defect it or a reader found has its test here.

use crate::rig::{rig_with, Rig};
use outbound_local::inbox::DialInbox;
use outbound_model::call::Reason;
use outbound_model::job::DialJob;
use outbound_model::plan::Clock;
use outbound_model::TaskStatus;
use serde_json::{json, Value};
use std::future::Future;
use std::task::Poll;
use std::time::Duration;

const OWNER: &str = "acme";
const MINUTE: Duration = Duration::from_secs(61);

async fn round(rig: &Rig) {
    rig.api.dial_round(&rig.engine).await;
}

/// `count` rounds a minute apart.
async fn minutes(rig: &Rig, count: usize) {
    for _ in 0..count {
        rig.clock.advance(MINUTE);
        round(rig).await;
    }
}

fn contacts(n: usize, fields: Value) -> Vec<(String, Value)> {
    (0..n)
        .map(|i| (format!("+1212555{:04}", 3000 + i), fields.clone()))
        .collect()
}

async fn running_over(
    rig: &Rig,
    contacts: &[(String, Value)],
    extra: Value,
) -> (String, Vec<String>) {
    let borrowed: Vec<(&str, Value)> = contacts
        .iter()
        .map(|(phone, fields)| (phone.as_str(), fields.clone()))
        .collect();
    rig.running(&borrowed, extra).await
}

/// A rig whose calls are reconciled a minute after their claim and live at most an hour.
async fn doubt_rig() -> Rig {
    rig_with(|s| {
        s.reconcile_after = Duration::from_secs(60);
        s.max_call = Duration::from_secs(3600);
    })
    .await
}

/// A rig whose calls are reconciled a minute after their claim and live at most an hour, each
/// connected for 8 s of wall time: still live when the next reconcile asks.
async fn late_resend_rig() -> Rig {
    rig_with(|s| {
        s.reconcile_after = Duration::from_secs(60);
        s.max_call = Duration::from_secs(3600);
        s.simulated.delay = Duration::from_secs(8);
    })
    .await
}

/// The queue `sales` of the owner, with one agent handling a call in 5 s.
async fn one_agent_on_sales(rig: &Rig) {
    rig.api.seed_queues(OWNER, &["sales"]).await;
    let answer = rig
        .api
        .http
        .post(format!("{}/local/agents", rig.api.base))
        .json(&json!({"queueId": "sales", "agents": 1, "handleSeconds": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
}

/// The connected call of `contact`'s first attempt, placed by a re-send: a minute later it still
/// waits for its outcome (never given up as "no outcome"); once it has ended (`ends_in` of wall
/// time) it is recorded answered, its one attempt, and no call is left in flight.
async fn recorded_once_ended(rig: &Rig, task: &str, contact: &str, ends_in: Duration) {
    rig.clock.advance(MINUTE);
    round(rig).await;
    let state = &rig.api.stored_task_contacts(OWNER, task).await[contact];
    assert_eq!(
        (state.in_call, state.last_reason),
        (Some(1), None),
        "a connected call waits for its outcome: {state:?}"
    );
    tokio::time::sleep(ends_in).await;
    minutes(rig, 3).await;
    let state = &rig.api.stored_task_contacts(OWNER, task).await[contact];
    assert_eq!(
        (state.attempts, state.last_reason, state.in_call),
        (1, Some(Reason::Answered), None),
        "{}",
        rig.diagnostics(task).await
    );
    assert_eq!(rig.engine.store.calls_in_flight().await.unwrap(), 0);
}

/// A task (`maxDialCount` 1) over one contact of `number` whose start is in doubt (the run sends
/// a failed start again at once; the second failure leaves it in doubt), paused, and reconciled a
/// minute later: its places given back, the attempt still in flight. The task's id and the
/// contact's.
async fn released_in_doubt(rig: &Rig, number: &str) -> (String, Vec<String>) {
    let doubtful = json!({"simulatedOutcomes": "START_FAILED,START_FAILED,ANSWERED"});
    let (task, ids) = rig
        .running(&[(number, doubtful)], json!({"maxDialCount": 1}))
        .await;
    round(rig).await;
    assert_eq!(
        rig.api.stored_task(OWNER, &task).await.in_flight,
        1,
        "in doubt"
    );
    let paused = rig
        .api
        .post(OWNER, "/api/task/pause", json!({"id": task}))
        .await;
    assert_eq!(paused.ok()["status"], 2, "paused");
    let status = rig.api.stored_task(OWNER, &task).await.status;
    assert_eq!(status, TaskStatus::Paused);
    rig.clock.advance(MINUTE);
    round(rig).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert!(
        state.released && state.in_call == Some(1),
        "in doubt, its places given back: {state:?}"
    );
    (task, ids)
}

/// D28: server errors leave each start in doubt (the run stops at the first); by the next tick
/// each is sent again with its token and, still failing, gives its places back, so no fault
/// holds capacity past the tick after it, and another task then dials at the service's full
/// rate within two ticks while those contacts wait. A start that gave its places back is sent
/// again with its token at each reconcile (its places taken and given back within it): once the
/// provider answers, each contact is called on its first attempt, and no "no outcome" attempt
/// is ever recorded for a start that placed nothing.
#[tokio::test]
async fn a_burst_of_server_errors_holds_no_capacity_past_the_next_tick() {
    let rig = doubt_rig().await;
    let failing = contacts(
        3,
        json!({"simulatedOutcomes": "START_FAILED,START_FAILED,START_FAILED,START_FAILED,START_FAILED,START_FAILED,ANSWERED"}),
    );
    let (burst, _) = running_over(&rig, &failing, json!({"maxDialCount": 1})).await;
    for tick in 1..=4 {
        round(&rig).await;
        let stored = rig.api.stored_task(OWNER, &burst).await;
        let states = rig.api.stored_task_contacts(OWNER, &burst).await;
        let released = states.values().filter(|s| s.released).count();
        assert_eq!(
            (stored.in_flight, released),
            (
                u32::from(tick < 4),
                tick.min(3) - u32::from(tick < 4) as usize
            ),
            "tick {tick}: the newest start in doubt holds its place; those before gave it back"
        );
        assert_eq!(
            rig.engine.store.calls_in_flight().await.unwrap(),
            u32::from(tick < 4)
        );
        rig.clock.advance(MINUTE);
    }
    assert!(
        rig.local_calls(&burst).await.is_empty(),
        "no call was placed"
    );
    let diagnostics = rig.diagnostics(&burst).await;
    assert_eq!(diagnostics["contacts"]["waiting"], 3, "{diagnostics}");
    assert_eq!(diagnostics["contacts"]["inFlight"], 0, "{diagnostics}");

    // Another task now gets the whole service.
    let other = contacts(10, json!({"simulatedOutcomes": "ANSWERED"}))
        .into_iter()
        .map(|(phone, fields)| (phone.replace("+1212", "+1312"), fields))
        .collect::<Vec<_>>();
    let (next, _) = running_over(&rig, &other, json!({})).await;
    // Within two ticks: the first finds the burst's task with nothing left but outcomes to
    // wait for, and rests it.
    round(&rig).await;
    rig.clock.advance(MINUTE);
    round(&rig).await;
    assert_eq!(
        rig.local_calls(&next).await.len(),
        10,
        "dialled at full rate: {}",
        rig.diagnostics(&next).await
    );

    // The provider answers again: each start, sent again with its token, places its call.
    for _ in 0..8 {
        rig.clock.advance(MINUTE);
        round(&rig).await;
    }
    let stored = rig.api.stored_task(OWNER, &burst).await;
    assert_eq!(stored.status, TaskStatus::Completed);
    assert_eq!(
        (
            stored.counters.calls,
            stored.counters.success,
            stored.counters.failed
        ),
        (3, 3, 0)
    );
    assert_eq!(rig.local_calls(&burst).await.len(), 3, "each placed once");
    for state in rig.api.stored_task_contacts(OWNER, &burst).await.values() {
        assert_eq!(
            (state.attempts, state.last_reason),
            (1, Some(Reason::Answered))
        );
    }
}

/// D28: a start in doubt whose contact cannot be called when it is reconciled (its task
/// paused) gives back its places and waits, past `DIAL_MAX_CALL_SECONDS`, without being settled
/// "no outcome" (no call is known to have been made); once the task resumes, the start is sent
/// again with its token and the contact is called on that attempt, even with `maxDialCount` 1.
#[tokio::test]
async fn a_start_in_doubt_waits_for_its_contact_to_be_callable_and_is_sent_again() {
    let rig = doubt_rig().await;
    let (task, ids) = released_in_doubt(&rig, "+12125553000").await;
    // Hours past DIAL_MAX_CALL_SECONDS: still waiting, no attempt spent.
    for _ in 0..3 {
        rig.clock.advance(Duration::from_secs(3 * 3600));
        round(&rig).await;
    }
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!((stored.counters.calls, stored.counters.failed), (0, 0));
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!((state.attempts, state.in_call), (0, Some(1)), "{state:?}");

    rig.api
        .post(OWNER, "/api/task/resume", json!({"id": task}))
        .await
        .ok();
    minutes(&rig, 3).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        (
            stored.status,
            stored.counters.calls,
            stored.counters.success
        ),
        (TaskStatus::Completed, 1, 1)
    );
    assert_eq!(rig.local_calls(&task).await.len(), 1);
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(
        (state.attempts, state.last_reason),
        (1, Some(Reason::Answered))
    );
}

/// D17, D28: a start in doubt sent again may be the start that places its call, then: it is
/// counted toward the frequency cap when it is sent, and sent only while its number is under
/// the cap. With one call a day allowed, a number another task called a day after the start in
/// doubt is not called by the re-send until a day after that call.
#[tokio::test]
async fn a_start_sent_again_counts_toward_the_frequency_cap() {
    let rig = doubt_rig().await;
    rig.settings(json!({"frequencyCap": {"maxCalls": 1, "periodHours": 24}}))
        .await;
    let number = "+12125553100";
    let (first, ids) = released_in_doubt(&rig, number).await;

    // A day on, the cap allows another task's call: one attempt, a day old.
    rig.clock.advance(Duration::from_secs(86_400));
    let answered = json!({"simulatedOutcomes": "ANSWERED"});
    let (second, _) = rig.running(&[(number, answered)], json!({})).await;
    rig.complete(&second).await;
    assert_eq!(rig.local_calls(&second).await.len(), 1);

    rig.api
        .post(OWNER, "/api/task/resume", json!({"id": first}))
        .await
        .ok();
    for _ in 0..5 {
        rig.clock.advance(MINUTE);
        round(&rig).await;
    }
    assert!(
        rig.local_calls(&first).await.is_empty(),
        "the number was called minutes ago: {:?}",
        rig.placed()
    );
    let state = &rig.api.stored_task_contacts(OWNER, &first).await[&ids[0]];
    assert_eq!((state.attempts, state.in_call), (0, Some(1)), "{state:?}");

    // A day after that call, the start is sent again with its token and places it.
    rig.clock.advance(Duration::from_secs(86_400));
    minutes(&rig, 3).await;
    let stored = rig.api.stored_task(OWNER, &first).await;
    assert_eq!(
        (
            stored.status,
            stored.counters.calls,
            stored.counters.success
        ),
        (TaskStatus::Completed, 1, 1)
    );
    assert_eq!(rig.local_calls(&first).await.len(), 1);
}

/// D28: a start whose answer was lost, asked again with its token and turned away by a
/// throttled provider, stays in doubt: the provider throttles before it looks at the token, so
/// the first start may have placed the call, and it had: its outcome is recorded on that
/// attempt, and the person is not called a second time.
#[tokio::test]
async fn a_lost_answer_then_a_throttled_resend_stays_in_doubt_and_is_recorded_once() {
    let rig = rig_with(|_| {}).await;
    let lost = contacts(
        1,
        json!({"simulatedOutcomes": "START_LOST+ANSWERED,THROTTLED"}),
    );
    let (task, ids) = running_over(&rig, &lost, json!({"maxDialCount": 2})).await;
    rig.complete(&task).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!((stored.counters.calls, stored.counters.success), (1, 1));
    assert_eq!(rig.local_calls(&task).await.len(), 1, "called once");
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(
        (state.attempts, state.last_reason),
        (1, Some(Reason::Answered))
    );
}

/// D28: a call placed whose answer was lost is asked again with the same token at once: the
/// provider answers the call it placed, so it is listed once and recorded once, with what its
/// flow set.
#[tokio::test]
async fn a_lost_answer_is_asked_again_and_the_call_placed_once() {
    let rig = rig_with(|_| {}).await;
    let lost = contacts(
        3,
        json!({"simulatedOutcomes": "START_LOST+ANSWERED", "simulatedResults": "outcome=paid"}),
    );
    let (task, _) = running_over(&rig, &lost, json!({"resultAttributes": ["outcome"]})).await;
    rig.complete(&task).await;
    assert_eq!(rig.local_calls(&task).await.len(), 3);
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!((stored.counters.calls, stored.counters.success), (3, 3));
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    for state in states.values() {
        assert_eq!(
            state.results.get("outcome").map(String::as_str),
            Some("paid")
        );
    }
}

/// D28: an outcome that comes after the reconcile check is recorded by reconcile from what the
/// provider says of the call and its saved record, with its reason and results, once; the late
/// event then changes nothing. A throttled start is no attempt.
#[tokio::test]
async fn a_late_outcome_keeps_what_the_flow_found() {
    let rig = rig_with(|s| s.reconcile_after = Duration::from_secs(60)).await;
    let late = contacts(
        2,
        json!({"simulatedOutcomes": "THROTTLED,EVENT_LATE+ANSWERED",
               "simulatedResults": "outcome=renewed"}),
    );
    let (task, _) = running_over(&rig, &late, json!({"resultAttributes": ["outcome"]})).await;
    for _ in 0..3 {
        round(&rig).await;
        rig.clock.advance(Duration::from_secs(6));
    }
    assert_eq!(rig.local_calls(&task).await.len(), 2);
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        (stored.in_flight, stored.counters.calls),
        (2, 0),
        "the events are late"
    );

    rig.clock.advance(MINUTE);
    round(&rig).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        (
            stored.in_flight,
            stored.counters.calls,
            stored.counters.success
        ),
        (0, 2, 2)
    );
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    for state in states.values() {
        assert_eq!(state.attempts, 1, "the throttled start was no attempt");
        assert_eq!(state.last_reason, Some(Reason::Answered));
        assert_eq!(
            state.results.get("outcome").map(String::as_str),
            Some("renewed")
        );
    }
    let results = rig
        .api
        .get(OWNER, &format!("/api/task/{task}/results"))
        .await;
    assert_eq!(results.ok()["attributes"][0]["values"][0]["count"], 2);
}

/// D28: a dial run killed at an await point after taking its slice leaks no room and leaves
/// no contact behind the cursor: once its slice lapses the next run queues the contacts it never
/// dialled, and each is called once.
#[tokio::test]
async fn a_run_killed_in_its_slice_leaks_no_room_and_leaves_no_contact_behind() {
    let rig = rig_with(|_| {}).await;
    let (task, ids) = running_over(
        &rig,
        &contacts(6, json!({"simulatedOutcomes": "ANSWERED"})),
        json!({}),
    )
    .await;
    let job = DialJob::Dial {
        tenant: crate::support::tenant(OWNER),
        task_id: crate::support::id(&task),
        budget: 10,
        paced_at: None,
    };
    let body = serde_json::to_string(&job).unwrap();
    let mut polls = 1;
    loop {
        let killed = killable(DialInbox::Jobs.handle(&rig.engine, body.clone()), polls).await;
        assert!(
            killed.is_none(),
            "the run finished before it was killed at {polls} polls"
        );
        if !rig.api.stored_task(OWNER, &task).await.slices.is_empty() {
            break;
        }
        polls += 1;
    }
    let stored = rig.api.stored_task(OWNER, &task).await;
    let now = rig.clock.now();
    assert!(
        stored.reserved_at(now) > 0,
        "the dead run's room, until it lapses"
    );
    assert!(stored.cursor.is_some(), "the cursor moved past its slice");

    rig.clock.advance(Duration::from_secs(31));
    assert_eq!(
        rig.api
            .stored_task(OWNER, &task)
            .await
            .reserved_at(rig.clock.now()),
        0
    );
    // Killed after it placed a call and before it saved its id, the run leaves that attempt in
    // doubt until the reconcile asks the provider (D28): minutes, not the 4 s of a plain run.
    let step = Duration::from_secs(10);
    let completed = (OWNER, task.as_str());
    let rounds = rig
        .api
        .dial_until(
            &rig.engine,
            &rig.clock,
            step,
            completed,
            TaskStatus::Completed,
            60,
        )
        .await;
    let calls = rig.local_calls(&task).await;
    assert_eq!(
        calls.len(),
        ids.len(),
        "each contact called once (completed in {rounds} rounds): {calls:?}"
    );
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert!(stored.slices.is_empty(), "{:?}", stored.slices);
    assert_eq!(stored.counters.success, 6);
}

/// Polls `work` at most `polls` times: `None` when it was dropped before it finished.
pub(crate) async fn killable<F: Future>(work: F, polls: usize) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    let mut left = polls;
    std::future::poll_fn(move |cx| {
        if left == 0 {
            return Poll::Ready(None);
        }
        left -= 1;
        work.as_mut().poll(cx).map(Some)
    })
    .await
}

/// D28: a start in doubt whose number is listed while it waits (its places given back) is never
/// sent again: it waits while a call its first start placed may still be live
/// (`DIAL_MAX_CALL_SECONDS`), for that call's outcome, then is settled "no outcome" and its task
/// completes, instead of staying RUNNING for the six days a token is honoured. The
/// deterministic simulation found it (a task still running a day after its faults stopped).
#[tokio::test]
async fn a_start_in_doubt_whose_number_is_listed_is_settled_once_no_call_may_be_live() {
    let rig = doubt_rig().await;
    let number = "+12125553900";
    let (task, ids) = released_in_doubt(&rig, number).await;
    let listed = rig
        .api
        .post(OWNER, "/api/dnc/add", json!({"phoneNumber": number}))
        .await;
    let _ = listed.ok();
    let resumed = rig
        .api
        .post(OWNER, "/api/task/resume", json!({"id": task}))
        .await;
    assert_eq!(resumed.ok()["status"], 1, "running");
    rig.clock.advance(MINUTE);
    round(&rig).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(
        state.in_call,
        Some(1),
        "waiting while a call may be live: {state:?}"
    );
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(stored.status, TaskStatus::Running);

    rig.clock.advance(Duration::from_secs(3600));
    round(&rig).await;
    round(&rig).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        stored.status,
        TaskStatus::Completed,
        "{}",
        rig.diagnostics(&task).await
    );
    assert_eq!(
        (
            stored.counters.calls,
            stored.counters.failed,
            stored.in_flight
        ),
        (1, 1, 0)
    );
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert_eq!(
        (state.attempts, state.last_reason, state.in_call),
        (1, Some(Reason::NoOutcome), None)
    );
    assert!(rig.local_calls(&task).await.is_empty(), "never placed");
    assert_eq!(rig.engine.store.calls_in_flight().await.unwrap(), 0);
}

/// D28: a start in doubt sent again with its token hours after its claim may be the start that
/// places the call; that call may be live until `DIAL_MAX_CALL_SECONDS` after the re-send, not
/// after the claim. It used to be judged by its claim: the reconcile after the re-send found it
/// connected "past DIAL_MAX_CALL_SECONDS", gave its places back and recorded it failed "no
/// outcome", and the answered call's own outcome was then dropped as recorded before. The
/// deterministic simulation found it (an answered call recorded "no outcome").
#[tokio::test]
async fn a_call_placed_by_a_late_resend_is_recorded_with_its_own_outcome() {
    let rig = late_resend_rig().await;
    let (task, ids) = released_in_doubt(&rig, "+12125553950").await;
    rig.clock.advance(Duration::from_secs(2 * 3600));
    round(&rig).await;
    rig.api
        .post(OWNER, "/api/task/resume", json!({"id": task}))
        .await
        .ok();
    rig.clock.advance(MINUTE);
    round(&rig).await;
    assert_eq!(
        rig.local_calls(&task).await.len(),
        1,
        "placed by the re-send"
    );
    recorded_once_ended(&rig, &task, &ids[0], Duration::from_secs(9)).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(
        (
            stored.status,
            stored.counters.calls,
            stored.counters.success,
            stored.counters.failed,
            stored.in_flight
        ),
        (TaskStatus::Completed, 1, 1, 0, 0),
        "{}",
        rig.diagnostics(&task).await
    );
}

/// D28, D30: a start of an agent-paced task sent again by the reconcile job and still in doubt
/// keeps its places until the next look: its call may be ringing, and a call ringing holds its
/// place in the pace. Giving them back at once (as an agentless task's start does) let the next
/// run ring a second call for the queue's one agent (the simulation's seeds 950 and 1231).
#[tokio::test]
async fn an_agent_paced_start_still_in_doubt_keeps_its_places() {
    let rig = doubt_rig().await;
    one_agent_on_sales(&rig).await;
    // The run's start and its re-send fail in doubt; so does the reconcile's re-send.
    let doubtful = json!({"simulatedOutcomes": "START_FAILED,START_FAILED,START_FAILED,ANSWERED"});
    let paced = json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "maxDialCount": 1});
    let contacts = [
        (String::from("+12125553090"), doubtful),
        (String::from("+12125553091"), json!({})),
    ];
    let (task, ids) = running_over(&rig, &contacts, paced).await;
    round(&rig).await;
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(stored.in_flight, 1, "in doubt, holding the agent's place");
    rig.clock.advance(MINUTE);
    round(&rig).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert!(
        !state.released && state.in_call == Some(1),
        "sent again, still in doubt, its places kept: {state:?}"
    );
    assert_eq!(rig.api.stored_task(OWNER, &task).await.in_flight, 1);
    assert!(
        rig.local_calls(&task).await.is_empty(),
        "no second call rang for the one agent"
    );
    // The next look sends it again, and it is placed, once, holding the one agent's place:
    // the other contact is not called meanwhile.
    minutes(&rig, 2).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert!(state.call_id.is_some() && !state.released, "{state:?}");
    let calls = rig.local_calls(&task).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["contactId"], json!(ids[0]));
}

/// D28, D30: an agent-paced start in doubt keeps its places, and the reconcile that finally
/// sends it again with its token may place its call long after the last send. That call may be
/// live until `DIAL_MAX_CALL_SECONDS` after this send: the time is kept before the start is sent.
/// It used to be kept only when the answer left the start in doubt, so a call placed two hours
/// after the last send was found connected "past DIAL_MAX_CALL_SECONDS" by the next reconcile
/// and recorded failed "no outcome" (the simulation's seed 4197, an answered call recorded "no
/// outcome").
#[tokio::test]
async fn an_agent_paced_start_placed_long_after_its_last_send_is_recorded_with_its_outcome() {
    let rig = late_resend_rig().await;
    one_agent_on_sales(&rig).await;
    // The run's start and its re-send fail in doubt; so does the reconcile's re-send.
    let doubtful = json!({"simulatedOutcomes": "START_FAILED,START_FAILED,START_FAILED,ANSWERED"});
    let paced = json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "maxDialCount": 1});
    let contacts = [(String::from("+12125553190"), doubtful)];
    let (task, ids) = running_over(&rig, &contacts, paced).await;
    round(&rig).await;
    rig.clock.advance(MINUTE);
    round(&rig).await;
    let state = &rig.api.stored_task_contacts(OWNER, &task).await[&ids[0]];
    assert!(
        !state.released && state.in_call == Some(1) && state.call_id.is_none(),
        "sent again, still in doubt, its places kept: {state:?}"
    );
    // Two hours pass without a look (ticks dropped); the next one sends it again and places it.
    rig.clock.advance(Duration::from_secs(2 * 3600));
    round(&rig).await;
    assert_eq!(
        rig.local_calls(&task).await.len(),
        1,
        "placed by the re-send"
    );
    // Its 8 s of ringing and talking, then the agent's 5 s.
    recorded_once_ended(&rig, &task, &ids[0], Duration::from_secs(15)).await;
}

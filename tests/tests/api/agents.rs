//! Calls paced to agents (D30), over HTTP on the local stack's simulated provider and its agent
//! pool (`/local/agents`): a task's pacing fields are checked with the field named and kept
//! while DRAFT; a progressive task never has more calls in flight than its queue's free agents
//! x `callsPerAgent`, and tasks on one queue share its agents in D13's order; a call a person
//! answers with no agent free is `ABANDONED` (no answer, retried, counted in stat, detail and
//! diagnostics, in its `CallCompleted`); a predictive task dials ahead of its agents; a queue
//! without agents holds its tasks back as `NO_AGENTS`.

use crate::rig::{rig, rig_with, Rig};
use crate::support::unique;
use outbound_model::call::Reason;
use outbound_model::TaskStatus;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const OWNER: &str = "acme";

impl Rig {
    /// `POST /local/agents`: `queue` gets `agents` agents handling each call for `handle_seconds`.
    async fn set_agents(&self, queue: &str, agents: u32, handle_seconds: u64) -> (u16, Value) {
        let answer = self
            .api
            .http
            .post(format!("{}/local/agents", self.api.base))
            .json(&json!({"queueId": queue, "agents": agents, "handleSeconds": handle_seconds}))
            .send()
            .await
            .unwrap();
        (answer.status().as_u16(), answer.json().await.unwrap())
    }

    /// `GET /local/agents`: queue `queue` as the pool shows it.
    async fn agents_of(&self, queue: &str) -> Value {
        let answer = self
            .api
            .http
            .get(format!("{}/local/agents", self.api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let queues: Vec<Value> = answer.json().await.unwrap();
        queues
            .into_iter()
            .find(|q| q["queueId"] == queue)
            .unwrap_or(Value::Null)
    }

    /// Rounds of the dialing functions on the wall clock (the agents' handle time is real time),
    /// until every one of `tasks` is COMPLETED or `most` has passed.
    async fn complete_paced(&self, tasks: &[&str], most: Duration) {
        let started = Instant::now();
        loop {
            self.api.dial_round(&self.engine).await;
            self.clock.advance(Duration::from_secs(1));
            let mut done = true;
            for task in tasks {
                done &= self.api.stored_task(OWNER, task).await.status == TaskStatus::Completed;
            }
            if done {
                return;
            }
            assert!(
                started.elapsed() < most,
                "tasks {tasks:?} not COMPLETED within {most:?}"
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    async fn stat(&self, task: &str) -> Value {
        self.api
            .get(OWNER, &format!("/api/task/{task}/stat"))
            .await
            .ok()
            .clone()
    }
}

/// Contacts that all answer (a person, every time), `count` of them.
fn answering(count: usize) -> Vec<(String, Value)> {
    (0..count)
        .map(|n| (format!("+1212555{:04}", 1000 + n), json!({})))
        .collect()
}

async fn running_on(rig: &Rig, contacts: &[(String, Value)], pacing: Value) -> String {
    let contacts: Vec<(&str, Value)> = contacts
        .iter()
        .map(|(phone, fields)| (phone.as_str(), fields.clone()))
        .collect();
    rig.running(&contacts, pacing).await.0
}

/// D30: the pacing fields are checked on add and update, the refusal naming the field, and
/// nothing is created or changed then; they are kept and shown in detail; an agentless task
/// shows its defaults.
#[tokio::test]
async fn pacing_fields_are_checked_kept_and_shown() {
    let rig = rig().await;
    rig.api.seed_queues(OWNER, &["sales", "renewals"]).await;
    let (source, _) = rig.source(&[("+12125550100", json!({}))]).await;
    let add = |extra: Value| {
        let mut body = json!({"taskName": unique("Paced"), "dataSourceId": source});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        rig.api.post(OWNER, "/api/task/add", body)
    };
    let refusals = [
        (
            json!({"dialingMode": "FAST"}),
            "dialingMode must be one of AGENTLESS, PROGRESSIVE, PREDICTIVE",
        ),
        (json!({"dialingMode": 2}), "dialingMode must be a string"),
        (
            json!({"dialingMode": "PROGRESSIVE"}),
            "queueId is required when dialingMode is PROGRESSIVE",
        ),
        (
            json!({"dialingMode": "PREDICTIVE", "queueId": "support"}),
            "queueId support is not one of the tenant's queues",
        ),
        (
            json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "callsPerAgent": 3.5}),
            "callsPerAgent must be a number from 1 to 3",
        ),
        (
            json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "callsPerAgent": 0.99}),
            "callsPerAgent must be a number from 1 to 3",
        ),
        (
            json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "callsPerAgent": "2"}),
            "callsPerAgent must be a number",
        ),
        (
            json!({"dialingMode": "PREDICTIVE", "queueId": "sales", "abandonmentTarget": 10.5}),
            "abandonmentTarget must be a number from 0 to 10",
        ),
        (
            json!({"dialingMode": "PREDICTIVE", "queueId": "sales", "abandonmentTarget": -1}),
            "abandonmentTarget must be a number from 0 to 10",
        ),
    ];
    for (extra, message) in refusals {
        add(extra.clone()).await.err(400, message);
    }
    let list = rig.api.get(OWNER, "/api/task/list").await;
    assert_eq!(list.ok()["total"], 0, "no refused task was created");

    let plain = add(json!({})).await.ok().clone();
    assert_eq!(
        (
            &plain["dialingMode"],
            &plain["queueId"],
            &plain["callsPerAgent"],
            &plain["abandonmentTarget"],
            &plain["abandonCount"],
            &plain["abandonRate"],
        ),
        (
            &json!("AGENTLESS"),
            &Value::Null,
            &json!(1.0),
            &json!(3.0),
            &json!(0),
            &json!(0.0)
        )
    );
    let paced = add(json!({"dialingMode": "PREDICTIVE", "queueId": "sales",
            "abandonmentTarget": 2.5}))
    .await
    .ok()
    .clone();
    let id = paced["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (
            &paced["dialingMode"],
            &paced["queueId"],
            &paced["abandonmentTarget"]
        ),
        (&json!("PREDICTIVE"), &json!("sales"), &json!(2.5))
    );
    // Update: what is not sent is kept; a refusal changes nothing.
    rig.api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": id, "queueId": "billing"}),
        )
        .await
        .err(400, "queueId billing is not one of the tenant's queues");
    let updated = rig
        .api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": id, "dialingMode": "PROGRESSIVE", "callsPerAgent": 1.25,
                "queueId": "renewals"}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(
        (
            &updated["dialingMode"],
            &updated["queueId"],
            &updated["callsPerAgent"],
            &updated["abandonmentTarget"]
        ),
        (
            &json!("PROGRESSIVE"),
            &json!("renewals"),
            &json!(1.25),
            &json!(2.5)
        )
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{id}"))
        .await
        .ok()
        .clone();
    assert_eq!(detail["callsPerAgent"], 1.25);
    // Back to agentless: the queue no longer applies.
    let agentless = rig
        .api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": id, "dialingMode": "AGENTLESS"}),
        )
        .await
        .ok()
        .clone();
    assert_eq!(
        (&agentless["dialingMode"], &agentless["queueId"]),
        (&json!("AGENTLESS"), &Value::Null)
    );
    // Published, its pacing is fixed like the rest of its settings.
    rig.api
        .post(OWNER, "/api/task/publish", json!({"id": id}))
        .await
        .ok();
    rig.api
        .post(
            OWNER,
            "/api/task/update",
            json!({"id": id, "dialingMode": "PREDICTIVE", "queueId": "sales"}),
        )
        .await
        .err(405, "cannot update a task in state RUNNING");
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{id}"))
        .await
        .ok()
        .clone();
    assert_eq!(detail["dialingMode"], "AGENTLESS");
}

/// D30: `POST /local/agents` refuses a bad body naming the field, and sets nothing then.
#[tokio::test]
async fn the_agent_pool_refuses_bad_settings() {
    let rig = rig().await;
    for (body, message) in [
        (
            json!({"queueId": "", "agents": 1, "handleSeconds": 5}),
            "queueId must be a string of 1-128 characters",
        ),
        (
            json!({"queueId": "q", "agents": -1, "handleSeconds": 5}),
            "agents must be an integer from 0 to 1000",
        ),
        (
            json!({"queueId": "q", "agents": 2, "handleSeconds": 0}),
            "handleSeconds must be an integer from 1 to 3600",
        ),
        (
            json!({"queueId": "q"}),
            "queueId, agents and handleSeconds are required",
        ),
    ] {
        let answer = rig
            .api
            .http
            .post(format!("{}/local/agents", rig.api.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400);
        let body: Value = answer.json().await.unwrap();
        assert_eq!(body, json!({ "message": message }));
    }
    assert_eq!(rig.agents_of("q").await, Value::Null);
}

/// D30 progressive: a task's calls in flight never exceed its queue's free agents x
/// `callsPerAgent` (1.0: one call per agent, so nobody answers into silence), and two tasks on
/// one queue share its agents by D13's order: the higher priority finishes first.
#[tokio::test]
async fn progressive_calls_stay_within_the_free_agents() {
    let rig = rig().await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    let (status, _) = rig.set_agents("sales", 2, 2).await;
    assert_eq!(status, 200);
    let pacing = json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "priority": 1});
    let first = running_on(&rig, &answering(4), pacing.clone()).await;
    let mut later = pacing;
    later["priority"] = json!(5);
    let second = running_on(&rig, &answering(2), later).await;
    rig.complete_paced(&[&first, &second], Duration::from_secs(60))
        .await;
    let queue = rig.agents_of("sales").await;
    assert_eq!(
        (
            &queue["agents"],
            &queue["answered"],
            &queue["abandoned"],
            &queue["maxCallsInFlight"]
        ),
        (&json!(2), &json!(6), &json!(0), &json!(2)),
        "{queue}"
    );
    for (task, calls) in [(&first, 4), (&second, 2)] {
        let stat = rig.stat(task).await;
        assert_eq!(
            (
                &stat["successCount"],
                &stat["abandonCount"],
                &stat["abandonRate"]
            ),
            (&json!(calls), &json!(0), &json!(0.0))
        );
    }
    // The higher-priority task took the agents first: its calls were all placed before the
    // lower one's last.
    let first_calls = rig.local_calls(&first).await.len();
    let second_calls = rig.local_calls(&second).await.len();
    assert_eq!((first_calls, second_calls), (4, 2));
    let first_done = rig.api.stored_task(OWNER, &first).await.ended_at;
    let second_done = rig.api.stored_task(OWNER, &second).await.ended_at;
    assert!(first_done <= second_done, "{first_done:?} {second_done:?}");
}

/// D30: an answered call with no agent free is ABANDONED: no answer (3), retried like one,
/// counted in stat, detail, diagnostics' reasons and the contacts' export, and carried by its
/// `CallCompleted`. Three calls ringing for one agent (`callsPerAgent` 3): one agent takes one,
/// two are abandoned; their two retries ring together again, one abandoned once more, whose
/// third attempt reaches the agent.
#[tokio::test]
async fn an_answer_no_agent_takes_is_abandoned_and_retried() {
    let rig = rig().await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    rig.set_agents("sales", 1, 1).await;
    let task = running_on(
        &rig,
        &answering(3),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "sales", "callsPerAgent": 3,
            "callInterval": 10, "maxDialCount": 3}),
    )
    .await;
    // One tick: three calls for the one free agent.
    rig.api.dial_round(&rig.engine).await;
    let placed = rig.local_calls(&task).await.len();
    assert_eq!(placed, 3);
    // Their outcomes: one talks for the handle time, two are abandoned after 2 s.
    let started = Instant::now();
    while rig.api.stored_task(OWNER, &task).await.in_flight > 0 {
        assert!(started.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(300)).await;
        rig.api
            .drain(&rig.engine, outbound_local::inbox::DialInbox::CallEvents)
            .await;
    }
    let stat = rig.stat(&task).await;
    assert_eq!(
        (
            &stat["callCount"],
            &stat["successCount"],
            &stat["noAnswerCount"],
            &stat["abandonCount"],
            &stat["abandonRate"]
        ),
        (&json!(3), &json!(1), &json!(2), &json!(2), &json!(0.6667))
    );
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(diagnostics["reasons"]["ABANDONED"], 2);
    assert_eq!(diagnostics["reasons"]["ANSWERED"], 1);
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    let abandoned: Vec<_> = states
        .values()
        .filter(|state| state.last_reason == Some(Reason::Abandoned))
        .collect();
    assert_eq!(abandoned.len(), 2);
    for state in &abandoned {
        assert_eq!(
            (state.attempts, state.last_outcome, state.done),
            (1, 3, false)
        );
    }
    // The export names the reason, with the no-answer status (D7: 3).
    let rows = crate::compliance::export_rows(&rig.api, &task, "").await;
    let mut reasons: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| (row["lastReason"].as_str(), row["status"].as_str()))
        .collect();
    reasons.sort_unstable();
    assert_eq!(
        reasons,
        [("ABANDONED", "3"), ("ABANDONED", "3"), ("ANSWERED", "1")]
    );
    // Retried like no answer, after the interval.
    rig.clock.advance(Duration::from_secs(11));
    rig.complete_paced(&[&task], Duration::from_secs(60)).await;
    let stat = rig.stat(&task).await;
    assert_eq!(
        (
            &stat["callCount"],
            &stat["successCount"],
            &stat["abandonCount"]
        ),
        (&json!(6), &json!(3), &json!(3))
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await
        .ok()
        .clone();
    assert_eq!(
        (&detail["abandonCount"], &detail["abandonRate"]),
        (&json!(3), &json!(0.5))
    );
    // CallCompleted carries the reason, with no answer's outcome code.
    let abandoned_events: Vec<Value> = crate::events::committed(&rig.api)
        .await
        .into_values()
        .filter(|event| event["taskId"] == task.as_str() && event["reason"] == "ABANDONED")
        .collect();
    assert_eq!(abandoned_events.len(), 3);
    assert!(abandoned_events
        .iter()
        .all(|event| event["outcomeCode"] == 3));
}

/// D30 predictive: calls are placed ahead of the agents (more in flight than agents), and with
/// a target of 0 it paces progressively from the start (never more than one a free agent).
/// Calls ring for a second here, so unanswered ones are in flight beside the others.
#[tokio::test]
async fn predictive_dials_ahead_of_its_agents_within_its_target() {
    let rig = rig_with(|dialing| dialing.simulated.delay = Duration::from_secs(1)).await;
    rig.api.seed_queues(OWNER, &["sales", "careful"]).await;
    rig.set_agents("sales", 2, 1).await;
    rig.set_agents("careful", 2, 1).await;
    let mixed = |n: usize| -> Vec<(String, Value)> {
        // One in four answers: the others ring out.
        (0..n)
            .map(|i| {
                let script = if i % 4 == 0 { "ANSWERED" } else { "NO_ANSWER" };
                (
                    format!("+1312555{:04}", 1000 + i),
                    json!({"simulatedOutcomes": script}),
                )
            })
            .collect()
    };
    let ahead = running_on(
        &rig,
        &mixed(12),
        json!({"dialingMode": "PREDICTIVE", "queueId": "sales", "maxDialCount": 1}),
    )
    .await;
    let careful = running_on(
        &rig,
        &mixed(12),
        json!({"dialingMode": "PREDICTIVE", "queueId": "careful", "abandonmentTarget": 0,
            "maxDialCount": 1}),
    )
    .await;
    rig.complete_paced(&[&ahead, &careful], Duration::from_secs(60))
        .await;
    let sales = rig.agents_of("sales").await;
    let most = sales["maxCallsInFlight"].as_u64().unwrap();
    assert!(most > 2, "predictive dials ahead of its 2 agents: {sales}");
    let careful_queue = rig.agents_of("careful").await;
    assert_eq!(careful_queue["maxCallsInFlight"], 2, "{careful_queue}");
    assert_eq!(careful_queue["abandoned"], 0, "{careful_queue}");
    // What the pool saw is what the task counted.
    let stat = rig.stat(&ahead).await;
    assert_eq!(stat["abandonCount"], sales["abandoned"]);
    assert_eq!(stat["callCount"], 12);
}

/// D30: a queue with no agent available holds its task back: no call, and diagnostics say
/// `NO_AGENTS`; agents logging in let it dial at the next tick.
#[tokio::test]
async fn a_queue_without_agents_holds_its_tasks_back() {
    let rig = rig().await;
    rig.api.seed_queues(OWNER, &["night"]).await;
    rig.set_agents("night", 0, 5).await;
    let task = running_on(
        &rig,
        &answering(2),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "night"}),
    )
    .await;
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.local_calls(&task).await.is_empty());
    let diagnostics = rig.diagnostics(&task).await;
    assert_eq!(
        (&diagnostics["blockedBy"], &diagnostics["dialing"]),
        (&json!("NO_AGENTS"), &json!(false))
    );
    // The queue as the tick read it, for the task's page.
    let agents = &diagnostics["agents"];
    assert_eq!(
        (
            &agents["queueId"],
            &agents["available"],
            &agents["busy"],
            &agents["soonFree"]
        ),
        (&json!("night"), &json!(0), &json!(0), &json!(0))
    );
    assert!(agents["readTime"].is_string(), "{agents}");
    // An agentless task has no queue to show.
    let (agentless, _) = rig.running(&[("+12125550999", json!({}))], json!({})).await;
    assert_eq!(rig.diagnostics(&agentless).await["agents"], Value::Null);
    rig.set_agents("night", 1, 1).await;
    rig.complete_paced(&[&task], Duration::from_secs(30)).await;
    assert_eq!(rig.local_calls(&task).await.len(), 2);
    assert_eq!(rig.stat(&task).await["abandonCount"], 0);
}

/// D19, D30: diagnostics never show a held-back cause older than the facts it contradicts. A
/// task whose queue had no agent is marked `NO_AGENTS`; agents log in, and the next tick finds
/// them but gives the service's one place to a task before it, marking it held back by
/// `CAPACITY`. Its diagnostics used to say `NO_AGENTS` for the mark's two minutes while the
/// same answer showed 2 agents available: they say `CAPACITY` now, the mark still stored.
#[tokio::test]
async fn no_agents_is_not_shown_beside_agents_available() {
    use outbound_model::plan::Clock;
    let rig = rig_with(|dialing| {
        dialing.max_in_flight = 1;
        // The other task's call rings for the rest of the test.
        dialing.simulated.delay = Duration::from_secs(60);
    })
    .await;
    rig.api.seed_queues(OWNER, &["night"]).await;
    rig.set_agents("night", 0, 5).await;
    let paced = running_on(
        &rig,
        &answering(1),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "night", "priority": 5}),
    )
    .await;
    rig.api.dial_round(&rig.engine).await;
    let marked = rig.clock.now();
    let diagnostics = rig.diagnostics(&paced).await;
    assert_eq!(
        (
            &diagnostics["blockedBy"],
            &diagnostics["dialing"],
            &diagnostics["agents"]["available"]
        ),
        (&json!("NO_AGENTS"), &json!(false), &json!(0)),
        "{diagnostics}"
    );

    // Agents log in; a task of priority 1 takes the service's one place.
    rig.set_agents("night", 2, 5).await;
    let (first, _) = rig
        .running(&[("+12125550999", json!({}))], json!({"priority": 1}))
        .await;
    rig.clock.advance(Duration::from_secs(1));
    rig.api.dial_round(&rig.engine).await;
    assert_eq!(rig.local_calls(&first).await.len(), 1);
    assert!(rig.local_calls(&paced).await.is_empty());
    let stored = rig.api.stored_task(OWNER, &paced).await;
    assert_eq!(
        (stored.no_agents_at, stored.held_back_at),
        (Some(marked), Some(rig.clock.now())),
        "both marks stored"
    );
    let diagnostics = rig.diagnostics(&paced).await;
    assert_eq!(
        (
            &diagnostics["blockedBy"],
            &diagnostics["dialing"],
            &diagnostics["inFlight"],
            &diagnostics["agents"]["available"],
            &diagnostics["agents"]["busy"]
        ),
        (
            &json!("CAPACITY"),
            &json!(false),
            &json!(0),
            &json!(2),
            &json!(0)
        ),
        "{diagnostics}"
    );
}

/// D30: an agent-paced task gets one dial run a tick, at once, where an agentless one gets the
/// tick's runs spread over its minute: a later run would pace on a reading of the agents that
/// has passed, and replace abandoned calls with more of them. Instead the tick queues a pace
/// job at each later slot of the minute, which reads the queues anew and gives the agent-paced
/// tasks alone a run each.
#[tokio::test]
async fn an_agent_paced_task_gets_one_run_a_tick_and_is_paced_again_later() {
    let rig = rig_with(|dialing| dialing.runs_per_tick = 4).await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    rig.set_agents("sales", 5, 60).await;
    let agent_task = running_on(
        &rig,
        &answering(3),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "sales"}),
    )
    .await;
    running_on(&rig, &answering(3), json!({})).await;
    let report = rig.engine.tick().await.unwrap();
    assert_eq!(
        (report.dial_jobs, report.pace_jobs),
        (4 + 1, 3),
        "{report:?}"
    );
    let paced = rig.engine.pace().await.unwrap();
    assert_eq!(
        (
            paced.in_window,
            paced.dial_jobs,
            paced.pace_jobs,
            paced.reconcile_jobs
        ),
        (2, 1, 0, 0),
        "both tasks are shared among, the agent-paced one alone gets a run: {paced:?}"
    );
    // As the dialer function runs it, from the dial queue: the calls of the agent-paced task.
    rig.api
        .drain(&rig.engine, outbound_local::inbox::DialInbox::Jobs)
        .await;
    let pace = serde_json::to_string(&outbound_model::job::DialJob::Pace).unwrap();
    assert_eq!(pace, r#"{"kind":"pace"}"#);
    outbound_dialing::inbox::dial_message(&rig.engine, pace)
        .await
        .unwrap();
    rig.api
        .drain(&rig.engine, outbound_local::inbox::DialInbox::Jobs)
        .await;
    assert_eq!(
        rig.local_calls(&agent_task).await.len(),
        3,
        "each contact once"
    );
}

/// D30: an agent-paced run carries when it was paced; delivered after its pace slot (its
/// handler died and the queue sent it again), its budget is from a reading of the agents that
/// has passed and it places nothing, while the next pace's run places the calls. Before, such a
/// run topped its task up to the old budget: with agents gone meanwhile, calls rang for nobody
/// (the deterministic simulation's seed 950).
#[tokio::test]
async fn an_agent_paced_run_delivered_after_its_slot_places_nothing() {
    let (rig, task) = paced_and_queued().await;
    // A slot is 15 s: the run comes 16 s after its pace.
    rig.clock.advance(Duration::from_secs(16));
    rig.api
        .drain(&rig.engine, outbound_local::inbox::DialInbox::Jobs)
        .await;
    assert!(rig.local_calls(&task).await.is_empty());
    assert_eq!(rig.api.stored_task(OWNER, &task).await.in_flight, 0);
    // The next pace reads the agents anew; its run, on time, places the calls.
    the_next_pace_places_the_three(&rig, &task).await;
}

/// D30: an agent-paced run places a call only while the reading of the agents its budget was
/// paced by is the newest kept. A pass that read the queue since (none free) paces the task
/// anew, so the run that comes after it, within its slot, places nothing: its claim is given
/// back, no attempt, and the contacts wait for the next pace. Before, the run topped its task up
/// to the old budget and rang calls for no agent (the simulation's seed 3467, where a claim
/// answered a second late, after a reading of no agent free).
#[tokio::test]
async fn an_agent_paced_run_places_nothing_once_its_queue_is_read_anew() {
    let (rig, task) = paced_and_queued().await;
    // A second later, a pace reads the queue again: its agents have all gone.
    rig.clock.advance(Duration::from_secs(1));
    assert_eq!(rig.set_agents("sales", 0, 60).await.0, 200);
    let paced = rig.engine.pace().await.unwrap();
    assert_eq!((paced.dial_jobs, paced.no_agents), (0, 1), "{paced:?}");
    // The tick's run comes within its 15 s slot, after that reading.
    rig.clock.advance(Duration::from_secs(1));
    rig.api
        .drain(&rig.engine, outbound_local::inbox::DialInbox::Jobs)
        .await;
    assert!(rig.local_calls(&task).await.is_empty());
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!((stored.in_flight, stored.counters.calls), (0, 0));
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    assert!(
        states
            .values()
            .all(|state| state.attempts == 0 && state.in_call.is_none()),
        "{states:?}"
    );
    // The agents back, the next pace's run places the three calls.
    rig.clock.advance(Duration::from_secs(1));
    assert_eq!(rig.set_agents("sales", 5, 60).await.0, 200);
    the_next_pace_places_the_three(&rig, &task).await;
}

/// A progressive task of three answering contacts on queue `sales` (5 agents free), ticked once
/// with four runs a minute (15 s slots): its one run queued, not yet delivered.
async fn paced_and_queued() -> (Rig, String) {
    let rig = rig_with(|dialing| dialing.runs_per_tick = 4).await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    rig.set_agents("sales", 5, 60).await;
    let task = running_on(
        &rig,
        &answering(3),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "sales"}),
    )
    .await;
    let report = rig.engine.tick().await.unwrap();
    assert_eq!(report.dial_jobs, 1, "{report:?}");
    (rig, task)
}

/// A pace, and its run on time: the task's three calls placed.
async fn the_next_pace_places_the_three(rig: &Rig, task: &str) {
    let paced = rig.engine.pace().await.unwrap();
    assert_eq!(paced.dial_jobs, 1, "{paced:?}");
    rig.api
        .drain(&rig.engine, outbound_local::inbox::DialInbox::Jobs)
        .await;
    assert_eq!(rig.local_calls(task).await.len(), 3);
}

/// D30: a call an agent takes counts among its own task's calls talking, not ringing. The
/// agent event (the simulated provider's, as Connect's `CONNECTED_TO_AGENT`) counts it in the
/// task's `talking` once; an outcome that read the call before that event sends itself again
/// and counts it out; the agent event delivered again, or after the outcome, changes nothing.
#[tokio::test]
async fn a_call_an_agent_takes_is_counted_talking_once_until_its_outcome() {
    use outbound_local::inbox::DialInbox;
    let rig = rig().await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    // The call talks 5 s of the wall clock: its outcome waits in the queue meanwhile.
    assert_eq!(rig.set_agents("sales", 1, 5).await.0, 200);
    let pacing = json!({"dialingMode": "PROGRESSIVE", "queueId": "sales"});
    let (task, contacts) = rig.running(&[("+12125551000", json!({}))], pacing).await;
    let call_id = format!("sim-{task}-{}-1", contacts[0]);
    rig.engine.tick().await.unwrap();
    rig.api.drain(&rig.engine, DialInbox::Jobs).await;
    let read_before_the_agent = (rig.api.store.call_by_provider_id(&call_id).await)
        .unwrap()
        .expect("the placed call's record");
    assert!(!read_before_the_agent.with_agent);
    let talking = |task: outbound_model::Task| (task.in_flight, task.talking);
    assert_eq!(talking(rig.api.stored_task(OWNER, &task).await), (1, 0));

    assert_eq!(rig.api.drain(&rig.engine, DialInbox::CallEvents).await, 1);
    assert_eq!(talking(rig.api.stored_task(OWNER, &task).await), (1, 1));
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    assert!(states[&contacts[0]].with_agent);
    let again = json!({"simulatedAgent": {"callId": call_id}}).to_string();
    let before = rig.api.snapshot().await;
    DialInbox::CallEvents
        .handle(&rig.engine, again.clone())
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, before, "counted once");

    // The outcome as read before the agent took the call: refused on the mark, sent again with
    // it, and the call counted out.
    rig.engine
        .record(read_before_the_agent, &Reason::Answered.report(5))
        .await
        .unwrap();
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(talking(stored.clone()), (0, 0));
    assert_eq!(stored.counters.success, 1);
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    assert!(!states[&contacts[0]].with_agent);
    assert_eq!(states[&contacts[0]].in_call, None);

    // The provider's own outcome after it, and the agent event once more: nothing changes.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let before = rig.api.snapshot().await;
    assert_eq!(rig.api.drain(&rig.engine, DialInbox::CallEvents).await, 1);
    DialInbox::CallEvents
        .handle(&rig.engine, again)
        .await
        .unwrap();
    assert_eq!(rig.api.snapshot().await, before);
}

/// D30 with D13: a pace shares the service among every running task, as the minute's tick does,
/// and only then sends the agent-paced ones their runs. Four calls in flight for the service,
/// one agent-paced tenant (ten agents free) and one agentless: each has two at the minute and
/// again at every pace, where the pace used to share the four among the agent-paced alone.
#[tokio::test]
async fn a_pace_gives_an_agent_paced_task_its_share_of_the_service_not_all_of_it() {
    use outbound_model::job::DialJob;
    let rig = rig_with(|dialing| {
        dialing.runs_per_tick = 4;
        dialing.max_in_flight = 4;
    })
    .await;
    rig.api.seed_queues(OWNER, &["sales"]).await;
    rig.set_agents("sales", 10, 60).await;
    let paced = running_on(
        &rig,
        &answering(20),
        json!({"dialingMode": "PROGRESSIVE", "queueId": "sales"}),
    )
    .await;
    let other = "globex";
    let (source, _) = (rig.api)
        .source_of(
            other,
            &[
                ("+12125552000", json!({})),
                ("+12125552001", json!({})),
                ("+12125552002", json!({})),
            ],
        )
        .await;
    let agentless = rig
        .api
        .task(other, &unique("Task"), &source, json!({}))
        .await;
    let published = (rig.api)
        .post(other, "/api/task/publish", json!({"id": agentless}))
        .await;
    assert_eq!(published.ok()["status"], 1);
    let budgets = |bodies: Vec<String>| -> Vec<(String, u32)> {
        let mut budgets: Vec<(String, u32)> = bodies
            .iter()
            .filter_map(|body| match serde_json::from_str(body).unwrap() {
                DialJob::Dial {
                    task_id, budget, ..
                } => Some((task_id.as_str().to_owned(), budget)),
                _ => None,
            })
            .collect();
        budgets.sort();
        budgets.dedup();
        budgets
    };
    let queue = rig.api.resources.dial_queue_url.clone();
    rig.engine.tick().await.unwrap();
    let mut want = vec![(paced.clone(), 2), (agentless.clone(), 2)];
    want.sort();
    assert_eq!(budgets(rig.api.take_messages(&queue).await), want);
    rig.engine.pace().await.unwrap();
    assert_eq!(
        budgets(rig.api.take_messages(&queue).await),
        [(paced, 2)],
        "its share of the service, not the four"
    );
}

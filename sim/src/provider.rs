//! The provider of the simulation: it keeps its own log of every call it placed (the truth the
//! invariants are read against), honours a client token as Amazon Connect does (a start sent
//! again with one it knows answers the call already placed), ends each call after a duration
//! drawn from the seed, and sends its outcome event to the call-events queue. While faults are
//! on, the seed makes it fail a start before placing (in doubt), lose the answer of a start that
//! placed its call, throttle, and lose, delay or repeat outcome events.
//!
//! Agent-paced calls (D30) go to the agents of their queue ([`SimQueue`]): a call a person
//! answers takes an agent free at its answer for the queue's handle time (the agent event sent
//! at the answer, as Connect's `CONNECTED_TO_AGENT`), else it is abandoned 2 s later. Each
//! reading of the queues' agents is kept, for the pacing's invariants.

use crate::mailbox::Mailbox;
use crate::Seeded;
use outbound_adapters::telephony::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider};
use outbound_adapters::telephony::simulated::{SimulatedAgent, SimulatedEvent, SimulatedOutcome};
use outbound_model::call::{CallAttempt, CallReport, Reason};
use outbound_model::callback::CALLBACK_IN_MINUTES_RESULT;
use outbound_model::error::Error;
use outbound_model::pacing::QueueAgents;
use outbound_model::signature::SIGNATURE_ATTRIBUTE;
use outbound_model::Id;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// How often, in ten-thousandths, each of the provider's faults strikes while faults are on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProviderFaults {
    pub start_failed: u32,
    pub start_lost: u32,
    pub throttled: u32,
    pub event_lost: u32,
    pub event_late: u32,
    pub event_twice: u32,
    /// An outage: every start fails, in doubt.
    pub outage: bool,
    /// A reading of the queues' agents refused.
    pub agents_unread: u32,
}

tokio::task_local! {
    /// Whether the handler being run is a dial run: set by the world around each handler.
    pub static BY_RUN: bool;
}

/// How long a person who answered waits for an agent before hanging up (D30).
pub const ABANDON_AFTER_MS: i64 = 2_000;

/// One queue's agents, in virtual time.
#[derive(Clone, Debug)]
pub struct SimQueue {
    pub agents: u32,
    pub handle_ms: i64,
    /// When each agent on a call is free again.
    busy_until: Vec<i64>,
}

impl SimQueue {
    pub fn new(agents: u32, handle_ms: i64) -> Self {
        SimQueue {
            agents,
            handle_ms,
            busy_until: Vec::new(),
        }
    }

    fn busy_at(&self, at: i64) -> u32 {
        self.busy_until.iter().filter(|until| **until > at).count() as u32
    }
}

/// What the provider answered when the engine read a queue's agents.
#[derive(Clone, Copy, Debug)]
pub struct AgentsRead {
    pub at: i64,
    pub agents: QueueAgents,
}

/// How long before its agent is free an agent counts as soon free: by the time a call placed
/// now is answered.
const SOON_FREE_MS: i64 = 10_000;

/// A call the provider placed, as its own log keeps it.
#[derive(Clone, Debug)]
pub struct Placed {
    pub call_id: String,
    pub attempt: CallAttempt,
    /// The number dialled, in E.164 (D14).
    pub phone: String,
    pub caller_id: Option<String>,
    /// Virtual milliseconds when it was placed, and when it ends.
    pub at: i64,
    pub ends_at: i64,
    pub report: CallReport,
    /// When a person answered an agent-paced call (if one did), and whether an agent took it
    /// then.
    pub answered_at: Option<i64>,
    pub with_agent: bool,
    /// Placed by a dial run (a claim paced by the tick's last reading), not by a start in doubt
    /// sent again (D28), whose claim was paced before.
    pub by_run: bool,
}

impl Placed {
    /// The minutes after its end its flow asked to be called back in (D31), if it did.
    pub fn flow_callback_minutes(&self) -> Option<i64> {
        (self.report.reason == Reason::Answered)
            .then(|| self.report.results.get(CALLBACK_IN_MINUTES_RESULT))
            .flatten()
            .and_then(|minutes| minutes.parse().ok())
    }

    /// Whether the call is ringing at `at`: placed, neither taken by an agent nor ended.
    pub fn ringing_at(&self, at: i64) -> bool {
        let taken = self.with_agent && self.answered_at.is_some_and(|answer| answer <= at);
        self.at <= at && at < self.ends_at && !taken
    }
}

/// An attempt: task, contact, attempt.
pub type AttemptKey = (String, String, u32);

/// The key of attempt `attempt` of contact `contact` in task `task`.
pub fn attempt_key(task: &Id, contact: &Id, attempt: u32) -> AttemptKey {
    (
        task.as_str().to_owned(),
        contact.as_str().to_owned(),
        attempt,
    )
}

#[derive(Debug, Default)]
struct Calls {
    by_token: BTreeMap<String, usize>,
    placed: Vec<Placed>,
    /// The attempts a start of which was answered with an error that leaves it in doubt.
    in_doubt: BTreeSet<AttemptKey>,
    /// When a start of each attempt last reached the provider, whatever it answered.
    started: BTreeMap<AttemptKey, i64>,
    faults: Option<ProviderFaults>,
    queues: BTreeMap<String, SimQueue>,
    /// Each queue's readings, in the order read.
    reads: BTreeMap<String, Vec<AgentsRead>>,
    /// When each tick or pace began (it reads the tasks before it reads their queues' agents).
    passes: Vec<i64>,
}

/// The simulation's provider; cheap to clone.
#[derive(Clone)]
pub struct SimProvider {
    calls: Arc<Mutex<Calls>>,
    mailbox: Arc<Mutex<Mailbox>>,
    events_url: String,
    seeded: Seeded,
}

impl SimProvider {
    pub fn new(mailbox: Arc<Mutex<Mailbox>>, events_url: String, seeded: Seeded) -> Self {
        SimProvider {
            calls: Arc::default(),
            mailbox,
            events_url,
            seeded,
        }
    }

    /// Sets queue `id` to `queue`'s agents and handle time.
    pub fn set_queue(&self, id: &str, queue: SimQueue) {
        self.calls
            .lock()
            .unwrap()
            .queues
            .insert(id.to_owned(), queue);
    }

    /// Queue `id` to `agents` agents from now; those on a call keep it.
    pub fn set_agents(&self, id: &str, agents: u32) {
        if let Some(queue) = self.calls.lock().unwrap().queues.get_mut(id) {
            queue.agents = agents;
        }
    }

    /// A tick or a pace begins now: it reads the tasks, then their queues' agents.
    pub fn pass_begins(&self) {
        let now = self.seeded.now_ms();
        self.calls.lock().unwrap().passes.push(now);
    }

    /// When the pass that read agents at `read` read its tasks, at the latest: the earliest
    /// pass begun within the 10 s before it.
    pub fn tasks_read_before(&self, read: i64) -> i64 {
        let calls = self.calls.lock().unwrap();
        (calls.passes.iter().copied())
            .filter(|began| (read - 10_000..=read).contains(began))
            .min()
            .unwrap_or(read - 10_000)
    }

    /// Queue `id`'s agents now (0 for a queue never set).
    pub fn agents_of(&self, id: &str) -> u32 {
        (self.calls.lock().unwrap().queues.get(id)).map_or(0, |queue| queue.agents)
    }

    /// The last reading of queue `id`'s agents at or before `at`.
    pub fn last_read(&self, id: &str, at: i64) -> Option<AgentsRead> {
        let calls = self.calls.lock().unwrap();
        let reads = calls.reads.get(id)?;
        reads.iter().rev().find(|read| read.at <= at).copied()
    }

    pub fn set_faults(&self, faults: Option<ProviderFaults>) {
        self.calls.lock().unwrap().faults = faults;
    }

    /// Every call placed so far, in the order placed.
    pub fn placed(&self) -> Vec<Placed> {
        self.calls.lock().unwrap().placed.clone()
    }

    /// The attempts a start of which the service was left in doubt about (an error that says
    /// nothing of whether the call was placed), placed or not.
    pub fn in_doubt(&self) -> BTreeSet<AttemptKey> {
        self.calls.lock().unwrap().in_doubt.clone()
    }

    /// Whether a start of `attempt` reached the provider since its last claim at `claimed_at`
    /// (ever, when it has none): not when the run that claimed it died before its start, though
    /// an earlier claim of the same attempt, given back, was started (seed 1551 of 5,000: a
    /// start throttled, then the attempt claimed again by a run killed before it sent it).
    pub fn started_since(&self, attempt: &AttemptKey, claimed_at: Option<i64>) -> bool {
        let calls = self.calls.lock().unwrap();
        (calls.started.get(attempt)).is_some_and(|at| claimed_at.is_none_or(|claim| *at >= claim))
    }

    fn left_in_doubt(&self, request: &CallRequest, what: &str) -> PlaceError {
        self.seeded.note(what);
        let attempt = attempt_key(&request.task_id, &request.contact_id, request.attempt);
        self.calls.lock().unwrap().in_doubt.insert(attempt);
        PlaceError::Unknown(format!("simulated {what}").into())
    }

    /// The calls live at virtual time `now`.
    pub fn live(&self, now: i64) -> usize {
        let calls = self.calls.lock().unwrap();
        calls
            .placed
            .iter()
            .filter(|call| call.ends_at > now)
            .count()
    }

    /// A call's report, drawn: one answered call in six has its flow ask for a callback 1-10
    /// minutes after it ends (D31: `callbackInMinutes`).
    fn report(&self) -> CallReport {
        let (reason, duration) = match self.seeded.below(10) {
            0..=3 => ("ANSWERED", 5 + self.seeded.below(240)),
            4..=7 => ("NO_ANSWER", 0),
            8 => ("BUSY", 0),
            _ => ("VOICEMAIL", 0),
        };
        let results = if reason == "ANSWERED" && self.seeded.below(6) == 0 {
            let minutes = 1 + self.seeded.below(10);
            serde_json::json!({ CALLBACK_IN_MINUTES_RESULT: minutes.to_string() })
        } else {
            serde_json::json!({})
        };
        serde_json::from_value(serde_json::json!({
            "reason": reason, "duration": duration, "detail": reason, "results": results
        }))
        .expect("a report")
    }

    fn send_event(&self, call: &Placed, signature: Option<String>, delay_ms: i64) {
        let event = SimulatedEvent::SimulatedCall(SimulatedOutcome {
            call_id: call.call_id.clone(),
            report: call.report.clone(),
            attempt: Some(call.attempt.clone()),
            signature,
        });
        self.send_after(&event, delay_ms);
    }

    /// Queues `event` to be delivered `after_ms` from now at the earliest: the queue delays by
    /// whole seconds, rounded up, as an event never tells of what has not happened yet (rounded
    /// down, an outcome came up to a second before its call ended).
    fn send_after(&self, event: &SimulatedEvent, after_ms: i64) {
        let body = serde_json::to_string(event).expect("an event");
        let delay = u64::try_from((after_ms.max(0) + 999) / 1000).unwrap_or(0);
        (self.mailbox.lock().unwrap()).send(&self.events_url, &body, delay, &self.seeded);
    }
}

impl Provider for SimProvider {
    async fn place(&self, request: &CallRequest) -> Result<String, PlaceError> {
        let token = request.token();
        let faults = {
            let mut calls = self.calls.lock().unwrap();
            let attempt = attempt_key(&request.task_id, &request.contact_id, request.attempt);
            calls.started.insert(attempt, self.seeded.now_ms());
            if let Some(index) = calls.by_token.get(&token) {
                return Ok(calls.placed[*index].call_id.clone());
            }
            calls.faults
        };
        let draw = |rate: fn(&ProviderFaults) -> u32| {
            faults.is_some_and(|faults| self.seeded.chance(rate(&faults)))
        };
        if draw(|f| f.throttled) {
            self.seeded.note("provider throttled");
            return Err(PlaceError::Busy {
                kind: Busy::Rate,
                detail: "simulated throttling".into(),
            });
        }
        if faults.is_some_and(|faults| faults.outage) || draw(|f| f.start_failed) {
            return Err(self.left_in_doubt(request, "start failed"));
        }
        let now = self.seeded.now_ms();
        let mut report = self.report();
        // A person answers within 3-30 s; a call nobody answers rings 10-60 s.
        let ring = match report.reason {
            Reason::Answered => 3_000 + self.seeded.below(27_000) as i64,
            _ => 10_000 + self.seeded.below(50_000) as i64,
        };
        let call = {
            let mut calls = self.calls.lock().unwrap();
            let (mut answered_at, mut with_agent) = (None, false);
            let mut ends_at = now + ring + report.duration as i64 * 1000;
            if let Some(queue) = (request.queue_id.as_ref()).and_then(|q| calls.queues.get_mut(q)) {
                if report.reason == Reason::Answered {
                    let answer = now + ring;
                    answered_at = Some(answer);
                    if queue.busy_at(answer) < queue.agents {
                        queue.busy_until.push(answer + queue.handle_ms);
                        report.duration = (queue.handle_ms / 1000).max(1) as u64;
                        ends_at = answer + queue.handle_ms;
                        with_agent = true;
                    } else {
                        report = Reason::Abandoned.report(0);
                        ends_at = answer + ABANDON_AFTER_MS;
                    }
                }
            }
            let call = Placed {
                call_id: format!("call-{}", calls.placed.len() + 1),
                attempt: CallAttempt {
                    tenant: request.tenant.clone(),
                    task_id: request.task_id.clone(),
                    contact_id: request.contact_id.clone(),
                    attempt: request.attempt,
                },
                phone: request.to.clone(),
                caller_id: request.caller_id.clone(),
                at: now,
                ends_at,
                report,
                answered_at,
                with_agent,
                by_run: BY_RUN.try_with(|by_run| *by_run).unwrap_or(false)
                    && !(calls.in_doubt).contains(&attempt_key(
                        &request.task_id,
                        &request.contact_id,
                        request.attempt,
                    )),
            };
            let index = calls.placed.len();
            calls.placed.push(call.clone());
            calls.by_token.insert(token, index);
            call
        };
        self.seeded
            .note(&format!("placed {} {}", call.call_id, request.token()));
        let signature = request.attributes.get(SIGNATURE_ATTRIBUTE).cloned();
        let after = call.ends_at - now;
        if !draw(|f| f.event_lost) {
            let late = if draw(|f| f.event_late) { 600_000 } else { 0 };
            self.send_event(&call, signature.clone(), after + late);
            if draw(|f| f.event_twice) {
                self.send_event(&call, signature, after + 5_000);
            }
        }
        if let Some(answer) = call.answered_at.filter(|_| call.with_agent) {
            if !draw(|f| f.event_lost) {
                let taken = SimulatedEvent::SimulatedAgent(SimulatedAgent {
                    call_id: call.call_id.clone(),
                });
                self.send_after(&taken, answer - now);
            }
        }
        if draw(|f| f.start_lost) {
            return Err(self.left_in_doubt(request, "start answer lost"));
        }
        Ok(call.call_id)
    }

    async fn queue_agents(
        &self,
        queues: &[String],
    ) -> Result<BTreeMap<String, QueueAgents>, Error> {
        let now = self.seeded.now_ms();
        let mut calls = self.calls.lock().unwrap();
        if calls
            .faults
            .is_some_and(|faults| self.seeded.chance(faults.agents_unread))
        {
            self.seeded.note("agents unread");
            return Err(Error::unavailable("read the queues' agents", "simulated"));
        }
        let mut answer = BTreeMap::new();
        for id in queues {
            let agents = match calls.queues.get_mut(id) {
                Some(queue) => {
                    queue.busy_until.retain(|until| *until > now);
                    let busy = queue.busy_at(now);
                    let soon = (queue.busy_until.iter())
                        .filter(|until| **until <= now + SOON_FREE_MS)
                        .count() as u32;
                    QueueAgents {
                        available: queue.agents.saturating_sub(busy),
                        on_contact: busy,
                        soon_free: soon,
                    }
                }
                None => QueueAgents::default(),
            };
            (calls.reads.entry(id.clone()).or_default()).push(AgentsRead { at: now, agents });
            answer.insert(id.clone(), agents);
        }
        self.seeded.note(&format!("agents read {answer:?}"));
        Ok(answer)
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, Error> {
        let now = self.seeded.now_ms();
        let calls = self.calls.lock().unwrap();
        Ok(
            match calls.placed.iter().find(|call| call.call_id == call_id) {
                Some(call) if call.ends_at <= now => CallStatus::Ended(call.report.clone()),
                Some(_) => CallStatus::InProgress,
                None => CallStatus::Unknown,
            },
        )
    }
}

//! The simulated telephony provider, the local default: each call's outcome is decided from the
//! number called (given in E.164, D14, drawn by its national digits) and the attempt (so a run
//! can be repeated), in a configurable mix, and reported a moment later on the call-events
//! queue, where the same handler records it as it records Amazon Connect's events. Like Connect
//! it keeps the calls it placed: a start re-sent with the same client token answers the call
//! already placed (D28), and reconcile can ask what became of a call. Answered calls of
//! agent-paced tasks go to its agents ([`super::agents`], D30). It plays the hostile provider too
//! (D28): a contact's script, or the configured rates, make a start fail, get lost or throttled,
//! and an outcome come late or twice.

use super::agents::{AgentPool, Answered, ABANDON_AFTER};
use super::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider};
use super::settings::{FaultRates, SimulatedSettings};
use crate::queue::{Message, Queue};
use crate::store::keys::fnv1a_64;
use outbound_model::call::{CallAttempt, CallReport, Outcome, Reason};
use outbound_model::error::{Cause, Error};
use outbound_model::numbers::national_number;
use outbound_model::pacing::QueueAgents;
use outbound_model::signature::SIGNATURE_ATTRIBUTE;
use outbound_model::telephony::{parse_simulated_results, Results};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The message the simulated provider sends when a call ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedOutcome {
    pub call_id: String,
    pub report: CallReport,
    /// The attempt the call was, as a Connect contact carries it in its attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<CallAttempt>,
    /// The signature the call's attributes carried beside it (D29).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The message the simulated provider sends when an agent takes a call (D30), as Connect's
/// `CONNECTED_TO_AGENT` contact event tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedAgent {
    pub call_id: String,
}

/// A simulated provider's message on the call-events queue: an outcome,
/// `{"simulatedCall": {...}}`, or a call an agent took, `{"simulatedAgent": {...}}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SimulatedEvent {
    SimulatedCall(SimulatedOutcome),
    SimulatedAgent(SimulatedAgent),
}

impl Message for SimulatedEvent {
    const SEND: &'static str = "send simulated outcome";
    const DECODE: &'static str = "decode call event";
    const QUEUE_URL: &'static str = "CALL_EVENTS_QUEUE_URL";
}

/// What the simulated provider does with one start (D28): an entry of a contact's
/// `simulatedOutcomes`, or a draw of the configured rates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `START_FAILED`: a server error; no call is placed.
    StartFailed,
    /// `THROTTLED`: refused for rate; not an attempt.
    Throttled,
    /// `START_LOST+R`: the call is placed, the start's answer is lost.
    StartLost,
    /// `EVENT_LATE+R`: the outcome arrives only after the reconcile check.
    EventLate,
    /// `EVENT_TWICE+R`: the outcome is delivered twice.
    EventTwice,
}

impl Fault {
    /// The entry's name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::StartFailed => "START_FAILED",
            Fault::Throttled => "THROTTLED",
            Fault::StartLost => "START_LOST",
            Fault::EventLate => "EVENT_LATE",
            Fault::EventTwice => "EVENT_TWICE",
        }
    }

    /// Whether the start places a call.
    pub fn places(self) -> bool {
        matches!(
            self,
            Fault::StartLost | Fault::EventLate | Fault::EventTwice
        )
    }

    /// One of `rates` for a start whose draw is `draw` (0..10,000), if any.
    fn drawn(rates: &FaultRates, draw: u32) -> Option<Fault> {
        let mut edge = 0;
        for (rate, fault) in [
            (rates.start_failed, Fault::StartFailed),
            (rates.start_lost, Fault::StartLost),
            (rates.event_late, Fault::EventLate),
            (rates.event_twice, Fault::EventTwice),
            (rates.throttled, Fault::Throttled),
        ] {
            edge += rate;
            if draw < edge {
                return Some(fault);
            }
        }
        None
    }
}

/// One entry of a contact's `simulatedOutcomes` (D18, D28): a reason, a fault, or a fault joined
/// to the reason its call ends with (`START_LOST+ANSWERED`). `None` for anything else.
pub fn parse_entry(raw: &str) -> Option<(Option<Fault>, Option<Reason>)> {
    let raw = raw.trim();
    let (fault, reason) = match raw.split_once('+') {
        Some((fault, reason)) => (fault.trim(), Some(Reason::parse(reason)?)),
        None => match Reason::parse(raw) {
            Some(reason) => return Some((None, Some(reason))),
            None => (raw, None),
        },
    };
    let fault = [
        Fault::StartFailed,
        Fault::Throttled,
        Fault::StartLost,
        Fault::EventLate,
        Fault::EventTwice,
    ]
    .into_iter()
    .find(|f| f.name() == fault)?;
    // A fault that places a call names how it ends; one that places none names nothing.
    (fault.places() == reason.is_some()).then_some((Some(fault), reason))
}

/// Calls placed that the simulated provider keeps, like Connect's contacts (oldest go first).
const KEPT_CALLS: usize = 100_000;

/// Called with each call the simulated provider places, once, and how it is to end (the local
/// stack's `/local/calls`, the simulation's log).
pub type OnPlaced = Arc<dyn Fn(&CallRequest, &CallReport) + Send + Sync>;

/// One call placed.
#[derive(Clone, Debug)]
struct Placed {
    call_id: String,
    report: CallReport,
    ends_at: Instant,
}

/// What the simulated provider remembers: its calls by client token, and how many entries of
/// each contact's script its starts have read.
#[derive(Default)]
struct Memory {
    calls: HashMap<String, Placed>,
    order: VecDeque<String>,
    starts: HashMap<(String, String), usize>,
}

/// Places pretend calls and reports their outcomes through SQS.
#[derive(Clone)]
pub struct SimulatedProvider {
    events: Queue<SimulatedEvent>,
    settings: SimulatedSettings,
    memory: Arc<Mutex<Memory>>,
    on_placed: Option<OnPlaced>,
    /// Set once the configured fault rates stop: scripted faults still happen.
    calm: Arc<AtomicBool>,
    /// The agents answered calls of agent-paced tasks go to (D30).
    agents: AgentPool,
}

impl std::fmt::Debug for SimulatedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulatedProvider")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl SimulatedProvider {
    /// Reports outcomes to `events`, the call-events queue.
    pub fn new(events: Queue<SimulatedEvent>, settings: SimulatedSettings) -> Self {
        SimulatedProvider {
            events,
            settings,
            memory: Arc::default(),
            on_placed: None,
            calm: Arc::default(),
            agents: AgentPool::default(),
        }
    }

    /// The same provider, its agent-paced calls going to `pool`'s agents (D30).
    pub fn with_agents(mut self, pool: AgentPool) -> Self {
        self.agents = pool;
        self
    }

    /// An answered call of an agent-paced task goes to a free agent of its queue and lasts the
    /// agent's handle time, else it is abandoned (D30): the report it ends with, how long after
    /// placing it ends, and whether an agent takes it (at its answer, `ring` after placing).
    /// Other calls end as decided, after the outcome delay.
    fn through_agents(
        &self,
        call: &CallRequest,
        report: CallReport,
    ) -> (CallReport, Duration, bool) {
        let ring = self.settings.delay;
        let Some(queue) = &call.queue_id else {
            return (report, ring, false);
        };
        let answers = report.reason == Reason::Answered;
        match self.agents.place(queue, Instant::now(), ring, answers) {
            Some(Answered::Agent { talk }) => {
                let report = CallReport {
                    duration: talk.as_secs().max(1),
                    ..report
                };
                (report, ring + talk, true)
            }
            Some(Answered::Abandoned) => (Reason::Abandoned.report(0), ring + ABANDON_AFTER, false),
            None => (report, ring, false),
        }
    }

    /// Stops drawing faults from the configured rates (a simulation's calm after its storm);
    /// the contacts' scripted faults still happen.
    pub fn calm(&self) {
        self.calm.store(true, Ordering::SeqCst);
    }

    /// The same provider, telling `hook` of each call it places, once.
    pub fn on_placed(mut self, hook: OnPlaced) -> Self {
        self.on_placed = Some(hook);
        self
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The call already placed under `token`, or, for a new start, what it does: its fault and
    /// the report of the call it places. Each start, a re-send of a token already placed
    /// included, takes the next entry of the contact's script: a re-send is turned away when its
    /// entry is `THROTTLED` (Connect throttles before it looks at the token), and otherwise
    /// answered with the call placed, whatever its entry says.
    fn start(
        &self,
        call: &CallRequest,
        token: &str,
    ) -> Result<String, (Option<Fault>, CallReport)> {
        let mut memory = self.memory();
        let placed = memory.calls.get(token).map(|placed| placed.call_id.clone());
        let key = (
            call.task_id.as_str().to_owned(),
            call.contact_id.as_str().to_owned(),
        );
        let entry = {
            let read = memory.starts.entry(key).or_default();
            *read += 1;
            *read - 1
        };
        drop(memory);
        let scripted = call
            .script
            .as_deref()
            .and_then(|script| script.split(',').nth(entry))
            .and_then(parse_entry);
        let (fault, reason) = match scripted {
            Some(scripted) => scripted,
            // Drawn faults are the first start's alone: a re-send answers the call placed.
            None if self.calm.load(Ordering::SeqCst) || placed.is_some() => (None, None),
            None => {
                let draw = fnv1a_64(&format!("{}#{token}#{entry}", self.settings.seed)) % 10_000;
                (Fault::drawn(&self.settings.faults, draw as u32), None)
            }
        };
        if let Some(call_id) = placed {
            if fault != Some(Fault::Throttled) {
                return Ok(call_id);
            }
        }
        // Drawn by the number's digits in its country, so a number written with `+` or without
        // it (read in a default country) gets the same outcomes.
        let number = national_number(&call.to).unwrap_or_else(|| call.to.clone());
        let mut report = decide(&self.settings, &number, call.attempt, None);
        if let Some(reason) = reason {
            report = reason.report(report.duration.max(1));
        }
        report.results = flow_results(&report, call.simulated_results.as_deref());
        Err((fault, report))
    }

    /// Keeps a placed call under its token, and tells the hook.
    fn keep(&self, call: &CallRequest, token: String, placed: Placed) {
        let mut memory = self.memory();
        if memory.order.len() == KEPT_CALLS {
            if let Some(oldest) = memory.order.pop_front() {
                memory.calls.remove(&oldest);
            }
        }
        memory.order.push_back(token.clone());
        memory.calls.insert(token, placed.clone());
        drop(memory);
        if let Some(hook) = &self.on_placed {
            hook(call, &placed.report);
        }
    }
}

/// The outcome of attempt `attempt` to `phone`: the reason `script` names for that attempt
/// (`BUSY,BUSY,ANSWERED`: one per attempt, D18), else the same every time, and over many
/// numbers in the proportions of the mix (failures half busy, half errors; no answers half
/// unanswered, half voicemail). Answered calls last 1 to `max_talk_seconds` seconds.
pub fn decide(
    settings: &SimulatedSettings,
    phone: &str,
    attempt: u32,
    script: Option<&str>,
) -> CallReport {
    let mix = settings.mix;
    let total = u64::from(mix.success + mix.failed + mix.no_answer).max(1);
    let hash = fnv1a_64(&format!("{phone}#{attempt}"));
    let duration = 1 + (hash / total) % settings.max_talk_seconds.max(1);
    let scripted = script
        .and_then(|script| script.split(',').nth(attempt.saturating_sub(1) as usize))
        .and_then(Reason::parse);
    if let Some(reason) = scripted {
        return reason.report(duration);
    }
    let pick = hash % total;
    let half = (hash >> 32) & 1 == 0;
    let reason = if pick < u64::from(mix.success) {
        Reason::Answered
    } else if pick < u64::from(mix.success + mix.failed) {
        if half {
            Reason::Busy
        } else {
            Reason::Error
        }
    } else if half {
        Reason::NoAnswer
    } else {
        Reason::Voicemail
    };
    reason.report(duration)
}

/// What the simulated flow sets on a call that ended with `report`: the pairs of the contact's
/// `simulatedResults` (D22) when it was answered, nothing otherwise. The outcome keeps the
/// task's `resultAttributes` among them.
pub fn flow_results(report: &CallReport, simulated_results: Option<&str>) -> Results {
    match simulated_results {
        Some(raw) if report.outcome() == Outcome::Success => parse_simulated_results(raw)
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        _ => Results::new(),
    }
}

/// The error a lost or failed start answers, as Connect's `InternalServiceException` does.
fn server_error(fault: Fault) -> PlaceError {
    PlaceError::Unknown(Cause::from(format!("simulated {}", fault.name())))
}

impl Provider for SimulatedProvider {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        let token = call.token();
        let (fault, report) = match self.start(call, &token) {
            // A re-send of a call already placed: that call, and no second one (D28).
            Ok(call_id) => return Ok(call_id),
            Err(start) => start,
        };
        match fault {
            Some(Fault::StartFailed) => return Err(server_error(Fault::StartFailed)),
            Some(Fault::Throttled) => {
                return Err(PlaceError::Busy {
                    kind: Busy::Rate,
                    detail: "simulated THROTTLED".into(),
                })
            }
            _ => {}
        }
        let (report, ends_after, with_agent) = self.through_agents(call, report);
        let call_id = format!("sim-{token}");
        let event = SimulatedEvent::SimulatedCall(SimulatedOutcome {
            call_id: call_id.clone(),
            report: report.clone(),
            attempt: Some(CallAttempt {
                tenant: call.tenant.clone(),
                task_id: call.task_id.clone(),
                contact_id: call.contact_id.clone(),
                attempt: call.attempt,
            }),
            signature: call.attributes.get(SIGNATURE_ATTRIBUTE).cloned(),
        });
        let delay = match fault {
            Some(Fault::EventLate) => self.settings.late_by.max(ends_after),
            _ => ends_after,
        };
        let seconds = u32::try_from(delay.as_secs()).unwrap_or(900).min(900);
        // Kept before its outcome is sent, as Connect has the contact once it answers: a start
        // dropped in between (a run killed at this await) leaves a call the provider knows, whose
        // outcome reconcile asks for, never one a re-send would place a second time.
        let placed = Placed {
            call_id: call_id.clone(),
            report,
            ends_at: Instant::now() + ends_after.min(Duration::from_secs(900)),
        };
        self.keep(call, token.clone(), placed);
        if let Err(error) = self.events.send(&event, seconds).await {
            // The call is placed and its outcome not on its way: the start's answer is unknown
            // (D28), and reconcile asks the provider for the outcome it keeps.
            return Err(PlaceError::Unknown(Cause::from(error.to_string())));
        }
        if with_agent {
            // As Connect's CONNECTED_TO_AGENT event, at the answer. Lost, the call counts as
            // ringing until it ends: its task paces fewer calls, never more.
            let taken = SimulatedEvent::SimulatedAgent(SimulatedAgent {
                call_id: call_id.clone(),
            });
            let at = u32::try_from(self.settings.delay.as_secs())
                .unwrap_or(900)
                .min(900);
            if let Err(error) = self.events.send(&taken, at).await {
                tracing::warn!(%error, "a simulated call's agent event was not sent");
            }
        }
        if fault == Some(Fault::EventTwice) {
            if let Err(error) = self.events.send(&event, seconds).await {
                tracing::warn!(%error, "the second delivery of a simulated outcome was not sent");
            }
        }
        match fault {
            Some(Fault::StartLost) => Err(server_error(Fault::StartLost)),
            _ => Ok(call_id),
        }
    }

    async fn queue_agents(
        &self,
        queues: &[String],
    ) -> Result<BTreeMap<String, QueueAgents>, Error> {
        // Soon free: done by the time a call placed now is answered.
        Ok(self
            .agents
            .agents(queues, Instant::now(), self.settings.delay))
    }

    /// The simulation stands in for Amazon Connect: a call must fit Connect's bounds too.
    fn attributes_fit(
        &self,
        attributes: &std::collections::BTreeMap<String, String>,
        reserved: usize,
    ) -> bool {
        super::connect::attributes_fit(attributes, reserved)
    }

    /// What became of a call it placed, as Connect describes a contact: in progress until it
    /// ends, then its outcome and what its flow set. A call it does not keep (placed by
    /// another process, or long ago) is unknown: its lost outcome stays lost, and the engine
    /// records it as failed "no outcome" (D13).
    async fn describe(&self, call_id: &str) -> Result<CallStatus, Error> {
        let Some(token) = call_id.strip_prefix("sim-") else {
            return Ok(CallStatus::Unknown);
        };
        Ok(match self.memory().calls.get(token) {
            Some(placed) if Instant::now() < placed.ends_at => CallStatus::InProgress,
            Some(placed) => CallStatus::Ended(placed.report.clone()),
            None => CallStatus::Unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::settings::OutcomeMix;
    use super::*;

    #[test]
    fn outcomes_repeat_and_follow_the_mix() {
        let settings = SimulatedSettings::default();
        let mut counts = [0u32; 3];
        for n in 0..3000 {
            let phone = format!("+86138{n:08}");
            let report = decide(&settings, &phone, 1, None);
            assert_eq!(report, decide(&settings, &phone, 1, None), "deterministic");
            counts[usize::from(report.outcome().code() - 1)] += 1;
            match report.outcome() {
                Outcome::Success => assert!((1..=180).contains(&report.duration)),
                _ => assert_eq!(report.duration, 0),
            }
        }
        // 60 / 20 / 20 of 3,000 calls, within a few percent.
        assert!((1700..=1900).contains(&counts[0]), "{counts:?}");
        assert!((500..=700).contains(&counts[1]), "{counts:?}");
        assert!((500..=700).contains(&counts[2]), "{counts:?}");
    }

    #[test]
    fn the_simulated_flow_sets_its_results_on_answered_calls_only() {
        let raw = Some("outcome=confirmed;amount=12.50");
        let answered = flow_results(&Reason::Answered.report(5), raw);
        assert_eq!(
            answered.into_iter().collect::<Vec<_>>(),
            [
                ("amount".to_owned(), "12.50".to_owned()),
                ("outcome".to_owned(), "confirmed".to_owned())
            ]
        );
        for reason in [Reason::NoAnswer, Reason::Voicemail, Reason::Busy] {
            assert!(
                flow_results(&reason.report(0), raw).is_empty(),
                "{reason:?}"
            );
        }
        assert!(flow_results(&Reason::Answered.report(5), None).is_empty());
    }

    #[test]
    fn a_one_sided_mix_gives_one_outcome() {
        let settings = SimulatedSettings {
            mix: OutcomeMix {
                success: 0,
                failed: 0,
                no_answer: 1,
            },
            ..SimulatedSettings::default()
        };
        for n in 0..50 {
            let report = decide(&settings, &format!("555{n:04}"), n, None);
            assert_eq!(report.outcome(), Outcome::NoAnswer);
        }
    }

    #[test]
    fn a_script_names_each_attempt_and_the_mix_decides_past_its_end() {
        let settings = SimulatedSettings::default();
        let script = Some("BUSY, VOICEMAIL,ANSWERED");
        let reasons: Vec<Reason> = (1..=3)
            .map(|attempt| decide(&settings, "5550100", attempt, script).reason)
            .collect();
        assert_eq!(reasons, [Reason::Busy, Reason::Voicemail, Reason::Answered]);
        assert_eq!(
            decide(&settings, "5550100", 4, script),
            decide(&settings, "5550100", 4, None)
        );
        // Every reason of the mix shows up over many numbers.
        let mut seen = std::collections::HashSet::new();
        for n in 0..400 {
            seen.insert(decide(&settings, &format!("555{n:04}"), 1, None).reason);
        }
        let mut seen: Vec<Reason> = seen.into_iter().collect();
        seen.sort();
        assert_eq!(
            seen,
            [
                Reason::Answered,
                Reason::NoAnswer,
                Reason::Voicemail,
                Reason::Busy,
                Reason::Error
            ]
        );
    }

    #[test]
    fn script_entries_name_a_reason_a_fault_or_a_fault_and_how_its_call_ends() {
        assert_eq!(parse_entry("BUSY"), Some((None, Some(Reason::Busy))));
        assert_eq!(
            parse_entry(" START_FAILED "),
            Some((Some(Fault::StartFailed), None))
        );
        assert_eq!(
            parse_entry("THROTTLED"),
            Some((Some(Fault::Throttled), None))
        );
        assert_eq!(
            parse_entry("START_LOST+ANSWERED"),
            Some((Some(Fault::StartLost), Some(Reason::Answered)))
        );
        assert_eq!(
            parse_entry("EVENT_LATE+NO_ANSWER"),
            Some((Some(Fault::EventLate), Some(Reason::NoAnswer)))
        );
        assert_eq!(
            parse_entry("EVENT_TWICE+BUSY"),
            Some((Some(Fault::EventTwice), Some(Reason::Busy)))
        );
        // A fault that places a call names how it ends; one that places none names nothing.
        for bad in [
            "START_LOST",
            "START_FAILED+ANSWERED",
            "EVENT_LATE+HUNG",
            "LOST",
            "",
        ] {
            assert_eq!(parse_entry(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn fault_rates_draw_each_fault_in_its_share() {
        let rates = FaultRates {
            start_failed: 500,
            start_lost: 500,
            event_late: 500,
            event_twice: 500,
            throttled: 1000,
        };
        let mut counts = std::collections::HashMap::new();
        for draw in 0..10_000 {
            *counts.entry(Fault::drawn(&rates, draw)).or_insert(0) += 1;
        }
        assert_eq!(counts[&Some(Fault::StartFailed)], 500);
        assert_eq!(counts[&Some(Fault::Throttled)], 1000);
        assert_eq!(counts[&None], 7000);
        assert_eq!(Fault::drawn(&FaultRates::default(), 0), None);
    }
}

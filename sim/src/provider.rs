//! The provider of the simulation: it keeps its own log of every call it placed (the truth the
//! invariants are read against), honours a client token as Amazon Connect does (a start sent
//! again with one it knows answers the call already placed), ends each call after a duration
//! drawn from the seed, and sends its outcome event to the call-events queue. While faults are
//! on, the seed makes it fail a start before placing (in doubt), lose the answer of a start that
//! placed its call, throttle, and lose, delay or repeat outcome events.

use crate::mailbox::Mailbox;
use crate::Seeded;
use outbound_adapters::telephony::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider};
use outbound_adapters::telephony::simulated::{SimulatedEvent, SimulatedOutcome};
use outbound_model::call::{CallAttempt, CallReport};
use outbound_model::error::Error;
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
}

/// A call the provider placed, as its own log keeps it.
#[derive(Clone, Debug)]
pub struct Placed {
    pub call_id: String,
    pub attempt: CallAttempt,
    /// The number dialled, as the contact has it.
    pub phone: String,
    pub caller_id: Option<String>,
    /// Virtual milliseconds when it was placed, and when it ends.
    pub at: i64,
    pub ends_at: i64,
    pub report: CallReport,
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
    faults: Option<ProviderFaults>,
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

    fn report(&self) -> CallReport {
        let (reason, duration) = match self.seeded.below(10) {
            0..=3 => ("ANSWERED", 5 + self.seeded.below(240)),
            4..=7 => ("NO_ANSWER", 0),
            8 => ("BUSY", 0),
            _ => ("VOICEMAIL", 0),
        };
        serde_json::from_value(
            serde_json::json!({"reason": reason, "duration": duration, "detail": reason}),
        )
        .expect("a report")
    }

    fn send_event(&self, call: &Placed, signature: Option<String>, delay_ms: i64) {
        let event = SimulatedEvent::SimulatedCall(SimulatedOutcome {
            call_id: call.call_id.clone(),
            report: call.report.clone(),
            attempt: Some(call.attempt.clone()),
            signature,
        });
        let body = serde_json::to_string(&event).expect("an event");
        let delay = u64::try_from(delay_ms.max(0) / 1000).unwrap_or(0);
        (self.mailbox.lock().unwrap()).send(&self.events_url, &body, delay, &self.seeded);
    }
}

impl Provider for SimProvider {
    async fn place(&self, request: &CallRequest) -> Result<String, PlaceError> {
        let token = request.token();
        let faults = {
            let calls = self.calls.lock().unwrap();
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
        let report = self.report();
        let ring = 3_000 + self.seeded.below(27_000) as i64;
        let call = {
            let mut calls = self.calls.lock().unwrap();
            let call = Placed {
                call_id: format!("call-{}", calls.placed.len() + 1),
                attempt: CallAttempt {
                    tenant: request.tenant.clone(),
                    task_id: request.task_id.clone(),
                    contact_id: request.contact_id.clone(),
                    attempt: request.attempt,
                },
                phone: request.phone.as_str().to_owned(),
                caller_id: request.caller_id.clone(),
                at: now,
                ends_at: now + ring + report.duration as i64 * 1000,
                report,
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
        if draw(|f| f.start_lost) {
            return Err(self.left_in_doubt(request, "start answer lost"));
        }
        Ok(call.call_id)
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

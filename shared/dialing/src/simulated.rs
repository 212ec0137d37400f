//! The simulated telephony provider, the local default: each call's outcome is decided from the
//! phone number and the attempt (so a run can be repeated), in a configurable mix, and reported
//! a moment later on the call-events queue, where the same handler records it as it records
//! Amazon Connect's events.

use super::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider};
use outbound_adapters::queue::{Message, Queue};
use outbound_adapters::store::keys::fnv1a_64;
use outbound_app::config::dialing::SimulatedSettings;
use outbound_model::call::{CallAttempt, CallReport, Outcome, Reason};
use outbound_model::error::Error;
use outbound_model::telephony::{parse_simulated_results, Results};
use serde::{Deserialize, Serialize};

/// The message the simulated provider sends when a call ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedOutcome {
    pub call_id: String,
    pub report: CallReport,
    /// The attempt the call was, as a Connect contact carries it in its attributes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<CallAttempt>,
}

/// The body of a simulated outcome on the call-events queue: `{"simulatedCall": {...}}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulatedEvent {
    pub simulated_call: SimulatedOutcome,
}

impl Message for SimulatedEvent {
    const SEND: &'static str = "send simulated outcome";
    const DECODE: &'static str = "decode call event";
    const QUEUE_URL: &'static str = "CALL_EVENTS_QUEUE_URL";
}

/// Places pretend calls and reports their outcomes through SQS.
#[derive(Clone, Debug)]
pub struct SimulatedProvider {
    events: Queue<SimulatedEvent>,
    settings: SimulatedSettings,
}

impl SimulatedProvider {
    /// Reports outcomes to `events`, the call-events queue.
    pub fn new(events: Queue<SimulatedEvent>, settings: SimulatedSettings) -> Self {
        SimulatedProvider { events, settings }
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
        Some(raw) if report.outcome == Outcome::Success => parse_simulated_results(raw)
            .into_iter()
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect(),
        _ => Results::new(),
    }
}

impl Provider for SimulatedProvider {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        let call_id = format!("sim-{}", call.token());
        let mut report = decide(
            &self.settings,
            call.phone.as_str(),
            call.attempt,
            call.script.as_deref(),
        );
        report.results = flow_results(&report, call.simulated_results.as_deref());
        let event = SimulatedEvent {
            simulated_call: SimulatedOutcome {
                call_id: call_id.clone(),
                report,
                attempt: Some(CallAttempt {
                    tenant: call.tenant.clone(),
                    task_id: call.task_id.clone(),
                    contact_id: call.contact_id.clone(),
                    attempt: call.attempt,
                }),
            },
        };
        let delay = u32::try_from(self.settings.delay.as_secs()).unwrap_or(900);
        self.events
            .send(&event, delay)
            .await
            // Nothing was "dialled" when the outcome cannot be sent: a busy provider, not an attempt.
            .map_err(|e| PlaceError::Busy {
                kind: Busy::Rate,
                detail: e.to_string(),
            })?;
        Ok(call_id)
    }

    /// The simulation stands in for Amazon Connect: a call must fit Connect's bounds too.
    fn attributes_fit(
        &self,
        attributes: &std::collections::BTreeMap<String, String>,
        reserved: usize,
    ) -> bool {
        super::connect::attributes_fit(attributes, reserved)
    }

    /// The simulation keeps no record of its calls: a lost outcome stays lost, and the engine
    /// records it as failed "no outcome" (D13).
    async fn describe(&self, _call_id: &str) -> Result<CallStatus, Error> {
        Ok(CallStatus::Unknown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_app::config::dialing::{DialerConfig, OutcomeMix};

    #[test]
    fn outcomes_repeat_and_follow_the_mix() {
        let settings = DialerConfig::default().simulated;
        let mut counts = [0u32; 3];
        for n in 0..3000 {
            let phone = format!("+86138{n:08}");
            let report = decide(&settings, &phone, 1, None);
            assert_eq!(report, decide(&settings, &phone, 1, None), "deterministic");
            counts[usize::from(report.outcome.code() - 1)] += 1;
            match report.outcome {
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
        let mut settings = DialerConfig::default().simulated;
        settings.mix = OutcomeMix {
            success: 0,
            failed: 0,
            no_answer: 1,
        };
        for n in 0..50 {
            let report = decide(&settings, &format!("555{n:04}"), n, None);
            assert_eq!(report.outcome, Outcome::NoAnswer);
        }
    }

    #[test]
    fn a_script_names_each_attempt_and_the_mix_decides_past_its_end() {
        let settings = DialerConfig::default().simulated;
        let script = Some("BUSY, VOICEMAIL,ANSWERED");
        let reasons: Vec<Reason> = (1..=3)
            .map(|attempt| Reason::of(&decide(&settings, "5550100", attempt, script)))
            .collect();
        assert_eq!(reasons, [Reason::Busy, Reason::Voicemail, Reason::Answered]);
        assert_eq!(
            decide(&settings, "5550100", 4, script),
            decide(&settings, "5550100", 4, None)
        );
        // Every reason of the mix shows up over many numbers.
        let mut seen = std::collections::HashSet::new();
        for n in 0..400 {
            seen.insert(Reason::of(&decide(
                &settings,
                &format!("555{n:04}"),
                1,
                None,
            )));
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
}

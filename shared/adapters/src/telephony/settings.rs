//! The providers' settings, as the configuration (`outbound_app::config`) reads them once at
//! cold start: which provider (`DIAL_PROVIDER`, [`ProviderConfig`]), Amazon Connect's
//! (`CONNECT_*`, D13, D22, [`ConnectSettings`], read with the rest when
//! `DIAL_PROVIDER=amazon-connect`, so a function whose settings are incomplete does not start),
//! and the simulated provider's (`SIMULATED_*`, D28, [`SimulatedSettings`]).

use outbound_model::error::ConfigError;
use outbound_model::Phone;

use std::time::Duration;

/// Amazon Connect's queue (queue mode): its outbound caller ID is every call's.
pub const CONNECT_QUEUE_ID: &str = "CONNECT_QUEUE_ID";
const QUEUE_ID: &str = CONNECT_QUEUE_ID;

const INSTANCE_ID: &str = "CONNECT_INSTANCE_ID";
const INSTANCE_ARN: &str = "CONNECT_INSTANCE_ARN";
const CONTACT_FLOW_ID: &str = "CONNECT_CONTACT_FLOW_ID";
const SOURCE_PHONE_NUMBER: &str = "CONNECT_SOURCE_PHONE_NUMBER";
const CAMPAIGN_FALLBACK: &str = "CONNECT_CAMPAIGN_FALLBACK";

/// Where and how calls are placed, read once at cold start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectSettings {
    /// The Connect instance (`CONNECT_INSTANCE_ID`).
    pub instance_id: String,
    /// Its ARN (`CONNECT_INSTANCE_ARN`): the numbers claimed to it are listed by it (D22); unset,
    /// by its id.
    pub instance_arn: Option<String>,
    /// The contact flow every call runs (`CONNECT_CONTACT_FLOW_ID`).
    pub contact_flow_id: String,
    /// The caller id the called party sees.
    pub source: CallerSource,
    /// Whether calls may go on as GENERAL traffic, without answering-machine detection, when
    /// the instance refuses campaign calls for quota (`CONNECT_CAMPAIGN_FALLBACK=general`;
    /// unset: the task that meets it fails, D13).
    pub general_fallback: bool,
}

/// Connect takes the caller id either as a number of the instance or as a queue whose outbound
/// caller id is used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallerSource {
    /// `SourcePhoneNumber`, E.164 (`CONNECT_SOURCE_PHONE_NUMBER`).
    Number(String),
    /// `QueueId` (`CONNECT_QUEUE_ID`).
    Queue(String),
}

impl ConnectSettings {
    /// Reads `CONNECT_INSTANCE_ID`, `CONNECT_CONTACT_FLOW_ID`, exactly one of
    /// `CONNECT_SOURCE_PHONE_NUMBER` and `CONNECT_QUEUE_ID`, and `CONNECT_INSTANCE_ARN` if set,
    /// through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let set = |name: &str| {
            lookup(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let instance_id = ConfigError::required(&lookup, INSTANCE_ID)?;
        let contact_flow_id = ConfigError::required(&lookup, CONTACT_FLOW_ID)?;
        let source = match (set(SOURCE_PHONE_NUMBER), set(QUEUE_ID)) {
            (Some(number), None) => match Phone::parse(&number) {
                Ok(phone) => CallerSource::Number(phone.e164()),
                Err(_) => {
                    return Err(ConfigError {
                        name: SOURCE_PHONE_NUMBER,
                        problem: format!("{number:?} is not a phone number"),
                    })
                }
            },
            (None, Some(queue)) => CallerSource::Queue(queue),
            (Some(_), Some(_)) => {
                return Err(ConfigError {
                    name: SOURCE_PHONE_NUMBER,
                    problem: format!("is set together with {QUEUE_ID}: set exactly one"),
                })
            }
            (None, None) => {
                return Err(ConfigError {
                    name: SOURCE_PHONE_NUMBER,
                    problem: format!("is not set, nor is {QUEUE_ID}: set exactly one"),
                })
            }
        };
        let general_fallback = match set(CAMPAIGN_FALLBACK).as_deref() {
            None | Some("none") => false,
            Some("general") => true,
            Some(other) => {
                return Err(ConfigError {
                    name: CAMPAIGN_FALLBACK,
                    problem: format!("{other:?} is neither general nor none"),
                })
            }
        };
        Ok(ConnectSettings {
            instance_id,
            instance_arn: set(INSTANCE_ARN),
            contact_flow_id,
            source,
            general_fallback,
        })
    }

    /// Whether a call can go out from a number of its own (D22): not in queue mode, where
    /// Connect calls from the queue's outbound caller ID whatever the request names.
    pub fn per_call_caller_id(&self) -> bool {
        matches!(self.source, CallerSource::Number(_))
    }
}

/// How long past the reconcile check a simulated `EVENT_LATE` outcome arrives (D28).
pub const LATE_PAST_RECONCILE: Duration = Duration::from_secs(15);

/// Which telephony provider places the calls (`DIAL_PROVIDER`), with its settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderConfig {
    /// Outcomes decided from the number and the attempt, reported after a delay (the default),
    /// as [`DialerConfig::simulated`] says.
    Simulated,
    /// Amazon Connect `StartOutboundVoiceContact`, outcomes from its contact events.
    AmazonConnect(ConnectSettings),
}

/// The mix of simulated outcomes, in parts: success, failed, no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutcomeMix {
    pub success: u32,
    pub failed: u32,
    pub no_answer: u32,
}

/// How the simulated provider behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimulatedSettings {
    /// `SIMULATED_OUTCOME_MIX`, e.g. `60,20,20` (success, failed, no answer).
    pub mix: OutcomeMix,
    /// `SIMULATED_OUTCOME_DELAY_SECONDS` (default 1): how long after placing the outcome arrives.
    pub delay: Duration,
    /// `SIMULATED_MAX_TALK_SECONDS` (default 180): answered calls last 1 to this many seconds.
    pub max_talk_seconds: u64,
    /// `SIMULATED_FAULTS` (D28): how often a start the contact's script does not name meets each
    /// fault; none by default.
    pub faults: FaultRates,
    /// `SIMULATED_SEED` (D28, default 0): the faults drawn are the same for the same seed.
    pub seed: u64,
    /// How long after its call ends an `EVENT_LATE` outcome reaches the service: past the
    /// reconcile check (`reconcile_after` and 15 s).
    pub late_by: Duration,
}

impl Default for SimulatedSettings {
    /// D13's defaults: 60 % success, 20 % failed, 20 % no answer, a second after placing;
    /// no faults.
    fn default() -> Self {
        SimulatedSettings {
            mix: OutcomeMix {
                success: 60,
                failed: 20,
                no_answer: 20,
            },
            delay: Duration::from_secs(1),
            max_talk_seconds: 180,
            faults: FaultRates::default(),
            seed: 0,
            late_by: Duration::from_secs(615),
        }
    }
}

/// How often each simulated fault happens (D28), in parts per 10,000 starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultRates {
    /// The start answers a server error and places no call.
    pub start_failed: u32,
    /// The call is placed and the start's answer is lost.
    pub start_lost: u32,
    /// The outcome reaches the service only after its reconcile check.
    pub event_late: u32,
    /// The outcome is delivered twice.
    pub event_twice: u32,
    /// The start is refused for rate: not an attempt.
    pub throttled: u32,
}

impl FaultRates {
    /// The names `SIMULATED_FAULTS` gives them.
    pub const NAMES: [&'static str; 5] = [
        "startFailed",
        "startLost",
        "eventLate",
        "eventTwice",
        "throttled",
    ];

    /// `startFailed=0.05,throttled=0.1`: each a fraction from 0 to 1, together at most 1.
    pub fn parse(raw: &str) -> Option<FaultRates> {
        let mut rates = FaultRates::default();
        for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=')?;
            let value: f64 = value.trim().parse().ok()?;
            if !(0.0..=1.0).contains(&value) {
                return None;
            }
            let parts = (value * 10_000.0).round() as u32;
            match name.trim() {
                "startFailed" => rates.start_failed = parts,
                "startLost" => rates.start_lost = parts,
                "eventLate" => rates.event_late = parts,
                "eventTwice" => rates.event_twice = parts,
                "throttled" => rates.throttled = parts,
                _ => return None,
            }
        }
        (rates.total() <= 10_000).then_some(rates)
    }

    /// All faults together, in parts per 10,000.
    pub fn total(&self) -> u32 {
        self.start_failed + self.start_lost + self.event_late + self.event_twice + self.throttled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    const BASE: [(&str, &str); 2] = [
        (INSTANCE_ID, "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915"),
        (CONTACT_FLOW_ID, "9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34"),
    ];

    fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        BASE.iter().chain(extra).copied().collect()
    }

    #[test]
    fn settings_take_a_source_number_in_e164() {
        let settings = ConnectSettings::from_lookup(lookup(&with(&[(
            SOURCE_PHONE_NUMBER,
            "44 20 3808 9410",
        )])))
        .unwrap();
        assert_eq!(
            settings,
            ConnectSettings {
                instance_id: "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915".into(),
                instance_arn: None,
                contact_flow_id: "9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34".into(),
                source: CallerSource::Number("+442038089410".into()),
                general_fallback: false,
            }
        );
    }

    #[test]
    fn settings_take_a_queue() {
        let settings = ConnectSettings::from_lookup(lookup(&with(&[(
            QUEUE_ID,
            " 7b2e9f40-1c6d-4a83-b5e2-0f9d3c7a1e68 ",
        )])))
        .unwrap();
        assert_eq!(
            settings.source,
            CallerSource::Queue("7b2e9f40-1c6d-4a83-b5e2-0f9d3c7a1e68".into())
        );
    }

    #[test]
    fn settings_need_exactly_one_source() {
        let neither = ConnectSettings::from_lookup(lookup(&BASE)).unwrap_err();
        assert_eq!(neither.name, SOURCE_PHONE_NUMBER);
        let both = ConnectSettings::from_lookup(lookup(&with(&[
            (SOURCE_PHONE_NUMBER, "+442038089410"),
            (QUEUE_ID, "7b2e9f40-1c6d-4a83-b5e2-0f9d3c7a1e68"),
        ])))
        .unwrap_err();
        assert_eq!(both.name, SOURCE_PHONE_NUMBER);
        assert!(both.problem.contains(QUEUE_ID), "{}", both.problem);
        let malformed =
            ConnectSettings::from_lookup(lookup(&with(&[(SOURCE_PHONE_NUMBER, "reception")])))
                .unwrap_err();
        assert_eq!(malformed.name, SOURCE_PHONE_NUMBER);
    }

    #[test]
    fn campaign_fallback_is_general_or_none() {
        let source = (QUEUE_ID, "q");
        let read = |extra: &[(&'static str, &'static str)]| {
            let mut pairs = vec![BASE[0], BASE[1], source];
            pairs.extend_from_slice(extra);
            ConnectSettings::from_lookup(lookup(&pairs))
        };
        assert!(!read(&[]).unwrap().general_fallback);
        assert!(
            !read(&[(CAMPAIGN_FALLBACK, "none")])
                .unwrap()
                .general_fallback
        );
        assert!(
            read(&[(CAMPAIGN_FALLBACK, "general")])
                .unwrap()
                .general_fallback
        );
        let error = read(&[(CAMPAIGN_FALLBACK, "sometimes")]).unwrap_err();
        assert_eq!(error.name, CAMPAIGN_FALLBACK);
    }

    #[test]
    fn settings_need_instance_and_flow() {
        let source = (QUEUE_ID, "q");
        let error = ConnectSettings::from_lookup(lookup(&[BASE[1], source])).unwrap_err();
        assert_eq!(error.name, INSTANCE_ID);
        let error =
            ConnectSettings::from_lookup(lookup(&[BASE[0], (CONTACT_FLOW_ID, "  "), source]))
                .unwrap_err();
        assert_eq!(error.name, CONTACT_FLOW_ID);
    }
}

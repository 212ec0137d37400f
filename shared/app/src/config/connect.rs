//! Amazon Connect's settings (`CONNECT_*`, D13, D22): read once at cold start with the rest of
//! the configuration when `DIAL_PROVIDER=amazon-connect`, so a function whose settings are
//! incomplete does not start.

use outbound_model::error::ConfigError;
use outbound_model::Phone;

use super::dialing::CONNECT_QUEUE_ID as QUEUE_ID;

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
        let required = |name: &'static str| {
            set(name).ok_or(ConfigError {
                name,
                problem: "is not set".into(),
            })
        };
        let instance_id = required(INSTANCE_ID)?;
        let contact_flow_id = required(CONTACT_FLOW_ID)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::lookup;

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

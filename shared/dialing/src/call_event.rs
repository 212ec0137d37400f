//! The call-events queue's messages: an Amazon Connect contact event (through EventBridge) or
//! the simulated provider's message, read into the one [`CallEvent`] the engine takes: a call
//! that ended ([`EndedCall`]), or one an agent took (D30). Only the configured provider's
//! messages are taken (D32): under Amazon Connect a simulated-provider message, which anyone
//! who may send to the queue could write, is refused, logged and counted.

use outbound_adapters::telephony::connect::{self, ContactEvent};
use outbound_adapters::telephony::settings::ProviderConfig;
use outbound_adapters::telephony::simulated::SimulatedEvent;
use outbound_model::call::CallReport;
use outbound_model::error::Error;
use outbound_model::signature::Carried;

/// What a call-events message tells of a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallEvent {
    /// The call ended.
    Ended(EndedCall),
    /// An agent of the task's queue took the call (D30): the provider's id of the call.
    WithAgent(String),
}

/// A call that ended, as a call-events message tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedCall {
    /// The provider's id of the call.
    pub call_id: String,
    pub report: CallReport,
    /// The attempt it was and its signature, when the event itself says (the simulated
    /// provider's do, as a Connect contact's attributes would).
    pub attempt: Option<Carried>,
}

/// Which provider's messages the call-events queue takes: the configured one's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventSource {
    AmazonConnect,
    Simulated,
}

impl EventSource {
    /// The source of `provider`'s call events.
    pub fn of(provider: &ProviderConfig) -> EventSource {
        match provider {
            ProviderConfig::AmazonConnect(_) => EventSource::AmazonConnect,
            ProviderConfig::Simulated => EventSource::Simulated,
        }
    }
}

impl CallEvent {
    /// What a call-events message from `source` says; `None` for an event the engine has no
    /// use for, and for another provider's message (refused: logged and counted, D32).
    pub fn decode(body: &str, source: EventSource) -> Result<Option<CallEvent>, Error> {
        let value: serde_json::Value =
            serde_json::from_str(body).map_err(|e| Error::internal("decode call event", e))?;
        let from_connect = value.get("detail-type").is_some();
        if from_connect != (source == EventSource::AmazonConnect) {
            tracing::warn!(
                expected = ?source,
                "a call event of another provider than the configured one; refused"
            );
            outbound_telemetry::metrics(
                &[],
                &[("ForeignCallEvents", 1.0, outbound_telemetry::Unit::Count)],
            );
            return Ok(None);
        }
        if from_connect {
            return Ok(connect::parse_event(body)?.map(|event| match event {
                ContactEvent::Disconnected(disconnect) => CallEvent::Ended(EndedCall {
                    call_id: disconnect.contact_id,
                    report: disconnect.report,
                    attempt: None,
                }),
                ContactEvent::ConnectedToAgent { contact_id } => CallEvent::WithAgent(contact_id),
            }));
        }
        let event: SimulatedEvent =
            serde_json::from_value(value).map_err(|e| Error::internal("decode call event", e))?;
        Ok(Some(match event {
            SimulatedEvent::SimulatedCall(ended) => CallEvent::Ended(EndedCall {
                call_id: ended.call_id,
                report: ended.report,
                attempt: (ended.attempt).map(|attempt| Carried {
                    attempt,
                    signature: ended.signature,
                }),
            }),
            SimulatedEvent::SimulatedAgent(taken) => CallEvent::WithAgent(taken.call_id),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_model::call::Outcome;

    fn source_of(body: &str) -> EventSource {
        if body.contains("detail-type") {
            EventSource::AmazonConnect
        } else {
            EventSource::Simulated
        }
    }

    fn decode(body: &str) -> Result<Option<CallEvent>, Error> {
        CallEvent::decode(body, source_of(body))
    }

    fn ended(body: &str) -> EndedCall {
        match decode(body).unwrap() {
            Some(CallEvent::Ended(ended)) => ended,
            other => panic!("not an ended call: {other:?}"),
        }
    }

    /// The call-events queue carries both kinds of outcome and of calls an agent took; events
    /// that tell neither are ignored.
    #[test]
    fn call_events_are_read_from_either_provider() {
        let simulated = r#"{"simulatedCall":{"callId":"sim-1","report":{"reason":"NO_ANSWER","duration":0,"detail":"NO_ANSWER"}}}"#;
        let call = ended(simulated);
        assert_eq!(
            (call.call_id.as_str(), call.report.outcome(), call.attempt),
            ("sim-1", Outcome::NoAnswer, None)
        );
        let connect = include_str!("../../../tests/events/connect-disconnected-human.json");
        let call = ended(connect);
        assert_eq!(
            (call.call_id.as_str(), call.report.outcome(), call.attempt),
            (
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                Outcome::Success,
                None
            )
        );
        let taken = include_str!("../../../tests/events/connect-connected-to-agent.json");
        assert_eq!(
            decode(taken).unwrap(),
            Some(CallEvent::WithAgent(
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83".into()
            ))
        );
        let simulated_taken = r#"{"simulatedAgent":{"callId":"sim-2"}}"#;
        assert_eq!(
            decode(simulated_taken).unwrap(),
            Some(CallEvent::WithAgent("sim-2".into()))
        );
        let ignored = include_str!("../../../tests/events/connect-connected-to-system.json");
        assert_eq!(decode(ignored).unwrap(), None);
        assert!(decode("not json").is_err());
    }

    /// D32: only the configured provider's messages are taken: under Amazon Connect a
    /// simulated-provider outcome (which anyone allowed to send to the queue could forge) is
    /// ignored, and a Connect event means nothing to the simulated provider.
    #[test]
    fn another_providers_call_events_are_refused() {
        let simulated = r#"{"simulatedCall":{"callId":"sim-1","report":{"reason":"HUMAN_ANSWERED","duration":30,"detail":"x"}}}"#;
        assert_eq!(
            CallEvent::decode(simulated, EventSource::AmazonConnect).unwrap(),
            None
        );
        let agent = r#"{"simulatedAgent":{"callId":"sim-2"}}"#;
        assert_eq!(
            CallEvent::decode(agent, EventSource::AmazonConnect).unwrap(),
            None
        );
        let connect = include_str!("../../../tests/events/connect-disconnected-human.json");
        assert_eq!(
            CallEvent::decode(connect, EventSource::Simulated).unwrap(),
            None
        );
        assert!(CallEvent::decode(connect, EventSource::AmazonConnect)
            .unwrap()
            .is_some());
    }
}

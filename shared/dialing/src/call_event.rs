//! The call-events queue's messages: an Amazon Connect contact event (through EventBridge) or
//! the simulated provider's outcome, read into the one [`EndedCall`] the engine records.

use outbound_adapters::telephony::simulated::SimulatedEvent;
use outbound_model::call::CallReport;
use outbound_model::error::Error;
use outbound_model::signature::Carried;

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

impl EndedCall {
    /// The call a call-events message says ended; `None` for an event that is not the end of a call.
    pub fn decode(body: &str) -> Result<Option<EndedCall>, Error> {
        let value: serde_json::Value =
            serde_json::from_str(body).map_err(|e| Error::internal("decode call event", e))?;
        if value.get("detail-type").is_some() {
            return Ok(
                outbound_adapters::telephony::connect::parse_event(body)?.map(|disconnect| {
                    EndedCall {
                        call_id: disconnect.contact_id,
                        report: disconnect.report,
                        attempt: None,
                    }
                }),
            );
        }
        let event: SimulatedEvent =
            serde_json::from_value(value).map_err(|e| Error::internal("decode call event", e))?;
        let ended = event.simulated_call;
        let signature = ended.signature;
        Ok(Some(EndedCall {
            call_id: ended.call_id,
            report: ended.report,
            attempt: ended.attempt.map(|attempt| Carried { attempt, signature }),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_model::call::Outcome;

    /// The call-events queue carries both kinds of outcome; events that end no call are ignored.
    #[test]
    fn call_events_are_read_from_either_provider() {
        let simulated = r#"{"simulatedCall":{"callId":"sim-1","report":{"reason":"NO_ANSWER","duration":0,"detail":"NO_ANSWER"}}}"#;
        let ended = EndedCall::decode(simulated).unwrap().unwrap();
        assert_eq!(
            (
                ended.call_id.as_str(),
                ended.report.outcome(),
                ended.attempt
            ),
            ("sim-1", Outcome::NoAnswer, None)
        );
        let connect = include_str!("../../../tests/events/connect-disconnected-human.json");
        let ended = EndedCall::decode(connect).unwrap().unwrap();
        assert_eq!(
            (
                ended.call_id.as_str(),
                ended.report.outcome(),
                ended.attempt
            ),
            (
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                Outcome::Success,
                None
            )
        );
        let ignored = include_str!("../../../tests/events/connect-connected-to-system.json");
        assert_eq!(EndedCall::decode(ignored).unwrap(), None);
        assert!(EndedCall::decode("not json").is_err());
    }
}

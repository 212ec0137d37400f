//! The contact events EventBridge delivers to the call-events queue: [`parse_event`] reads one
//! message body into a [`ContactEvent`] (a call that ended, or one an agent took).

use super::reasons::{abandoned_in_queue, report};
use chrono::{DateTime, Utc};
use outbound_model::call::CallReport;
use outbound_model::error::Error;
use serde::Deserialize;

/// A voice call that ended, read from its `DISCONNECTED` contact event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disconnect {
    /// Connect's `ContactId`: what [`Provider::place`](crate::telephony::Provider::place)
    /// answered for the call.
    pub contact_id: String,
    pub report: CallReport,
}

/// What a contact event of a call placed through the API tells the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContactEvent {
    /// `DISCONNECTED`: the call ended.
    Disconnected(Disconnect),
    /// `CONNECTED_TO_AGENT`: an agent of the queue took the call (D30).
    ConnectedToAgent { contact_id: String },
}

const EVENT_SOURCE: &str = "aws.connect";
const EVENT_DETAIL_TYPE: &str = "Amazon Connect Contact Event";

/// The EventBridge envelope; only what is needed is read, everything else is ignored.
#[derive(Deserialize)]
struct Event {
    source: Option<String>,
    #[serde(rename = "detail-type")]
    detail_type: Option<String>,
    detail: Detail,
}

/// The contact event. The documentation's samples spell its fields both camelCase and
/// PascalCase, so both are read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Detail {
    #[serde(alias = "EventType")]
    event_type: Option<String>,
    #[serde(alias = "ContactId")]
    contact_id: Option<String>,
    #[serde(alias = "Channel")]
    channel: Option<String>,
    #[serde(alias = "DisconnectReason")]
    disconnect_reason: Option<DisconnectReason>,
    #[serde(alias = "AnsweringMachineDetectionStatus")]
    answering_machine_detection_status: Option<String>,
    #[serde(alias = "ConnectedToSystemTimestamp")]
    connected_to_system_timestamp: Option<String>,
    #[serde(alias = "DisconnectTimestamp")]
    disconnect_timestamp: Option<String>,
    /// Set once the flow put the contact in a queue (D30).
    #[serde(alias = "QueueInfo")]
    queue_info: Option<QueueInfo>,
    /// Set once an agent took the contact.
    #[serde(alias = "AgentInfo")]
    agent_info: Option<AgentInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueueInfo {
    #[serde(alias = "EnqueueTimestamp")]
    enqueue_timestamp: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AgentInfo {
    #[serde(alias = "ConnectedToAgentTimestamp")]
    connected_to_agent_timestamp: Option<String>,
}

/// The disconnect reason as a plain code, or as the API's `DisconnectReason` object (`{Code}`).
#[derive(Deserialize)]
#[serde(untagged)]
enum DisconnectReason {
    Code(String),
    Object {
        #[serde(alias = "Code")]
        code: Option<String>,
    },
}

impl DisconnectReason {
    fn code(&self) -> Option<&str> {
        match self {
            DisconnectReason::Code(code) => Some(code),
            DisconnectReason::Object { code } => code.as_deref(),
        }
    }
}

/// Reads one call-events message body: an EventBridge "Amazon Connect Contact Event". Answers
/// the ended call for a voice `DISCONNECTED` event, the call an agent took for a voice
/// `CONNECTED_TO_AGENT` event (D30), and `None` for every other event, which is acknowledged and
/// ignored; fails only for a body that is not such an event at all, or one of those two without
/// a contact id, or with an unreadable time.
pub fn parse_event(body: &str) -> Result<Option<ContactEvent>, Error> {
    let event: Event = serde_json::from_str(body)
        .map_err(|error| Error::invalid(format!("not an EventBridge event: {error}")))?;
    let other =
        |field: &Option<String>, expected: &str| field.as_deref().is_some_and(|v| v != expected);
    if other(&event.source, EVENT_SOURCE) || other(&event.detail_type, EVENT_DETAIL_TYPE) {
        return Ok(None);
    }
    let detail = event.detail;
    // The samples spell the channel both `VOICE` and `Voice`.
    let voice = detail
        .channel
        .as_deref()
        .is_none_or(|channel| channel.eq_ignore_ascii_case("VOICE"));
    let kind = detail.event_type.as_deref().unwrap_or_default();
    if !voice {
        return Ok(None);
    }
    let contact_id = |detail: &Detail| {
        (detail.contact_id.clone())
            .filter(|id| !id.is_empty())
            .ok_or_else(|| Error::invalid(format!("{kind} contact event without contactId")))
    };
    if kind.eq_ignore_ascii_case("CONNECTED_TO_AGENT") {
        let contact_id = contact_id(&detail)?;
        return Ok(Some(ContactEvent::ConnectedToAgent { contact_id }));
    }
    if !kind.eq_ignore_ascii_case("DISCONNECTED") {
        return Ok(None);
    }
    let contact_id = contact_id(&detail)?;
    let connected = timestamp(
        "connectedToSystemTimestamp",
        detail.connected_to_system_timestamp.as_deref(),
    )?;
    let ended = timestamp(
        "disconnectTimestamp",
        detail.disconnect_timestamp.as_deref(),
    )?;
    let report = report(
        detail
            .disconnect_reason
            .as_ref()
            .and_then(DisconnectReason::code),
        detail.answering_machine_detection_status.as_deref(),
        connected,
        ended,
    );
    let set = |time: Option<&String>| time.is_some_and(|time| !time.is_empty());
    let enqueued = (detail.queue_info.as_ref()).is_some_and(|q| set(q.enqueue_timestamp.as_ref()));
    let with_agent = (detail.agent_info.as_ref())
        .is_some_and(|agent| set(agent.connected_to_agent_timestamp.as_ref()));
    let report = abandoned_in_queue(report, enqueued, with_agent);
    Ok(Some(ContactEvent::Disconnected(Disconnect {
        contact_id,
        report,
    })))
}

/// An event time (`2021-08-04T17:47:35.000Z`); absent or empty is `None`.
fn timestamp(name: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, Error> {
    text.filter(|text| !text.is_empty())
        .map(|text| {
            DateTime::parse_from_rfc3339(text)
                .map(|time| time.with_timezone(&Utc))
                .map_err(|error| Error::invalid(format!("{name} {text:?}: {error}")))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_model::call::{Outcome, Reason};

    /// The ended call a contact event tells, `None` for any other event.
    fn disconnect_of(body: &str) -> Option<Disconnect> {
        match parse_event(body).unwrap() {
            Some(ContactEvent::Disconnected(disconnect)) => Some(disconnect),
            Some(other) => panic!("not a DISCONNECTED event: {other:?}"),
            None => None,
        }
    }

    fn disconnect(body: &str) -> Disconnect {
        disconnect_of(body).expect("a DISCONNECTED voice event")
    }

    fn expect(contact_id: &str, reason: Reason, duration: u64, detail: &str) -> Disconnect {
        Disconnect {
            contact_id: contact_id.into(),
            report: CallReport {
                results: Default::default(),
                reason,
                duration,
                detail: detail.into(),
            },
        }
    }

    #[test]
    fn recorded_events_a_person_answered() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../../tests/events/connect-disconnected-human.json"
            )),
            expect(
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                Reason::Answered,
                102,
                "CUSTOMER_DISCONNECT"
            )
        );
    }

    /// D30: the same answered call, put in a queue by the flow: with an agent it is answered;
    /// without one it is abandoned, whatever it talked to the flow.
    #[test]
    fn an_answered_call_no_agent_took_is_abandoned() {
        let recorded: serde_json::Value = serde_json::from_str(include_str!(
            "../../../../../tests/events/connect-disconnected-human.json"
        ))
        .unwrap();
        let with = |queue: bool, agent: bool| {
            let mut event = recorded.clone();
            if queue {
                event["detail"]["queueInfo"] = serde_json::json!({"queueArn": "arn:aws:connect:::queue/q", "enqueueTimestamp": "2025-03-11T14:00:05.000Z"});
            }
            if agent {
                event["detail"]["agentInfo"] = serde_json::json!({"agentArn": "arn:aws:connect:::agent/a", "connectedToAgentTimestamp": "2025-03-11T14:00:06.000Z"});
            }
            disconnect(&event.to_string()).report
        };
        assert_eq!(with(false, false).reason, Reason::Answered);
        assert_eq!(with(true, true).reason, Reason::Answered);
        let abandoned = with(true, false);
        assert_eq!(
            (
                abandoned.reason,
                abandoned.duration,
                abandoned.detail.as_str()
            ),
            (Reason::Abandoned, 0, "QUEUE_ABANDONED")
        );
        assert_eq!(abandoned.outcome(), Outcome::NoAnswer);
        // A call nobody answered stays what it was, queue or not.
        let unanswered = abandoned_in_queue(Reason::NoAnswer.report(0), true, false);
        assert_eq!(unanswered.reason, Reason::NoAnswer);
    }

    #[test]
    fn recorded_events_voicemail() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../../tests/events/connect-disconnected-voicemail.json"
            )),
            expect(
                "a41c6e09-2b7d-4f38-8e5a-c9d0f1b27e64",
                Reason::Voicemail,
                0,
                "VOICEMAIL_BEEP"
            )
        );
    }

    #[test]
    fn recorded_events_unanswered() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../../tests/events/connect-disconnected-unanswered.json"
            )),
            expect(
                "e7b3a920-5f1c-4d86-9a2e-6c04d8f1b359",
                Reason::NoAnswer,
                0,
                "AMD_UNANSWERED"
            )
        );
    }

    #[test]
    fn recorded_events_busy() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../../tests/events/connect-disconnected-busy.json"
            )),
            expect(
                "52d09f3e-8a61-4b7c-a3e5-f2c8b1d94e06",
                Reason::Busy,
                0,
                "TELECOM_BUSY"
            )
        );
    }

    #[test]
    fn recorded_events_invalid_number() {
        assert_eq!(
            disconnect(include_str!(
                "../../../../../tests/events/connect-disconnected-invalid-number.json"
            )),
            expect(
                "8c1e4b75-3d92-4a0f-b6c8-e5a7f2d06b19",
                Reason::InvalidNumber,
                0,
                "TELECOM_NUMBER_INVALID"
            )
        );
    }

    /// D18: the reason each recorded contact event is counted under.
    #[test]
    fn recorded_events_give_their_reasons() {
        use outbound_model::call::Reason;
        let reason = |body: &str| disconnect(body).report.reason;
        assert_eq!(
            reason(include_str!(
                "../../../../../tests/events/connect-disconnected-human.json"
            )),
            Reason::Answered
        );
        assert_eq!(
            reason(include_str!(
                "../../../../../tests/events/connect-disconnected-voicemail.json"
            )),
            Reason::Voicemail
        );
        assert_eq!(
            reason(include_str!(
                "../../../../../tests/events/connect-disconnected-unanswered.json"
            )),
            Reason::NoAnswer
        );
        assert_eq!(
            reason(include_str!(
                "../../../../../tests/events/connect-disconnected-busy.json"
            )),
            Reason::Busy
        );
        assert_eq!(
            reason(include_str!(
                "../../../../../tests/events/connect-disconnected-invalid-number.json"
            )),
            Reason::InvalidNumber
        );
    }

    #[test]
    fn recorded_connected_to_agent_event_names_the_call_an_agent_took() {
        let body = include_str!("../../../../../tests/events/connect-connected-to-agent.json");
        assert_eq!(
            parse_event(body).unwrap(),
            Some(ContactEvent::ConnectedToAgent {
                contact_id: "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83".into()
            })
        );
        let nameless = body.replace(
            "\"contactId\": \"3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83\",",
            "",
        );
        assert!(matches!(parse_event(&nameless), Err(Error::Invalid(_))));
    }

    #[test]
    fn recorded_events_other_event_types_are_ignored() {
        let body = include_str!("../../../../../tests/events/connect-connected-to-system.json");
        assert_eq!(disconnect_of(body), None);
    }

    #[test]
    fn recorded_sqs_batch_of_the_call_events_function() {
        let batch: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_str(include_str!(
            "../../../../../tests/events/connect-sqs-batch.json"
        ))
        .unwrap();
        let parsed: Vec<Option<Disconnect>> = batch
            .records
            .iter()
            .map(|record| disconnect_of(record.body.as_deref().unwrap()))
            .collect();
        assert_eq!(
            parsed,
            vec![
                None,
                Some(expect(
                    "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                    Reason::Answered,
                    102,
                    "CUSTOMER_DISCONNECT"
                )),
            ]
        );
    }

    fn event(detail: serde_json::Value) -> String {
        serde_json::json!({
            "version": "0",
            "id": "6f0a2c4e-31b7-5d8e-a9c2-7e14b3f0d265",
            "detail-type": "Amazon Connect Contact Event",
            "source": "aws.connect",
            "account": "482915736204",
            "time": "2025-03-11T14:02:50Z",
            "region": "eu-west-1",
            "resources": [],
            "detail": detail,
        })
        .to_string()
    }

    #[test]
    fn other_channels_and_sources_are_ignored() {
        let chat = event(serde_json::json!({
            "eventType": "DISCONNECTED",
            "contactId": "c1",
            "channel": "CHAT",
            "disconnectReason": "CUSTOMER_DISCONNECT",
        }));
        assert_eq!(parse_event(&chat).unwrap(), None);
        let other_source = serde_json::json!({
            "version": "0",
            "detail-type": "Object Created",
            "source": "aws.s3",
            "detail": { "bucket": { "name": "uploads" } },
        })
        .to_string();
        assert_eq!(parse_event(&other_source).unwrap(), None);
    }

    #[test]
    fn pascal_case_fields_and_a_coded_reason_are_read() {
        let body = event(serde_json::json!({
            "EventType": "DISCONNECTED",
            "ContactId": "c1",
            "Channel": "Voice",
            "DisconnectReason": { "Code": "TELECOM_BUSY" },
            "DisconnectTimestamp": "2025-03-11T11:03:11.745Z",
        }));
        assert_eq!(
            disconnect(&body),
            expect("c1", Reason::Busy, 0, "TELECOM_BUSY")
        );
    }

    #[test]
    fn bodies_that_are_not_events_fail() {
        for body in [
            "",
            "not json",
            "[]",
            r#"{"Records": []}"#,
            r#"{"detail": 3}"#,
        ] {
            assert!(
                matches!(parse_event(body), Err(Error::Invalid(_))),
                "{body:?} was accepted"
            );
        }
        let no_contact =
            event(serde_json::json!({ "eventType": "DISCONNECTED", "channel": "VOICE" }));
        assert!(matches!(parse_event(&no_contact), Err(Error::Invalid(_))));
        let bad_time = event(serde_json::json!({
            "eventType": "DISCONNECTED",
            "contactId": "c1",
            "channel": "VOICE",
            "disconnectTimestamp": "yesterday",
        }));
        assert!(matches!(parse_event(&bad_time), Err(Error::Invalid(_))));
    }
}

//! EventBridge: the bus the service's domain events go to (D20). Only the publisher puts on it,
//! from the outbox; nothing else in the service sends an event. An entry the bus refuses for good
//! goes to the publisher's dead-letter queue as a [`RefusedEvent`].

use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::event::{EventEntry, SOURCE};
use serde::{Deserialize, Serialize};

/// Most entries one PutEvents takes.
pub const PUT_EVENTS_MAX: usize = 10;

/// Puts entries on one bus; cheap to clone.
#[derive(Clone, Debug)]
pub struct Bus {
    client: Lazy<aws_sdk_eventbridge::Client>,
    name: String,
}

/// What the bus did with one entry of a PutEvents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Put {
    /// On the bus.
    Accepted,
    /// Refused for now, with EventBridge's error code (`ThrottlingException`,
    /// `InternalFailure`): to be sent again.
    Refused(String),
    /// Refused for good, with EventBridge's error code (`ValidationException`,
    /// `MalformedDetail`, `AccessDeniedException`, ...): the same entry would be refused again.
    Rejected(String),
}

/// The per-entry error codes of PutEvents worth a retry: the two EventBridge documents as
/// retryable (`ThrottlingException`, `InternalFailure`), and its own failures' names should it
/// ever answer them per entry. Every other code refuses the entry itself and sending it again
/// changes nothing: the publisher does not retry it, it dead-letters it with the entry kept
/// whole, so nothing is lost.
pub const RETRYABLE: [&str; 4] = [
    "ThrottlingException",
    "InternalFailure",
    "InternalException",
    "ServiceUnavailable",
];

impl Put {
    /// The fate of an entry EventBridge answered `code` for.
    pub fn refused(code: &str) -> Put {
        if RETRYABLE.contains(&code) {
            Put::Refused(code.to_owned())
        } else {
            Put::Rejected(code.to_owned())
        }
    }
}

/// An entry the bus refused for good, as the publisher sends it to its dead-letter queue: the
/// PutEvents entry as it was sent (its fields spelled as PutEvents spells them, so an operator
/// redrives it with `aws events put-events --entries` once the cause is fixed) and the error
/// code. Nothing but the event itself: no more personal data than its detail already holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefusedEvent {
    pub entry: RefusedEntry,
    pub error_code: String,
}

/// A PutEvents entry, in PutEvents' own spelling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RefusedEntry {
    pub event_bus_name: String,
    pub source: String,
    pub detail_type: String,
    pub detail: String,
}

impl Bus {
    pub fn new(client: Lazy<aws_sdk_eventbridge::Client>, name: impl Into<String>) -> Self {
        Bus {
            client,
            name: name.into(),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `entry`, refused with `error_code`, as the dead-letter queue keeps it.
    pub fn refused(&self, entry: &EventEntry, error_code: &str) -> RefusedEvent {
        RefusedEvent {
            entry: RefusedEntry {
                event_bus_name: self.name.clone(),
                source: SOURCE.to_owned(),
                detail_type: entry.event_type.clone(),
                detail: entry.detail.clone(),
            },
            error_code: error_code.to_owned(),
        }
    }

    /// Puts up to [`PUT_EVENTS_MAX`] entries in one request and answers each one's fate, in
    /// order. A request that fails as a whole is `Err` (D1: the bus is unavailable).
    pub async fn put(&self, entries: &[&EventEntry]) -> Result<Vec<Put>, Error> {
        use aws_sdk_eventbridge::types::PutEventsRequestEntry;
        debug_assert!(entries.len() <= PUT_EVENTS_MAX);
        let request: Vec<PutEventsRequestEntry> = entries
            .iter()
            .map(|entry| {
                PutEventsRequestEntry::builder()
                    .event_bus_name(&self.name)
                    .source(SOURCE)
                    .detail_type(&entry.event_type)
                    .detail(&entry.detail)
                    .build()
            })
            .collect();
        let output = self
            .client
            .get()
            .put_events()
            .set_entries(Some(request))
            .send()
            .await
            .map_err(|e| Error::unavailable("put events", aws_sdk_eventbridge::Error::from(e)))?;
        let results = output.entries();
        if results.len() != entries.len() {
            return Err(Error::internal(
                "put events",
                format!("{} results for {} entries", results.len(), entries.len()),
            ));
        }
        Ok(results
            .iter()
            .map(|result| match result.error_code() {
                Some(code) => Put::refused(code),
                None => Put::Accepted,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_retryable_codes_are_refusals_for_now() {
        for code in ["ThrottlingException", "InternalFailure"] {
            assert_eq!(Put::refused(code), Put::Refused(code.to_owned()));
        }
        for code in [
            "ValidationException",
            "MalformedDetail",
            "AccessDeniedException",
            "InvalidArgument",
            "NotAuthorizedForDetailTypeException",
        ] {
            assert_eq!(Put::refused(code), Put::Rejected(code.to_owned()));
        }
    }

    #[test]
    fn a_refused_event_holds_the_entry_as_put_events_spells_it_and_the_code() {
        let bus = Bus::new(
            Lazy::new(|| -> aws_sdk_eventbridge::Client { unreachable!("no request is sent") }),
            "outbound-events",
        );
        let entry = EventEntry {
            event_id: "01J".into(),
            event_type: "ImportFinished".into(),
            tenant: "acme".into(),
            detail: r#"{"eventId":"01J","tenant":"acme"}"#.into(),
        };
        let refused = serde_json::to_value(bus.refused(&entry, "ValidationException")).unwrap();
        assert_eq!(
            refused,
            serde_json::json!({
                "entry": {
                    "EventBusName": "outbound-events",
                    "Source": "outbound",
                    "DetailType": "ImportFinished",
                    "Detail": r#"{"eventId":"01J","tenant":"acme"}"#,
                },
                "errorCode": "ValidationException",
            })
        );
    }
}

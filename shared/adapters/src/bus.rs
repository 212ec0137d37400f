//! EventBridge: the bus the service's domain events go to (D20). Only the publisher puts on it,
//! from the outbox; nothing else in the service sends an event.

use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::event::{EventEntry, SOURCE};

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
    /// Refused with EventBridge's error code (`ThrottlingException`, `InternalFailure`, ...):
    /// to be sent again.
    Refused(String),
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
                Some(code) => Put::Refused(code.to_owned()),
                None => Put::Accepted,
            })
            .collect())
    }
}

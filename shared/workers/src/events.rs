//! The event publisher (D20): the table's stream, filtered to new outbox items, onto the bus.
//!
//! The event source mapping hands over a shard's records in order and moves past a batch only
//! when the function answers without failures; a failure names the first record not yet on the
//! bus, and the mapping starts again there (`ReportBatchItemFailures`). So an event is lost
//! neither when the function that committed it dies (it never publishes: the commit is the
//! outbox item) nor when this one dies or the bus refuses for now (the record is read again).
//! What can happen is a second delivery of an event that was put just before a failure;
//! consumers drop it by its `eventId`.
//!
//! An entry the bus refuses for good (`ValidationException`, `MalformedDetail`, ...: every code
//! but [`outbound_adapters::bus::RETRYABLE`]) would be refused on every reading and hold its
//! shard up for ever: it is not sent again but to the dead-letter queue, its entry and error
//! code ([`RefusedEvent`]), and the batch goes on. Only when that queue does not take it is its
//! record reported failed, as one the bus refused for now. The mapping's own retries are bounded
//! too (`template.yaml`): a batch that still fails after them, for whatever reason, is handed to
//! its on-failure queue (where it is named, by shard and sequence numbers) and the shard moves on.
//!
//! Its log names an event by its id and kind (and tenant), never by its `detail`.

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use outbound_adapters::aws::actions::Function;
use outbound_adapters::bus::{Bus, Put, RefusedEvent, PUT_EVENTS_MAX};
use outbound_adapters::queue::Queue;
use outbound_adapters::store::outbox::outbox_entry;
use outbound_model::error::Error;
use outbound_model::event::EventEntry;
use std::time::Duration;

/// Rounds a PutEvents' entries refused for now are sent again within one invocation before the
/// batch is handed back to the mapping (which would send the accepted entries after them again
/// too).
const ROUNDS: u32 = 3;

/// The bus, and the dead-letter queue of the entries it refuses for good; cheap to clone.
#[derive(Clone, Debug)]
pub struct Publisher {
    bus: Bus,
    dead_letters: Queue<RefusedEvent>,
}

/// What became of one entry of a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Fate {
    /// Not on the bus yet: refused for now, or not sent (the bus did not answer).
    Pending,
    /// On the bus.
    Published,
    /// Refused for good, with this code: for the dead-letter queue.
    Rejected(String),
}

impl Publisher {
    pub fn new(bus: Bus, dead_letters: Queue<RefusedEvent>) -> Publisher {
        Publisher { bus, dead_letters }
    }

    /// Publishes every outbox item among `event`'s records, in order; dead-letters those the
    /// bus refuses for good. Answers the sequence number of the first one neither published
    /// nor dead-lettered, if any.
    #[tracing::instrument(skip_all, fields(records = event.records.len()))]
    pub async fn publish(&self, event: StreamEvent) -> DynamoDbEventResponse {
        Function::EventPublisher
            .scope(self.publish_records(event))
            .await
    }

    async fn publish_records(&self, event: StreamEvent) -> DynamoDbEventResponse {
        let mut pending: Vec<(Option<String>, EventEntry)> = Vec::new();
        for record in event.records {
            if record.event_name != "INSERT" {
                continue;
            }
            match outbox_entry(record.change.new_image) {
                Some(entry) => pending.push((record.change.sequence_number, entry)),
                // The mapping's filter lets only outbox items through; anything else is not
                // ours to hold the shard up for.
                None => tracing::warn!(
                    sequence = ?record.change.sequence_number,
                    "stream record is not an outbox item; skipped"
                ),
            }
        }
        let mut response = DynamoDbEventResponse::default();
        for chunk in pending.chunks(PUT_EVENTS_MAX) {
            let entries: Vec<&EventEntry> = chunk.iter().map(|(_, entry)| entry).collect();
            if let Err((first_unpublished, error)) = self.put_chunk(&entries).await {
                tracing::warn!(%error, "events not published; the batch is read again");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = chunk[first_unpublished].0.clone();
                response.batch_item_failures.push(failure);
                return response;
            }
        }
        response
    }

    /// Puts `entries` on the bus, then dead-letters those it refused for good. On failure,
    /// answers the index of the first entry neither on the bus nor in the dead-letter queue.
    async fn put_chunk(&self, entries: &[&EventEntry]) -> Result<(), (usize, Error)> {
        let (fates, mut error) = self.put_all(entries).await;
        for (index, fate) in fates.into_iter().enumerate() {
            let entry = entries[index];
            match fate {
                Fate::Published => published(entry),
                Fate::Rejected(code) => {
                    let refused = self.bus.refused(entry, &code);
                    self.dead_letters
                        .send(&refused, 0)
                        .await
                        .map_err(|error| (index, error))?;
                    tracing::error!(
                        %code,
                        event_id = %entry.event_id,
                        event_type = %entry.event_type,
                        tenant = %entry.tenant,
                        "the bus refused an event for good; it is in the dead-letter queue"
                    );
                }
                // The mapping starts again here. The entries after it are read again with it,
                // and those among them refused for good are refused again and dead-lettered
                // then: each once.
                Fate::Pending => {
                    let error = error.take().unwrap_or_else(|| {
                        Error::unavailable("put events", "the bus refused events in every round")
                    });
                    return Err((index, error));
                }
            }
        }
        Ok(())
    }

    /// Puts `entries` on the bus, sending those refused for now again for a few rounds. Answers
    /// each one's fate, and the error of a PutEvents that failed as a whole (after which
    /// nothing more is sent).
    async fn put_all(&self, entries: &[&EventEntry]) -> (Vec<Fate>, Option<Error>) {
        let mut fates = vec![Fate::Pending; entries.len()];
        for round in 0..ROUNDS {
            let sending: Vec<usize> = (0..entries.len())
                .filter(|&i| fates[i] == Fate::Pending)
                .collect();
            if sending.is_empty() {
                break;
            }
            if round > 0 {
                tokio::time::sleep(Duration::from_millis(100 << round)).await;
            }
            let batch: Vec<&EventEntry> = sending.iter().map(|&i| entries[i]).collect();
            let results = match self.bus.put(&batch).await {
                Ok(results) => results,
                Err(error) => return (fates, Some(error)),
            };
            for (index, put) in sending.into_iter().zip(results) {
                fates[index] = match put {
                    Put::Accepted => Fate::Published,
                    Put::Refused(code) => {
                        tracing::warn!(%code, "bus refused an event for now");
                        Fate::Pending
                    }
                    Put::Rejected(code) => Fate::Rejected(code),
                };
            }
        }
        (fates, None)
    }
}

/// The log line of an event put on the bus: its id, kind and tenant, never its `detail`, which
/// may hold what a person wrote (a file name, a stop reason, an error about a file).
fn published(entry: &EventEntry) {
    tracing::info!(
        event_id = %entry.event_id,
        event_type = %entry.event_type,
        tenant = %entry.tenant,
        "event published"
    );
}

//! The event publisher (D20): the table's stream, filtered to new outbox items, onto the bus.
//!
//! The event source mapping hands over a shard's records in order and moves past a batch only
//! when the function answers without failures; a failure names the first record not yet on the
//! bus, and the mapping starts again there (`ReportBatchItemFailures`). So an event is lost
//! neither when the function that committed it dies (it never publishes: the commit is the
//! outbox item) nor when this one dies or the bus refuses (the record is read again). What can
//! happen is a second delivery of an event that was put just before a failure; consumers drop it
//! by its `eventId`.

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use outbound_adapters::bus::{Bus, Put, PUT_EVENTS_MAX};
use outbound_adapters::store::outbox::outbox_entry;
use outbound_model::error::Error;
use outbound_model::event::EventEntry;
use std::time::Duration;

/// Rounds a PutEvents' refused entries are sent again within one invocation before the batch
/// is handed back to the mapping (which would send the accepted entries after them again too).
const ROUNDS: u32 = 3;

/// Publishes every outbox item among `event`'s records, in order. Answers the sequence number
/// of the first one not published, if any.
#[tracing::instrument(skip_all, fields(records = event.records.len()))]
pub async fn publish(bus: &Bus, event: StreamEvent) -> DynamoDbEventResponse {
    let mut pending: Vec<(Option<String>, EventEntry)> = Vec::new();
    for record in event.records {
        if record.event_name != "INSERT" {
            continue;
        }
        match outbox_entry(record.change.new_image) {
            Some(entry) => pending.push((record.change.sequence_number, entry)),
            // The mapping's filter lets only outbox items through; anything else is not ours
            // to hold the shard up for.
            None => tracing::warn!(
                sequence = ?record.change.sequence_number,
                "stream record is not an outbox item; skipped"
            ),
        }
    }
    let mut response = DynamoDbEventResponse::default();
    for chunk in pending.chunks(PUT_EVENTS_MAX) {
        let entries: Vec<&EventEntry> = chunk.iter().map(|(_, entry)| entry).collect();
        match put_all(bus, &entries).await {
            Ok(()) => {
                for entry in entries {
                    tracing::info!(
                        event_type = %entry.event_type,
                        tenant = %entry.tenant,
                        detail = %entry.detail,
                        "event published"
                    );
                }
            }
            Err((first_unpublished, error)) => {
                tracing::warn!(%error, "events not published; the batch is read again");
                let mut failure = DynamoDbBatchItemFailure::default();
                failure.item_identifier = chunk[first_unpublished].0.clone();
                response.batch_item_failures.push(failure);
                return response;
            }
        }
    }
    response
}

/// Puts `entries` on the bus, sending refused ones again for a few rounds. On failure, answers
/// the index of the first entry not on the bus.
async fn put_all(bus: &Bus, entries: &[&EventEntry]) -> Result<(), (usize, Error)> {
    let mut unpublished: Vec<usize> = (0..entries.len()).collect();
    for round in 0..ROUNDS {
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(100 << round)).await;
        }
        let sending: Vec<&EventEntry> = unpublished.iter().map(|&i| entries[i]).collect();
        let results = match bus.put(&sending).await {
            Ok(results) => results,
            Err(error) => return Err((unpublished[0], error)),
        };
        unpublished = unpublished
            .into_iter()
            .zip(results)
            .filter_map(|(index, put)| match put {
                Put::Accepted => None,
                Put::Refused(code) => {
                    tracing::warn!(%code, "bus refused an event");
                    Some(index)
                }
            })
            .collect();
        if unpublished.is_empty() {
            return Ok(());
        }
    }
    Err((
        unpublished[0],
        Error::unavailable("put events", "the bus refused events in every round"),
    ))
}

/// The publisher Lambda: the bus named by `EVENT_BUS_NAME`, then every stream batch through
/// [`publish`].
pub async fn serve() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let name = std::env::var("EVENT_BUS_NAME").map_err(|_| "EVENT_BUS_NAME is not set")?;
    let sdk = outbound_adapters::aws::sdk_config().await;
    let bus = Bus::new(
        outbound_adapters::aws::Lazy::new(move || aws_sdk_eventbridge::Client::new(&sdk)),
        name,
    );
    let bus = &bus;
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<StreamEvent>| async move {
            Ok::<_, lambda_runtime::Error>(publish(bus, event.payload).await)
        },
    ))
    .await
}

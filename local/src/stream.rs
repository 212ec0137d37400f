//! The local stand-in of the event publisher's event source mapping (D20), as `template.yaml`
//! configures it in AWS: it reads the table's stream from where it last got to, keeps only
//! INSERTs of outbox items (the mapping's filter), hands them to the publisher
//! (`outbound_workers::events::Publisher`) ten at a time in stream order, and moves past a batch
//! only when the publisher reports no failure; after one, it starts again at the record the
//! publisher named. Unlike the mapping in AWS it retries such a record for ever: its retries
//! come every pump (200 ms in the local API), not at Lambda's pace, so a count of them would
//! mean nothing of the template's `MaximumRetryAttempts`, and it has no on-failure queue.
//!
//! Each read takes a fresh shard iterator after the checkpoint (one request, constant time). The
//! shard is described once and kept until an iterator for it is refused: dynoxide answers
//! `DescribeStream` by reading every record the stream holds (it keeps them all), 80 ms at
//! 300,000 records, and a description every pump held the database for most of each 200 ms.

use aws_lambda_events::event::dynamodb::{Event as StreamEvent, EventRecord};
use aws_sdk_dynamodbstreams::types::{OperationType, Record, ShardIteratorType};
use outbound_adapters::bus::PUT_EVENTS_MAX;
use outbound_adapters::store::keys;
use outbound_workers::events::Publisher;
use std::time::Duration;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Records one stream read asks for.
const READ_LIMIT: i32 = 1000;

/// Follows one table's stream for one publisher.
pub struct StreamMapping {
    streams: aws_sdk_dynamodbstreams::Client,
    stream_arn: String,
    publisher: Publisher,
    /// The sequence number of the last record handled (published or filtered out).
    checkpoint: Option<String>,
    /// The stream's shard, as last described.
    shard: Option<String>,
}

/// What one [`StreamMapping::pump`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pumped {
    /// Outbox items handed to the publisher and not reported failed: on the bus, or in its
    /// dead-letter queue.
    pub published: usize,
    /// Batches the publisher reported a failure for; the pump stopped at the first.
    pub failed: usize,
}

impl StreamMapping {
    /// A mapping from the start of the stream (`TRIM_HORIZON`, as the template's).
    pub fn new(
        sdk: &aws_config::SdkConfig,
        stream_arn: &str,
        publisher: Publisher,
    ) -> StreamMapping {
        StreamMapping {
            streams: aws_sdk_dynamodbstreams::Client::new(sdk),
            stream_arn: stream_arn.to_owned(),
            publisher,
            checkpoint: None,
            shard: None,
        }
    }

    /// Publishes what the stream holds past the checkpoint, until it is read to its end or the
    /// publisher reports a failure.
    pub async fn pump(&mut self) -> Result<Pumped, BoxError> {
        let mut pumped = Pumped::default();
        loop {
            let records = self.read().await?;
            if records.is_empty() {
                return Ok(pumped);
            }
            let last = records
                .last()
                .and_then(|r| r.dynamodb.as_ref())
                .and_then(|r| r.sequence_number.clone());
            let outbox: Vec<EventRecord> = records.into_iter().filter_map(lambda_record).collect();
            for batch in outbox.chunks(PUT_EVENTS_MAX) {
                let mut event = StreamEvent::default();
                event.records = batch.to_vec();
                let response = self.publisher.publish(event).await;
                match response.batch_item_failures.first() {
                    None => {
                        pumped.published += batch.len();
                        self.checkpoint =
                            batch.last().and_then(|r| r.change.sequence_number.clone());
                    }
                    Some(failure) => {
                        // Start again at the record named: the checkpoint is the one before it.
                        let failed_at = failure.item_identifier.as_deref();
                        let index = batch
                            .iter()
                            .position(|r| r.change.sequence_number.as_deref() == failed_at)
                            .unwrap_or(0);
                        pumped.published += index;
                        if index > 0 {
                            self.checkpoint = batch[index - 1].change.sequence_number.clone();
                        }
                        pumped.failed += 1;
                        return Ok(pumped);
                    }
                }
            }
            // Past the records the filter dropped too.
            self.checkpoint = last;
        }
    }

    /// Pumps every `every` for ever (the local API's background publisher).
    pub async fn follow(mut self, every: Duration) {
        loop {
            if let Err(error) = self.pump().await {
                tracing::warn!(%error, "reading the table's stream failed");
            }
            tokio::time::sleep(every).await;
        }
    }

    /// The records after the checkpoint, up to [`READ_LIMIT`].
    async fn read(&mut self) -> Result<Vec<Record>, BoxError> {
        let shard = match &self.shard {
            Some(shard) => shard.clone(),
            None => {
                let described = self
                    .streams
                    .describe_stream()
                    .stream_arn(&self.stream_arn)
                    .send()
                    .await
                    .map_err(aws_sdk_dynamodbstreams::Error::from)?;
                let Some(shard) = described
                    .stream_description()
                    .and_then(|d| d.shards().first())
                    .and_then(|s| s.shard_id())
                else {
                    return Ok(Vec::new());
                };
                self.shard.insert(shard.to_owned()).clone()
            }
        };
        let iterator = self
            .streams
            .get_shard_iterator()
            .stream_arn(&self.stream_arn)
            .shard_id(shard);
        let iterator = match &self.checkpoint {
            Some(sequence) => iterator
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(sequence),
            None => iterator.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        let iterator = match iterator.send().await {
            Ok(answer) => answer.shard_iterator.ok_or("no shard iterator")?,
            Err(error) => {
                // The shard may be gone (the table made again): described anew next time.
                self.shard = None;
                return Err(aws_sdk_dynamodbstreams::Error::from(error).into());
            }
        };
        let records = self
            .streams
            .get_records()
            .shard_iterator(iterator)
            .limit(READ_LIMIT)
            .send()
            .await
            .map_err(aws_sdk_dynamodbstreams::Error::from)?
            .records
            .unwrap_or_default();
        Ok(records)
    }
}

/// The record as the Lambda event carries it, if the mapping's filter lets it through: an
/// INSERT of an item whose sort key is the outbox's.
fn lambda_record(record: Record) -> Option<EventRecord> {
    if record.event_name != Some(OperationType::Insert) {
        return None;
    }
    let change = record.dynamodb?;
    let is_outbox = change
        .keys
        .as_ref()
        .and_then(|keys| keys.get(keys::SK))
        .and_then(|sk| sk.as_s().ok())
        .is_some_and(|sk| sk == keys::EVENT);
    if !is_outbox {
        return None;
    }
    let mut lambda = EventRecord::default();
    lambda.event_name = "INSERT".to_owned();
    lambda.event_id = record.event_id.unwrap_or_default();
    lambda.change.sequence_number = change.sequence_number;
    lambda.change.keys = change.keys.unwrap_or_default().into();
    lambda.change.new_image = change.new_image.unwrap_or_default().into();
    Some(lambda)
}

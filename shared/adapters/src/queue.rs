//! SQS: one typed queue for every message the service sends itself (dial jobs, reclaim jobs,
//! export jobs, the simulated provider's outcomes). A message is a serde type that says what it
//! is ([`Message`]); its ids and tenant are typed inside it, so a receiver gets them parsed
//! ([`decode`]) and never re-reads a string by hand.

use crate::aws::Lazy;
use outbound_model::error::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::marker::PhantomData;

/// A message one of the service's queues carries.
pub trait Message: Serialize + DeserializeOwned {
    /// What sending it is called in logs and errors, e.g. "send dial jobs".
    const SEND: &'static str;
    /// What reading it is called in logs and errors, e.g. "decode dial job".
    const DECODE: &'static str;
    /// The variable that names its queue, for the error when it is not set.
    const QUEUE_URL: &'static str;
}

/// Reads one message body. A body that is not a `M` is an internal error: only the service
/// writes to its queues.
pub fn decode<M: Message>(body: &str) -> Result<M, Error> {
    serde_json::from_str(body).map_err(|e| Error::internal(M::DECODE, e))
}

/// SendMessageBatch requests [`Queue::send_batch`] has in flight at once.
const SEND_CONCURRENCY: usize = 16;

/// Sends `M`s to one queue; cheap to clone. `url` is `None` in functions that send none of them.
#[derive(Debug)]
pub struct Queue<M> {
    sqs: Lazy<aws_sdk_sqs::Client>,
    url: Option<String>,
    message: PhantomData<fn(M)>,
}

impl<M> Clone for Queue<M> {
    fn clone(&self) -> Self {
        Queue {
            sqs: self.sqs.clone(),
            url: self.url.clone(),
            message: PhantomData,
        }
    }
}

impl<M: Message> Queue<M> {
    pub fn new(sqs: Lazy<aws_sdk_sqs::Client>, url: Option<String>) -> Self {
        Queue {
            sqs,
            url,
            message: PhantomData,
        }
    }

    fn url(&self) -> Result<&str, Error> {
        self.url
            .as_deref()
            .ok_or_else(|| Error::unavailable(M::SEND, format!("{} is not set", M::QUEUE_URL)))
    }

    fn body(message: &M) -> Result<String, Error> {
        serde_json::to_string(message).map_err(|e| Error::internal(M::SEND, e))
    }

    /// Sends one message, visible after `delay_seconds`. A queue that does not take it is
    /// unavailable (D1: 503), whatever SQS answered: nothing was queued, and the sender's own
    /// state says what to do next (an export job is marked FAILED, a reclaim waits for the sweep).
    pub async fn send(&self, message: &M, delay_seconds: u32) -> Result<(), Error> {
        let url = self.url()?;
        self.sqs
            .get()
            .send_message()
            .queue_url(url)
            .message_body(Self::body(message)?)
            .delay_seconds(delay_seconds.min(900) as i32)
            .send()
            .await
            .map_err(|e| Error::unavailable(M::SEND, aws_sdk_sqs::Error::from(e)))?;
        Ok(())
    }

    /// Sends each message after its delay (seconds), ten a request, up to
    /// [`SEND_CONCURRENCY`] requests at once: a tick of 10,000 running tasks is 1,000 requests,
    /// which one after another would take most of the tick's minute. Entries SQS refuses are
    /// logged and answered as how many: their senders send them again on their next round.
    pub async fn send_batch(&self, messages: Vec<(M, u32)>) -> Result<usize, Error> {
        use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
        use futures::stream::{self, StreamExt, TryStreamExt};
        if messages.is_empty() {
            return Ok(0);
        }
        let url = self.url()?;
        let mut batches = Vec::with_capacity(messages.len().div_ceil(10));
        for chunk in messages.chunks(10) {
            let mut entries = Vec::with_capacity(chunk.len());
            for (index, (message, delay)) in chunk.iter().enumerate() {
                entries.push(
                    SendMessageBatchRequestEntry::builder()
                        .id(index.to_string())
                        .message_body(Self::body(message)?)
                        .delay_seconds((*delay).min(900) as i32)
                        .build()
                        .map_err(|e| Error::internal(M::SEND, e))?,
                );
            }
            batches.push(entries);
        }
        let refused = stream::iter(batches)
            .map(|entries| async move {
                let output = self
                    .sqs
                    .get()
                    .send_message_batch()
                    .queue_url(url)
                    .set_entries(Some(entries))
                    .send()
                    .await
                    .map_err(|e| Error::unavailable(M::SEND, aws_sdk_sqs::Error::from(e)))?;
                Ok::<_, Error>(output.failed.len())
            })
            .buffer_unordered(SEND_CONCURRENCY)
            .try_fold(0, |sum, failed| async move { Ok(sum + failed) })
            .await?;
        if refused > 0 {
            tracing::warn!(refused, what = M::SEND, "messages not queued");
        }
        Ok(refused)
    }
}

impl Message for outbound_model::reclaim::ReclaimJob {
    const SEND: &'static str = "queue reclaim job";
    const DECODE: &'static str = "decode reclaim job";
    const QUEUE_URL: &'static str = "RECLAIM_QUEUE_URL";
}

impl Message for outbound_model::export::ExportMessage {
    const SEND: &'static str = "queue export job";
    const DECODE: &'static str = "decode export job";
    const QUEUE_URL: &'static str = "EXPORT_QUEUE_URL";
}

impl Message for crate::bus::RefusedEvent {
    const SEND: &'static str = "dead-letter a refused event";
    const DECODE: &'static str = "decode refused event";
    const QUEUE_URL: &'static str = "EVENT_DEAD_LETTER_QUEUE_URL";
}

impl Message for outbound_model::job::DialJob {
    const SEND: &'static str = "send dial jobs";
    const DECODE: &'static str = "decode dial job";
    const QUEUE_URL: &'static str = "DIAL_QUEUE_URL";
}

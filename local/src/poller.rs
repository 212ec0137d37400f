//! Feeds SQS messages to the same handlers the queue-triggered Lambdas run, as the Lambda
//! service would: a batch at a time, deleting what was handled and leaving failures for
//! redelivery.

use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
use outbound_model::error::Error;
use std::future::Future;
use std::time::Duration;

/// Handles every message now in the queue; answers how many were handled successfully.
pub async fn drain<F, Fut>(
    sqs: &aws_sdk_sqs::Client,
    queue_url: &str,
    handle: F,
) -> Result<usize, Error>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut handled = 0;
    loop {
        // No long polling: the local stand-in serves one request at a time.
        let received = sqs
            .receive_message()
            .queue_url(queue_url)
            .max_number_of_messages(10)
            .send()
            .await
            .map_err(|e| Error::internal("receive messages", aws_sdk_sqs::Error::from(e)))?;
        let messages = received.messages.unwrap_or_default();
        if messages.is_empty() {
            return Ok(handled);
        }
        let mut event = SqsEvent::default();
        let mut receipts = Vec::new();
        for message in messages {
            let mut record = SqsMessage::default();
            record.message_id = message.message_id;
            record.body = message.body;
            receipts.push((
                record.message_id.clone().unwrap_or_default(),
                message.receipt_handle,
            ));
            event.records.push(record);
        }
        let response = outbound_edge::each_message(event, &handle).await;
        let failed: Vec<&str> = response
            .batch_item_failures
            .iter()
            .map(|failure| failure.item_identifier.as_str())
            .collect();
        for (id, receipt) in receipts {
            if failed.contains(&id.as_str()) {
                continue;
            }
            handled += 1;
            if let Some(receipt) = receipt {
                sqs.delete_message()
                    .queue_url(queue_url)
                    .receipt_handle(receipt)
                    .send()
                    .await
                    .map_err(|e| Error::internal("delete message", aws_sdk_sqs::Error::from(e)))?;
            }
        }
        if !failed.is_empty() {
            return Ok(handled);
        }
    }
}

/// Drains the queue every half second, for ever.
pub async fn poll<F, Fut>(sqs: aws_sdk_sqs::Client, queue_url: String, handle: F)
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    loop {
        if let Err(error) = drain(&sqs, &queue_url, &handle).await {
            tracing::warn!(%error, queue = %queue_url, "polling failed");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

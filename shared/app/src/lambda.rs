//! The life of a queue-triggered function, shared by every one of them: each message of an SQS
//! batch handled on its own, and only the failed ones reported back for redelivery (partial
//! batch failures).

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use outbound_model::error::Error;
use std::future::Future;

/// Runs `handle` on every message body and reports the ids of those that failed.
pub async fn each_message<F, Fut>(event: SqsEvent, handle: F) -> SqsBatchResponse
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut response = SqsBatchResponse::default();
    for message in event.records {
        let id = message.message_id.unwrap_or_default();
        if let Err(error) = handle(message.body.unwrap_or_default()).await {
            tracing::error!(message_id = %id, %error, cause = ?error, "message failed; it will be redelivered");
            response.add_failure(id);
        }
    }
    response
}

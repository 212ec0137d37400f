//! The import Lambda: S3 upload notifications, through SQS, imported one file a message.

use outbound::worker::{serve, Queue};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve(Queue::Uploads).await
}

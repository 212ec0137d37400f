//! The import Lambda: S3 upload notifications, through SQS, imported one file a message.

use outbound_workers::{serve, Inbox};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve(Inbox::Uploads).await
}

//! The export Lambda: export jobs (D8), through SQS, each built into one file in S3.

use outbound_workers::{serve, Inbox};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve(Inbox::Exports).await
}

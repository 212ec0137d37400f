//! The export Lambda: export jobs (D8), through SQS, each built into one file in S3.

use outbound::worker::{serve, Queue};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve(Queue::Exports).await
}

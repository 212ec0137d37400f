//! The export Lambda: export jobs (D8), through SQS, each built into one file in S3.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_exporter().await
}

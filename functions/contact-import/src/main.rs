//! The import Lambda: S3 upload notifications, through SQS, imported one file a message.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_contact_import().await
}

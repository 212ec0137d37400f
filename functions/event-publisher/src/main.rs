//! The event publisher Lambda (the table's stream, new outbox items only): puts each committed
//! domain event on the EventBridge bus (D20).

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_event_publisher().await
}

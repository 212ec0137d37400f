//! The call-events Lambda (call-events queue: Amazon Connect contact events through
//! EventBridge, and the simulated provider's outcomes): records each outcome exactly once (D13).

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_call_events().await
}

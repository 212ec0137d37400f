//! The call-events Lambda (call-events queue: Amazon Connect contact events through
//! EventBridge, and the simulated provider's outcomes): records each outcome exactly once (D13).

use outbound_dialing::lambda::{serve_queue, DialInbox};

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    serve_queue(DialInbox::CallEvents).await
}

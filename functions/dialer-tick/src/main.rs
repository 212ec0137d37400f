//! The tick Lambda (EventBridge schedule, every minute): one dial job per running task inside
//! its window, one reconcile job per call whose outcome is overdue (D13).

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound::worker::dialing::serve_tick().await
}

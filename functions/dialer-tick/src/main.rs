//! The tick Lambda (EventBridge schedule, every minute): one dial job per running task that may
//! dial now (inside its window when it is read in the task's zone, D13; any task whose window is
//! read in each called party's zone, D15), one reconcile job per call whose outcome is overdue.

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    outbound_edge::serve_dialer_tick().await
}

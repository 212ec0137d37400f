//! The task Lambda: every `/api/task/...` route behind the HTTP API.

use outbound_app::{config::Config, App};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    outbound_telemetry::init();
    // It signs list tokens (D5) and queues export jobs (D8): without PAGE_TOKEN_SECRET or
    // EXPORT_QUEUE_URL it does not start.
    let app = App::from_config(Config::from_env()?.serving_api()?).await;
    lambda_http::run(outbound_api::task_api(app)).await
}

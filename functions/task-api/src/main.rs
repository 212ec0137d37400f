//! The task Lambda: every `/api/task/...` route behind the HTTP API.

use outbound::{config::Config, http, telemetry};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    telemetry::init();
    let app = http::App::from_config(Config::from_env()?).await;
    lambda_http::run(http::task_api(app)).await
}

//! The data source Lambda: every `/api/dataSource/...` route behind the HTTP API.

use outbound::{app::App, config::Config, http, telemetry};

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    telemetry::init();
    // It signs list tokens (D5) and queues export jobs (D8): without PAGE_TOKEN_SECRET or
    // EXPORT_QUEUE_URL it does not start.
    let app = App::from_config(Config::from_env()?.serving_api()?).await;
    lambda_http::run(http::datasource_api(app)).await
}

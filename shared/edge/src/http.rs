//! The two API functions: the configuration every function reads and the API's own part
//! ([`ApiConfig`]: the list tokens' key and the export queue), then `lambda_http` over the
//! function's router.

use outbound_app::config::{ApiConfig, Config};
use outbound_app::App;
use outbound_model::error::ConfigError;

/// datasource-api: every `/api/dataSource/...` route, the export jobs', the settings', the
/// do-not-call list's and the operator's.
pub async fn serve_datasource_api() -> Result<(), lambda_http::Error> {
    let (app, api) = start().await?;
    lambda_http::run(outbound_api::datasource_api(app, api)).await
}

/// task-api: every `/api/task/...` route.
pub async fn serve_task_api() -> Result<(), lambda_http::Error> {
    let (app, api) = start().await?;
    lambda_http::run(outbound_api::task_api(app, api)).await
}

/// An API function's parts: without `PAGE_TOKEN_SECRET` or `EXPORT_QUEUE_URL` it does not
/// start.
async fn start() -> Result<(App, ApiConfig), ConfigError> {
    outbound_telemetry::init();
    let config = Config::from_env()?;
    let api = ApiConfig::from_config(&config)?;
    Ok((App::from_config(config).await, api))
}

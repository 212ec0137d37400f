//! The two API functions: the configuration every function reads and the API's own part
//! ([`ApiConfig`]: the list tokens' key, read from Secrets Manager at cold start, and the export
//! queue), then `lambda_http` over the function's router.

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

/// An API function's parts: without the page-token key (read from Secrets Manager by
/// `PAGE_TOKEN_SECRET_ARN`, D32) or `EXPORT_QUEUE_URL` it does not start.
async fn start() -> Result<(App, ApiConfig), ConfigError> {
    outbound_telemetry::init();
    let sdk = outbound_adapters::aws::sdk_config().await;
    let config = Config::from_env(&sdk).await?;
    let api = ApiConfig::from_config(&config)?;
    Ok((App::with_sdk(config, &sdk), api))
}

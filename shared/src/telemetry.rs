//! Logging set-up shared by every binary: JSON lines in Lambda, readable lines locally.

/// Installs the global tracing subscriber once. `RUST_LOG` filters (default `info`).
pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    // AWS_LAMBDA_FUNCTION_NAME is set by the Lambda runtime: CloudWatch wants one JSON object a line.
    let result = if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
        builder.json().without_time().try_init()
    } else {
        builder.try_init()
    };
    // A second init (tests start several servers in one process) is harmless.
    drop(result);
}

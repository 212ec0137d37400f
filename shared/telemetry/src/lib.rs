//! Logging set-up shared by every binary (JSON lines in Lambda, readable lines locally), and
//! metrics in CloudWatch's Embedded Metric Format.

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

/// The unit of a metric value, as CloudWatch names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Count,
    Milliseconds,
    Seconds,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Count => "Count",
            Unit::Milliseconds => "Milliseconds",
            Unit::Seconds => "Seconds",
        }
    }
}

/// The CloudWatch namespace of every metric of the service.
pub const NAMESPACE: &str = "outbound";

/// One record in CloudWatch's Embedded Metric Format: metric values with their dimensions, as
/// one JSON object that CloudWatch Logs turns into metrics without any API call.
pub fn metric_record(
    at_millis: i64,
    dimensions: &[(&str, &str)],
    values: &[(&str, f64, Unit)],
) -> serde_json::Value {
    let mut record = serde_json::Map::new();
    let names: Vec<&str> = dimensions.iter().map(|(name, _)| *name).collect();
    let metrics: Vec<serde_json::Value> = values
        .iter()
        .map(|(name, _, unit)| serde_json::json!({"Name": name, "Unit": unit.name()}))
        .collect();
    record.insert(
        "_aws".into(),
        serde_json::json!({
            "Timestamp": at_millis,
            "CloudWatchMetrics": [{
                "Namespace": NAMESPACE,
                "Dimensions": [names],
                "Metrics": metrics,
            }],
        }),
    );
    for (name, value) in dimensions {
        record.insert((*name).into(), (*value).into());
    }
    for (name, value, _) in values {
        record.insert((*name).into(), (*value).into());
    }
    serde_json::Value::Object(record)
}

/// Emits metric values on a line of their own in Lambda, where CloudWatch Logs reads them;
/// elsewhere (the local stack, tests) they go to the debug log.
pub fn metrics(dimensions: &[(&str, &str)], values: &[(&str, f64, Unit)]) {
    let record = metric_record(outbound_model::Timestamp::now().0, dimensions, values);
    if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
        println!("{record}");
    } else {
        tracing::debug!(%record, "metrics");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_records_are_embedded_metric_format() {
        let record = metric_record(
            1_700_000_000_000,
            &[("Route", "/api/task/list")],
            &[
                ("Latency", 12.5, Unit::Milliseconds),
                ("Requests", 1.0, Unit::Count),
            ],
        );
        assert_eq!(
            record,
            serde_json::json!({
                "_aws": {
                    "Timestamp": 1_700_000_000_000_i64,
                    "CloudWatchMetrics": [{
                        "Namespace": "outbound",
                        "Dimensions": [["Route"]],
                        "Metrics": [
                            {"Name": "Latency", "Unit": "Milliseconds"},
                            {"Name": "Requests", "Unit": "Count"}
                        ]
                    }]
                },
                "Route": "/api/task/list",
                "Latency": 12.5,
                "Requests": 1.0
            })
        );
    }
}

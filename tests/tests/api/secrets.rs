//! The keys read at cold start from Secrets Manager (D32), against moto's: each function that
//! has a key reads it by the ARN its environment names, inside Lambda, and its configuration
//! holds that key; a secret that is not there fails the start with an error naming the variable.
//!
//! Each function's read runs in its own scope, as its cold start does before its handler, so
//! the least-privilege check sees it as that function's read of that secret
//! (`scripts/iam_check.py`: its role may read its own secret and no other).

use outbound_adapters::aws::actions::{name_resources, Function};
use outbound_app::config::secrets::{Secret, Secrets, SECRETS};
use outbound_app::config::{lookup, ApiConfig, Config};
use outbound_local::provision::ensure_secret;
use outbound_tests::stack::unique;

/// The functions that read secrets at cold start, and which of [`SECRETS`] (template.yaml): the
/// API functions the page-token key and the distribution's secret, the dialing ones the
/// call-signing key.
const READERS: [(Function, &[usize]); 6] = [
    (Function::DataSourceApi, &[0, 2]),
    (Function::TaskApi, &[0, 2]),
    (Function::DialerTick, &[1]),
    (Function::Dialer, &[1]),
    (Function::CallEvents, &[1]),
    (Function::FlowResults, &[1]),
];

/// What every function's configuration needs beside its secrets, inside Lambda.
fn environment<'a>(function: Function, secrets: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut pairs = vec![
        ("AWS_LAMBDA_FUNCTION_NAME", function.name()),
        ("AUTH_MODE", "apigateway"),
        ("TABLE_NAME", "t"),
        ("BUCKET_NAME", "b"),
        ("RECLAIM_QUEUE_URL", "q"),
        ("EXPORT_QUEUE_URL", "q2"),
    ];
    pairs.extend_from_slice(secrets);
    pairs
}

#[tokio::test]
async fn each_function_reads_its_secret_by_arn_at_cold_start() {
    let sdk = outbound_local::sdk_config().await;
    let mut stored: Vec<(Secret, String, String)> = Vec::new();
    for secret in SECRETS {
        let key = format!("{}-{}", unique("key"), secret.name.to_lowercase());
        let arn = ensure_secret(&sdk, &unique("secret"), &key)
            .await
            .expect("moto is running (make test starts it)");
        stored.push((secret, arn, key));
    }
    let names: Vec<(&str, &str)> = stored
        .iter()
        .map(|(secret, arn, _)| (secret.arn_variable, arn.as_str()))
        .collect();
    name_resources(&names);
    for (function, which) in READERS {
        let named: Vec<(&str, &str)> = which
            .iter()
            .map(|&at| (stored[at].0.arn_variable, stored[at].1.as_str()))
            .collect();
        let pairs = environment(function, &named);
        let environment = lookup(&pairs);
        let read = function
            .scope(Secrets::read(&environment, &sdk))
            .await
            .unwrap_or_else(|error| panic!("{}: {error}", function.name()));
        let overlay = read.overlay(&environment);
        for &at in which {
            let (secret, _, key) = &stored[at];
            assert_eq!(
                overlay(secret.name).as_deref(),
                Some(key.as_str()),
                "{}",
                function.name()
            );
        }
        let config = Config::from_lookup(&overlay)
            .unwrap_or_else(|error| panic!("{}: {error}", function.name()));
        if which.contains(&0) {
            let api = ApiConfig::from_config(&config)
                .unwrap_or_else(|error| panic!("{}: {error}", function.name()));
            let origin = api.origin.expect("the distribution's secret");
            assert!(origin.admits(Some(stored[2].2.as_bytes())));
            assert!(config.call_signer.is_none(), "only its own key");
        } else {
            assert!(config.call_signer.is_some(), "{}", function.name());
            assert!(config.page_tokens.is_none(), "only its own key");
        }
    }
}

/// Read outside any function's scope: the ARN names nothing, so no role is asked about it.
#[tokio::test]
async fn a_secret_that_is_not_there_fails_the_start_naming_its_variable() {
    let sdk = outbound_local::sdk_config().await;
    let missing = format!(
        "arn:aws:secretsmanager:{}:123456789012:secret:{}-AbCdEf",
        outbound_local::REGION,
        unique("gone")
    );
    for secret in SECRETS {
        let pairs = environment(Function::Dialer, &[(secret.arn_variable, &missing)]);
        let error = Secrets::read(&lookup(&pairs), &sdk)
            .await
            .expect_err("no such secret");
        assert_eq!(error.name, secret.arn_variable);
        assert!(error.problem.contains(&missing), "{}", error.problem);
    }
}

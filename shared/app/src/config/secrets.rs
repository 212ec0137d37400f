//! The configuration's secrets (D32): the key of list tokens (`PAGE_TOKEN_SECRET`, D5), the
//! key of each call's own attributes (`CALL_SIGNING_KEY`, D29) and the value the distribution
//! proves itself with (`ORIGIN_VERIFY_SECRET`, D32). They live in AWS Secrets Manager
//! and are read at cold start: a function's environment names each by its ARN
//! (`PAGE_TOKEN_SECRET_ARN`, `CALL_SIGNING_SECRET_ARN`) and never holds its value, which anyone
//! allowed `lambda:GetFunctionConfiguration` (ReadOnlyAccess allows it) could read there.
//!
//! [`Secrets::read`] reads the secrets the environment names, once, before the configuration is
//! read; [`Secrets::overlay`] hands their values to [`super::Config::from_lookup`] under the plain
//! names, where every key's checks apply (at least 32 characters). So the configuration stays a
//! sync function of its variables, tested without AWS, and only a function whose environment
//! names a secret builds a Secrets Manager client.
//!
//! Inside Lambda (`AWS_LAMBDA_FUNCTION_NAME` set) a plain value is refused, so that a secret
//! cannot slip back into a function's environment; outside it (the local API, the tests) the
//! plain variables and the development keys (`OUTBOUND_DEV_STACK=true`) work as they always did.
//! A secret that cannot be read fails the cold start with an error naming its `_ARN` variable,
//! never a request.

use super::{CALL_SIGNING_KEY, ORIGIN_VERIFY_SECRET, PAGE_TOKEN_SECRET};
use outbound_adapters::aws::Lazy;
use outbound_adapters::secrets::{SecretError, SecretReader};
use outbound_model::error::ConfigError;
use std::future::Future;

/// The variable that names the page-token secret by ARN.
pub const PAGE_TOKEN_SECRET_ARN: &str = "PAGE_TOKEN_SECRET_ARN";
/// The variable that names the call-signing secret by ARN.
pub const CALL_SIGNING_SECRET_ARN: &str = "CALL_SIGNING_SECRET_ARN";
/// The variable that names the secret the distribution proves itself with by ARN.
pub const ORIGIN_VERIFY_SECRET_ARN: &str = "ORIGIN_VERIFY_SECRET_ARN";

/// A secret the configuration reads by value (`name`), and the variable that names it by ARN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Secret {
    pub name: &'static str,
    pub arn_variable: &'static str,
}

/// Every secret of the configuration.
pub const SECRETS: [Secret; 3] = [
    Secret {
        name: PAGE_TOKEN_SECRET,
        arn_variable: PAGE_TOKEN_SECRET_ARN,
    },
    Secret {
        name: CALL_SIGNING_KEY,
        arn_variable: CALL_SIGNING_SECRET_ARN,
    },
    Secret {
        name: ORIGIN_VERIFY_SECRET,
        arn_variable: ORIGIN_VERIFY_SECRET_ARN,
    },
];

/// The values of the secrets an environment names by ARN, read at cold start, each under the
/// name the configuration reads it by. Its `Debug` shows the names, never a value.
#[derive(Clone, Default)]
pub struct Secrets(Vec<(&'static str, String)>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| name))
            .finish()
    }
}

impl Secrets {
    /// Reads from Secrets Manager, through a client of `sdk`, each secret that `lookup` names by
    /// ARN; no client is built when it names none. See [`Secrets::resolve`] for what is refused.
    pub async fn read(
        lookup: &impl Fn(&str) -> Option<String>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Secrets, ConfigError> {
        let reader = {
            let sdk = sdk.clone();
            &Lazy::new(move || SecretReader::new(&sdk))
        };
        Self::resolve(lookup, |arn| async move { reader.get().value(&arn).await }).await
    }

    /// Reads through `read` (an ARN to its secret's value) each secret that `lookup` names by
    /// ARN. Refused, each with an error naming the variable: inside Lambda, a secret's plain
    /// variable with a value; anywhere, both a plain variable and its `_ARN` one; a secret that
    /// could not be read.
    pub async fn resolve<R, F>(
        lookup: &impl Fn(&str) -> Option<String>,
        read: R,
    ) -> Result<Secrets, ConfigError>
    where
        R: Fn(String) -> F,
        F: Future<Output = Result<String, SecretError>>,
    {
        let inside_lambda = lookup("AWS_LAMBDA_FUNCTION_NAME").is_some();
        let mut values = Vec::new();
        for secret in SECRETS {
            let plain = lookup(secret.name).is_some_and(|value| !value.trim().is_empty());
            let arn = arn(lookup, secret.arn_variable);
            if plain && inside_lambda {
                return Err(ConfigError {
                    name: secret.name,
                    problem: format!(
                        "holds a secret's value in the function's environment, where anyone who \
                         may read the function's configuration reads it: name the secret by its \
                         ARN in {} instead",
                        secret.arn_variable
                    ),
                });
            }
            let Some(arn) = arn else { continue };
            if plain {
                return Err(ConfigError {
                    name: secret.arn_variable,
                    problem: format!("and {} are both set: set one of them", secret.name),
                });
            }
            let value = read(arn.clone()).await.map_err(|error| ConfigError {
                name: secret.arn_variable,
                problem: format!("names {arn}, which {error}"),
            })?;
            values.push((secret.name, value));
        }
        Ok(Secrets(values))
    }

    /// `lookup` with the secrets read answering their plain names: what the configuration is
    /// read through ([`super::Config::from_lookup`]).
    pub fn overlay<'a>(
        &'a self,
        lookup: impl Fn(&str) -> Option<String> + 'a,
    ) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| match self.0.iter().find(|(secret, _)| *secret == name) {
            Some((_, value)) => Some(value.clone()),
            None => lookup(name),
        }
    }
}

/// The ARN the variable `name` holds, surrounding space dropped; `None` when absent or blank.
fn arn(lookup: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    lookup(name)
        .map(|arn| arn.trim().to_owned())
        .filter(|arn| !arn.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{lookup, ApiConfig, Config};

    const ARN: &str = "arn:aws:secretsmanager:eu-west-1:482915736204:secret:PageTokenSecret-AbCdEf";
    const KEY: &str = "0123456789abcdef0123456789abcdef";

    const BASE: [(&str, &str); 4] = [
        ("TABLE_NAME", "t"),
        ("BUCKET_NAME", "b"),
        ("RECLAIM_QUEUE_URL", "q"),
        ("EXPORT_QUEUE_URL", "q2"),
    ];

    fn with(pairs: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut all = BASE.to_vec();
        all.extend_from_slice(pairs);
        all
    }

    /// Secrets Manager as a map of ARNs to values; any other ARN is not found.
    async fn stored(arn: String) -> Result<String, SecretError> {
        match arn.as_str() {
            ARN => Ok(KEY.to_owned()),
            _ => Err(SecretError::Unread("ResourceNotFoundException".into())),
        }
    }

    async fn resolve(pairs: &[(&'static str, &'static str)]) -> Result<Secrets, ConfigError> {
        Secrets::resolve(&lookup(pairs), stored).await
    }

    #[tokio::test]
    async fn a_plain_secret_is_refused_inside_lambda_and_names_the_arn_variable() {
        for secret in SECRETS {
            let pairs = [
                ("AWS_LAMBDA_FUNCTION_NAME", "outbound-task-api"),
                (secret.name, KEY),
            ];
            let error = resolve(&with(&pairs)).await.unwrap_err();
            assert_eq!(error.name, secret.name);
            assert!(
                error.problem.contains(secret.arn_variable),
                "{}",
                error.problem
            );
            // Outside Lambda the plain variable is the value, as before.
            let outside = with(&[(secret.name, KEY)]);
            let secrets = resolve(&outside).await.unwrap();
            let environment = lookup(&outside);
            assert_eq!(
                secrets.overlay(&environment)(secret.name).as_deref(),
                Some(KEY)
            );
        }
        // A blank plain variable holds nothing to refuse.
        let blank = [
            ("AWS_LAMBDA_FUNCTION_NAME", "outbound-dialer"),
            ("CALL_SIGNING_KEY", " "),
        ];
        assert!(resolve(&with(&blank)).await.is_ok());
    }

    #[tokio::test]
    async fn a_secret_read_by_arn_is_the_configurations_value_and_checked_as_one() {
        let pairs = with(&[
            ("AWS_LAMBDA_FUNCTION_NAME", "outbound-task-api"),
            ("PAGE_TOKEN_SECRET_ARN", ARN),
        ]);
        let environment = lookup(&pairs);
        let secrets = Secrets::resolve(&environment, stored).await.unwrap();
        assert_eq!(
            format!("{secrets:?}"),
            r#"["PAGE_TOKEN_SECRET"]"#,
            "no value shown"
        );
        let overlay = secrets.overlay(&environment);
        assert_eq!(overlay("PAGE_TOKEN_SECRET").as_deref(), Some(KEY));
        assert_eq!(
            overlay("TABLE_NAME").as_deref(),
            Some("t"),
            "the rest as it was"
        );
        assert_eq!(overlay("CALL_SIGNING_KEY"), None);
        let config = Config::from_lookup(overlay).unwrap();
        assert!(ApiConfig::from_config(&config).is_ok());
        assert!(config.call_signer.is_none(), "only what the function names");

        // The value read meets the checks a plain one does.
        let short = Secrets::resolve(&environment, |_| async { Ok("too short".to_owned()) })
            .await
            .unwrap();
        let error = Config::from_lookup(short.overlay(&environment)).unwrap_err();
        assert_eq!(error.name, "PAGE_TOKEN_SECRET");
    }

    #[tokio::test]
    async fn a_secret_that_cannot_be_read_fails_naming_its_arn_variable() {
        let missing = "arn:aws:secretsmanager:eu-west-1:482915736204:secret:Gone-AbCdEf";
        let pairs = with(&[("CALL_SIGNING_SECRET_ARN", missing)]);
        let error = resolve(&pairs).await.unwrap_err();
        assert_eq!(error.name, "CALL_SIGNING_SECRET_ARN");
        assert!(error.problem.contains(missing), "{}", error.problem);
        let error = Secrets::resolve(&lookup(&pairs), |_| async { Err(SecretError::NotText) })
            .await
            .unwrap_err();
        assert_eq!(error.name, "CALL_SIGNING_SECRET_ARN");
    }

    #[tokio::test]
    async fn a_secret_given_both_ways_is_refused() {
        let pairs = with(&[("PAGE_TOKEN_SECRET", KEY), ("PAGE_TOKEN_SECRET_ARN", ARN)]);
        assert_eq!(
            resolve(&pairs).await.unwrap_err().name,
            "PAGE_TOKEN_SECRET_ARN"
        );
    }

    /// Without an ARN nothing is read, and the development stack keeps its built-in keys
    /// outside Lambda (never inside).
    #[tokio::test]
    async fn without_arns_nothing_is_read_and_the_development_keys_stay() {
        let pairs = with(&[("OUTBOUND_DEV_STACK", "true")]);
        let environment = lookup(&pairs);
        let reads = std::cell::Cell::new(0);
        let secrets = Secrets::resolve(&environment, |_| {
            reads.set(reads.get() + 1);
            async { Ok(KEY.to_owned()) }
        })
        .await
        .unwrap();
        assert_eq!(reads.get(), 0);
        let config = Config::from_lookup(secrets.overlay(&environment)).unwrap();
        assert!(config.page_tokens.is_some() && config.call_signer.is_some());
        let mut inside = pairs.clone();
        inside.push(("AWS_LAMBDA_FUNCTION_NAME", "outbound-dialer"));
        let environment = lookup(&inside);
        let secrets = resolve(&inside).await.unwrap();
        let config = Config::from_lookup(secrets.overlay(&environment)).unwrap();
        assert!(config.page_tokens.is_none() && config.call_signer.is_none());
    }
}

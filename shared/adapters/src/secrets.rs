//! Secrets Manager: the value of a secret named by its ARN, read once at a function's cold start
//! (`outbound_app::config::secrets`, D32). No function's environment holds a secret's value; it
//! holds the secret's ARN, and the function's role may read that secret and no other.
//!
//! The client is built only by a function whose environment names a secret, and only for that
//! one call; its requests are recorded for the least-privilege check like every other client's
//! ([`crate::aws::actions`]).

use crate::aws::actions;
use aws_smithy_types::error::display::DisplayErrorContext;

/// Reads secrets' values; built once at cold start, dropped once they are read.
#[derive(Clone, Debug)]
pub struct SecretReader {
    client: aws_sdk_secretsmanager::Client,
}

/// Why a secret's value could not be had: the service's answer or the connection's failure, or
/// a secret that holds binary data rather than text. Never the value.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("could not be read: {0}")]
    Unread(String),
    #[error("holds binary data, not a text value")]
    NotText,
}

impl SecretReader {
    /// A reader over the SDK configuration of the function (its credentials, region and, on the
    /// local stack, moto's endpoint).
    pub fn new(sdk: &aws_config::SdkConfig) -> SecretReader {
        let builder = aws_sdk_secretsmanager::config::Builder::from(sdk);
        let builder = match actions::interceptor(actions::secretsmanager) {
            Some(log) => builder.interceptor(log),
            None => builder,
        };
        SecretReader {
            client: aws_sdk_secretsmanager::Client::from_conf(builder.build()),
        }
    }

    /// The text value (`SecretString`) of the current version of the secret `arn`.
    pub async fn value(&self, arn: &str) -> Result<String, SecretError> {
        let answer = self
            .client
            .get_secret_value()
            .secret_id(arn)
            .send()
            .await
            .map_err(|error| SecretError::Unread(DisplayErrorContext(error).to_string()))?;
        answer.secret_string.ok_or(SecretError::NotText)
    }
}

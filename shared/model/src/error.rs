//! The one error type of the service. Each variant documents the status it becomes (D1); the
//! mapping itself lives in the API layer (`outbound_api::envelope`), above this one. Internal causes are kept for the log and
//! never shown to the client.

use std::error::Error as StdError;

/// Boxed cause of an internal failure, kept only for the log.
pub type Cause = Box<dyn StdError + Send + Sync + 'static>;

/// Everything an operation can answer besides success.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 400: the request is malformed or a field is out of its rules. The message names the field.
    #[error("{0}")]
    Invalid(String),
    /// 401: missing, malformed, expired or wrongly signed token.
    #[error("{0}")]
    Unauthenticated(String),
    /// 403: a valid token that may not do this (for example one without a tenant).
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such record for this tenant (another tenant's record looks exactly the same), or no such path.
    #[error("{0}")]
    NotFound(String),
    /// 405: the operation is not allowed in the task's current state, or the method on a known path.
    #[error("{0}")]
    NotAllowed(String),
    /// 409: a name or phone number already exists, or the record is in use.
    #[error("{0}")]
    Conflict(String),
    /// 409: one of the tenant's limits (D26) is reached; the message names it. Nothing changed.
    #[error("{0}")]
    LimitReached(String),
    /// 413: the body or upload is larger than allowed.
    #[error("{0}")]
    TooLarge(String),
    /// 415: the upload is of a type the service does not read.
    #[error("{0}")]
    UnsupportedType(String),
    /// 429 with `Retry-After: retry_after_secs`: the tenant sent requests faster than its rate
    /// (D26). Nothing was done; the same request may be sent again after that many seconds.
    #[error("{message}")]
    TooManyRequests {
        message: String,
        retry_after_secs: u64,
    },
    /// 503 with `Retry-After`: a dependency is throttled, over capacity, failing or unreachable,
    /// or concurrent writes kept conflicting past bounded retries (D1). Nothing was changed and
    /// the request may be sent again. The cause is logged, never sent.
    #[error("dependency unavailable: {context}")]
    Unavailable {
        /// What the service was doing, for the log.
        context: &'static str,
        #[source]
        cause: Cause,
    },
    /// 500: a dependency failed or an invariant broke. The cause is logged, the client sees a generic message.
    #[error("internal error: {context}")]
    Internal {
        /// What the service was doing, for the log.
        context: &'static str,
        #[source]
        cause: Cause,
    },
}

/// A configuration variable that is missing or malformed.
#[derive(Debug, thiserror::Error)]
#[error("configuration {name}: {problem}")]
pub struct ConfigError {
    pub name: &'static str,
    pub problem: String,
}

impl ConfigError {
    /// The value of `name` through `lookup`, surrounding space dropped; absent or blank is an
    /// error naming it.
    pub fn required(
        lookup: &impl Fn(&str) -> Option<String>,
        name: &'static str,
    ) -> Result<String, ConfigError> {
        lookup(name)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
            .ok_or(ConfigError {
                name,
                problem: "is not set".into(),
            })
    }
}

/// Result with the service's error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an internal failure with what the service was doing when it happened.
    pub fn internal(context: &'static str, cause: impl Into<Cause>) -> Self {
        Error::Internal {
            context,
            cause: cause.into(),
        }
    }

    /// 503: a dependency is busy (the adapters tell busy from wrong, D1).
    pub fn unavailable(context: &'static str, cause: impl Into<Cause>) -> Self {
        Error::Unavailable {
            context,
            cause: cause.into(),
        }
    }

    /// 400 with a message.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }

    /// Whether the failure is the service's or a dependency's, not the input's: worth a retry,
    /// and never recorded as a refusal of what the client sent.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Internal { .. } | Error::Unavailable { .. })
    }

    /// The HTTP status and envelope `code` of this error (D1).
    pub fn status_code(&self) -> u16 {
        match self {
            Error::Invalid(_) => 400,
            Error::Unauthenticated(_) => 401,
            Error::Forbidden(_) => 403,
            Error::NotFound(_) => 404,
            Error::NotAllowed(_) => 405,
            Error::Conflict(_) | Error::LimitReached(_) => 409,
            Error::TooLarge(_) => 413,
            Error::UnsupportedType(_) => 415,
            Error::TooManyRequests { .. } => 429,
            Error::Unavailable { .. } => 503,
            Error::Internal { .. } => 500,
        }
    }

    /// The message a client may see: internals are never sent.
    pub fn client_message(&self) -> String {
        match self {
            Error::Internal { .. } => "internal server error".to_owned(),
            Error::Unavailable { .. } => {
                "the service is busy; nothing was changed, try again shortly".to_owned()
            }
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_errors_do_not_leak_their_cause() {
        let error = Error::internal(
            "put item",
            std::io::Error::other("table outbound-prod is gone"),
        );
        assert_eq!(error.status_code(), 500);
        assert_eq!(error.client_message(), "internal server error");
    }

    #[test]
    fn each_variant_has_its_status() {
        let cases = [
            (Error::invalid("x"), 400),
            (Error::Unauthenticated("x".into()), 401),
            (Error::Forbidden("x".into()), 403),
            (Error::NotFound("x".into()), 404),
            (Error::NotAllowed("x".into()), 405),
            (Error::Conflict("x".into()), 409),
            (Error::TooLarge("x".into()), 413),
            (Error::UnsupportedType("x".into()), 415),
            (Error::LimitReached("x".into()), 409),
            (
                Error::TooManyRequests {
                    message: "x".into(),
                    retry_after_secs: 1,
                },
                429,
            ),
        ];
        for (error, status) in cases {
            assert_eq!(error.status_code(), status);
            assert_eq!(error.client_message(), "x");
        }
    }
}

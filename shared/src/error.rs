//! The one error type of the service. Each variant documents the status it becomes (D1); the
//! mapping itself lives in [`crate::http::envelope`]. Internal causes are kept for the log and
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
    /// 413: the body or upload is larger than allowed.
    #[error("{0}")]
    TooLarge(String),
    /// 415: the upload is of a type the service does not read.
    #[error("{0}")]
    UnsupportedType(String),
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

    /// A dependency that did not do what was asked, told apart (D1): throttling, capacity,
    /// a server-side failure, a timeout or no connection is [`Error::Unavailable`] (503);
    /// anything else (a malformed request, a permission) is [`Error::Internal`] (500).
    /// Condition failures never come here: the store turns them into domain answers first.
    pub fn dependency<E>(
        context: &'static str,
        error: aws_smithy_runtime_api::client::result::SdkError<
            E,
            aws_smithy_runtime_api::http::Response,
        >,
    ) -> Self
    where
        E: aws_smithy_types::error::metadata::ProvideErrorMetadata
            + StdError
            + Send
            + Sync
            + 'static,
    {
        use aws_smithy_runtime_api::client::result::SdkError;
        let busy = match &error {
            SdkError::TimeoutError(_)
            | SdkError::DispatchFailure(_)
            | SdkError::ResponseError(_) => true,
            SdkError::ServiceError(service) => {
                service.raw().status().as_u16() >= 500
                    || service.err().code().is_some_and(is_busy_code)
            }
            _ => false,
        };
        if busy {
            Error::Unavailable {
                context,
                cause: Box::new(error),
            }
        } else {
            Error::internal(context, error)
        }
    }

    /// 503: a dependency is busy (see [`Error::dependency`]).
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
            Error::Conflict(_) => 409,
            Error::TooLarge(_) => 413,
            Error::UnsupportedType(_) => 415,
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

/// Error codes of AWS services that mean "busy, try again", not "wrong request".
fn is_busy_code(code: &str) -> bool {
    matches!(
        code,
        "ThrottlingException"
            | "Throttling"
            | "ThrottledException"
            | "ProvisionedThroughputExceededException"
            | "RequestLimitExceeded"
            | "TooManyRequestsException"
            | "LimitExceededException"
            | "TransactionConflictException"
            | "TransactionInProgressException"
            | "InternalServerError"
            | "InternalFailure"
            | "ServiceUnavailable"
            | "SlowDown"
            | "RequestTimeout"
    )
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

    fn answered(code: &str, status: u16) -> Error {
        use aws_sdk_dynamodb::config::http::HttpResponse;
        use aws_sdk_dynamodb::error::{ErrorMetadata, SdkError};
        use aws_sdk_dynamodb::operation::get_item::GetItemError;
        let error = GetItemError::generic(ErrorMetadata::builder().code(code).build());
        let raw = HttpResponse::new(
            status.try_into().unwrap(),
            aws_smithy_types::body::SdkBody::empty(),
        );
        Error::dependency("get item", SdkError::service_error(error, raw))
    }

    /// D1: a busy dependency is 503, never a domain answer or a plain 500; a wrong request is 500.
    #[test]
    fn busy_dependencies_are_told_apart_from_wrong_requests() {
        for code in [
            "ThrottlingException",
            "ProvisionedThroughputExceededException",
            "RequestLimitExceeded",
            "InternalServerError",
        ] {
            let error = answered(code, 400);
            assert_eq!(error.status_code(), 503, "{code}");
            assert!(
                !error.client_message().contains(code),
                "internals never sent"
            );
        }
        assert_eq!(answered("SomethingNew", 503).status_code(), 503);
        assert_eq!(answered("ValidationException", 400).status_code(), 500);
        assert_eq!(answered("AccessDeniedException", 400).status_code(), 500);
        let timeout = aws_sdk_dynamodb::error::SdkError::<
            aws_sdk_dynamodb::operation::get_item::GetItemError,
            aws_sdk_dynamodb::config::http::HttpResponse,
        >::timeout_error("no answer in time");
        assert_eq!(Error::dependency("get item", timeout).status_code(), 503);
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
        ];
        for (error, status) in cases {
            assert_eq!(error.status_code(), status);
            assert_eq!(error.client_message(), "x");
        }
    }
}

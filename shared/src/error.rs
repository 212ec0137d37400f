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
    /// 500: a dependency failed or an invariant broke. The cause is logged, the client sees a generic message.
    #[error("internal error: {context}")]
    Internal {
        /// What the service was doing, for the log.
        context: &'static str,
        #[source]
        cause: Cause,
    },
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

    /// 400 with a message.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
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
            Error::Internal { .. } => 500,
        }
    }

    /// The message a client may see: internals are never sent.
    pub fn client_message(&self) -> String {
        match self {
            Error::Internal { .. } => "internal server error".to_owned(),
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
        ];
        for (error, status) in cases {
            assert_eq!(error.status_code(), status);
            assert_eq!(error.client_message(), "x");
        }
    }
}

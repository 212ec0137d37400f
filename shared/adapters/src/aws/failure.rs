//! The one place that reads an AWS SDK failure (D1): a busy dependency (throttled, over
//! capacity, failing, unreachable) becomes a 503 that may be retried, anything else a 500.
//! Condition failures never come here: the store turns them into domain answers first.

use outbound_model::error::Error;
use std::error::Error as StdError;

/// [`Error`]s made from the SDK's failures.
pub trait Dependency {
    /// A dependency that did not do what was asked, told apart (D1): throttling, capacity,
    /// a server-side failure, a timeout or no connection is [`Error::Unavailable`](Error::Unavailable) (503);
    /// anything else (a malformed request, a permission) is [`Error::Internal`](Error::Internal) (500).
    /// Condition failures never come here: the store turns them into domain answers first.
    fn dependency<E>(
        context: &'static str,
        error: aws_smithy_runtime_api::client::result::SdkError<
            E,
            aws_smithy_runtime_api::http::Response,
        >,
    ) -> Error
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
}

impl Dependency for Error {}

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
}

//! The response envelope (D1) and the one mapping from [`Error`] to a status code.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use outbound_model::error::Error;
use serde::Serialize;
use serde_json::{json, Value};

/// A successful answer: `{"code":0,"message":"success","data":...}`.
#[derive(Debug)]
pub struct Envelope<T = Value>(pub T);

impl Envelope {
    /// `data: null`, for operations that return nothing.
    pub fn empty() -> Self {
        Envelope(Value::Null)
    }
}

#[derive(Serialize)]
struct Success<'a, T> {
    code: u16,
    message: &'static str,
    data: &'a T,
}

impl<T: Serialize> IntoResponse for Envelope<T> {
    fn into_response(self) -> Response {
        Json(Success {
            code: 0,
            message: "success",
            data: &self.0,
        })
        .into_response()
    }
}

/// The service's [`Error`] as an HTTP answer: the one mapping from the error to the envelope
/// (D1). Internal causes are logged here and never sent.
#[derive(Debug)]
pub struct Refusal(pub Error);

impl From<Error> for Refusal {
    fn from(error: Error) -> Self {
        Refusal(error)
    }
}

impl From<outbound_model::phone::InvalidPhone> for Refusal {
    fn from(error: outbound_model::phone::InvalidPhone) -> Self {
        Refusal(error.into())
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let Refusal(error) = self;
        let code = error.status_code();
        match &error {
            Error::Internal { context, cause } => {
                tracing::error!(context, cause = %ErrorChain(cause.as_ref()), "request failed");
            }
            Error::Unavailable { context, cause } => {
                tracing::warn!(context, cause = %ErrorChain(cause.as_ref()), "dependency busy");
            }
            // The message may quote what the client sent (a phone number, a name): only the
            // code is logged.
            _ => tracing::info!(code, "request refused"),
        }
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = json!({"code": code, "message": error.client_message(), "data": null});
        let retry_after = match &error {
            // D26: the tenant's rate lets a request through again after this many seconds.
            Error::TooManyRequests {
                retry_after_secs, ..
            } => Some((*retry_after_secs).max(1)),
            // D1: the same request may be sent again, after a moment.
            Error::Unavailable { .. } => Some(1),
            _ => None,
        };
        let mut response = (status, Json(body)).into_response();
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// Puts the framework's own refusals in the envelope too (D1): a path, query or multipart body
/// that never reached a handler is answered by axum as plain text.
pub async fn envelope_refusals(response: Response) -> Response {
    let status = response.status();
    let plain = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/plain"));
    if !plain || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let error = match status.as_u16() {
        401 => Error::Unauthenticated(text),
        404 => Error::NotFound(text),
        405 => Error::NotAllowed(text),
        413 => Error::TooLarge(text),
        415 => Error::UnsupportedType(text),
        500.. => Error::internal("refused by the framework", text),
        _ => Error::Invalid(text),
    };
    Refusal(error).into_response()
}

/// Displays an error with every `source()` below it, for the log.
struct ErrorChain<'a>(&'a (dyn std::error::Error + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

/// What every handler answers.
pub type Reply<T = Value> = Result<Envelope<T>, Refusal>;

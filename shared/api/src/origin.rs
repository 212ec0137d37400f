//! Requests reach the API through the stack's distribution only (D32): when the API functions
//! know the distribution's secret ([`OriginSecret`]), a request without it in
//! [`ORIGIN_HEADER`] is refused 403 before its token is read or anything is counted, so that
//! calling the API's own domain directly cannot go past the web ACL's limits. The local API
//! has nothing in front of it and checks nothing.

use super::Refusal;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use outbound_model::error::Error;
use outbound_model::origin::{OriginSecret, ORIGIN_HEADER};

/// The layer's function (`axum::middleware::from_fn_with_state`).
pub async fn through_the_distribution(
    State(origin): State<Option<OriginSecret>>,
    request: Request,
    next: Next,
) -> Response {
    match &origin {
        Some(secret)
            if !secret.admits(request.headers().get(ORIGIN_HEADER).map(|v| v.as_bytes())) =>
        {
            tracing::warn!("a request that did not come through the distribution; refused");
            Refusal(Error::Forbidden(
                "the API is reached through its distribution only".into(),
            ))
            .into_response()
        }
        _ => next.run(request).await,
    }
}

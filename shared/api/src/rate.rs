//! The request limits of each tenant (D26, D29): one layer in front of every `/api/...` route,
//! after the token is read, takes one request of the caller's tenant (of the operator, on the
//! operator's routes) from the limiter every function instance shares
//! ([`RequestLimiter`](outbound_adapters::store::rate::RequestLimiter)): a rate token and a
//! place in flight, given back when the request is answered. Beyond either the answer is 429
//! with `Retry-After` and the envelope, and the route never runs. A verified token that names
//! no tenant (an ID token, one without the tenant claim) is counted in one bucket of its own
//! before its route refuses it (D32); a request without a verified token goes on to be refused
//! by its route (401), as the HTTP API's authorizer refuses it before any function in AWS. When
//! the limiter's table cannot answer in time the request is refused, 503 with `Retry-After`,
//! never admitted unbounded (D32); the failure is logged and counted (`RateLimiterFailures`).
//! A request that read or wrote many of the table's items is charged for them when its place is
//! given back ([`RequestRate::surcharge`](outbound_model::limits::RequestRate::surcharge), D32):
//! its tenant's next requests wait the longer.

use super::auth::Identity;
use super::Refusal;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use outbound_adapters::aws::timing;
use outbound_adapters::store::rate::{Admission, Limited};
use outbound_app::App;
use outbound_auth::Scope;
use outbound_model::error::Error;
use std::time::{Duration, Instant};

/// How long a request waited on its limiter: a response extension the request observer puts in
/// `Server-Timing` (`rate`) and the request's log line, apart from the service's own time.
#[derive(Clone, Copy, Debug)]
pub struct RateCheck(pub Duration);

/// The layer's function (`axum::middleware::from_fn_with_state`).
pub async fn limit(State(app): State<App>, request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let identity = Identity::of(&app.config.auth, &parts);
    let request = Request::from_parts(parts, body);
    let operator = Scope::of_route(request.method(), request.uri().path()) == Scope::Operator;
    let (tenant, actor) = (identity.tenant(), identity.actor());
    let limited = match (operator, actor, &tenant) {
        (true, Some(actor), _) => Limited::Operator(actor),
        (false, _, Ok(tenant)) => Limited::Tenant(tenant),
        _ if identity.verified() => Limited::Unattributed,
        _ => return next.run(request).await,
    };
    let started = Instant::now();
    let decision = app.limiter.admit(limited, now_micros()).await;
    let check = RateCheck(started.elapsed());
    let rate = app.limiter.rate();
    let mut response = match decision.admission {
        Admission::Admitted(pass) => {
            let before = timing::rows_so_far().unwrap_or(0);
            let response = next.run(request).await;
            let rows = timing::rows_so_far().unwrap_or(0).saturating_sub(before);
            let surcharge = rate.surcharge(rows);
            let released = app
                .limiter
                .release_charging(pass, surcharge, now_micros())
                .await;
            if let Err(error) = released {
                tracing::warn!(%error, rows, surcharge,
                    "place in flight not given back (its lease frees it) or cost not charged");
            }
            response
        }
        Admission::OverRate { retry_after_secs } => {
            refused("RateLimited", rate.exceeded(retry_after_secs))
        }
        Admission::Crowded { retry_after_secs } => {
            refused("InFlightLimited", rate.crowded(retry_after_secs))
        }
        Admission::Unavailable => {
            let cause = decision.failure.map_or_else(
                || "the request limiter could not answer".into(),
                |error| error.to_string(),
            );
            refused(
                "RateLimiterFailures",
                Error::unavailable("request limiter", cause),
            )
        }
    };
    response.extensions_mut().insert(check);
    response
}

/// The answer of a refused request (429, or 503 when the limiter could not say), counted under
/// `metric`.
fn refused(metric: &str, error: Error) -> Response {
    outbound_telemetry::metrics(&[], &[(metric, 1.0, outbound_telemetry::Unit::Count)]);
    Refusal(error).into_response()
}

/// Microseconds since the epoch (the simulation's virtual time on a simulated thread).
fn now_micros() -> i64 {
    if let Some(millis) = outbound_model::simulation::now() {
        return millis.saturating_mul(1000);
    }
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
}

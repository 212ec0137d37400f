//! The request rate of each tenant (D26): one layer in front of every `/api/...` route, after
//! authentication, takes one request of the caller's tenant from the bucket every function
//! instance shares ([`RequestLimiter`](outbound_adapters::store::rate::RequestLimiter)). Beyond
//! the rate the answer is 429 with `Retry-After` and the envelope, and the route never runs. A
//! request without a valid token goes on to be refused by its route (401, 403); a request whose
//! limiter could not answer (the table missing, throttled or slow) goes on too: it is logged and
//! counted (`RateLimiterFailures`), and never fails because the limiter did.

use super::{auth, Refusal};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use outbound_adapters::store::rate::Admission;
use outbound_app::App;
use std::time::{Duration, Instant};

/// How long a request waited on its tenant's limiter: a response extension the request
/// observer puts in `Server-Timing` (`rate`) and the request's log line, apart from the
/// service's own time.
#[derive(Clone, Copy, Debug)]
pub struct RateCheck(pub Duration);

/// The layer's function (`axum::middleware::from_fn_with_state`).
pub async fn limit(State(app): State<App>, request: Request, next: Next) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let tenant = auth::tenant_of(&app.config.auth, &parts);
    let request = Request::from_parts(parts, body);
    let Ok(tenant) = tenant else {
        return next.run(request).await;
    };
    let started = Instant::now();
    let admission = app.limiter.admit(&tenant, now_micros()).await;
    let check = RateCheck(started.elapsed());
    let mut response = answer(&app, admission, request, next).await;
    response.extensions_mut().insert(check);
    response
}

/// The answer to a request the limiter took (or could not take).
async fn answer(
    app: &App,
    admission: Result<Admission, outbound_model::error::Error>,
    request: Request,
    next: Next,
) -> Response {
    match admission {
        Ok(Admission::Admitted) => next.run(request).await,
        Ok(Admission::Refused { retry_after_secs }) => {
            outbound_telemetry::metrics(
                &[],
                &[("RateLimited", 1.0, outbound_telemetry::Unit::Count)],
            );
            Refusal(app.limiter.rate().exceeded(retry_after_secs)).into_response()
        }
        Err(error) => {
            tracing::warn!(%error, "request rate not checked; the request goes on");
            outbound_telemetry::metrics(
                &[],
                &[("RateLimiterFailures", 1.0, outbound_telemetry::Unit::Count)],
            );
            next.run(request).await
        }
    }
}

/// Microseconds since the epoch.
fn now_micros() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_micros()).unwrap_or(i64::MAX)
}

//! HTTP: one router per endpoint group, served by `lambda_http` in AWS and by the local server
//! alike. Handlers extract a [`Tenant`](outbound_model::Tenant) and a typed command, call one
//! service function and wrap the result in the [`envelope`].

pub mod auth;
pub mod callback;
pub mod compliance;
pub mod contract;
pub mod datasource;
pub mod envelope;
pub mod export;
pub mod extract;
pub mod fields;
pub mod operator;
pub mod origin;
pub mod rate;
pub mod routes;
pub mod task;

use axum::extract::{DefaultBodyLimit, FromRef, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use outbound_adapters::aws::actions::Function;
use outbound_adapters::aws::timing;
use outbound_app::config::ApiConfig;
use outbound_app::App;
use outbound_model::error::ConfigError;
use outbound_model::error::Error;
use outbound_model::page::PageTokens;
use outbound_service::export::{ExportBody, ExportFile};
use std::sync::Arc;
use std::time::Instant;
use tracing::Instrument;

pub use envelope::{Envelope, Refusal, Reply};
pub use routes::{ApiDoc, Routes};

/// The routers' state: the app and the API's own configuration, in a type of this crate so
/// that a domain type (the [`Tenant`](outbound_model::Tenant) of a request) can be extracted
/// from a request here. Handlers take the part they use (`State<App>`, `State<PageTokens>`).
#[derive(Clone, Debug)]
pub struct ApiState {
    pub app: App,
    pub page_tokens: PageTokens,
}

impl ApiState {
    pub fn new(app: App, api: ApiConfig) -> ApiState {
        ApiState {
            app,
            page_tokens: api.page_tokens,
        }
    }
}

impl FromRef<ApiState> for App {
    fn from_ref(state: &ApiState) -> App {
        state.app.clone()
    }
}

impl FromRef<ApiState> for PageTokens {
    fn from_ref(state: &ApiState) -> PageTokens {
        state.page_tokens.clone()
    }
}

/// Adds what every router shares: the 404 and 405 envelopes, the body limit, each tenant's
/// request rate (D26, D29), the request id and log line of every request, the claims of its
/// token read once ([`auth::identify`]), and, before all of them, the proof that it came
/// through the stack's distribution ([`origin`], D32).
pub fn finish(routes: Routes, app: App, api: ApiConfig) -> Router {
    let (router, _) = routes.split();
    router
        .fallback(|| async { Refusal(Error::NotFound("no such path".into())) })
        .method_not_allowed_fallback(|| async {
            Refusal(Error::NotAllowed("method not allowed on this path".into()))
        })
        .layer(DefaultBodyLimit::max(extract::MAX_JSON_BODY))
        .layer(axum::middleware::map_response(envelope::envelope_refusals))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            rate::limit,
        ))
        .layer(axum::middleware::from_fn(observe))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            auth::identify,
        ))
        .layer(axum::middleware::from_fn_with_state(
            api.origin.clone(),
            origin::through_the_distribution,
        ))
        .with_state(ApiState::new(app, api))
}

/// The router of the data source function, which also answers the state of export jobs, the
/// tenant's settings and its do-not-call list, and the operator's routes (D22).
pub fn datasource_api(app: App, api: ApiConfig) -> Router {
    finish(
        datasource::routes(ApiDoc::Skipped)
            .merge(export::routes(ApiDoc::Skipped))
            .merge(compliance::routes(ApiDoc::Skipped))
            .merge(operator::routes(ApiDoc::Skipped)),
        app,
        api,
    )
}

/// The router of the task function.
pub fn task_api(app: App, api: ApiConfig) -> Router {
    finish(
        task::routes(ApiDoc::Skipped).merge(callback::routes(ApiDoc::Skipped)),
        app,
        api,
    )
}

/// Every route of every group, as documented in [`contract::document`].
pub fn all_routes(doc: ApiDoc) -> Routes {
    datasource::routes(doc)
        .merge(task::routes(doc))
        .merge(callback::routes(doc))
        .merge(export::routes(doc))
        .merge(compliance::routes(doc))
        .merge(operator::routes(doc))
}

/// The local server: every route the Lambdas serve, and the OpenAPI document at
/// `GET /api/openapi.yaml`; it starts only with the API's configuration, as the functions do.
/// Its routes are built as the functions' are, without their description: the document is
/// written once per process, when first asked for (every seed of the simulation builds a
/// server, and writing the document took longer than a small world's whole setup).
pub fn local_api(app: App) -> Result<Router, ConfigError> {
    static DOCUMENT: std::sync::LazyLock<String> = std::sync::LazyLock::new(contract::yaml);
    let api = ApiConfig::from_config(&app.config)?;
    let serve_document = axum::routing::get(|| async {
        (
            [(axum::http::header::CONTENT_TYPE, "application/yaml")],
            DOCUMENT.as_str(),
        )
    });
    Ok(finish(
        all_routes(ApiDoc::Skipped).undescribed("/api/openapi.yaml", serve_document),
        app,
        api,
    ))
}

/// The function `template.yaml` routes `path` to: `/api/task/...` is the task function's, every
/// other path the data source function's (its routes, the export jobs', the settings', the
/// do-not-call list's, the operator's and the catch-all `/{proxy+}`). The local server, which serves them all,
/// runs each request as the function that would serve it in AWS.
pub fn function_of(path: &str) -> Function {
    match path.strip_prefix("/api/task/") {
        Some(rest) if !rest.is_empty() => Function::TaskApi,
        _ => Function::DataSourceApi,
    }
}

/// A file download (D8): the file itself with its name, or a 303 to a presigned download.
pub fn file_response(file: ExportFile) -> Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    match file.body {
        ExportBody::Inline(bytes) => (
            [
                (header::CONTENT_TYPE, file.content_type.to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}\"", file.file_name),
                ),
            ],
            bytes,
        )
            .into_response(),
        ExportBody::Download(url) => {
            (StatusCode::SEE_OTHER, [(header::LOCATION, url)]).into_response()
        }
    }
}

/// Gives each request an id (API Gateway's own in AWS, so it matches the access log), answers it
/// in `x-request-id`, logs one line with it, the tenant, the token's `sub` (D25), the route
/// template, the status and the latency (D1), and records the latency by route as a metric. The
/// time waited on AWS and its calls, and on the tenant's request limiter (D26), go to the log
/// line and, with the service's own time, to `Server-Timing` ([`timing`]). Nothing a client sent
/// beyond the route is logged: no phone number or name ever is.
async fn observe(request: Request, next: Next) -> Response {
    use lambda_http::RequestExt;
    let gateway_id = match request.request_context_ref() {
        Some(lambda_http::request::RequestContext::ApiGatewayV2(context)) => {
            context.request_id.clone()
        }
        _ => None,
    };
    let request_id = gateway_id.unwrap_or_else(|| ulid::Ulid::new().to_string());
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map_or("unmatched", |path| path.as_str())
        .to_owned();
    let identity = request.extensions().get::<auth::Identity>();
    let tenant = identity
        .and_then(|identity| identity.tenant().ok())
        .map_or_else(|| "-".to_owned(), |tenant| tenant.as_str().to_owned());
    let sub = identity
        .and_then(auth::Identity::actor)
        .map_or("-", |actor| actor.as_str())
        .to_owned();
    let span = tracing::info_span!("request", %request_id, %method, %route, %tenant, %sub);
    let wait = Arc::new(timing::StoreWait::default());
    let function = function_of(request.uri().path());
    let started = Instant::now();
    let mut response = function
        .scope(wait.scope(next.run(request)))
        .instrument(span.clone())
        .await;
    let elapsed = started.elapsed();
    let waited = wait.total();
    let status = response.status().as_u16();
    let millis = timing::millis(elapsed);
    let (store_ms, store_calls) = (timing::millis(waited.time), waited.calls);
    let rate = response
        .extensions()
        .get::<rate::RateCheck>()
        .map_or(std::time::Duration::ZERO, |check| check.0);
    let rate_ms = timing::millis(rate);
    span.in_scope(|| {
        tracing::info!(
            status,
            millis,
            store_ms,
            store_calls,
            rate_ms,
            "request done"
        );
    });
    outbound_telemetry::metrics(
        &[("Route", &route)],
        &[("Latency", millis, outbound_telemetry::Unit::Milliseconds)],
    );
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response.headers_mut().insert("x-request-id", value);
    }
    if let Ok(value) = HeaderValue::from_str(&waited.server_timing(elapsed, rate)) {
        response.headers_mut().insert("server-timing", value);
    }
    response
}

//! The local stack: serves DynamoDB itself ([`dynamodb`], dynoxide), provisions it and the other
//! stand-ins (moto: S3, SQS, EventBridge) with the resources `template.yaml` creates in
//! AWS ([`provision`]), serves every route with the same routers the Lambdas use, feeds the
//! queues to the functions' handlers ([`poller`], [`inbox`]), pumps the table's stream to the
//! event publisher ([`stream`], [`events`]), keeps the calls the simulated provider placed
//! ([`calls`]) and writes the functions' environment for `cargo lambda` ([`lambda_env`]). Its
//! binaries: `local-api` (`make run`) and `dev-token` (`make token`). The test suite and the
//! benchmarks (`tests/`) build on it.

/// The service's functions, one binary each, in the template's order.
pub const FUNCTIONS: [&str; 10] = [
    "datasource-api",
    "task-api",
    "contact-import",
    "reclaim",
    "dialer-tick",
    "dialer",
    "call-events",
    "exporter",
    "event-publisher",
    "flow-results",
];

pub mod calls;
pub mod dynamodb;
pub mod edge;
pub mod events;
pub mod inbox;
pub mod lambda_env;
pub mod poller;
pub mod provision;
pub mod stream;

use outbound_adapters::telephony::Telephony;
use outbound_app::config::Config;
use outbound_app::App;
use outbound_auth::{AuthConfig, LocalJwt};
use outbound_dialing::engine::Engine;
use std::net::SocketAddr;
use tokio::net::TcpListener;

/// Where the stand-ins listen (`MOTO_ENDPOINT`, default `http://127.0.0.1:5000`).
pub fn moto_endpoint() -> String {
    std::env::var("MOTO_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:5000".into())
}

/// The region of the stand-ins' resources.
pub const REGION: &str = "us-east-1";

/// The dummy credentials the stand-ins accept (access key id, secret access key).
pub const CREDENTIALS: (&str, &str) = ("test", "test");

/// AWS SDK configuration pointing at moto (S3, SQS, EventBridge), with dummy credentials; a
/// stack's DynamoDB is added by [`dynamodb::with_dynamodb`] (see [`stack_sdk_config`]).
pub async fn sdk_config() -> aws_config::SdkConfig {
    use aws_config::{BehaviorVersion, Region};
    use aws_sdk_dynamodb::config::Credentials;
    aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(REGION))
        .credentials_provider(Credentials::new(
            CREDENTIALS.0,
            CREDENTIALS.1,
            None,
            None,
            "local",
        ))
        .load()
        .await
        // Set on the configuration, not on the loader: an endpoint the loader was given in code
        // outranks every service's own, and DynamoDB's must win (`dynamodb::with_dynamodb`).
        .to_builder()
        .endpoint_url(moto_endpoint())
        .build()
}

/// AWS SDK configuration of a stack: DynamoDB and its streams at `dynamodb` (a URL), every other
/// service on moto.
pub async fn stack_sdk_config(dynamodb: &str) -> aws_config::SdkConfig {
    dynamodb::with_dynamodb(&sdk_config().await, dynamodb)
}

/// The key of list tokens (D5) on the local stack when `PAGE_TOKEN_SECRET` is not set: named,
/// rather than left to the development stack's built-in key, so that the functions run under
/// `cargo lambda` (which run as in Lambda, where no built-in key is allowed) sign and accept the
/// same tokens as the local API.
pub const LOCAL_PAGE_TOKEN_SECRET: &str = "outbound-local-stack-page-token-key";

/// The local stack's value of the secret `name` (`PAGE_TOKEN_SECRET`, `CALL_SIGNING_KEY`): the
/// process environment's, else the key named here (the call-signing key the development one,
/// named for the same reason: the engine the tests build signs with it too, D29). The local API
/// reads them as plain values; the functions under `cargo lambda` read them from moto's Secrets
/// Manager by ARN, as in AWS (D32, [`provision::ensure_secrets`]). `None` for any other name.
pub fn local_secret(name: &str) -> Option<String> {
    let key = match name {
        outbound_app::config::PAGE_TOKEN_SECRET => LOCAL_PAGE_TOKEN_SECRET,
        outbound_app::config::CALL_SIGNING_KEY => outbound_app::config::DEV_CALL_SIGNING_KEY,
        _ => return None,
    };
    Some(std::env::var(name).unwrap_or_else(|_| key.to_owned()))
}

/// The local configuration: resources named as given, tokens verified in process (D2).
pub fn local_config(resources: &provision::Resources) -> Config {
    read_local_config(resources).0
}

/// The local configuration and the variables it was read from: every variable
/// `Config::from_lookup` asked for that had a value, whether the local stack set it or the
/// process environment did (`.local/lambda.env` is written from them, [`lambda_env`]).
pub fn read_local_config(
    resources: &provision::Resources,
) -> (Config, std::collections::BTreeMap<String, String>) {
    let read = std::cell::RefCell::new(std::collections::BTreeMap::new());
    let lookup = |name: &str| {
        let value = match name {
            "TABLE_NAME" => Some(resources.table.clone()),
            "BUCKET_NAME" => Some(resources.bucket.clone()),
            "RECLAIM_QUEUE_URL" => Some(resources.reclaim_queue_url.clone()),
            "DIAL_QUEUE_URL" => Some(resources.dial_queue_url.clone()),
            "CALL_EVENTS_QUEUE_URL" => Some(resources.call_events_queue_url.clone()),
            "EXPORT_QUEUE_URL" => Some(resources.export_queue_url.clone()),
            "AUTH_MODE" => Some("local".into()),
            "OUTBOUND_DEV_STACK" => Some("true".into()),
            "S3_FORCE_PATH_STYLE" => Some("true".into()),
            // The local stack reconciles a call without an outcome after 30 s (D28).
            "DIAL_RECONCILE_AFTER_SECONDS" => {
                std::env::var(name).ok().or_else(|| Some("30".into()))
            }
            "PAGE_TOKEN_SECRET" | "CALL_SIGNING_KEY" => local_secret(name),
            other => std::env::var(other).ok(),
        };
        if let Some(value) = &value {
            read.borrow_mut().insert(name.to_owned(), value.clone());
        }
        value
    };
    let config = Config::from_lookup(lookup).expect("local configuration is complete");
    (config, read.into_inner())
}

/// The token settings of a local configuration.
pub fn local_jwt(config: &Config) -> LocalJwt {
    match &config.auth {
        AuthConfig::Local(jwt) => jwt.clone(),
        AuthConfig::ApiGateway { .. } => panic!("local configuration verifies tokens itself"),
    }
}

/// Serves every route on `listener` until the process ends.
pub async fn serve(listener: TcpListener, app: App) -> std::io::Result<()> {
    axum::serve(
        listener,
        outbound_api::local_api(app).map_err(std::io::Error::other)?,
    )
    .await
}

/// Where the console's built files are (`console/dist`, `make console` builds them).
pub const CONSOLE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../console/dist");

/// The console's `config.json` on the local stack: local mode (development tokens, and the
/// sign-in address `make run` prints), the API on the same origin, the tenant claim the API
/// reads. A built console carries none, so only this server makes it local (D21, D25).
pub fn console_config(config: &Config) -> serde_json::Value {
    let tenant_claim = match &config.auth {
        AuthConfig::Local(jwt) => jwt.tenant_claim.as_str(),
        AuthConfig::ApiGateway { tenant_claim, .. } => tenant_claim.as_str(),
    };
    serde_json::json!({"apiBase": "", "auth": {"mode": "local"}, "tenantClaim": tenant_claim})
}

/// Serves what `make run` serves until the process ends, behind the edge's limits ([`edge`]):
/// every route, the events the bus delivered at `GET /local/events` (D20), the calls the dialer
/// placed at `GET /local/calls` (D22), the console's `config.json` ([`console_config`]) and its
/// files at `/`.
pub async fn serve_local(
    listener: TcpListener,
    app: App,
    edge: edge::Edge,
    events: events::EventLog,
    calls: &calls::CallLog,
) -> std::io::Result<()> {
    use axum::routing::get;
    let console = console_config(&app.config);
    let api = outbound_api::local_api(app).map_err(std::io::Error::other)?;
    let local = calls
        .route()
        .route(
            "/local/events",
            get(move || {
                let events = events.clone();
                async move { axum::Json(events.recent()) }
            }),
        )
        .route(
            "/config.json",
            get(move || {
                let console = console.clone();
                async move {
                    (
                        [(axum::http::header::CACHE_CONTROL, "no-store")],
                        axum::Json(console),
                    )
                }
            }),
        )
        .fallback_service(tower_http::services::ServeDir::new(CONSOLE_DIR));
    axum::serve(
        listener,
        with_addresses(edge::behind(edge, beside_api(api, local))),
    )
    .await
}

/// `routes`, told each connection's address (the edge's rule per address reads it).
fn with_addresses(
    routes: axum::Router,
) -> axum::extract::connect_info::IntoMakeServiceWithConnectInfo<axum::Router, SocketAddr> {
    routes.into_make_service_with_connect_info::<SocketAddr>()
}

/// `/api/...` to `api`, every other path to `local`. By prefix, not by a route: the API keeps
/// its own routing (its path parameters, its envelope 404 for paths it does not know).
fn beside_api(api: axum::Router, local: axum::Router) -> axum::Router {
    use tower::ServiceExt;
    let by_prefix = tower::service_fn(move |request: axum::extract::Request| {
        let router = if request.uri().path().starts_with("/api/") {
            api.clone()
        } else {
            local.clone()
        };
        router.oneshot(request)
    });
    axum::Router::new().fallback_service(by_prefix)
}

/// Serves `app` in the background on a free loopback port and answers its base URL
/// (`http://127.0.0.1:<port>`): the in-process API of the HTTP suite and the benchmarks.
pub async fn serve_on_loopback(app: App) -> std::io::Result<String> {
    on_loopback(outbound_api::local_api(app).map_err(std::io::Error::other)?).await
}

/// [`serve_on_loopback`], with the calls of `calls` at `GET /local/calls` beside the API (the
/// HTTP suite's dialing tests).
pub async fn serve_on_loopback_with_calls(
    app: App,
    calls: &calls::CallLog,
) -> std::io::Result<String> {
    let api = outbound_api::local_api(app).map_err(std::io::Error::other)?;
    // Every other path is the API's own 404 envelope, as without the calls.
    let local = calls.route().fallback_service(api.clone());
    on_loopback(beside_api(api, local)).await
}

/// [`serve_on_loopback`] behind the edge's limits, as `make run` serves it ([`edge`]).
pub async fn serve_on_loopback_behind_edge(app: App, edge: edge::Edge) -> std::io::Result<String> {
    let api = outbound_api::local_api(app).map_err(std::io::Error::other)?;
    on_loopback(edge::behind(edge, api)).await
}

async fn on_loopback(routes: axum::Router) -> std::io::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, with_addresses(routes)).await });
    Ok(base)
}

/// Starts the queue pollers that stand in for the import, reclaim, exporter, dialer and
/// call-events Lambdas, and the dialer's tick every `tick` (the EventBridge schedule's minute in AWS).
pub fn spawn_workers(
    app: &App,
    engine: std::sync::Arc<Engine<Telephony>>,
    resources: &provision::Resources,
    sdk: &aws_config::SdkConfig,
    tick: std::time::Duration,
) {
    use inbox::{DialInbox, Inbox};
    let sqs = aws_sdk_sqs::Client::new(sdk);
    for (queue, url) in [
        (Inbox::Uploads, &resources.import_queue_url),
        (Inbox::Reclaim, &resources.reclaim_queue_url),
        (Inbox::Exports, &resources.export_queue_url),
    ] {
        let app = app.clone();
        tokio::spawn(poller::poll(sqs.clone(), url.clone(), move |body| {
            let app = app.clone();
            async move { queue.handle(&app, body).await }
        }));
    }
    for (queue, url) in [
        (DialInbox::Jobs, &resources.dial_queue_url),
        (DialInbox::CallEvents, &resources.call_events_queue_url),
    ] {
        let engine = engine.clone();
        tokio::spawn(poller::poll(sqs.clone(), url.clone(), move |body| {
            let engine = engine.clone();
            async move { queue.handle(&engine, body).await }
        }));
    }
    let app = app.clone();
    tokio::spawn(async move {
        let mut last_sweep = std::time::Instant::now();
        loop {
            if let Err(error) = engine.tick().await {
                tracing::warn!(%error, "tick failed");
            }
            // The reclaim function's schedule (every 15 minutes in AWS): once a minute here.
            if last_sweep.elapsed() >= std::time::Duration::from_secs(60) {
                last_sweep = std::time::Instant::now();
                if let Err(error) = outbound_workers::sweep_reclaims(&app).await {
                    tracing::warn!(%error, "reclaim sweep failed");
                }
            }
            tokio::time::sleep(tick).await;
        }
    });
}

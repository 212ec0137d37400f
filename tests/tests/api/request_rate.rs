//! Each tenant's request rate (D26) over HTTP: beyond it 429 with `Retry-After` and the
//! envelope, nothing done; another tenant is unaffected; the rate is one for every instance of
//! the API; and a limiter that cannot reach its table lets every request through.

use crate::support::{Answer, TestApi};
use outbound_app::App;
use outbound_model::limits::RequestRate;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

/// One a second, two at once.
const SLOW: RequestRate = RequestRate {
    per_second: 1,
    burst: 2,
};

const OVER: &str = "too many requests: this tenant may send 1 a second, 2 at once \
                    (TENANT_REQUESTS_PER_SECOND, TENANT_REQUEST_BURST); try again after 1 s";

fn assert_over_the_rate(answer: &Answer) {
    answer.err(429, OVER);
    assert_eq!(
        answer.headers[reqwest::header::RETRY_AFTER],
        "1",
        "one more request passes within a second"
    );
}

/// D26: a tenant past its burst is answered 429 with `Retry-After` and the envelope, and the
/// request does nothing; at the same time another tenant is answered; once the wait is over
/// the tenant is answered again. A request without a token is refused by its route as ever.
#[tokio::test]
async fn a_tenant_over_its_rate_gets_429_and_another_tenant_does_not() {
    let api = TestApi::start_with(|config| config.tenant_limits.requests = SLOW).await;
    for _ in 0..SLOW.burst {
        api.get("acme", "/api/dataSource/list").await.ok();
    }
    let before = api.snapshot().await;
    let refused = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "too fast"}),
        )
        .await;
    assert_over_the_rate(&refused);
    assert_eq!(api.snapshot().await, before, "nothing done");
    assert!(refused.headers.contains_key("x-request-id"));

    api.get("other", "/api/dataSource/list").await.ok();
    let anonymous = api
        .send(api.anonymous(Method::GET, "/api/dataSource/list"))
        .await;
    anonymous.code(401);

    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let list = api.get("acme", "/api/dataSource/list").await;
    assert_eq!(list.ok()["total"], 0, "the refused add stored nothing");
}

/// D26: the rate is the tenant's over every instance of the API: a second server of the same
/// deployment (another function instance, a limiter of its own) draws on the same bucket.
#[tokio::test]
async fn the_rate_holds_across_instances() {
    let api = TestApi::start_with(|config| config.tenant_limits.requests = SLOW).await;
    let other_instance = App::with_store(api.app.config.clone(), &api.sdk, api.store.clone());
    let second = outbound_local::serve_on_loopback(other_instance)
        .await
        .unwrap();
    let on = |base: &str| {
        api.http
            .get(format!("{base}/api/task/list"))
            .bearer_auth(api.token("acme"))
    };
    api.send(on(&api.base)).await.ok();
    api.send(on(&second)).await.ok();
    assert_over_the_rate(&api.send(on(&api.base)).await);
    assert_over_the_rate(&api.send(on(&second)).await);
}

/// D26: a limiter whose table fails (here: it does not exist) lets the request through, at any
/// rate; the failure is logged and counted, never answered.
#[tokio::test]
async fn a_limiter_that_cannot_reach_its_table_lets_requests_through() {
    let api = TestApi::start_with(|config| {
        config.tenant_limits.requests = RequestRate {
            per_second: 1,
            burst: 1,
        };
        config.rate_table = "no-such-table".into();
    })
    .await;
    for n in 0..5 {
        let name = format!("Source {n}");
        api.post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": name}),
        )
        .await
        .ok();
    }
    assert_eq!(
        api.get("acme", "/api/dataSource/list").await.ok()["total"],
        5
    );
}

/// Microseconds since the epoch, as the limiter reads the time.
fn now_micros() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    since.as_micros() as i64
}

/// Mean, median and 95th percentile of `samples` in milliseconds.
fn summary(mut samples: Vec<f64>) -> String {
    samples.sort_by(f64::total_cmp);
    let mean = samples.iter().sum::<f64>() / samples.len() as f64;
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    format!(
        "mean {mean:.2} ms, median {:.2} ms, p95 {:.2} ms",
        at(0.5),
        at(0.95)
    )
}

/// What the limiter costs on the local stack (docs/scaling.md): the conditional writes one
/// request makes, and the time it adds to a request, measured over 200 requests through the
/// same routes with and without its layer. A measurement, not a check: run it with
/// `cargo test -p outbound-local --test api -- --ignored --nocapture measure_the_limiter`.
#[tokio::test]
#[ignore]
async fn measure_the_limiters_cost_and_latency() {
    use outbound_adapters::store::rate::{Admission, RequestLimiter};
    const REQUESTS: usize = 200;
    let unlimited = RequestRate {
        per_second: 1_000_000,
        burst: 1_000_000,
    };
    let api = TestApi::start_with(|config| config.tenant_limits.requests = unlimited).await;
    let acme = crate::support::tenant("acme");

    // Writes a request: the limiter over the stack's counted client, at the default rate.
    let limiter = RequestLimiter::over(api.store.clone(), RequestRate::default());
    api.calls.take();
    for _ in 0..REQUESTS {
        let admitted = limiter.admit(&acme, now_micros()).await.unwrap();
        assert_eq!(admitted, Admission::Admitted);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    println!(
        "within the rate (40/s, one instance): {} writes for {REQUESTS} requests",
        api.calls.take(),
    );
    let (mut passed, mut refused) = (0, 0);
    let globex = crate::support::tenant("globex");
    for _ in 0..REQUESTS {
        match limiter.admit(&globex, now_micros()).await.unwrap() {
            Admission::Admitted => passed += 1,
            Admission::Refused { .. } => refused += 1,
        }
    }
    println!(
        "back to back (one instance): {passed} admitted, {refused} refused, {} writes",
        api.calls.take()
    );
    let instances = [
        RequestLimiter::over(api.store.clone(), RequestRate::default()),
        RequestLimiter::over(api.store.clone(), RequestRate::default()),
    ];
    let initech = crate::support::tenant("initech");
    for n in 0..REQUESTS {
        instances[n % 2]
            .admit(&initech, now_micros())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(if n % 4 < 2 { 5 } else { 45 })).await;
    }
    println!(
        "two instances taking turns, at times busy and idle: {} writes for {REQUESTS} requests",
        api.calls.take()
    );
    let item = api
        .snapshot_with_rate()
        .await
        .into_iter()
        .find(|((pk, _), _)| pk == "T#acme#RATE")
        .map(|(_, item)| item)
        .unwrap();
    let size: usize = item
        .iter()
        .map(|(name, value)| {
            name.len()
                + match value {
                    aws_sdk_dynamodb::types::AttributeValue::S(text) => text.len(),
                    aws_sdk_dynamodb::types::AttributeValue::N(number) => number.len() / 2 + 1,
                    _ => 0,
                }
        })
        .sum();
    println!("the rate item: {size} bytes (a write of it is 1 WCU)");

    // The time it adds: the same routes with and without its layer, taking turns.
    let app = api.app.clone();
    let bare = || {
        outbound_api::all_routes(outbound_api::ApiDoc::Skipped)
            .split()
            .0
            .with_state(outbound_api::ApiState(app.clone()))
    };
    let limited = outbound_api::all_routes(outbound_api::ApiDoc::Skipped)
        .split()
        .0
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            outbound_api::rate::limit,
        ))
        .with_state(outbound_api::ApiState(app.clone()));
    let serve = |router: axum::Router| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        base
    };
    let (without, with) = (serve(bare()).await, serve(limited).await);
    let token = api.token("acme");
    let mut times = [Vec::new(), Vec::new()];
    for n in 0..2 * REQUESTS + 20 {
        let base = [&without, &with][n % 2];
        let started = std::time::Instant::now();
        let response = api
            .http
            .get(format!("{base}/api/dataSource/list"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
        // The first ten of each warm the connections.
        if n >= 20 {
            times[n % 2].push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let [without, with] = times;
    println!(
        "GET /api/dataSource/list, {REQUESTS} each, taking turns: without the limiter {}; with it {}",
        summary(without),
        summary(with)
    );
}

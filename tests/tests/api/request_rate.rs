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

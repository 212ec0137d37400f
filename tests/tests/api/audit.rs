//! Audit (D25): the request log line names the token's `sub`.

use crate::events::capture_logs;
use crate::support::TestApi;
use reqwest::Method;
use serde_json::json;

/// A `sub` as Cognito writes it.
const SUB: &str = "4f1c2e3a-9b8d-4c7e-a6f5-0123456789ab";

/// A token for `tenant` whose `sub` is `sub` (none when `None`).
fn token(api: &TestApi, tenant: &str, sub: Option<&str>) -> String {
    let now = chrono::Utc::now().timestamp();
    let mut claims = json!({
        "tenant_id": tenant,
        "iss": api.jwt.issuer,
        "aud": api.jwt.audience,
        "iat": now,
        "exp": now + 3600,
        "token_use": "access",
    });
    if let Some(sub) = sub {
        claims["sub"] = json!(sub);
    }
    api.jwt.sign(&claims)
}

/// D25: the request log line names the token's `sub` beside its tenant; a request without a
/// token (or whose token has no `sub`) logs `-`.
#[tokio::test]
async fn the_request_log_line_names_the_tokens_sub() {
    let api = TestApi::start().await;
    let (logs, guard) = capture_logs();
    let with_sub = token(&api, "acme", Some(SUB));
    api.send(
        api.anonymous(Method::GET, "/api/settings")
            .bearer_auth(&with_sub),
    )
    .await
    .ok();
    let without = token(&api, "acme", None);
    api.send(
        api.anonymous(Method::GET, "/api/dnc/list")
            .bearer_auth(&without),
    )
    .await
    .ok();
    api.send(api.anonymous(Method::GET, "/api/task/list"))
        .await
        .code(401);
    drop(guard);
    let logs = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    let done: Vec<&str> = logs
        .lines()
        .filter(|line| line.contains("request done"))
        .collect();
    assert_eq!(done.len(), 3, "{logs}");
    assert!(
        done[0].contains("route=/api/settings")
            && done[0].contains("tenant=acme")
            && done[0].contains(&format!("sub={SUB}")),
        "{logs}"
    );
    assert!(
        done[1].contains("route=/api/dnc/list") && done[1].contains("tenant=acme sub=-"),
        "{logs}"
    );
    assert!(
        done[2].contains("route=/api/task/list") && done[2].contains("tenant=- sub=-"),
        "{logs}"
    );
}

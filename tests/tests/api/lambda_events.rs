//! The data source function as AWS runs it (D2, D3): API Gateway HTTP API (payload 2.0) events
//! from `tests/events/` (the same files `cargo lambda invoke --data-file` takes) are turned into
//! requests by `lambda_http` and served by `datasource_api` with `AUTH_MODE=apigateway`. The
//! tenant comes from the JWT authorizer's claims in the request context; the Authorization
//! header is not verified again.

use crate::support::{Answer, Stack};
use outbound_model::Tenant;
use serde_json::json;
use tower::ServiceExt;

/// The function's router over a fresh stack, configured as in AWS.
fn function(stack: &Stack) -> axum::Router {
    router(stack, stack.config("apigateway"))
}

/// The data source function's router over `stack`, with `config`.
fn router(stack: &Stack, config: outbound_app::config::Config) -> axum::Router {
    let api = outbound_app::config::ApiConfig::from_config(&config).unwrap();
    outbound_api::datasource_api(stack.app(config), api)
}

/// Sends the event in `tests/events/{name}` through `router`.
async fn invoke(router: &axum::Router, name: &str) -> Answer {
    let path = format!("{}/events/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let request = lambda_http::request::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let response = router.clone().oneshot(request).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    Answer::parse(parts.status, parts.headers, &bytes)
}

#[tokio::test]
async fn claims_from_the_authorizer_pick_the_tenant() {
    let stack = Stack::provision().await;
    let router = function(&stack);
    let added = invoke(&router, "datasource-add.json").await;
    let data = added.ok().clone();
    assert_eq!(data["dataSourceName"], "Event leads");
    assert_eq!(data["dataSourceDesc"], "sent through API Gateway");
    // The request id is API Gateway's own, so the function's log line and the access log agree.
    let event: serde_json::Value =
        serde_json::from_str(include_str!("../../events/datasource-add.json")).unwrap();
    assert_eq!(
        added.headers["x-request-id"].to_str().unwrap(),
        event["requestContext"]["requestId"].as_str().unwrap()
    );

    // Stored under the tenant of the claims, and only there.
    let acme = stack
        .store
        .data_sources(&Tenant::parse("acme").unwrap())
        .await
        .unwrap();
    assert_eq!(acme.len(), 1);
    assert_eq!(acme[0].id.as_str(), data["id"]);
    let other = stack
        .store
        .data_sources(&Tenant::parse("globex").unwrap())
        .await
        .unwrap();
    assert!(other.is_empty());

    let listed = invoke(&router, "datasource-list.json").await;
    assert_eq!(
        listed.ok(),
        &json!({"total": 1, "rows": [data], "nextToken": null})
    );

    // The same event again: the name is taken within the tenant.
    invoke(&router, "datasource-add.json")
        .await
        .err(409, r#"dataSourceName "Event leads" already exists"#);
}

#[tokio::test]
async fn claims_without_a_tenant_are_403_and_change_nothing() {
    let stack = Stack::provision().await;
    let router = function(&stack);
    stack.calls.take();
    invoke(&router, "datasource-add-no-tenant.json")
        .await
        .err(403, "token has no tenant_id claim");
    assert_eq!(stack.calls.take(), 0, "nothing is read or written");
}

/// D25: the authorizer lets an ID token through (it checks issuer and audience only); the
/// function refuses it as any other refused token, 401 in the envelope, reading and writing
/// nothing. The same event with an access token is served (`datasource-add.json`).
#[tokio::test]
async fn claims_of_an_id_token_are_401_and_change_nothing() {
    let stack = Stack::provision().await;
    let router = function(&stack);
    stack.calls.take();
    let refused = invoke(&router, "datasource-add-id-token.json").await;
    refused.err(401, "token is not an access token");
    assert_eq!(
        refused.headers["x-request-id"].to_str().unwrap(),
        "Jg3fPhn1IAMEVYx="
    );
    assert_eq!(stack.calls.take(), 0, "nothing is read or written");
    let stored = stack
        .store
        .data_sources(&Tenant::parse("acme").unwrap())
        .await
        .unwrap();
    assert!(stored.is_empty());
    invoke(&router, "datasource-add.json").await.ok();
}

#[tokio::test]
async fn no_authorizer_context_is_401_whatever_the_header() {
    let stack = Stack::provision().await;
    let router = function(&stack);
    stack.calls.take();
    invoke(&router, "datasource-add-no-authorizer.json")
        .await
        .err(401, "missing or invalid bearer token");
    assert_eq!(stack.calls.take(), 0, "nothing is read or written");
    let stored = stack
        .store
        .data_sources(&Tenant::parse("acme").unwrap())
        .await
        .unwrap();
    assert!(stored.is_empty());
}

#[tokio::test]
async fn a_configured_tenant_claim_name_is_used() {
    // D3: the claim name is configurable (TENANT_CLAIM); `sub` then names the tenant.
    let stack = Stack::provision().await;
    let mut config = stack.config("apigateway");
    config.auth = outbound_auth::AuthConfig::ApiGateway {
        tenant_claim: "sub".into(),
        token_use_required: false,
    };
    let router = router(&stack, config);
    let added = invoke(&router, "datasource-add-no-tenant.json").await;
    let id = added.ok()["id"].clone();
    let tenant = Tenant::parse("7f6b5c4d-1111-2222-3333-444455556666").unwrap();
    let stored = stack.store.data_sources(&tenant).await.unwrap();
    assert_eq!(stored[0].id.as_str(), id);
}

//! Authentication (D2) and the tenant claim (D3) as the local API verifies them: every refused
//! token is 401 (403 for a valid token without a usable tenant), on every endpoint, and a refused
//! request reads and changes nothing.

use crate::support::{contact_op, TestApi};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use outbound_auth::LocalJwt;
use reqwest::Method;
use serde_json::{json, Value};

/// Valid claims for tenant acme, to be spoiled one at a time.
fn claims(api: &TestApi) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "sub": "user-1",
        "tenant_id": "acme",
        "iss": api.jwt.issuer,
        "aud": api.jwt.audience,
        "iat": now,
        "exp": now + 3600,
    })
}

/// `claims` with `field` set to `value` (null removes it).
fn claims_with(api: &TestApi, field: &str, value: Value) -> Value {
    let mut claims = claims(api);
    let map = claims.as_object_mut().unwrap();
    if value.is_null() {
        map.remove(field);
    } else {
        map.insert(field.to_owned(), value);
    }
    claims
}

/// An unsigned token (`alg: none`) carrying otherwise valid claims.
fn unsigned(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(json!({"alg": "none", "typ": "JWT"}).to_string());
    let body = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{body}.")
}

/// Sends a request to every endpoint with `authorization` (or none) and asserts each answers
/// `code` with `message`, reading and writing nothing.
async fn refused_everywhere(api: &TestApi, authorization: Option<&str>, code: u16, message: &str) {
    let source = api
        .data_source("acme", &crate::support::unique("auth"))
        .await;
    let contact = api.contact("acme", &source, "13800138000").await;
    let before = api.snapshot().await;
    api.calls.take();
    let requests = [
        (Method::GET, "/api/dataSource/list".to_owned(), None),
        (
            Method::GET,
            format!("/api/dataSource/detail/{source}"),
            None,
        ),
        (
            Method::POST,
            "/api/dataSource/add".to_owned(),
            Some(json!({"dataSourceName": "Intruder"})),
        ),
        (
            Method::POST,
            "/api/dataSource/update".to_owned(),
            Some(json!({"id": source, "dataSourceName": "Renamed"})),
        ),
        (
            Method::POST,
            "/api/dataSource/delete".to_owned(),
            Some(json!({"id": source})),
        ),
        (
            Method::GET,
            format!("/api/dataSource/{source}/contacts"),
            None,
        ),
        (
            Method::POST,
            contact_op(&source, "add"),
            Some(json!({"phoneNumber": "13900139000"})),
        ),
        (
            Method::POST,
            contact_op(&source, "update"),
            Some(json!({"contactId": contact, "customerName": "x"})),
        ),
        (
            Method::POST,
            contact_op(&source, "delete"),
            Some(json!({"contactId": contact})),
        ),
    ];
    for (method, path, body) in requests {
        let mut request = api.anonymous(method, &path);
        if let Some(value) = authorization {
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        api.send(request).await.err(code, message);
    }
    assert_eq!(api.calls.take(), 0, "a refused request reads nothing");
    assert_eq!(
        api.snapshot().await,
        before,
        "a refused request changes nothing"
    );
}

#[tokio::test]
async fn missing_header_is_401() {
    let api = TestApi::start().await;
    refused_everywhere(&api, None, 401, "missing Authorization header").await;
}

#[tokio::test]
async fn wrong_scheme_or_empty_token_is_401() {
    // D2: only "Bearer <token>".
    let api = TestApi::start().await;
    let message = r#"Authorization header must be "Bearer <token>""#;
    let token = api.token("acme");
    let values = [
        "Basic YWNtZTpzZWNyZXQ=".to_owned(),
        token.clone(),
        format!("Token {token}"),
        "Bearer".to_owned(),
        "Bearer    ".to_owned(),
    ];
    for value in &values {
        refused_everywhere(&api, Some(value), 401, message).await;
    }
    // The scheme is case-insensitive: the data sources each round made are all there.
    let lower = api
        .anonymous(Method::GET, "/api/dataSource/list")
        .header("authorization", format!("bearer {token}"));
    assert_eq!(api.send(lower).await.ok()["total"], values.len());
}

#[tokio::test]
async fn garbage_tokens_are_401() {
    let api = TestApi::start().await;
    for token in ["garbage", "a.b.c", "e30.e30.", "Zm9v"] {
        let value = format!("Bearer {token}");
        refused_everywhere(&api, Some(&value), 401, "token is malformed").await;
    }
}

#[tokio::test]
async fn expired_and_not_yet_valid_tokens_are_401() {
    // D2: exp and nbf are checked without leeway.
    let api = TestApi::start().await;
    let now = chrono::Utc::now().timestamp();
    let expired = api.jwt.sign(&claims_with(&api, "exp", json!(now - 5)));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {expired}")),
        401,
        "token has expired",
    )
    .await;
    let early = api.jwt.sign(&claims_with(&api, "nbf", json!(now + 600)));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {early}")),
        401,
        "token is not valid yet",
    )
    .await;
    let no_expiry = api.jwt.sign(&claims_with(&api, "exp", Value::Null));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {no_expiry}")),
        401,
        "token is malformed",
    )
    .await;
}

#[tokio::test]
async fn tokens_signed_with_another_secret_are_401() {
    let api = TestApi::start().await;
    let other = LocalJwt {
        secret: "not-the-server-secret".into(),
        ..api.jwt.clone()
    };
    let token = other.issue("acme", 3600);
    refused_everywhere(
        &api,
        Some(&format!("Bearer {token}")),
        401,
        "token signature is invalid",
    )
    .await;
    // A valid token with its signature swapped for another's.
    let valid = api.token("acme");
    let (unsigned_part, _) = valid.rsplit_once('.').unwrap();
    let (_, foreign_signature) = token.rsplit_once('.').unwrap();
    let spliced = format!("Bearer {unsigned_part}.{foreign_signature}");
    refused_everywhere(&api, Some(&spliced), 401, "token signature is invalid").await;
}

#[tokio::test]
async fn wrong_issuer_or_audience_is_401() {
    let api = TestApi::start().await;
    let issuer = api
        .jwt
        .sign(&claims_with(&api, "iss", json!("someone-else")));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {issuer}")),
        401,
        "token has the wrong issuer",
    )
    .await;
    let audience = api
        .jwt
        .sign(&claims_with(&api, "aud", json!("another-api")));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {audience}")),
        401,
        "token has the wrong audience",
    )
    .await;
}

#[tokio::test]
async fn unsigned_alg_none_token_is_401() {
    let api = TestApi::start().await;
    let token = unsigned(&claims(&api));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {token}")),
        401,
        "token is malformed",
    )
    .await;
}

#[tokio::test]
async fn valid_token_without_a_usable_tenant_is_403() {
    // D3: a valid token without the tenant claim (or with one that cannot be a tenant) is 403.
    let api = TestApi::start().await;
    let missing = api.jwt.sign(&claims_with(&api, "tenant_id", Value::Null));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {missing}")),
        403,
        "token has no tenant_id claim",
    )
    .await;
    let numeric = api.jwt.sign(&claims_with(&api, "tenant_id", json!(42)));
    refused_everywhere(
        &api,
        Some(&format!("Bearer {numeric}")),
        403,
        "token has no tenant_id claim",
    )
    .await;
    for bad in ["", "acme#DS#x", "a b"] {
        let token = api.jwt.sign(&claims_with(&api, "tenant_id", json!(bad)));
        refused_everywhere(
            &api,
            Some(&format!("Bearer {token}")),
            403,
            "token tenant is not a valid tenant id",
        )
        .await;
    }
}

#[tokio::test]
async fn the_tenant_comes_from_the_token() {
    // D3: the same valid token always acts for its own tenant, whatever else the claims hold.
    let api = TestApi::start().await;
    let mut claims = claims(&api);
    claims["tenant"] = json!("globex");
    claims["custom:tenant_id"] = json!("globex");
    let token = api.jwt.sign(&claims);
    let added = api
        .send(
            api.anonymous(Method::POST, "/api/dataSource/add")
                .bearer_auth(&token)
                .json(&json!({"dataSourceName": "From token"})),
        )
        .await;
    let id = added.ok()["id"].as_str().unwrap().to_owned();
    assert_eq!(
        api.detail("acme", &id).await.ok()["dataSourceName"],
        "From token"
    );
    api.detail("globex", &id)
        .await
        .err(404, &format!("dataSource {id} not found"));
}

/// A token for `acme` granting `scope` (space separated), signed with the server's secret.
fn scoped_token(api: &TestApi, scope: &str) -> String {
    let now = chrono::Utc::now().timestamp();
    api.jwt.sign(&serde_json::json!({
        "sub": "scoped",
        api.jwt.tenant_claim.clone(): "acme",
        "iss": api.jwt.issuer,
        "aud": api.jwt.audience,
        "exp": now + 600,
        "scope": scope,
    }))
}

/// Optional scopes per route group (`REQUIRE_SCOPES`): reads need `outbound/read`, changes
/// `outbound/write`, the dialing operations `outbound/dial`; a token without the route's scope
/// is 403 naming it and changes nothing. Off by default: the rest of the suite's tokens carry
/// no scope at all.
#[tokio::test]
async fn scopes_per_route_group_are_enforced_when_required() {
    let api = TestApi::start_with(|config| {
        config.scopes = outbound_auth::RequiredScopes::from_lookup(&|name: &str| {
            (name == "REQUIRE_SCOPES").then(|| "true".to_owned())
        })
        .unwrap();
    })
    .await;
    let send = |token: String, method: reqwest::Method, path: &str, body: Option<Value>| {
        let request = api
            .anonymous(method, path)
            .header("Authorization", format!("Bearer {token}"));
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        api.send(request)
    };
    let read = scoped_token(&api, "outbound/read");
    let write = scoped_token(&api, "outbound/read outbound/write");
    let dial = scoped_token(&api, "outbound/dial");

    send(
        read.clone(),
        reqwest::Method::GET,
        "/api/dataSource/list",
        None,
    )
    .await
    .ok();
    send(
        read.clone(),
        reqwest::Method::POST,
        "/api/dataSource/add",
        Some(json!({"dataSourceName": "Scoped"})),
    )
    .await
    .err(403, "this token lacks the scope outbound/write");
    assert_eq!(
        send(read, reqwest::Method::GET, "/api/dataSource/list", None)
            .await
            .ok()["total"],
        0,
        "the refused add stored nothing"
    );
    let added = send(
        write.clone(),
        reqwest::Method::POST,
        "/api/dataSource/add",
        Some(json!({"dataSourceName": "Scoped"})),
    )
    .await;
    let source = added.ok()["id"].as_str().unwrap().to_owned();
    send(
        write.clone(),
        reqwest::Method::POST,
        &contact_op(&source, "add"),
        Some(json!({"phoneNumber": "13800000001"})),
    )
    .await
    .ok();
    let task = send(
        write.clone(),
        reqwest::Method::POST,
        "/api/task/add",
        Some(json!({"taskName": "Scoped task", "dataSourceId": source})),
    )
    .await;
    let task = task.ok()["id"].as_str().unwrap().to_owned();
    send(
        write,
        reqwest::Method::POST,
        "/api/task/publish",
        Some(json!({"id": task})),
    )
    .await
    .err(403, "this token lacks the scope outbound/dial");
    send(
        dial.clone(),
        reqwest::Method::POST,
        "/api/task/publish",
        Some(json!({"id": task})),
    )
    .await
    .ok();
    send(
        dial,
        reqwest::Method::GET,
        &format!("/api/task/detail/{task}"),
        None,
    )
    .await
    .err(403, "this token lacks the scope outbound/read");
}

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

/// D25: a token whose `token_use` is there and is not `access` (an ID token, or a claim that
/// is not even text) is 401 on every endpoint, as any other refused token, reading and changing
/// nothing; `access` and no `token_use` at all pass.
#[tokio::test]
async fn a_token_that_is_not_an_access_token_is_401() {
    let api = TestApi::start().await;
    for token_use in [
        json!("id"),
        json!("refresh"),
        json!("ACCESS"),
        json!(""),
        json!(5),
    ] {
        let token = api.jwt.sign(&claims_with(&api, "token_use", token_use));
        refused_everywhere(
            &api,
            Some(&format!("Bearer {token}")),
            401,
            "token is not an access token",
        )
        .await;
    }
    for token_use in [json!("access"), Value::Null] {
        let token = api
            .jwt
            .sign(&claims_with(&api, "token_use", token_use.clone()));
        let answer = api
            .send(
                api.anonymous(Method::GET, "/api/dataSource/list")
                    .bearer_auth(&token),
            )
            .await;
        assert_eq!(answer.status, 200, "token_use {token_use}: {}", answer.body);
        assert_eq!(answer.ok()["total"], 5, "acme's five data sources above");
    }
}

/// A token for `acme` granting `scope` (space separated), signed with the server's secret; one
/// granting `outbound/admin` is of a member of `admins`, as Cognito's would be (D29).
fn scoped_token(api: &TestApi, scope: &str) -> String {
    let groups = if scope.split(' ').any(|s| s == "outbound/admin") {
        json!(["admins"])
    } else {
        json!([])
    };
    scoped_token_of(api, scope, groups)
}

/// A token for `acme` granting `scope`, of a member of `groups`.
fn scoped_token_of(api: &TestApi, scope: &str, groups: Value) -> String {
    let now = chrono::Utc::now().timestamp();
    api.jwt.sign(&serde_json::json!({
        "sub": "scoped",
        api.jwt.tenant_claim.clone(): "acme",
        "iss": api.jwt.issuer,
        "aud": api.jwt.audience,
        "exp": now + 600,
        "token_use": "access",
        "scope": scope,
        "cognito:groups": groups,
    }))
}

/// An API whose routes need their scopes (`REQUIRE_SCOPES=true`).
async fn scoped_api() -> TestApi {
    TestApi::start_with(|config| {
        config.scopes = outbound_auth::RequiredScopes::from_lookup(&|name: &str| {
            (name == "REQUIRE_SCOPES").then(|| "true".to_owned())
        })
        .unwrap();
    })
    .await
}

/// Sends `method path` with `body` (if any) and the bearer `token`.
async fn send_with(
    api: &TestApi,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> crate::support::Answer {
    let request = api.anonymous(method, path).bearer_auth(token);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    api.send(request).await
}

/// D25 with `REQUIRE_SCOPES`: reads need `outbound/read`, changes `outbound/write` (publish and
/// the other task actions too), the tenant's settings and do-not-call deletes `outbound/admin`;
/// a token without the route's scope is 403 naming it, and nothing changes. Off by default: the
/// rest of the suite's tokens carry no scope at all.
#[tokio::test]
async fn each_route_needs_its_scope_when_scopes_are_required() {
    let api = scoped_api().await;
    let read = scoped_token(&api, "outbound/read");
    let write = scoped_token(&api, "outbound/read outbound/write");
    let admin = scoped_token(&api, "outbound/admin");
    let send = |token: &'_ str, method: Method, path: &'_ str, body: Option<Value>| {
        let (token, path) = (token.to_owned(), path.to_owned());
        let api = &api;
        async move { send_with(api, &token, method, &path, body).await }
    };

    send(&read, Method::GET, "/api/dataSource/list", None)
        .await
        .ok();
    send(
        &read,
        Method::POST,
        "/api/dataSource/add",
        Some(json!({"dataSourceName": "Scoped"})),
    )
    .await
    .err(403, "this token lacks the scope outbound/write");
    assert_eq!(
        send(&read, Method::GET, "/api/dataSource/list", None)
            .await
            .ok()["total"],
        0,
        "the refused add stored nothing"
    );
    let added = send(
        &write,
        Method::POST,
        "/api/dataSource/add",
        Some(json!({"dataSourceName": "Scoped"})),
    )
    .await;
    let source = added.ok()["id"].as_str().unwrap().to_owned();
    send(
        &write,
        Method::POST,
        &contact_op(&source, "add"),
        Some(json!({"phoneNumber": "13800000001"})),
    )
    .await
    .ok();
    let task = send(
        &write,
        Method::POST,
        "/api/task/add",
        Some(json!({"taskName": "Scoped task", "dataSourceId": source})),
    )
    .await;
    let task = task.ok()["id"].as_str().unwrap().to_owned();
    send(
        &admin,
        Method::POST,
        "/api/task/publish",
        Some(json!({"id": task})),
    )
    .await
    .err(403, "this token lacks the scope outbound/write");
    send(
        &write,
        Method::POST,
        "/api/task/publish",
        Some(json!({"id": task})),
    )
    .await
    .ok();
    send(
        &admin,
        Method::GET,
        &format!("/api/task/detail/{task}"),
        None,
    )
    .await
    .err(403, "this token lacks the scope outbound/read");

    // The tenant's settings: read with read, changed with admin only.
    let change = json!({"defaultCountry": "US"});
    let before = send(&read, Method::GET, "/api/settings", None)
        .await
        .ok()
        .clone();
    send(
        &write,
        Method::POST,
        "/api/settings/update",
        Some(change.clone()),
    )
    .await
    .err(403, "this token lacks the scope outbound/admin");
    assert_eq!(
        send(&read, Method::GET, "/api/settings", None).await.ok(),
        &before,
        "the refused update changed nothing"
    );
    // D29: the console's app client grants every scope; only the group makes an administrator.
    for groups in [json!([]), json!(["operators"])] {
        let scope_only = scoped_token_of(&api, "outbound/read outbound/admin", groups);
        send(
            &scope_only,
            Method::POST,
            "/api/settings/update",
            Some(change.clone()),
        )
        .await
        .err(
            403,
            "only members of the group admins may make this request",
        );
    }
    let updated = send(&admin, Method::POST, "/api/settings/update", Some(change))
        .await
        .ok()
        .clone();
    assert_eq!(updated["defaultCountry"], "US");

    // The do-not-call list: added with write, deleted with admin only.
    let number = json!({"phoneNumber": "+12125550199"});
    send(&admin, Method::POST, "/api/dnc/add", Some(number.clone()))
        .await
        .err(403, "this token lacks the scope outbound/write");
    send(&write, Method::POST, "/api/dnc/add", Some(number.clone()))
        .await
        .ok();
    send(
        &write,
        Method::POST,
        "/api/dnc/delete",
        Some(number.clone()),
    )
    .await
    .err(403, "this token lacks the scope outbound/admin");
    assert_eq!(
        send(&read, Method::GET, "/api/dnc/list", None).await.ok()["total"],
        1,
        "the refused delete left the entry"
    );
    send(&admin, Method::POST, "/api/dnc/delete", Some(number))
        .await
        .ok();
    assert_eq!(
        send(&read, Method::GET, "/api/dnc/list", None).await.ok()["total"],
        0
    );
}

/// The `dev-token` binary of the local stack's crate, beside this test's own executable's
/// directory (`target/<profile>/deps/`), built with it by `cargo test --workspace`.
fn dev_token() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    deps.parent().unwrap_or(deps).join("dev-token")
}

/// D25, D32: `make token SCOPES=...` mints a development access token of an administrator with
/// any scopes, space or comma separated: the operator's too; `MEMBER=1` a member's of no group.
#[tokio::test]
async fn development_tokens_carry_the_scopes_asked_for() {
    let api = scoped_api().await;
    let mint = |args: &[&str]| {
        let output = std::process::Command::new(dev_token())
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    };
    let claims_of = |token: &str| api.jwt.verify(token).unwrap();
    let plain = mint(&["acme"]);
    assert_eq!(claims_of(&plain)["token_use"], "access");
    assert!(!claims_of(&plain).contains_key("scope"));
    assert_eq!(
        claims_of(&plain)["cognito:groups"],
        json!(["admins"]),
        "D32"
    );
    let member = mint(&["--member", "acme"]);
    assert!(!claims_of(&member).contains_key("cognito:groups"));
    assert_eq!(claims_of(&member)["tenant_id"], "acme");
    send_with(&api, &plain, Method::GET, "/api/dataSource/list", None)
        .await
        .err(403, "this token lacks the scope outbound/read");

    let scoped = mint(&["acme", "outbound/read,outbound/operator", "outbound/admin"]);
    assert_eq!(
        claims_of(&scoped)["scope"],
        "outbound/read outbound/operator outbound/admin"
    );
    send_with(&api, &scoped, Method::GET, "/api/dataSource/list", None)
        .await
        .ok();
    send_with(
        &api,
        &scoped,
        Method::POST,
        "/api/settings/update",
        Some(json!({"defaultCountry": "GB"})),
    )
    .await
    .ok();
    send_with(
        &api,
        &scoped,
        Method::POST,
        "/api/dataSource/add",
        Some(json!({"dataSourceName": "Not with these scopes"})),
    )
    .await
    .err(403, "this token lacks the scope outbound/write");
    let spaced = mint(&["globex", "outbound/read outbound/write"]);
    assert_eq!(claims_of(&spaced)["scope"], "outbound/read outbound/write");
    assert_eq!(claims_of(&spaced)["tenant_id"], "globex");
}

/// D32: the administrator's role holds in every deployment, scopes required or not: a member
/// of no group (or of another) is 403 naming the group on settings updates and do-not-call
/// deletes, and nothing changes; a member of `admins` may; a member still reads and adds.
#[tokio::test]
async fn settings_updates_and_dnc_deletes_need_an_administrator_without_scopes() {
    let api = TestApi::start().await;
    let member = api.member_token("acme");
    let not_admin = "only members of the group admins may make this request";
    let change = json!({"defaultCountry": "US"});
    let before = send_with(&api, &member, Method::GET, "/api/settings", None)
        .await
        .ok()
        .clone();
    send_with(
        &api,
        &member,
        Method::POST,
        "/api/settings/update",
        Some(change.clone()),
    )
    .await
    .err(403, not_admin);
    let number = json!({"phoneNumber": "+12125550199"});
    send_with(
        &api,
        &member,
        Method::POST,
        "/api/dnc/add",
        Some(number.clone()),
    )
    .await
    .ok();
    for groups in [
        json!(["operators"]),
        json!("sales,admins"),
        json!(["sales,admins"]),
    ] {
        let now = chrono::Utc::now().timestamp();
        let other_group = api.jwt.sign(&json!({"sub": "u-2", "tenant_id": "acme",
            "iss": api.jwt.issuer, "aud": api.jwt.audience, "exp": now + 600,
            "token_use": "access", "cognito:groups": groups}));
        send_with(
            &api,
            &other_group,
            Method::POST,
            "/api/dnc/delete",
            Some(number.clone()),
        )
        .await
        .err(403, not_admin);
    }
    send_with(
        &api,
        &member,
        Method::POST,
        "/api/dnc/delete",
        Some(number.clone()),
    )
    .await
    .err(403, not_admin);
    assert_eq!(
        send_with(&api, &member, Method::GET, "/api/settings", None)
            .await
            .ok(),
        &before,
        "the refused update changed nothing"
    );
    assert_eq!(
        api.get("acme", "/api/dnc/list").await.ok()["total"],
        1,
        "the refused deletes left the entry"
    );
    let updated = api.post("acme", "/api/settings/update", change).await;
    assert_eq!(updated.ok()["defaultCountry"], "US");
    api.post("acme", "/api/dnc/delete", number).await.ok();
    assert_eq!(api.get("acme", "/api/dnc/list").await.ok()["total"], 0);
}

/// D32: behind the stack's distribution, a request without the distribution's secret header
/// (sent to the API's own domain directly) is 403 before anything is read or counted; with a
/// wrong value too; with it the request is answered.
#[tokio::test]
async fn only_requests_through_the_distribution_are_answered() {
    use outbound_model::origin::{OriginSecret, ORIGIN_HEADER};
    const SECRET: &str = "the distribution's secret, 32 bytes or more";
    let api = TestApi::start_with(|config| config.origin = Some(OriginSecret::new(SECRET))).await;
    let add = |header: Option<&str>| {
        let request = api
            .request("acme", Method::POST, "/api/dataSource/add")
            .json(&json!({"dataSourceName": "Through the edge"}));
        match header {
            Some(value) => request.header(ORIGIN_HEADER, value),
            None => request,
        }
    };
    let refused = "the API is reached through its distribution only";
    api.send(add(None)).await.err(403, refused);
    api.send(add(Some("guess"))).await.err(403, refused);
    assert!(api.snapshot().await.is_empty(), "nothing stored");
    api.send(add(Some(SECRET))).await.ok();
    let list = api
        .request("acme", Method::GET, "/api/dataSource/list")
        .header(ORIGIN_HEADER, SECRET);
    assert_eq!(api.send(list).await.ok()["total"], 1);
}

//! Audit (D25): every change of the tenant's settings and of its do-not-call list is an event on
//! the bus naming the token's `sub`, what changed and how many, and never a phone number; a
//! refused change has none. The request log line names the `sub` too.

use crate::events::{capture_logs, details, Events};
use crate::support::TestApi;
use outbound_local::stream::Pumped;
use reqwest::Method;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A `sub` as Cognito writes it.
const SUB: &str = "4f1c2e3a-9b8d-4c7e-a6f5-0123456789ab";

/// A token of an administrator of `tenant` (D32) whose `sub` is `sub` (none when `None`).
fn token(api: &TestApi, tenant: &str, sub: Option<&str>) -> String {
    signed(
        api,
        json!({"tenant_id": tenant, "sub": sub, "cognito:groups": ["admins"]}),
    )
}

/// An access token valid for an hour with `claims` besides (a `null` one left out).
pub(crate) fn signed(api: &TestApi, claims: Value) -> String {
    let now = chrono::Utc::now().timestamp();
    let mut all = json!({
        "iss": api.jwt.issuer,
        "aud": api.jwt.audience,
        "iat": now,
        "exp": now + 3600,
        "token_use": "access",
    });
    for (name, value) in claims.as_object().cloned().unwrap_or_default() {
        if !value.is_null() {
            all[name] = value;
        }
    }
    api.jwt.sign(&all)
}

async fn post_as(api: &TestApi, token: &str, path: &str, body: Value) -> crate::support::Answer {
    api.send(
        api.anonymous(Method::POST, path)
            .bearer_auth(token)
            .json(&body),
    )
    .await
}

async fn import_as(api: &TestApi, token: &str, csv: &str) -> crate::support::Answer {
    let part = reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("numbers.csv");
    let form = reqwest::multipart::Form::new().part("file", part);
    api.send(
        api.anonymous(Method::POST, "/api/dnc/batchImport")
            .bearer_auth(token)
            .multipart(form),
    )
    .await
}

/// The outbox items in the table, oldest first: `(detail-type, detail)`.
pub(crate) async fn outbox(api: &TestApi) -> Vec<(String, Value)> {
    let mut events: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for item in api.snapshot().await.into_values() {
        if item["sk"].as_s().map(String::as_str) != Ok("EVENT") {
            continue;
        }
        let kind = item["event_type"].as_s().unwrap().to_owned();
        let detail: Value = serde_json::from_str(item["detail"].as_s().unwrap()).unwrap();
        let id = detail["eventId"].as_str().unwrap().to_owned();
        events.insert(id, (kind, detail));
    }
    events.into_values().collect()
}

/// A detail without the fields every event has (checked here: an id, the tenant, a time).
pub(crate) fn what_happened(detail: &Value) -> Value {
    let mut detail = detail.clone();
    let map = detail.as_object_mut().unwrap();
    assert!(map.remove("eventId").unwrap().is_string(), "{detail}");
    assert_eq!(map.remove("tenant"), Some(json!("acme")));
    assert!(map.remove("time").unwrap().is_string());
    detail
}

/// D25: each settings update, do-not-call add, delete and file import is one event with the
/// token's `sub` and exactly what changed (the settings fields set or cleared with their new
/// values; for the list the action and its counts); requests refused (bad input, a number listed
/// already or not at all, a file refused as a whole, a token without a `sub`) change nothing and
/// have none. No event, stored or published, holds a number.
#[tokio::test]
async fn each_settings_and_do_not_call_change_is_one_event_naming_its_sub_and_no_number() {
    let api = TestApi::start().await;
    let mut events = Events::on(&api, None).await;
    let admin = token(&api, "acme", Some(SUB));

    post_as(
        &api,
        &admin,
        "/api/settings/update",
        json!({"defaultCountry": "US", "callingHours": {"start": "09:00", "end": "21:00"}}),
    )
    .await
    .ok();
    post_as(
        &api,
        &admin,
        "/api/settings/update",
        json!({"callingHours": null, "frequencyCap": {"maxCalls": 3, "periodHours": 24}}),
    )
    .await
    .ok();
    // Refused: nothing changed, no event.
    post_as(
        &api,
        &admin,
        "/api/settings/update",
        json!({"defaultCountry": "XX"}),
    )
    .await
    .code(400);

    post_as(
        &api,
        &admin,
        "/api/dnc/add",
        json!({"phoneNumber": "(415) 555-0100", "reason": "asked"}),
    )
    .await
    .ok();
    post_as(
        &api,
        &admin,
        "/api/dnc/add",
        json!({"phoneNumber": "+14155550100"}),
    )
    .await
    .code(409);
    post_as(
        &api,
        &admin,
        "/api/dnc/delete",
        json!({"phoneNumber": "415-555-0100"}),
    )
    .await
    .ok();
    post_as(
        &api,
        &admin,
        "/api/dnc/delete",
        json!({"phoneNumber": "+14155550100"}),
    )
    .await
    .code(404);
    post_as(
        &api,
        &admin,
        "/api/dnc/add",
        json!({"phoneNumber": "+14155550199"}),
    )
    .await
    .ok();
    let report = import_as(
        &api,
        &admin,
        "phoneNumber,reason\n+14155550101,moved\n4155550102,\n+14155550199,\nnot a number,\n\
         +14155550101,again\n",
    )
    .await;
    assert_eq!(
        report.ok(),
        &json!({"importCount": 5, "successCount": 2, "failCount": 3, "details": [
            {"row": 4, "phoneNumber": "+14155550199", "reason": "already exists"},
            {"row": 5, "phoneNumber": "not a number", "reason": "invalid phoneNumber"},
            {"row": 6, "phoneNumber": "+14155550101", "reason": "duplicate in file"},
        ]})
    );
    // A file refused as a whole stores nothing: no event.
    import_as(&api, &admin, "name\nAda\n").await.code(400);
    // A token without a sub cannot make an audited change, and changes nothing.
    let anonymous = token(&api, "acme", None);
    for (path, body) in [
        ("/api/settings/update", json!({"defaultCountry": "GB"})),
        ("/api/dnc/add", json!({"phoneNumber": "+14155550142"})),
        ("/api/dnc/delete", json!({"phoneNumber": "+14155550199"})),
    ] {
        post_as(&api, &anonymous, path, body).await.err(
            403,
            "token has no valid sub claim, which names who made an audited change",
        );
    }
    import_as(&api, &anonymous, "phoneNumber\n+14155550142\n")
        .await
        .code(403);
    // ... though it reads, and makes the changes no audit records.
    api.send(
        api.anonymous(Method::GET, "/api/settings")
            .bearer_auth(&anonymous),
    )
    .await
    .ok();
    let settings = api.get("acme", "/api/settings").await;
    assert_eq!(settings.ok()["defaultCountry"], "US");
    assert_eq!(
        api.get("acme", "/api/dnc/list").await.ok()["total"],
        3,
        "+14155550199 and the file's two"
    );

    let stored = outbox(&api).await;
    let kinds: Vec<&str> = stored.iter().map(|(kind, _)| kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "SettingsChanged",
            "SettingsChanged",
            "DncChanged",
            "DncChanged",
            "DncChanged",
            "DncChanged"
        ]
    );
    let happened: Vec<Value> = stored
        .iter()
        .map(|(_, detail)| what_happened(detail))
        .collect();
    assert_eq!(
        happened,
        [
            json!({"sub": SUB, "changes": {
                "defaultCountry": "US",
                "callingHours": {"start": "09:00", "end": "21:00"},
            }}),
            json!({"sub": SUB, "changes": {
                "callingHours": null,
                "frequencyCap": {"maxCalls": 3, "periodHours": 24},
            }}),
            json!({"sub": SUB, "action": "add", "count": 1, "rowCount": null,
                   "refusedCount": null, "refusedReasons": null}),
            json!({"sub": SUB, "action": "delete", "count": 1, "rowCount": null,
                   "refusedCount": null, "refusedReasons": null}),
            json!({"sub": SUB, "action": "add", "count": 1, "rowCount": null,
                   "refusedCount": null, "refusedReasons": null}),
            json!({"sub": SUB, "action": "import", "count": 2, "rowCount": 5, "refusedCount": 3,
            "refusedReasons": {
                "already exists": 1, "duplicate in file": 1, "invalid phoneNumber": 1,
            }}),
        ]
    );

    // Published as stored, each once; none holds a number, in any form.
    assert_eq!(
        events.pump().await,
        Pumped {
            published: 6,
            failed: 0
        }
    );
    let received = details(&events.received(&api, None).await);
    let mut published: Vec<(String, Value)> = received;
    published.sort_by(|a, b| a.1["eventId"].as_str().cmp(&b.1["eventId"].as_str()));
    assert_eq!(published, stored);
    for (_, detail) in &published {
        let text = detail.to_string();
        for number in ["4155550", "555-01", "not a number"] {
            assert!(!text.contains(number), "{number} in {text}");
        }
    }
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

/// D25, D14: concurrent settings updates of different fields each commit once, with their own
/// event, and none undoes another: each is conditioned on the settings it read.
#[tokio::test]
async fn concurrent_settings_updates_each_commit_with_their_event() {
    let api = TestApi::start().await;
    let admin = token(&api, "acme", Some(SUB));
    let bodies = [
        json!({"defaultCountry": "GB"}),
        json!({"callingHours": {"start": "08:00", "end": "20:00"}}),
        json!({"frequencyCap": {"maxCalls": 2, "periodHours": 12}}),
    ];
    let answers = futures::future::join_all(
        bodies
            .iter()
            .map(|body| post_as(&api, &admin, "/api/settings/update", body.clone())),
    )
    .await;
    for answer in &answers {
        answer.ok();
    }
    let settings = api.get("acme", "/api/settings").await;
    assert_eq!(
        (
            &settings.ok()["defaultCountry"],
            &settings.ok()["callingHours"],
            &settings.ok()["frequencyCap"]
        ),
        (
            &json!("GB"),
            &json!({"start": "08:00", "end": "20:00"}),
            &json!({"maxCalls": 2, "periodHours": 12})
        )
    );
    let mut changes: Vec<Value> = outbox(&api)
        .await
        .into_iter()
        .map(|(kind, detail)| {
            assert_eq!(kind, "SettingsChanged");
            detail["changes"].clone()
        })
        .collect();
    changes.sort_by_key(|change| change.to_string());
    let mut expected = bodies.to_vec();
    expected.sort_by_key(|change| change.to_string());
    assert_eq!(changes, expected);
}

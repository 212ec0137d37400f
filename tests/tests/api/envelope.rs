//! The envelope of refusals that do not depend on an endpoint (D1, D6): unknown paths, wrong
//! methods, bodies that are not JSON objects, bodies over 1 MiB, internal errors, and the
//! request id.

use crate::support::{contact_op, unique, Answer, Stack, TestApi};
use outbound_adapters::store::Store;
use outbound_app::App;
use outbound_local::{local_config, local_jwt};
use reqwest::Method;
use serde_json::json;
use tower::ServiceExt;

/// Largest JSON body accepted (D6).
const MIB: usize = 1024 * 1024;

/// A JSON object of exactly `size` bytes: a data source whose description pads it out.
fn body_of_size(size: usize) -> String {
    let shell = json!({"dataSourceName": "Big", "dataSourceDesc": ""}).to_string();
    let padded = json!({"dataSourceName": "Big", "dataSourceDesc": "x".repeat(size - shell.len())});
    let text = padded.to_string();
    assert_eq!(text.len(), size);
    text
}

#[tokio::test]
async fn unknown_paths_answer_the_404_envelope() {
    // D1: unknown path is a 404 envelope, with or without a token.
    let api = TestApi::start().await;
    for path in [
        "/",
        "/api",
        "/api/dataSource",
        "/api/dataSource/detail",
        "/api/dataSource/nope",
        "/api/dataSource/list/extra",
        "/api/datasource/list",
    ] {
        let answer = api.get("acme", path).await;
        answer.err(404, "no such path");
        assert!(answer.headers.contains_key("x-request-id"), "{path}");
        api.send(api.anonymous(Method::POST, path))
            .await
            .err(404, "no such path");
    }
}

#[tokio::test]
async fn wrong_methods_on_known_paths_are_405() {
    // D1: an HTTP method not allowed on a known path is a 405 envelope.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Methods").await;
    let detail = format!("/api/dataSource/detail/{source}");
    let contacts = format!("/api/dataSource/{source}/contacts");
    let add_contact = contact_op(&source, "add");
    let cases = [
        (Method::GET, "/api/dataSource/add"),
        (Method::POST, "/api/dataSource/list"),
        (Method::PUT, "/api/dataSource/update"),
        (Method::DELETE, detail.as_str()),
        (Method::POST, detail.as_str()),
        (Method::POST, contacts.as_str()),
        (Method::GET, add_contact.as_str()),
        (Method::PATCH, "/api/dataSource/delete"),
    ];
    for (method, path) in cases {
        api.send(api.request("acme", method, path))
            .await
            .err(405, "method not allowed on this path");
    }
    assert_eq!(api.detail("acme", &source).await.ok()["id"], source);
}

#[tokio::test]
async fn bodies_that_are_not_json_objects_are_400() {
    // D1: malformed JSON, and JSON that is not an object, are 400; nothing is stored.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Bodies").await;
    let before = api.snapshot().await;
    let paths = [
        "/api/dataSource/add".to_owned(),
        "/api/dataSource/update".to_owned(),
        "/api/dataSource/delete".to_owned(),
        contact_op(&source, "add"),
        contact_op(&source, "update"),
        contact_op(&source, "delete"),
    ];
    for path in &paths {
        for text in [
            "",
            "{",
            "{\"dataSourceName\": }",
            "not json",
            "{\"a\":1} {}",
        ] {
            let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            api.post_raw("acme", path, text)
                .await
                .err(400, &format!("request body is not valid JSON: {error}"));
        }
        for text in [
            "[]",
            "[{\"dataSourceName\":\"x\"}]",
            "null",
            "5",
            "\"x\"",
            "true",
        ] {
            api.post_raw("acme", path, text)
                .await
                .err(400, "request body must be a JSON object");
        }
    }
    assert_eq!(api.snapshot().await, before);
}

#[tokio::test]
async fn json_bodies_over_one_mib_are_413() {
    // D6: a JSON body larger than 1 MiB is 413; exactly 1 MiB is read and judged on its fields.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Sizes").await;
    let before = api.snapshot().await;
    let too_large = format!("request body is larger than {MIB} bytes");
    for path in ["/api/dataSource/add".to_owned(), contact_op(&source, "add")] {
        api.post_raw("acme", &path, body_of_size(MIB + 1))
            .await
            .err(413, &too_large);
        api.post_raw("acme", &path, "[".repeat(2 * MIB))
            .await
            .err(413, &too_large);
    }
    api.post_raw("acme", "/api/dataSource/add", body_of_size(MIB))
        .await
        .err(400, "dataSourceDesc must be at most 500 characters");
    assert_eq!(api.snapshot().await, before);
}

#[tokio::test]
async fn every_answer_has_its_own_request_id() {
    // D1: every response carries x-request-id, successes and refusals alike.
    let api = TestApi::start().await;
    let answers = [
        api.sources("acme", "").await,
        api.sources("acme", "pageSize=0").await,
        api.detail("acme", "missing").await,
        api.send(api.anonymous(Method::GET, "/api/dataSource/list"))
            .await,
    ];
    let mut ids: Vec<&str> = answers
        .iter()
        .map(|answer| answer.headers["x-request-id"].to_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), answers.len());
}

#[tokio::test]
async fn internal_errors_answer_500_without_internals() {
    // D1: a failing dependency is a 500 whose message names no SDK error and no table.
    let stack = Stack::provision().await;
    let missing_table = unique("missing-table");
    let config = local_config(&stack.resources);
    let token = local_jwt(&config).issue("acme", 60);
    let config = outbound_app::config::Config {
        bucket: "no-bucket".into(),
        reclaim_queue_url: "no-queue".into(),
        export_queue_url: Some("no-queue".into()),
        ..config
    };
    let api = outbound_app::config::ApiConfig::from_config(&config).unwrap();
    let store = Store::new(aws_sdk_dynamodb::Client::new(&stack.sdk), &missing_table);
    let app = App::with_store(config, &stack.sdk, store);
    let router = outbound_api::datasource_api(app, api);
    let requests = [
        ("GET", "/api/dataSource/list", ""),
        ("POST", "/api/dataSource/add", r#"{"dataSourceName":"x"}"#),
    ];
    for (method, path, body) in requests {
        let request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::from(body))
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let (parts, body) = response.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        let answer = Answer::parse(parts.status, parts.headers, &bytes);
        answer.err(500, "internal server error");
        assert!(!String::from_utf8_lossy(&bytes).contains(&missing_table));
    }
}

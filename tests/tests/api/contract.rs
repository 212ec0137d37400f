//! The contract: the local API serves the committed OpenAPI document, and the refusals the
//! framework makes before any handler runs come in the D1 envelope the document promises.

use crate::support::TestApi;
use reqwest::header::CONTENT_TYPE;
use reqwest::Method;

const COMMITTED: &str = include_str!("../../../openapi.yaml");

#[tokio::test]
async fn the_committed_document_is_served() {
    let api = TestApi::start().await;
    let response = api
        .anonymous(Method::GET, "/api/openapi.yaml")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[CONTENT_TYPE], "application/yaml");
    let served = response.text().await.unwrap();
    assert!(served.starts_with("openapi: 3.1.0\n"), "{served:.80}");
    assert_eq!(served, COMMITTED);
}

#[tokio::test]
async fn every_documented_route_is_served() {
    let api = TestApi::start().await;
    let routes: Vec<(String, String)> = COMMITTED
        .lines()
        .scan(None::<String>, |path, line| {
            if let Some(p) = line.strip_prefix("  /api/") {
                *path = Some(format!("/api/{}", p.trim_end_matches(':')));
                return Some(None);
            }
            let method = line.strip_prefix("    ").and_then(|m| m.strip_suffix(':'));
            Some(match (path.as_ref(), method) {
                (Some(p), Some(m @ ("get" | "post"))) => Some((m.to_owned(), p.clone())),
                _ => None,
            })
        })
        .flatten()
        .collect();
    assert_eq!(routes.len(), 43, "{routes:?}");
    for (method, path) in routes {
        let path = path
            .replace("{id}", "01M8BG7DF47PAYW0D0ZHRA5CM8")
            .replace("{importId}", "01M8BG7DF47PAYW0D0ZHRA5CM8")
            .replace("{exportId}", "01M8BG7DF47PAYW0D0ZHRA5CM8")
            .replace("{tenant}", "acme");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let answer = api.send(api.request("acme", method.clone(), &path)).await;
        // Served: whatever it answers, it is not the router's own "no such path" or 405.
        assert_ne!(answer.body["message"], "no such path", "{method} {path}");
        assert_ne!(answer.status, 405, "{method} {path}: {}", answer.body);
    }
}

#[tokio::test]
async fn framework_refusals_are_enveloped() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Leads").await;
    // A multipart body without its boundary never reaches the handler.
    let no_boundary = api
        .request(
            "acme",
            Method::POST,
            &format!("/api/dataSource/{source}/contact/batchImport"),
        )
        .header(CONTENT_TYPE, "multipart/form-data");
    let answer = api.send(no_boundary).await;
    assert_eq!(answer.headers[CONTENT_TYPE], "application/json");
    assert!(!answer.code(400).is_empty());
    // A path that is not UTF-8 once decoded.
    let answer = api.get("acme", "/api/dataSource/detail/%FF").await;
    assert_eq!(answer.headers[CONTENT_TYPE], "application/json");
    assert!(!answer.code(400).is_empty());
}

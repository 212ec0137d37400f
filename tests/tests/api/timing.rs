//! `Server-Timing` on every response: the AWS calls a request made, the time it waited on them,
//! and the service's own time apart from it. Counts are exact; times only plausible.

use crate::support::{contact_op, Answer, TestApi};
use outbound_adapters::aws::timing::ServerTiming;
use serde_json::json;
use std::time::{Duration, Instant};

/// The answer's `Server-Timing`, checked against the DynamoDB calls the store counted and the
/// request's wall time seen by the client.
async fn timed(
    api: &TestApi,
    endpoint: &str,
    request: impl std::future::Future<Output = Answer>,
) -> (Answer, ServerTiming) {
    let started = Instant::now();
    let (answer, calls) = api.counting(request).await;
    let wall = started.elapsed();
    let header = answer.headers["server-timing"]
        .to_str()
        .expect("Server-Timing is ASCII");
    let timing = ServerTiming::parse(header)
        .unwrap_or_else(|| panic!("{endpoint}: unreadable Server-Timing {header}"));
    assert_eq!(timing.store_calls as usize, calls, "{endpoint}: {header}");
    assert_eq!(timing.store_retries, 0, "{endpoint}: {header}");
    assert!(timing.app_ms > 0.0, "{endpoint}: {header}");
    assert_eq!(timing.store_ms > 0.0, calls > 0, "{endpoint}: {header}");
    let server = Duration::from_secs_f64((timing.store_ms + timing.app_ms) / 1000.0);
    assert!(server <= wall, "{endpoint}: {header} beyond {wall:?}");
    (answer, timing)
}

#[tokio::test]
async fn server_timing_gives_each_requests_calls_and_own_time() {
    let api = TestApi::start().await;

    let (added, timing) = timed(
        &api,
        "dataSource add",
        api.post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "Timed"}),
        ),
    )
    .await;
    assert_eq!(timing.store_calls, 1);
    let source = added.ok()["id"].as_str().unwrap().to_owned();

    let (_, timing) = timed(
        &api,
        "contact add",
        api.post(
            "acme",
            &contact_op(&source, "add"),
            json!({"phoneNumber": "13800000000"}),
        ),
    )
    .await;
    // The country of its `e164` (D14), then the transaction.
    assert_eq!(timing.store_calls, 2);

    // A contacts page is one Query a contact shard, sent together.
    let shards = outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS;
    for (endpoint, path, calls) in [
        (
            "dataSource detail",
            format!("/api/dataSource/detail/{source}"),
            1,
        ),
        ("dataSource list", "/api/dataSource/list".to_owned(), 1),
        (
            "contacts page 1",
            format!("/api/dataSource/{source}/contacts"),
            // And the country of the rows' `e164` (D14).
            shards + 1,
        ),
    ] {
        let (answer, timing) = timed(&api, endpoint, api.get("acme", &path)).await;
        answer.ok();
        assert_eq!(timing.store_calls, calls, "{endpoint}");
    }

    // Refusals carry it too: one that needs no stored state waits on nothing.
    let (answer, timing) = timed(
        &api,
        "malformed id",
        api.get("acme", "/api/dataSource/detail/not-an-id"),
    )
    .await;
    answer.code(404);
    assert_eq!(timing.store_calls, 0);
    let (answer, timing) = timed(&api, "unknown path", api.get("acme", "/api/nothing")).await;
    answer.code(404);
    assert_eq!(timing.store_calls, 0);
}

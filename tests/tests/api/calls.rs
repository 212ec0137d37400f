//! DynamoDB calls per request, counted (not timed): each endpoint makes the few calls its design
//! promises, whatever the data size, and refusals that need no stored state make none (D2).

use crate::support::{contact_op, TestApi};
use futures::FutureExt;
use serde_json::json;

/// Asserts `actual` against `limit` (exact, or at most), and prints it for the record.
fn check(endpoint: &str, actual: usize, expected: Calls) {
    println!("{endpoint}: {actual} DynamoDB call(s)");
    match expected {
        Calls::Exactly(n) => assert_eq!(actual, n, "{endpoint}"),
        Calls::AtMost(n) => assert!(actual <= n, "{endpoint}: {actual} > {n}"),
    }
}

enum Calls {
    Exactly(usize),
    AtMost(usize),
}

#[tokio::test]
async fn each_endpoint_makes_a_fixed_number_of_calls() {
    use Calls::{AtMost, Exactly};
    let api = TestApi::start().await;
    for i in 0..5 {
        api.data_source("acme", &format!("Other {i}")).await;
    }

    let (added, calls) = api
        .counting(api.post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "Counted"}),
        ))
        .await;
    check("dataSource add", calls, Exactly(1));
    let source = added.ok()["id"].as_str().unwrap().to_owned();

    let (contact, calls) = api
        .counting(api.post(
            "acme",
            &contact_op(&source, "add"),
            json!({"phoneNumber": "13800000000"}),
        ))
        .await;
    // The transaction, and one BatchGetItem of the country its `e164` is read in (D14).
    check("contact add", calls, Exactly(2));
    let contact = contact.ok()["id"].as_str().unwrap().to_owned();
    for i in 1..40 {
        api.contact("acme", &source, &format!("1380000{i:04}"))
            .await;
    }

    let (detail, calls) = api.counting(api.detail("acme", &source)).await;
    check("dataSource detail", calls, Exactly(1));
    assert_eq!(detail.ok()["contactCount"], 40);

    let (list, calls) = api.counting(api.sources("acme", "")).await;
    check("dataSource list", calls, Exactly(1));
    assert_eq!(list.ok()["total"], 6);
    let (list, calls) = api
        .counting(api.sources("acme", "dataSourceName=other&pageSize=2"))
        .await;
    // D5: the index projected to key and name, then the page's records.
    check("dataSource list, name filter", calls, Exactly(2));
    assert_eq!(list.ok()["total"], 5);

    // D5: a first page is one Query a contact shard (seldom two); a page at an offset skips
    // keys, then reads its records.
    let shards = outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS as usize;
    for (query, rows, expected) in [
        ("", 20, 2 * shards + 1),
        ("pageNum=2&pageSize=15", 15, 2 * shards + 2),
        ("pageSize=100", 40, 2 * shards + 1),
        ("pageNum=9", 0, 2 * shards + 1),
    ] {
        let (page, calls) = api.counting(api.contacts("acme", &source, query)).await;
        check(&format!("contacts page ?{query}"), calls, AtMost(expected));
        assert!(calls >= shards, "one Query a shard at least");
        assert_eq!(page.ok()["total"], 40);
        assert_eq!(page.ok()["rows"].as_array().unwrap().len(), rows);
    }
    let (page, calls) = api
        .counting(api.contacts("acme", &source, "phoneNumber=1380000003"))
        .await;
    check("contacts page, phone filter", calls, AtMost(2 * shards + 2));
    assert_eq!(page.ok()["total"], 10);

    let (updated, calls) = api
        .counting(api.post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": contact, "customerName": "Li"}),
        ))
        .await;
    check("contact update", calls, AtMost(3));
    updated.ok();
    let (updated, calls) = api
        .counting(api.post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": contact, "phoneNumber": "13900000000"}),
        ))
        .await;
    check("contact update, new number", calls, AtMost(3));
    updated.ok();
    let (deleted, calls) = api
        .counting(api.post(
            "acme",
            &contact_op(&source, "delete"),
            json!({"contactId": contact}),
        ))
        .await;
    check("contact delete", calls, AtMost(2));
    deleted.ok();

    let (renamed, calls) = api
        .counting(api.post(
            "acme",
            "/api/dataSource/update",
            json!({"id": source, "dataSourceName": "Counted again"}),
        ))
        .await;
    check("dataSource update", calls, AtMost(2));
    renamed.ok();
    let (deleted, calls) = api
        .counting(api.post("acme", "/api/dataSource/delete", json!({"id": source})))
        .await;
    check("dataSource delete", calls, AtMost(2));
    deleted.ok();
}

#[tokio::test]
async fn refusals_make_no_more_calls_than_needed() {
    use Calls::Exactly;
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Refusals").await;
    let missing = ulid::Ulid::new().to_string();
    let (add_contact, add_to_missing) = (contact_op(&source, "add"), contact_op(&missing, "add"));
    let cases = [
        (
            "invalid name",
            api.post(
                "acme",
                "/api/dataSource/add",
                json!({"dataSourceName": " "}),
            )
            .boxed_local(),
            0,
        ),
        (
            "malformed id",
            api.detail("acme", "not-an-id").boxed_local(),
            0,
        ),
        (
            "bad paging",
            api.contacts("acme", &source, "pageSize=0").boxed_local(),
            0,
        ),
        (
            "invalid phone",
            api.post("acme", &add_contact, json!({"phoneNumber": "x"}))
                .boxed_local(),
            0,
        ),
        (
            "unknown path",
            api.get("acme", "/api/nothing").boxed_local(),
            0,
        ),
        (
            "missing dataSource detail",
            api.detail("acme", &missing).boxed_local(),
            1,
        ),
        (
            "missing dataSource contacts",
            api.contacts("acme", &missing, "").boxed_local(),
            1,
        ),
        (
            "contact add to a missing dataSource",
            api.post(
                "acme",
                &add_to_missing,
                json!({"phoneNumber": "13800138000"}),
            )
            .boxed_local(),
            1,
        ),
    ];
    for (case, request, expected) in cases {
        let (answer, calls) = api.counting(request).await;
        answer.code(answer.status.as_u16());
        assert!(answer.status.as_u16() >= 400, "{case}");
        check(case, calls, Exactly(expected));
    }
}

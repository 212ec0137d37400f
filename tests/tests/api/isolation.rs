//! Tenant isolation (D3): another tenant's records answer 404 exactly as missing ones on every
//! endpoint, never appear in its lists, are never changed by it, and names and phone numbers are
//! unique per tenant only.

use crate::support::{contact_op, TestApi};
use serde_json::json;

#[tokio::test]
async fn another_tenants_records_are_404_everywhere_and_unchanged() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Acme leads").await;
    let contact = api.contact("acme", &source, "13800138000").await;
    let before = api.snapshot().await;

    let source_missing = format!("dataSource {source} not found");
    let contact_missing = format!("contact {contact} not found");
    api.detail("globex", &source)
        .await
        .err(404, &source_missing);
    api.contacts("globex", &source, "")
        .await
        .err(404, &source_missing);
    api.contacts("globex", &source, "phoneNumber=138")
        .await
        .err(404, &source_missing);
    let posts = [
        (
            "/api/dataSource/update".to_owned(),
            json!({"id": source, "dataSourceName": "Taken over"}),
            &source_missing,
        ),
        (
            "/api/dataSource/delete".to_owned(),
            json!({"id": source}),
            &source_missing,
        ),
        (
            contact_op(&source, "add"),
            json!({"phoneNumber": "13900139000"}),
            &source_missing,
        ),
        // The data source is read first, for the country of the answer's `e164` (D14).
        (
            contact_op(&source, "update"),
            json!({"contactId": contact, "phoneNumber": "13700137000"}),
            &source_missing,
        ),
        (
            contact_op(&source, "delete"),
            json!({"contactId": contact}),
            &contact_missing,
        ),
    ];
    for (path, body, message) in posts {
        api.post("globex", &path, body).await.err(404, message);
    }
    assert_eq!(
        api.snapshot().await,
        before,
        "globex changed nothing of acme's"
    );

    let acme = api.contacts("acme", &source, "").await;
    assert_eq!(acme.ok()["total"], 1);
    assert_eq!(acme.ok()["rows"][0]["id"], contact);
}

#[tokio::test]
async fn lists_show_only_the_tenants_own_records() {
    let api = TestApi::start().await;
    api.data_source("acme", "Acme one").await;
    api.data_source("acme", "Acme two").await;
    let empty = api.sources("globex", "").await;
    assert_eq!(
        empty.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );
    let filtered = api.sources("globex", "dataSourceName=acme").await;
    assert_eq!(filtered.ok()["total"], 0);

    let own = api.data_source("globex", "Globex one").await;
    let globex = api.sources("globex", "").await;
    assert_eq!(globex.ok()["total"], 1);
    assert_eq!(globex.ok()["rows"][0]["id"], own);
    assert_eq!(api.sources("acme", "").await.ok()["total"], 2);
}

#[tokio::test]
async fn names_and_numbers_are_unique_per_tenant_only() {
    let api = TestApi::start().await;
    let acme = api.data_source("acme", "Shared name").await;
    api.contact("acme", &acme, "13800138000").await;

    let globex = api.data_source("globex", "Shared name").await;
    assert_ne!(globex, acme);
    api.contact("globex", &globex, "13800138000").await;

    // Renames and deletes in one tenant leave the other's name alone.
    let renamed = api
        .post(
            "globex",
            "/api/dataSource/update",
            json!({"id": globex, "dataSourceName": "Globex name"}),
        )
        .await;
    assert_eq!(renamed.ok()["dataSourceName"], "Globex name");
    api.post(
        "acme",
        "/api/dataSource/add",
        json!({"dataSourceName": "Shared name"}),
    )
    .await
    .err(409, r#"dataSourceName "Shared name" already exists"#);
    api.post("globex", "/api/dataSource/delete", json!({"id": globex}))
        .await
        .ok();
    let detail = api.detail("acme", &acme).await;
    assert_eq!(detail.ok()["dataSourceName"], "Shared name");
    assert_eq!(detail.ok()["contactCount"], 1);
}

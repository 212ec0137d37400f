//! Concurrent requests against the single-threaded moto: uniqueness of phone numbers (D7) and
//! names (D3) holds under concurrent writes, and `contactCount` stays exact (D7) under mixed
//! concurrent adds and deletes.

use crate::support::{contact_op, count_status, Answer, TestApi};
use futures::future::join_all;
use outbound_model::Id;
use outbound_model::Tenant;
use serde_json::json;

#[tokio::test]
async fn concurrent_adds_of_one_number_store_it_once() {
    // D7: of 16 concurrent adds of one number, exactly one succeeds.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Race").await;
    let path = contact_op(&source, "add");
    let spellings = [
        "13800138000",
        "138-0013-8000",
        "138 0013 8000",
        "(138) 0013.8000",
    ];
    let answers: Vec<Answer> = join_all((0..16).map(|i| {
        api.post(
            "acme",
            &path,
            json!({"phoneNumber": spellings[i % spellings.len()]}),
        )
    }))
    .await;
    assert_eq!(count_status(&answers, 200), 1, "{answers:#?}");
    for answer in answers.iter().filter(|a| a.status != 200) {
        answer.err(
            409,
            "phoneNumber 13800138000 already exists in this dataSource",
        );
    }
    let list = api.contacts("acme", &source, "").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(list.ok()["rows"].as_array().unwrap().len(), 1);
    // The head, one contact and one phone guard.
    assert_eq!(api.partition_len("acme", &source).await, 3);
}

#[tokio::test]
async fn concurrent_creates_of_one_name_store_it_once() {
    // D3: of 16 concurrent creates of one name, exactly one succeeds.
    let api = TestApi::start().await;
    let answers: Vec<Answer> = join_all((0..16).map(|_| {
        api.post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "Same"}),
        )
    }))
    .await;
    assert_eq!(count_status(&answers, 200), 1, "{answers:#?}");
    for answer in answers.iter().filter(|a| a.status != 200) {
        answer.err(409, r#"dataSourceName "Same" already exists"#);
    }
    let list = api.sources("acme", "").await;
    assert_eq!(list.ok()["total"], 1);
    let winner = answers.iter().find(|a| a.status == 200).unwrap();
    assert_eq!(list.ok()["rows"][0], winner.ok().clone());
}

#[tokio::test]
async fn contact_count_stays_exact_under_mixed_adds_and_deletes() {
    // D7: contactCount is exact under 40 concurrent adds and deletes (more than a tenant's
    // default 20 requests in flight, D29, raised here).
    let api = TestApi::start_with(|config| config.tenant_limits.requests.in_flight = 64).await;
    let source = api.data_source("acme", "Churn").await;
    let mut existing = Vec::new();
    for i in 0..20 {
        existing.push(
            api.contact("acme", &source, &format!("1370000{i:04}"))
                .await,
        );
    }
    let add = contact_op(&source, "add");
    let delete = contact_op(&source, "delete");
    let adds = (0..20).map(|i| {
        let phone = format!("1360000{i:04}");
        api.post("acme", &add, json!({"phoneNumber": phone}))
    });
    // 20 deletes: 15 existing contacts, the first five of them twice.
    let deletes = existing[..15]
        .iter()
        .chain(&existing[..5])
        .map(|id| api.post("acme", &delete, json!({"contactId": id})));
    let (added, deleted) = futures::join!(join_all(adds), join_all(deletes));
    assert_eq!(count_status(&added, 200), 20, "{added:#?}");
    assert_eq!(count_status(&deleted, 200), 15, "{deleted:#?}");
    for answer in deleted.iter().filter(|a| a.status != 200) {
        let message = answer.code(404);
        assert!(
            existing[..5]
                .iter()
                .any(|id| message == format!("contact {id} not found")),
            "{message}"
        );
    }

    let count = api.detail("acme", &source).await.ok()["contactCount"].clone();
    let list = api.contacts("acme", &source, "pageSize=100").await;
    let rows = list.ok()["rows"].as_array().unwrap();
    assert_eq!(count, rows.len());
    assert_eq!(list.ok()["total"], rows.len());
    let mut listed: Vec<&str> = rows.iter().map(|row| row["id"].as_str().unwrap()).collect();
    let mut expected: Vec<&str> = added
        .iter()
        .map(|answer| answer.ok()["id"].as_str().unwrap())
        .chain(existing[15..].iter().map(String::as_str))
        .collect();
    listed.sort_unstable();
    expected.sort_unstable();
    assert_eq!(listed, expected);
    // The head and a contact and phone guard for each contact: nothing left behind.
    assert_eq!(api.partition_len("acme", &source).await, 1 + 2 * rows.len());
}

#[tokio::test]
async fn delete_after_a_concurrent_number_change_keeps_the_new_number_consistent() {
    // D7: a delete that read the contact before another request changed its number must not
    // leave the new number claimed by a contact that no longer exists. The interleaving is made
    // deterministic: read, change through the API, then delete with the stale read.
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Stale").await;
    let contact = api.contact("acme", &source, "13800138000").await;
    let tenant = Tenant::parse("acme").unwrap();
    let (source_id, contact_id) = (Id::parse(&source).unwrap(), Id::parse(&contact).unwrap());
    let stale = api
        .store
        .contact(&tenant, &source_id, &contact_id)
        .await
        .unwrap();

    let moved = api
        .post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": contact, "phoneNumber": "13900139000"}),
        )
        .await;
    assert_eq!(moved.ok()["phoneNumber"], "13900139000");

    let outcome = api.store.delete_contact(&tenant, &stale).await;
    let error = outcome.expect_err("a delete based on a stale read must not go through");
    assert_eq!(error.status_code(), 409, "{error}");

    // Whatever the stale delete did, the stored state is consistent: the contact, its new
    // number's guard and the count agree, and a fresh delete frees the new number.
    let list = api.contacts("acme", &source, "").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(list.ok()["rows"][0]["phoneNumber"], "13900139000");
    api.post(
        "acme",
        &contact_op(&source, "delete"),
        json!({"contactId": contact}),
    )
    .await
    .ok();
    api.contact("acme", &source, "13900139000").await;
    api.contact("acme", &source, "13800138000").await;
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 2);
    assert_eq!(api.partition_len("acme", &source).await, 5);
}

/// D7: sixteen concurrent updates of sixteen different fields of one contact all survive: each
/// writes only the field it sent.
#[tokio::test]
async fn concurrent_updates_of_different_contact_fields_all_survive() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Fields").await;
    let contact = api.contact("acme", &source, "13900000001").await;
    let path = contact_op(&source, "update");
    let answers = join_all((0..16).map(|i| {
        let body = json!({"contactId": contact, format!("field{i}"): format!("value {i}")});
        api.post("acme", &path, body)
    }))
    .await;
    assert_eq!(count_status(&answers, 200), 16, "{answers:?}");
    let stored = api.all_contacts("acme", &source).await;
    for i in 0..16 {
        assert_eq!(
            stored[0][format!("field{i}")],
            format!("value {i}"),
            "field{i}"
        );
    }
    assert_eq!(stored[0]["phoneNumber"], "13900000001");
}

/// D7: concurrent additions of new custom fields cannot together pass the limit of 30.
#[tokio::test]
async fn concurrent_field_additions_stay_within_the_limit() {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Limit").await;
    let contact = api.contact("acme", &source, "13900000002").await;
    let path = contact_op(&source, "update");
    let mut body = json!({"contactId": contact});
    for i in 0..28 {
        body[format!("base{i}")] = json!("x");
    }
    api.post("acme", &path, body).await.ok();
    let answers = join_all((0..8).map(|i| {
        api.post(
            "acme",
            &path,
            json!({"contactId": contact, format!("extra{i}"): "y"}),
        )
    }))
    .await;
    let stored = api.all_contacts("acme", &source).await;
    let custom = stored[0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("base") || k.starts_with("extra"))
        .count();
    assert!(custom <= 33, "{custom} fields stored");
    assert_eq!(custom, 28 + count_status(&answers, 200));
    for answer in answers.iter().filter(|a| a.status != 200) {
        assert!(
            [400, 409].contains(&answer.status.as_u16()),
            "refused as too many or changed meanwhile: {answer:?}"
        );
    }
}

/// D6: a rename and a description change of one data source at once both survive.
#[tokio::test]
async fn concurrent_rename_and_description_change_both_survive() {
    let api = TestApi::start().await;
    for round in 0..6 {
        let source = api.data_source("acme", &format!("Before {round}")).await;
        let (renamed, described) = futures::join!(
            api.post(
                "acme",
                "/api/dataSource/update",
                json!({"id": source, "dataSourceName": format!("After {round}")})
            ),
            api.post(
                "acme",
                "/api/dataSource/update",
                json!({"id": source, "dataSourceDesc": format!("Described {round}")})
            ),
        );
        renamed.ok();
        described.ok();
        let detail = api.detail("acme", &source).await;
        assert_eq!(detail.ok()["dataSourceName"], format!("After {round}"));
        assert_eq!(detail.ok()["dataSourceDesc"], format!("Described {round}"));
    }
}

/// D9: of two concurrent updates of a DRAFT task, a loser answers 409 and changes nothing; sent
/// again it applies on the winner's record, so neither change is lost.
#[tokio::test]
async fn concurrent_task_updates_lose_nothing() {
    let api = TestApi::start().await;
    let task = api
        .task_in("acme", outbound_model::TaskStatus::Draft, 1)
        .await;
    let bodies = [
        json!({"id": task.id, "priority": 1}),
        json!({"id": task.id, "callInterval": 120}),
    ];
    let answers = join_all(
        bodies
            .iter()
            .map(|b| api.post("acme", "/api/task/update", b.clone())),
    )
    .await;
    for (answer, body) in answers.iter().zip(&bodies) {
        if answer.status != 200 {
            answer.err(
                409,
                &format!(
                    "task {} was changed by another request; read it again",
                    task.id
                ),
            );
            api.post("acme", "/api/task/update", body.clone())
                .await
                .ok();
        }
    }
    let detail = api
        .get("acme", &format!("/api/task/detail/{}", task.id))
        .await;
    assert_eq!(detail.ok()["priority"], 1);
    assert_eq!(detail.ok()["callInterval"], 120);
}

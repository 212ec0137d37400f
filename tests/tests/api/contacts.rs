//! Contact endpoints: the success shape of list, add, update and delete (D1), paging and the
//! phone filter on the normalised number (D5, D7), phone rules and uniqueness per data source
//! (D7), custom fields (D7), read-only fields (D6) and unknown contacts (D1).

use crate::support::{assert_id, assert_recent, contact_op, TestApi, BAD_PAGING};
use serde_json::{json, Map, Value};

/// A data source of tenant acme with no contacts.
async fn setup() -> (TestApi, String) {
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Contacts").await;
    (api, source)
}

/// The phone numbers of the rows of a contact page, in order.
fn phones(page: &Value) -> Vec<&str> {
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["phoneNumber"].as_str().unwrap())
        .collect()
}

/// A body with `count` custom fields `f0`, `f1`, ... besides the phone number.
fn with_custom_fields(phone: &str, count: usize) -> Value {
    let mut body = Map::new();
    body.insert("phoneNumber".into(), json!(phone));
    for i in 0..count {
        body.insert(format!("f{i}"), json!(format!("v{i}")));
    }
    Value::Object(body)
}

#[tokio::test]
async fn add_answers_the_full_record_and_counts_it() {
    let (api, source) = setup().await;
    let added = api
        .post(
            "acme",
            &contact_op(&source, "add"),
            json!({
                "phoneNumber": " +86 138-0013-8000 ",
                "customerName": " Li Lei ",
                "address": "1 Main St",
                "orderAmount": "99.50",
                "vip_level": "gold",
            }),
        )
        .await;
    let data = added.ok();
    let id = assert_id(&data["id"]);
    assert_recent(&data["createTime"]);
    let expected = json!({
        "id": id,
        "dataSourceId": source,
        "phoneNumber": "+8613800138000",
        "e164": "+8613800138000",
        "customerName": "Li Lei",
        "address": "1 Main St",
        "orderAmount": "99.50",
        "vip_level": "gold",
        "status": 0,
        "callCount": 0,
        "createTime": data["createTime"],
        "updateTime": data["createTime"],
    });
    assert_eq!(data, &expected);
    let list = api.contacts("acme", &source, "").await;
    assert_eq!(
        list.ok(),
        &json!({"total": 1, "rows": [expected], "nextToken": null})
    );
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 1);
}

#[tokio::test]
async fn known_fields_that_are_not_set_are_null() {
    let (api, source) = setup().await;
    let added = api
        .post(
            "acme",
            &contact_op(&source, "add"),
            json!({"phoneNumber": "12345"}),
        )
        .await;
    let data = added.ok();
    assert_eq!(data["phoneNumber"], "12345");
    for field in ["customerName", "address", "orderAmount"] {
        assert_eq!(data[field], Value::Null, "{field}");
    }
    assert_eq!(data["e164"], Value::Null, "no country to read 12345 in");
    assert_eq!(data.as_object().unwrap().len(), 11, "{data}");
}

#[tokio::test]
async fn update_changes_only_the_given_fields() {
    let (api, source) = setup().await;
    let added = api
        .post(
            "acme",
            &contact_op(&source, "add"),
            json!({"phoneNumber": "13800138000", "customerName": "Li", "address": "Old St", "tier": "a"}),
        )
        .await;
    let created = added.ok().clone();
    let id = created["id"].as_str().unwrap();
    let updated = api
        .post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": id, "address": "New St", "customerName": " ", "note": "call after 6"}),
        )
        .await;
    let data = updated.ok();
    assert_recent(&data["updateTime"]);
    let expected = json!({
        "id": id,
        "dataSourceId": source,
        "phoneNumber": "13800138000",
        "e164": null,
        "customerName": null,
        "address": "New St",
        "orderAmount": null,
        "tier": "a",
        "note": "call after 6",
        "status": 0,
        "callCount": 0,
        "createTime": created["createTime"],
        "updateTime": data["updateTime"],
    });
    assert_eq!(data, &expected);
    let list = api.contacts("acme", &source, "").await;
    assert_eq!(list.ok()["rows"][0], expected);
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 1);
}

#[tokio::test]
async fn delete_answers_null_uncounts_and_frees_the_number() {
    let (api, source) = setup().await;
    let kept = api.contact("acme", &source, "13900139000").await;
    let gone = api.contact("acme", &source, "13800138000").await;
    let deleted = api
        .post(
            "acme",
            &contact_op(&source, "delete"),
            json!({"contactId": gone}),
        )
        .await;
    assert_eq!(deleted.ok(), &Value::Null);
    let list = api.contacts("acme", &source, "").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(list.ok()["rows"][0]["id"], kept);
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 1);
    api.post(
        "acme",
        &contact_op(&source, "delete"),
        json!({"contactId": gone}),
    )
    .await
    .err(404, &format!("contact {gone} not found"));
    api.contact("acme", &source, "138-0013-8000").await;
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 2);
}

#[tokio::test]
async fn contacts_page_newest_first_and_total_counts_all() {
    // D5: defaults 1/20, newest first, total counts every contact, past the end is empty.
    let (api, source) = setup().await;
    let numbers: Vec<String> = (0..25).map(|i| format!("1380000{i:04}")).collect();
    for number in &numbers {
        api.contact("acme", &source, number).await;
    }
    let newest_first: Vec<&str> = numbers.iter().rev().map(String::as_str).collect();

    let first = api.contacts("acme", &source, "").await;
    assert_eq!(first.ok()["total"], 25);
    assert_eq!(phones(first.ok()), newest_first[..20]);
    let second = api.contacts("acme", &source, "pageNum=2").await;
    assert_eq!(second.ok()["total"], 25);
    assert_eq!(phones(second.ok()), newest_first[20..]);
    let middle = api.contacts("acme", &source, "pageNum=2&pageSize=7").await;
    assert_eq!(phones(middle.ok()), newest_first[7..14]);
    let beyond = api.contacts("acme", &source, "pageNum=4&pageSize=10").await;
    assert_eq!(
        beyond.ok(),
        &json!({"total": 25, "rows": [], "nextToken": null})
    );
    let all = api.contacts("acme", &source, "pageSize=100").await;
    assert_eq!(phones(all.ok()), newest_first);
}

#[tokio::test]
async fn phone_filter_matches_the_normalised_number() {
    // D5, D7: the phoneNumber filter is a substring of the normalised number.
    let (api, source) = setup().await;
    api.contact("acme", &source, "+86 138-0013-8000").await;
    api.contact("acme", &source, "(021) 5555.0199").await;
    api.contact("acme", &source, "13800999999").await;

    let spaced = api
        .contacts("acme", &source, "phoneNumber=138%200013")
        .await;
    assert_eq!(spaced.ok()["total"], 1);
    assert_eq!(phones(spaced.ok()), ["+8613800138000"]);

    let dashed = api.contacts("acme", &source, "phoneNumber=5555-01").await;
    assert_eq!(phones(dashed.ok()), ["02155550199"]);

    let plus = api.contacts("acme", &source, "phoneNumber=%2B86").await;
    assert_eq!(phones(plus.ok()), ["+8613800138000"]);

    let shared = api.contacts("acme", &source, "phoneNumber=1380").await;
    assert_eq!(shared.ok()["total"], 2);
    assert_eq!(phones(shared.ok()), ["13800999999", "+8613800138000"]);

    let paged = api
        .contacts("acme", &source, "phoneNumber=1380&pageSize=1&pageNum=2")
        .await;
    assert_eq!(paged.ok()["total"], 2);
    assert_eq!(phones(paged.ok()), ["+8613800138000"]);

    let none = api.contacts("acme", &source, "phoneNumber=777").await;
    assert_eq!(
        none.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );
}

#[tokio::test]
async fn bad_paging_values_are_400() {
    // D5 on the contact list.
    let (api, source) = setup().await;
    for (query, message) in BAD_PAGING {
        api.contacts("acme", &source, query).await.err(400, message);
    }
    let edge = api
        .contacts("acme", &source, "pageNum=1&pageSize=100")
        .await;
    assert_eq!(edge.ok()["total"], 0);
}

#[tokio::test]
async fn phone_rules() {
    // D7: required, a string, normalised to an optional + and 5-20 digits; else 400.
    let (api, source) = setup().await;
    let add = |body: Value| {
        let api = &api;
        let path = contact_op(&source, "add");
        async move { api.post("acme", &path, body).await }
    };
    let before = api.snapshot().await;
    add(json!({"customerName": "No phone"}))
        .await
        .err(400, "phoneNumber is required");
    add(json!({"phoneNumber": 13800138000u64}))
        .await
        .err(400, "phoneNumber must be a string");
    for bad in [
        "",
        "   ",
        "abc",
        "1234",
        "123456789012345678901",
        "12+345",
        "++12345",
        "138_0013_8000",
        "１２３４５",
    ] {
        add(json!({"phoneNumber": bad}))
            .await
            .err(400, "invalid phoneNumber");
    }
    assert_eq!(api.snapshot().await, before, "refused adds store nothing");
    for (raw, stored) in [
        ("12345", "12345"),
        ("+12345678901234567890", "+12345678901234567890"),
        (" (010) 1234.5678 ", "01012345678"),
    ] {
        assert_eq!(
            add(json!({"phoneNumber": raw})).await.ok()["phoneNumber"],
            stored
        );
    }
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 3);
}

#[tokio::test]
async fn duplicate_numbers_are_409_on_add_and_update() {
    // D7: duplicates are found on the normalised number, per data source.
    let (api, source) = setup().await;
    let first = api.contact("acme", &source, "13800138000").await;
    let taken = "phoneNumber 13800138000 already exists in this dataSource";
    api.post(
        "acme",
        &contact_op(&source, "add"),
        json!({"phoneNumber": "138-0013 8000"}),
    )
    .await
    .err(409, taken);

    // The same number in another data source is fine.
    let other = api.data_source("acme", "Other").await;
    api.contact("acme", &other, "13800138000").await;

    let second = api.contact("acme", &source, "13900139000").await;
    let before = api.snapshot().await;
    api.post(
        "acme",
        &contact_op(&source, "update"),
        json!({"contactId": second, "phoneNumber": "(138) 0013 8000", "customerName": "X"}),
    )
    .await
    .err(409, taken);
    assert_eq!(
        api.snapshot().await,
        before,
        "a refused update changes nothing"
    );

    // The same number written differently is no change; a new number frees the old one.
    let same = api
        .post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": first, "phoneNumber": "138.0013.8000"}),
        )
        .await;
    assert_eq!(same.ok()["phoneNumber"], "13800138000");
    let moved = api
        .post(
            "acme",
            &contact_op(&source, "update"),
            json!({"contactId": first, "phoneNumber": "13700137000"}),
        )
        .await;
    assert_eq!(moved.ok()["phoneNumber"], "13700137000");
    api.contact("acme", &source, "13800138000").await;
    api.post(
        "acme",
        &contact_op(&source, "add"),
        json!({"phoneNumber": "13700137000"}),
    )
    .await
    .err(
        409,
        "phoneNumber 13700137000 already exists in this dataSource",
    );
    assert_eq!(api.detail("acme", &source).await.ok()["contactCount"], 3);
}

#[tokio::test]
async fn custom_field_rules() {
    // D7: names ^[A-Za-z][A-Za-z0-9_]{0,63}$, values at most 1000 characters, at most 30 custom
    // fields, string values only; known fields have their own limits.
    let (api, source) = setup().await;
    let add = |body: Value| {
        let api = &api;
        let path = contact_op(&source, "add");
        async move { api.post("acme", &path, body).await }
    };
    let before = api.snapshot().await;
    add(with_custom_fields("13800000031", 31))
        .await
        .err(400, "too many custom fields: at most 30");
    let bad_name = |name: &str| {
        format!(
            "invalid field name {name:?}: letters, digits and _, starting with a letter, at most 64"
        )
    };
    let long_name = format!("a{}", "b".repeat(64));
    for name in ["1bad", "has-dash", "_under", "名字", long_name.as_str()] {
        let mut body = with_custom_fields("13800000001", 0);
        body[name] = json!("v");
        add(body).await.err(400, &bad_name(name));
    }
    add(json!({"phoneNumber": "13800000002", "note": "x".repeat(1001)}))
        .await
        .err(400, "note must be at most 1000 characters");
    add(json!({"phoneNumber": "13800000003", "customerName": "x".repeat(101)}))
        .await
        .err(400, "customerName must be at most 100 characters");
    add(json!({"phoneNumber": "13800000004", "age": 30}))
        .await
        .err(400, "age must be a string");
    add(json!({"phoneNumber": "13800000005", "tags": ["a"]}))
        .await
        .err(400, "tags must be a string");
    assert_eq!(api.snapshot().await, before, "refused adds store nothing");

    let full = add(with_custom_fields("13800000030", 30)).await;
    let data = full.ok();
    assert_eq!(data["f0"], "v0");
    assert_eq!(data["f29"], "v29");
    let id = data["id"].as_str().unwrap();
    let mut longest = json!({"phoneNumber": "13800000006", "customerName": "c".repeat(100)});
    longest[format!("a{}", "b".repeat(63))] = json!("n".repeat(1000));
    assert_eq!(add(longest).await.ok()["customerName"], "c".repeat(100));

    // A 31st custom field through update is refused too; replacing one is not.
    let update = |body: Value| {
        let api = &api;
        let path = contact_op(&source, "update");
        async move { api.post("acme", &path, body).await }
    };
    update(json!({"contactId": id, "f30": "one more"}))
        .await
        .err(400, "too many custom fields: at most 30");
    let replaced = update(json!({"contactId": id, "f0": "", "f30": "instead"})).await;
    assert_eq!(replaced.ok()["f30"], "instead");
    assert_eq!(replaced.ok().get("f0"), None);
    update(json!({"contactId": id, "f1": 1}))
        .await
        .err(400, "f1 must be a string");
    let list = api
        .contacts("acme", &source, "phoneNumber=13800000030")
        .await;
    assert_eq!(list.ok()["rows"][0]["f1"], "v1");
    assert_eq!(list.ok()["rows"][0]["f30"], "instead");
}

#[tokio::test]
async fn read_only_fields_are_ignored() {
    // D6: id, status, callCount, createTime, updateTime and dataSourceId cannot be set.
    let (api, source) = setup().await;
    let other = api.data_source("acme", "Other").await;
    let chosen = ulid::Ulid::new().to_string();
    let read_only = json!({
        "id": chosen,
        "status": 2,
        "callCount": 9,
        "createTime": "2000-01-01 00:00:00",
        "updateTime": "2000-01-01 00:00:00",
        "dataSourceId": other,
    });
    let mut body = read_only.clone();
    body["phoneNumber"] = json!("13800138000");
    let added = api.post("acme", &contact_op(&source, "add"), body).await;
    let data = added.ok().clone();
    let id = assert_id(&data["id"]);
    assert_ne!(id, chosen);
    assert_eq!(data["dataSourceId"], source);
    assert_eq!(data["status"], 0);
    assert_eq!(data["callCount"], 0);
    assert_recent(&data["createTime"]);

    let mut body = read_only;
    body["contactId"] = json!(id);
    body["customerName"] = json!("Li");
    let updated = api.post("acme", &contact_op(&source, "update"), body).await;
    assert_eq!(updated.ok()["id"], id);
    assert_eq!(updated.ok()["dataSourceId"], source);
    assert_eq!(updated.ok()["status"], 0);
    assert_eq!(updated.ok()["callCount"], 0);
    assert_eq!(updated.ok()["createTime"], data["createTime"]);

    let listed = api.contacts("acme", &source, "").await;
    assert_eq!(listed.ok()["rows"][0], *updated.ok());
    assert_eq!(api.contacts("acme", &other, "").await.ok()["total"], 0);
}

#[tokio::test]
async fn unknown_contacts_and_missing_ids_are_refused() {
    // D1: contactId required and a string (400); unknown, malformed or in another data source: 404.
    let (api, source) = setup().await;
    let contact = api.contact("acme", &source, "13800138000").await;
    let other = api.data_source("acme", "Other").await;
    let missing = ulid::Ulid::new().to_string();
    let before = api.snapshot().await;
    for op in ["update", "delete"] {
        let path = contact_op(&source, op);
        api.post("acme", &path, json!({"customerName": "x"}))
            .await
            .err(400, "contactId is required");
        api.post("acme", &path, json!({"contactId": 5}))
            .await
            .err(400, "contactId must be a string");
        for id in [missing.as_str(), "nope"] {
            api.post("acme", &path, json!({"contactId": id, "customerName": "x"}))
                .await
                .err(404, &format!("contact {id} not found"));
        }
        api.post(
            "acme",
            &contact_op(&other, op),
            json!({"contactId": contact, "customerName": "x"}),
        )
        .await
        .err(404, &format!("contact {contact} not found"));
    }
    let unknown_source = ulid::Ulid::new().to_string();
    api.post(
        "acme",
        &contact_op(&unknown_source, "add"),
        json!({"phoneNumber": "13900139000"}),
    )
    .await
    .err(404, &format!("dataSource {unknown_source} not found"));
    api.post(
        "acme",
        &contact_op("bad-id", "add"),
        json!({"phoneNumber": "13900139000"}),
    )
    .await
    .err(404, "dataSource bad-id not found");
    assert_eq!(api.snapshot().await, before);
}

/// D6: a data source holds at most 256 distinct custom field names (an export's columns). A
/// file bringing 255 spread over 9 rows is stored; one more name by a single add fills it; then
/// a new name is 400 from an add, an update or a file, and changes nothing, while the names it
/// holds stay usable.
#[tokio::test]
async fn a_data_source_holds_at_most_256_custom_field_names() {
    let (api, source) = setup().await;
    let names: Vec<String> = (0..255).map(|i| format!("f{i:03}")).collect();
    let mut file = format!("phoneNumber,{}\n", names.join(","));
    for row in 0..9 {
        let cells: Vec<&str> = (0..255)
            .map(|column| if column / 30 == row { "x" } else { "" })
            .collect();
        file.push_str(&format!("1380000{row:04},{}\n", cells.join(",")));
    }
    let report = api
        .batch_import("acme", &source, "wide.csv", file.into_bytes())
        .await;
    assert_eq!(report.ok()["successCount"], 9, "{}", report.body);
    let add = contact_op(&source, "add");
    api.post(
        "acme",
        &add,
        json!({"phoneNumber": "13900000001", "last": "x"}),
    )
    .await
    .ok();
    let full = format!(
        "dataSource {source} already has 256 custom field names, the most it may; use one of them"
    );
    api.post(
        "acme",
        &add,
        json!({"phoneNumber": "13900000002", "oneMore": "x"}),
    )
    .await
    .err(400, &full);
    let kept = api
        .post(
            "acme",
            &add,
            json!({"phoneNumber": "13900000003", "f007": "y", "last": "z"}),
        )
        .await;
    let contact = kept.ok()["id"].as_str().unwrap().to_owned();
    api.post(
        "acme",
        &contact_op(&source, "update"),
        json!({"contactId": contact, "oneMore": "x"}),
    )
    .await
    .err(400, &full);
    api.batch_import(
        "acme",
        &source,
        "more.csv",
        b"phoneNumber,other\n13900000004,x\n".to_vec(),
    )
    .await
    .err(
        400,
        &format!("the file would give dataSource {source} more than 256 custom field names (256 now, 1 new)"),
    );
    assert_eq!(api.contact_count("acme", &source).await, 11);
}

//! Data source endpoints: the success shape of list, detail, add, update and delete (D1), paging
//! and the name filter (D5), input rules and read-only fields (D6), unknown ids (D1) and name
//! uniqueness (D3).

use crate::support::{assert_id, assert_recent, row_ids, TestApi, BAD_PAGING};
use serde_json::{json, Value};

/// Adds data sources named `prefix 0`, `prefix 1`, ... in that order and answers their ids.
async fn add_numbered(api: &TestApi, prefix: &str, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..count {
        ids.push(api.data_source("acme", &format!("{prefix} {i}")).await);
    }
    ids
}

#[tokio::test]
async fn add_then_detail_and_list() {
    let api = TestApi::start().await;
    let added = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "  Spring leads ", "dataSourceDesc": " from the fair "}),
        )
        .await;
    let data = added.ok();
    let id = assert_id(&data["id"]);
    assert_recent(&data["createTime"]);
    assert_eq!(
        data,
        &json!({
            "id": id,
            "dataSourceName": "Spring leads",
            "dataSourceDesc": "from the fair",
            "defaultCountry": null,
            "contactCount": 0,
            "createTime": data["createTime"],
            "updateTime": data["createTime"],
        })
    );
    assert!(added.headers.contains_key("x-request-id"));
    assert_eq!(api.detail("acme", id).await.ok(), data);
    assert_eq!(
        api.sources("acme", "").await.ok(),
        &json!({"total": 1, "rows": [data], "nextToken": null})
    );
}

#[tokio::test]
async fn add_without_description_stores_an_empty_one() {
    let api = TestApi::start().await;
    let id = api.data_source("acme", "Plain").await;
    let detail = api.detail("acme", &id).await;
    assert_eq!(detail.ok()["dataSourceDesc"], "");
    assert_eq!(detail.ok()["dataSourceName"], "Plain");
}

#[tokio::test]
async fn update_changes_only_the_given_fields() {
    let api = TestApi::start().await;
    let added = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "Leads", "dataSourceDesc": "first"}),
        )
        .await;
    let created = added.ok().clone();
    let id = created["id"].as_str().unwrap();
    api.contact("acme", id, "13800138000").await;

    let renamed = api
        .post(
            "acme",
            "/api/dataSource/update",
            json!({"id": id, "dataSourceName": " Hot leads "}),
        )
        .await;
    let data = renamed.ok();
    assert_recent(&data["updateTime"]);
    assert_eq!(
        data,
        &json!({
            "id": id,
            "dataSourceName": "Hot leads",
            "defaultCountry": null,
            "dataSourceDesc": "first",
            "contactCount": 1,
            "createTime": created["createTime"],
            "updateTime": data["updateTime"],
        })
    );
    assert_eq!(api.detail("acme", id).await.ok(), data);

    let described = api
        .post(
            "acme",
            "/api/dataSource/update",
            json!({"id": id, "dataSourceDesc": "second"}),
        )
        .await;
    assert_eq!(described.ok()["dataSourceName"], "Hot leads");
    assert_eq!(described.ok()["dataSourceDesc"], "second");
    let stored = api.detail("acme", id).await;
    assert_eq!(stored.ok()["dataSourceName"], "Hot leads");
    assert_eq!(stored.ok()["dataSourceDesc"], "second");
    assert_eq!(stored.ok()["createTime"], created["createTime"]);
}

#[tokio::test]
async fn delete_answers_null_and_the_record_is_gone() {
    let api = TestApi::start().await;
    let kept = api.data_source("acme", "Kept").await;
    let gone = api.data_source("acme", "Gone").await;
    let deleted = api
        .post("acme", "/api/dataSource/delete", json!({"id": gone}))
        .await;
    assert_eq!(deleted.ok(), &Value::Null);
    api.detail("acme", &gone)
        .await
        .err(404, &format!("dataSource {gone} not found"));
    let list = api.sources("acme", "").await;
    assert_eq!(list.ok()["total"], 1);
    assert_eq!(row_ids(list.ok()), vec![kept]);
}

#[tokio::test]
async fn list_pages_newest_first_and_counts_every_match() {
    // D5: defaults 1/20, total counts every match, newest first, past the end is empty.
    let api = TestApi::start().await;
    let mut ids = add_numbered(&api, "List", 25).await;
    ids.reverse();

    let first = api.sources("acme", "").await;
    assert_eq!(first.ok()["total"], 25);
    assert_eq!(row_ids(first.ok()), ids[..20]);
    assert_eq!(first.ok()["rows"][0]["dataSourceName"], "List 24");

    let second = api.sources("acme", "pageNum=2").await;
    assert_eq!(second.ok()["total"], 25);
    assert_eq!(row_ids(second.ok()), ids[20..]);

    let small = api.sources("acme", "pageNum=3&pageSize=4").await;
    assert_eq!(row_ids(small.ok()), ids[8..12]);

    let beyond = api.sources("acme", "pageNum=3&pageSize=20").await;
    assert_eq!(
        beyond.ok(),
        &json!({"total": 25, "rows": [], "nextToken": null})
    );

    let all = api.sources("acme", "pageSize=100").await;
    assert_eq!(row_ids(all.ok()), ids);
}

#[tokio::test]
async fn name_filter_matches_substrings_case_insensitively() {
    // D5: the dataSourceName filter is a case-insensitive substring match; total counts matches.
    let api = TestApi::start().await;
    let leads = api.data_source("acme", "Spring Leads").await;
    let fair = api.data_source("acme", "spring fair").await;
    api.data_source("acme", "Autumn").await;
    api.data_source("acme", "春季客户").await;

    let spring = api.sources("acme", "dataSourceName=SPRING").await;
    assert_eq!(spring.ok()["total"], 2);
    assert_eq!(row_ids(spring.ok()), vec![fair.clone(), leads.clone()]);

    let inner = api.sources("acme", "dataSourceName=ring%20l").await;
    assert_eq!(row_ids(inner.ok()), vec![leads]);

    let paged = api
        .sources("acme", "dataSourceName=spring&pageSize=1")
        .await;
    assert_eq!(paged.ok()["total"], 2);
    assert_eq!(row_ids(paged.ok()), vec![fair]);

    let cjk = api
        .sources("acme", "dataSourceName=%E5%AE%A2%E6%88%B7")
        .await;
    assert_eq!(cjk.ok()["total"], 1);
    assert_eq!(cjk.ok()["rows"][0]["dataSourceName"], "春季客户");

    let none = api.sources("acme", "dataSourceName=winter").await;
    assert_eq!(
        none.ok(),
        &json!({"total": 0, "rows": [], "nextToken": null})
    );

    let blank = api.sources("acme", "dataSourceName=%20%20").await;
    assert_eq!(blank.ok()["total"], 4);
}

#[tokio::test]
async fn bad_paging_values_are_400() {
    // D5: pageNum >= 1, pageSize 1-100, integers only.
    let api = TestApi::start().await;
    api.data_source("acme", "One").await;
    for (query, message) in BAD_PAGING {
        api.sources("acme", query).await.err(400, message);
    }
    assert_eq!(
        api.sources("acme", "pageNum=1&pageSize=1").await.ok()["total"],
        1
    );
    assert_eq!(api.sources("acme", "pageSize=100").await.ok()["total"], 1);
}

#[tokio::test]
async fn names_are_trimmed_and_limited_to_100_characters() {
    // D6: trimmed, 1-100 characters counted as characters, not bytes.
    let api = TestApi::start().await;
    let add = |name: String| {
        let api = &api;
        async move {
            api.post(
                "acme",
                "/api/dataSource/add",
                json!({"dataSourceName": name}),
            )
            .await
        }
    };
    let before = api.snapshot().await;
    add(String::new()).await.err(400, "dataSourceName is empty");
    add(" \t ".into()).await.err(400, "dataSourceName is empty");
    add("a".repeat(101))
        .await
        .err(400, "dataSourceName must be 1-100 characters");
    add("名".repeat(101))
        .await
        .err(400, "dataSourceName must be 1-100 characters");
    assert_eq!(api.snapshot().await, before, "refused adds store nothing");

    let cjk = "名".repeat(100);
    assert_eq!(add(cjk.clone()).await.ok()["dataSourceName"], cjk);
    let padded = format!("  {}  ", "a".repeat(100));
    assert_eq!(add(padded).await.ok()["dataSourceName"], "a".repeat(100));
}

#[tokio::test]
async fn descriptions_are_limited_to_500_characters() {
    // D6: dataSourceDesc at most 500 characters, on add and on update.
    let api = TestApi::start().await;
    let too_long = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "D", "dataSourceDesc": "x".repeat(501)}),
        )
        .await;
    too_long.err(400, "dataSourceDesc must be at most 500 characters");
    let added = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({"dataSourceName": "D", "dataSourceDesc": "述".repeat(500)}),
        )
        .await;
    let id = added.ok()["id"].as_str().unwrap();
    api.post(
        "acme",
        "/api/dataSource/update",
        json!({"id": id, "dataSourceDesc": "y".repeat(501)}),
    )
    .await
    .err(400, "dataSourceDesc must be at most 500 characters");
    assert_eq!(
        api.detail("acme", id).await.ok()["dataSourceDesc"],
        "述".repeat(500)
    );
}

#[tokio::test]
async fn update_applies_the_name_rules() {
    // D6 on update: empty after trimming, too long, wrong type.
    let api = TestApi::start().await;
    let id = api.data_source("acme", "Original").await;
    let update = |body: Value| {
        let api = &api;
        async move { api.post("acme", "/api/dataSource/update", body).await }
    };
    update(json!({"id": id, "dataSourceName": "  "}))
        .await
        .err(400, "dataSourceName is empty");
    update(json!({"id": id, "dataSourceName": "n".repeat(101)}))
        .await
        .err(400, "dataSourceName must be 1-100 characters");
    update(json!({"id": id, "dataSourceName": true}))
        .await
        .err(400, "dataSourceName must be a string");
    assert_eq!(
        api.detail("acme", &id).await.ok()["dataSourceName"],
        "Original"
    );
    let cjk = "名".repeat(100);
    let renamed = update(json!({"id": id, "dataSourceName": cjk})).await;
    assert_eq!(renamed.ok()["dataSourceName"], cjk);
}

#[tokio::test]
async fn wrong_types_and_missing_fields_are_400_and_store_nothing() {
    // D1: wrong JSON types and missing required fields are 400 naming the field.
    let api = TestApi::start().await;
    let id = api.data_source("acme", "Existing").await;
    let before = api.snapshot().await;
    let cases = [
        (
            "add",
            json!({"dataSourceName": 5}),
            "dataSourceName must be a string",
        ),
        ("add", json!({}), "dataSourceName is required"),
        (
            "add",
            json!({"dataSourceName": null}),
            "dataSourceName is required",
        ),
        (
            "add",
            json!({"dataSourceName": "Ok", "dataSourceDesc": ["x"]}),
            "dataSourceDesc must be a string",
        ),
        ("update", json!({"dataSourceName": "x"}), "id is required"),
        ("update", json!({"id": 5}), "id must be a string"),
        (
            "update",
            json!({"id": id, "dataSourceDesc": 1.5}),
            "dataSourceDesc must be a string",
        ),
        ("delete", json!({}), "id is required"),
        ("delete", json!({"id": {"id": id}}), "id must be a string"),
    ];
    for (op, body, message) in cases {
        api.post("acme", &format!("/api/dataSource/{op}"), body)
            .await
            .err(400, message);
    }
    assert_eq!(api.snapshot().await, before);
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_404() {
    // D1: a missing record and a string that cannot be an id both answer 404 naming the id.
    let api = TestApi::start().await;
    let real = api.data_source("acme", "Real").await;
    let missing = ulid::Ulid::new().to_string();
    let lowercase = real.to_lowercase();
    for id in [missing.as_str(), "not-an-id", lowercase.as_str()] {
        let message = format!("dataSource {id} not found");
        api.detail("acme", id).await.err(404, &message);
        api.post(
            "acme",
            "/api/dataSource/update",
            json!({"id": id, "dataSourceDesc": "x"}),
        )
        .await
        .err(404, &message);
        api.post("acme", "/api/dataSource/delete", json!({"id": id}))
            .await
            .err(404, &message);
        api.contacts("acme", id, "").await.err(404, &message);
    }
    assert_eq!(api.detail("acme", &real).await.ok()["dataSourceDesc"], "");
}

#[tokio::test]
async fn duplicate_names_are_409_until_deleted_or_renamed() {
    // D3: names are unique per tenant; a rename or a delete frees the old name at once.
    let api = TestApi::start().await;
    let add = |name: &'static str| {
        let api = &api;
        async move {
            api.post(
                "acme",
                "/api/dataSource/add",
                json!({"dataSourceName": name}),
            )
            .await
        }
    };
    let first = add("Leads").await.ok()["id"].as_str().unwrap().to_owned();
    add("Leads")
        .await
        .err(409, r#"dataSourceName "Leads" already exists"#);
    add("  Leads ")
        .await
        .err(409, r#"dataSourceName "Leads" already exists"#);

    // Renaming to its own name keeps the name taken.
    let same = api
        .post(
            "acme",
            "/api/dataSource/update",
            json!({"id": first, "dataSourceName": "Leads"}),
        )
        .await;
    assert_eq!(same.ok()["dataSourceName"], "Leads");
    add("Leads").await.code(409);

    let rename = api
        .post(
            "acme",
            "/api/dataSource/update",
            json!({"id": first, "dataSourceName": "Leads v2"}),
        )
        .await;
    assert_eq!(rename.ok()["dataSourceName"], "Leads v2");
    let second = add("Leads").await.ok()["id"].as_str().unwrap().to_owned();
    add("Leads v2")
        .await
        .err(409, r#"dataSourceName "Leads v2" already exists"#);

    // A rename onto a taken name is refused and changes nothing.
    api.post(
        "acme",
        "/api/dataSource/update",
        json!({"id": second, "dataSourceName": "Leads v2"}),
    )
    .await
    .err(409, r#"dataSourceName "Leads v2" already exists"#);
    assert_eq!(
        api.detail("acme", &second).await.ok()["dataSourceName"],
        "Leads"
    );
    add("Leads").await.code(409);

    api.post("acme", "/api/dataSource/delete", json!({"id": first}))
        .await
        .ok();
    assert_eq!(add("Leads v2").await.ok()["dataSourceName"], "Leads v2");
}

#[tokio::test]
async fn read_only_fields_are_ignored() {
    // D6: id, contactCount, createTime, updateTime sent by a client never set anything.
    let api = TestApi::start().await;
    let chosen = ulid::Ulid::new().to_string();
    let added = api
        .post(
            "acme",
            "/api/dataSource/add",
            json!({
                "dataSourceName": "Mine",
                "id": chosen,
                "contactCount": 7,
                "createTime": "2000-01-01 00:00:00",
                "updateTime": "2000-01-01 00:00:00",
            }),
        )
        .await;
    let data = added.ok();
    let id = assert_id(&data["id"]).to_owned();
    assert_ne!(id, chosen);
    assert_eq!(data["contactCount"], 0);
    assert_recent(&data["createTime"]);
    assert_recent(&data["updateTime"]);
    api.detail("acme", &chosen)
        .await
        .err(404, &format!("dataSource {chosen} not found"));

    api.contact("acme", &id, "13800138000").await;
    let updated = api
        .post(
            "acme",
            "/api/dataSource/update",
            json!({"id": id, "contactCount": 99, "createTime": "2000-01-01 00:00:00"}),
        )
        .await;
    assert_eq!(updated.ok()["contactCount"], 1);
    let stored = api.detail("acme", &id).await;
    assert_eq!(stored.ok()["contactCount"], 1);
    assert_eq!(stored.ok()["createTime"], data["createTime"]);
}

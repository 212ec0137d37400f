//! D5 paging: offsets reach the first 10,000 rows and no further; `nextToken` walks every list
//! to its end, filtered or not, with no row twice and none missed; a token works only for the
//! tenant, list and filters it was made for, and a refused one reads nothing; and a page reads
//! about its own rows however long the list is (items counted at the SDK, printed for the record).

use crate::support::{contact_op, id, phone, tenant, TestApi};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::{keys, Item};
use outbound_model::{Id, Name, Phone, TaskStatus};
use outbound_tests::stack::ItemsRead;
use serde_json::{json, Value};
use std::collections::HashSet;

const CAPPED: &str = "pageNum * pageSize may be at most 10000; page further with nextToken";
const NOT_VALID: &str = "nextToken is not valid for this request";

/// The ids of `rows`.
fn ids(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Every row of the list at `path` with `filters`, read `size` rows a page by following
/// `nextToken` from the first page. Each page has the same `total`; every page before the last
/// is full and has a token; the last one's is null; the rows add up to `total`.
async fn walk(api: &TestApi, tenant: &str, path: &str, filters: &str, size: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut token: Option<String> = None;
    let mut total = None;
    loop {
        let mut query = format!("{path}?pageSize={size}");
        if !filters.is_empty() {
            query.push_str(&format!("&{filters}"));
        }
        if let Some(token) = &token {
            query.push_str(&format!("&nextToken={token}"));
        }
        let answer = api.get(tenant, &query).await;
        let data = answer.ok();
        let page = ids(&data["rows"]);
        assert_eq!(
            total.get_or_insert_with(|| data["total"].clone()),
            &data["total"]
        );
        rows.extend(page.iter().cloned());
        match &data["nextToken"] {
            Value::Null => break,
            Value::String(next) => {
                assert_eq!(page.len(), size, "{query}: a page before the last is full");
                token = Some(next.clone());
            }
            other => panic!("{query}: nextToken is {other}"),
        }
    }
    assert_eq!(Some(rows.len() as u64), total.and_then(|t| t.as_u64()));
    let distinct: HashSet<&String> = rows.iter().collect();
    assert_eq!(
        distinct.len(),
        rows.len(),
        "{path}?{filters}: a row came twice"
    );
    rows
}

/// The three lists of a tenant with data source `source`.
fn lists(source: &str) -> [String; 3] {
    [
        "/api/dataSource/list".to_owned(),
        format!("/api/dataSource/{source}/contacts"),
        "/api/task/list".to_owned(),
    ]
}

#[tokio::test]
async fn offsets_reach_ten_thousand_rows_and_no_further() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 3).await;
    api.task("acme", "Only", &source, json!({})).await;
    for list in lists(&source) {
        for reached in [
            "pageNum=100&pageSize=100",
            "pageNum=500&pageSize=20",
            "pageNum=10000&pageSize=1",
        ] {
            let data = api.get("acme", &format!("{list}?{reached}")).await;
            let data = data.ok();
            assert_eq!(data["rows"], json!([]), "{list}?{reached}");
            assert_eq!(data["nextToken"], Value::Null);
            assert!(data["total"].as_u64().unwrap() >= 1);
        }
        for beyond in [
            "pageNum=101&pageSize=100",
            "pageNum=501&pageSize=20",
            "pageNum=10001&pageSize=1",
            "pageNum=501",
            "pageNum=1000000&pageSize=100",
        ] {
            let (answer, calls) = api
                .counting(api.get("acme", &format!("{list}?{beyond}")))
                .await;
            answer.err(400, CAPPED);
            assert_eq!(calls, 0, "{list}?{beyond} is refused before any read");
        }
    }
}

#[tokio::test]
async fn next_token_walks_each_list_to_its_end() {
    let api = TestApi::start().await;
    // Data sources: 23, every third a "Spring" one; listed newest first.
    let mut sources = Vec::new();
    for i in 0..23 {
        let name = if i % 3 == 0 {
            format!("Spring {i}")
        } else {
            format!("Autumn {i}")
        };
        sources.push((api.data_source("acme", &name).await, name));
    }
    sources.reverse();
    let all: Vec<String> = sources.iter().map(|(id, _)| id.clone()).collect();
    let springs: Vec<String> = sources
        .iter()
        .filter(|(_, name)| name.starts_with("Spring"))
        .map(|(id, _)| id.clone())
        .collect();
    let path = "/api/dataSource/list";
    for size in [1, 5, 23, 100] {
        assert_eq!(
            walk(&api, "acme", path, "", size).await,
            all,
            "pageSize {size}"
        );
    }
    for size in [1, 3, 8] {
        assert_eq!(
            walk(&api, "acme", path, "dataSourceName=sPRING", size).await,
            springs
        );
    }
    assert_eq!(
        walk(&api, "acme", path, "dataSourceName=winter", 5).await,
        Vec::<String>::new()
    );

    // Contacts: 31 in one data source; the phone filter matches 10 of them.
    let (source, mut contacts) = api.source_with_contacts("acme", 31).await;
    contacts.reverse();
    let contacts_path = format!("/api/dataSource/{source}/contacts");
    for size in [1, 4, 31, 100] {
        assert_eq!(walk(&api, "acme", &contacts_path, "", size).await, contacts);
    }
    let matching: Vec<String> = contacts
        .iter()
        .zip((0..31).rev())
        .filter(|(_, n)| phone(*n).contains("1380000001"))
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(matching.len(), 10);
    for size in [1, 3, 10] {
        assert_eq!(
            walk(
                &api,
                "acme",
                &contacts_path,
                "phoneNumber=138-0000-001",
                size
            )
            .await,
            matching
        );
    }

    // Tasks: 17, the names of every other one hold "even"; three are STOPPED.
    let mut tasks = Vec::new();
    for i in 0..17 {
        let name = format!("{} task {i}", if i % 2 == 0 { "Even" } else { "Odd" });
        let task = api.task("acme", &name, &source, json!({})).await;
        if [3, 4, 11].contains(&i) {
            api.drive("acme", &task, TaskStatus::Stopped).await;
        }
        tasks.push((task, i));
    }
    tasks.reverse();
    let pick = |keep: &dyn Fn(usize) -> bool| -> Vec<String> {
        tasks
            .iter()
            .filter(|(_, i)| keep(*i))
            .map(|(task, _)| task.clone())
            .collect()
    };
    let path = "/api/task/list";
    for size in [1, 6, 17] {
        assert_eq!(walk(&api, "acme", path, "", size).await, pick(&|_| true));
        assert_eq!(
            walk(&api, "acme", path, "taskName=EVEN", size).await,
            pick(&|i| i % 2 == 0)
        );
        assert_eq!(
            walk(&api, "acme", path, "status=3", size).await,
            pick(&|i| [3, 4, 11].contains(&i))
        );
        assert_eq!(
            walk(&api, "acme", path, "status=3&taskName=even", size).await,
            pick(&|i| i == 4)
        );
    }

    // An offset page's token continues right after it.
    let second = api.get("acme", "/api/task/list?pageNum=2&pageSize=5").await;
    let token = second.ok()["nextToken"].as_str().unwrap().to_owned();
    let third = api
        .get(
            "acme",
            &format!("/api/task/list?pageSize=5&nextToken={token}"),
        )
        .await;
    assert_eq!(ids(&third.ok()["rows"]), pick(&|_| true)[10..15].to_vec());
    // pageNum beside a token is ignored: the token says where the page starts.
    let again = api
        .get(
            "acme",
            &format!("/api/task/list?pageNum=3&pageSize=5&nextToken={token}"),
        )
        .await;
    assert_eq!(again.ok()["rows"], third.ok()["rows"]);

    // The row a token names may be deleted meanwhile: the next page starts after it all the same.
    let first = api
        .get("acme", &format!("{contacts_path}?pageSize=4"))
        .await;
    let token = first.ok()["nextToken"].as_str().unwrap().to_owned();
    api.post(
        "acme",
        &contact_op(&source, "delete"),
        json!({"contactId": contacts[3]}),
    )
    .await
    .ok();
    let next = api
        .get(
            "acme",
            &format!("{contacts_path}?pageSize=4&nextToken={token}"),
        )
        .await;
    assert_eq!(ids(&next.ok()["rows"]), contacts[4..8].to_vec());
    assert_eq!(next.ok()["total"], 30);
}

#[tokio::test]
async fn a_token_serves_only_its_tenant_list_and_filters_and_a_refused_one_reads_nothing() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 5).await;
    let (other_source, _) = api.source_with_contacts("acme", 5).await;
    for i in 0..5 {
        api.task("acme", &format!("Spring {i}"), &source, json!({}))
            .await;
    }
    let (globex_source, _) = api.source_with_contacts("globex", 5).await;
    for i in 0..5 {
        api.task("globex", &format!("Spring {i}"), &globex_source, json!({}))
            .await;
    }
    let spring = api
        .get("acme", "/api/task/list?taskName=spring&pageSize=2")
        .await;
    let token = spring.ok()["nextToken"].as_str().unwrap().to_owned();
    let contacts = api
        .get(
            "acme",
            &format!("/api/dataSource/{source}/contacts?pageSize=2"),
        )
        .await;
    let contact_token = contacts.ok()["nextToken"].as_str().unwrap().to_owned();

    // The same request with its token continues (any pageSize).
    let next = api
        .get(
            "acme",
            &format!("/api/task/list?taskName=spring&pageSize=3&nextToken={token}"),
        )
        .await;
    assert_eq!(next.ok()["rows"].as_array().unwrap().len(), 3);

    let mut tampered = Vec::new();
    for position in [0, token.len() / 2, token.len() - 1] {
        let mut chars: Vec<char> = token.chars().collect();
        chars[position] = if chars[position] == 'A' { 'B' } else { 'A' };
        tampered.push(chars.into_iter().collect::<String>());
    }
    let mut refused = vec![
        ("acme", format!("/api/task/list?pageSize=2&nextToken={token}")),
        (
            "acme",
            format!("/api/task/list?taskName=autumn&pageSize=2&nextToken={token}"),
        ),
        (
            "acme",
            format!("/api/task/list?taskName=spring&status=0&pageSize=2&nextToken={token}"),
        ),
        (
            "globex",
            format!("/api/task/list?taskName=spring&pageSize=2&nextToken={token}"),
        ),
        (
            "acme",
            format!("/api/dataSource/list?dataSourceName=spring&nextToken={token}"),
        ),
        (
            "acme",
            format!("/api/dataSource/{source}/contacts?nextToken={token}"),
        ),
        (
            "acme",
            format!("/api/dataSource/{other_source}/contacts?pageSize=2&nextToken={contact_token}"),
        ),
        (
            "acme",
            format!("/api/dataSource/{source}/contacts?pageSize=2&phoneNumber=138&nextToken={contact_token}"),
        ),
        ("acme", "/api/task/list?nextToken=abc".to_owned()),
        ("acme", "/api/task/list?nextToken=%2F%2F%2F%2F".to_owned()),
        (
            "acme",
            format!("/api/task/list?nextToken={}", "A".repeat(300)),
        ),
    ];
    for bad in &tampered {
        refused.push((
            "acme",
            format!("/api/task/list?taskName=spring&pageSize=2&nextToken={bad}"),
        ));
    }
    for (tenant, path) in refused {
        let (answer, calls) = api.counting(api.get(tenant, &path)).await;
        answer.err(400, NOT_VALID);
        assert_eq!(calls, 0, "{tenant} {path}: refused before any read");
    }
}

fn with_keys(mut item: Item, pairs: &[(&str, String)]) -> Item {
    for (name, value) in pairs {
        item.insert((*name).to_owned(), AttributeValue::S(value.clone()));
    }
    item
}

/// One list request, with the items its reads returned; printed.
async fn measured(api: &TestApi, tenant: &str, what: &str, path: &str) -> (Value, ItemsRead) {
    api.calls.take();
    api.calls.items().take();
    let answer = api.get(tenant, path).await;
    let read = api.calls.items().take();
    println!("{what}: {read}");
    (answer.ok().clone(), read)
}

#[tokio::test]
async fn a_task_or_data_source_page_reads_its_own_rows_whatever_the_tenant_holds() {
    const TASKS: usize = 1_200;
    const SOURCES: usize = 1_000;
    // More than the default limit of data sources (D26): this is about reads, not limits.
    let api = TestApi::start_with(|config| config.tenant_limits.data_sources = 10_000).await;
    let big = tenant("big");
    let source = api.data_source("big", "Source 0000").await;
    let first = api.task("big", "Task 0000", &source, json!({})).await;
    let template = api.stored_task("big", &first).await;
    let mut items = Vec::new();
    for i in 1..TASKS {
        let mut task = template.clone();
        task.id = Id::new();
        task.name = Name::parse("taskName", &format!("Task {i:04}")).unwrap();
        if i % 10 == 0 {
            task.status = TaskStatus::Stopped;
        }
        let item = serde_dynamo::to_item(&task).unwrap();
        items.push(with_keys(
            item,
            &[
                (keys::PK, keys::tenant(&big)),
                (keys::SK, keys::task(&task.id)),
            ],
        ));
    }
    let head = api.stored_source("big", &source).await;
    for i in 1..SOURCES {
        let mut source = head.clone();
        source.id = Id::new();
        source.name = Name::parse("dataSourceName", &format!("Source {i:04}")).unwrap();
        let item = serde_dynamo::to_item(&source).unwrap();
        items.push(with_keys(
            item,
            &[
                (keys::PK, keys::data_source(&big, &source.id)),
                (keys::SK, keys::HEAD.to_owned()),
                (keys::GSI1_PK, keys::tenant(&big)),
                (keys::GSI1_SK, keys::data_source_in_tenant(&source.id)),
            ],
        ));
        items.push(
            [
                (keys::PK.to_owned(), AttributeValue::S(keys::tenant(&big))),
                (
                    keys::SK.to_owned(),
                    AttributeValue::S(keys::data_source_name(source.name.as_str())),
                ),
                (
                    "data_source_id".to_owned(),
                    AttributeValue::S(source.id.to_string()),
                ),
            ]
            .into(),
        );
    }
    api.put_directly(items).await;
    println!("tenant `big`: {TASKS} tasks, {SOURCES} data sources");

    // The counters predate these records: the first list that needs a total counts them once.
    let (page, read) = measured(
        &api,
        "big",
        "task list page 1, counts taken once",
        "/api/task/list",
    )
    .await;
    assert_eq!(page["total"], TASKS);
    assert!(read.scanned >= TASKS, "{read}");

    let (page, read) = measured(&api, "big", "task list page 1", "/api/task/list").await;
    assert_eq!(page["total"], TASKS);
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(read.records <= 21 && read.returned() <= 22, "{read}");
    assert!(read.scanned <= 21, "{read}");

    let (page, read) = measured(
        &api,
        "big",
        "task list pageNum=50&pageSize=20 (offset 980)",
        "/api/task/list?pageNum=50&pageSize=20",
    )
    .await;
    assert_eq!(page["total"], TASKS);
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(
        read.records <= 22,
        "{read}: whole records only for the page"
    );
    assert!(read.partial <= 980 + 20 + 1 + 2, "{read}");

    let (page, _) = measured(
        &api,
        "big",
        "task list pageNum=59&pageSize=20 (offset 1160)",
        "/api/task/list?pageNum=59&pageSize=20",
    )
    .await;
    let token = page["nextToken"].as_str().unwrap().to_owned();
    let (page, read) = measured(
        &api,
        "big",
        "task list, the page after it by nextToken",
        &format!("/api/task/list?pageSize=20&nextToken={token}"),
    )
    .await;
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert_eq!(page["nextToken"], Value::Null);
    assert!(read.records <= 21 && read.returned() <= 22, "{read}");

    let (page, read) = measured(
        &api,
        "big",
        "task list taskName=task 11 (100 matches)",
        "/api/task/list?taskName=task%2011",
    )
    .await;
    assert_eq!(page["total"], 100);
    assert!(
        read.records <= 20,
        "{read}: projections, then the page's records"
    );
    let (page, read) = measured(
        &api,
        "big",
        "task list status=3 (119 matches)",
        "/api/task/list?status=3",
    )
    .await;
    assert_eq!(page["total"], 119);
    assert!(read.records <= 20, "{read}");

    let (page, read) = measured(
        &api,
        "big",
        "data source list page 1, counts taken once",
        "/api/dataSource/list",
    )
    .await;
    assert_eq!(page["total"], SOURCES);
    assert!(read.records <= 21, "{read}");
    let (page, read) = measured(
        &api,
        "big",
        "data source list page 1",
        "/api/dataSource/list",
    )
    .await;
    assert_eq!(page["total"], SOURCES);
    assert!(read.records <= 21 && read.returned() <= 22, "{read}");
    let (page, read) = measured(
        &api,
        "big",
        "data source list pageNum=45&pageSize=20 (offset 880)",
        "/api/dataSource/list?pageNum=45&pageSize=20",
    )
    .await;
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(read.records <= 22, "{read}");
    let token = page["nextToken"].as_str().unwrap().to_owned();
    let (page, read) = measured(
        &api,
        "big",
        "data source list, the page after it by nextToken",
        &format!("/api/dataSource/list?pageSize=20&nextToken={token}"),
    )
    .await;
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(read.records <= 21 && read.returned() <= 22, "{read}");
    let (page, read) = measured(
        &api,
        "big",
        "data source list dataSourceName=source 09 (100 matches)",
        "/api/dataSource/list?dataSourceName=source%2009",
    )
    .await;
    assert_eq!(page["total"], 100);
    assert!(read.records <= 20, "{read}");

    // The counters move with creates and deletes through the API.
    api.post("big", "/api/task/delete", json!({"id": first}))
        .await
        .ok();
    api.task("big", "One more", &source, json!({})).await;
    api.task("big", "And another", &source, json!({})).await;
    let page = api.get("big", "/api/task/list?pageSize=1").await;
    assert_eq!(page.ok()["total"], TASKS + 1);
    api.data_source("big", "Fresh").await;
    let page = api.get("big", "/api/dataSource/list?pageSize=1").await;
    assert_eq!(page.ok()["total"], SOURCES + 1);
}

#[tokio::test]
async fn a_contacts_page_reads_its_own_rows_however_deep() {
    const CONTACTS: usize = 10_000;
    let api = TestApi::start().await;
    let source = api.data_source("acme", "Ten thousand").await;
    let first = api.contact("acme", &source, &phone(0)).await;
    let acme = tenant("acme");
    let template = api
        .store
        .contact(&acme, &id(&source), &id(&first))
        .await
        .unwrap();
    let mut items = Vec::new();
    let shards = api.store.shards(&acme, &id(&source)).await.unwrap();
    for n in 1..CONTACTS {
        let mut contact = template.clone();
        contact.id = Id::new();
        contact.phone = Phone::parse(&phone(n)).unwrap();
        let item = serde_dynamo::to_item(&contact).unwrap();
        items.push(with_keys(
            item,
            &[
                (keys::PK, shards.of_contact(&contact.id)),
                (keys::SK, keys::contact(&contact.id)),
            ],
        ));
    }
    api.put_directly(items).await;
    api.dynamodb()
        .update_item()
        .table_name(&api.resources.table)
        .key(
            keys::PK,
            AttributeValue::S(keys::data_source(&acme, &id(&source))),
        )
        .key(keys::SK, AttributeValue::S(keys::HEAD.to_owned()))
        .update_expression("SET contact_count = :n")
        .expression_attribute_values(":n", AttributeValue::N(CONTACTS.to_string()))
        .send()
        .await
        .unwrap();
    println!("data source with {CONTACTS} contacts");
    let path = format!("/api/dataSource/{source}/contacts");

    // Merged from the contact shards: each is read a page of about twice its share, so a page
    // reads a bounded number of records whatever the data source's size.
    let shards = outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS;
    let bound = 2 * shards as usize * outbound_adapters::store::shards::shard_page(22, shards);
    let (page, read) = measured(&api, "acme", "contacts page 1", &path).await;
    assert_eq!(page["total"], CONTACTS);
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(read.records <= bound && read.returned() <= bound, "{read}");

    let (page, read) = measured(
        &api,
        "acme",
        "contacts pageNum=500&pageSize=20 (offset 9,980)",
        &format!("{path}?pageNum=500&pageSize=20"),
    )
    .await;
    assert_eq!(page["total"], CONTACTS);
    let rows = page["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 20);
    assert_eq!(rows[19]["id"], first, "the oldest contact is the last row");
    assert_eq!(page["nextToken"], Value::Null);
    assert!(
        read.records <= 22,
        "{read}: the skipped contacts are read as keys only"
    );
    assert!(read.partial <= CONTACTS + 2, "{read}");

    let (page, _) = measured(
        &api,
        "acme",
        "contacts pageNum=499&pageSize=20 (offset 9,960)",
        &format!("{path}?pageNum=499&pageSize=20"),
    )
    .await;
    let token = page["nextToken"].as_str().unwrap().to_owned();
    let (page, read) = measured(
        &api,
        "acme",
        "contacts, the last page by nextToken",
        &format!("{path}?pageSize=20&nextToken={token}"),
    )
    .await;
    assert_eq!(page["rows"].as_array().unwrap()[19]["id"], first);
    assert_eq!(page["nextToken"], Value::Null);
    assert!(read.records <= bound && read.returned() <= bound, "{read}");

    let (page, read) = measured(
        &api,
        "acme",
        "contacts phoneNumber=1380000999 (10 matches)",
        &format!("{path}?phoneNumber=1380000999"),
    )
    .await;
    assert_eq!(page["total"], 10);
    assert!(
        read.records <= 12,
        "{read}: the head, the matches' keys, their records, and the data source's country (D14)"
    );
    assert!(read.partial <= 11, "{read}");
    let (page, read) = measured(
        &api,
        "acme",
        "contacts phoneNumber=13800001 (1,000 matches), page 3",
        &format!("{path}?phoneNumber=13800001&pageNum=3"),
    )
    .await;
    assert_eq!(page["total"], 1_000);
    assert_eq!(page["rows"].as_array().unwrap().len(), 20);
    assert!(read.records <= 21, "{read}: the head and the page");
}

/// D5: the `phoneNumber` filter reads every contact only on a data source of at most
/// `PHONE_FILTER_SCAN_MOST` contacts (20 here), where it matches any part of a number, exactly
/// as before. Above it, a whole number is looked up by its phone guard (three reads: the head,
/// the guard, the contact) and a partial one is 400, so no request's cost grows with the data
/// source.
#[tokio::test]
async fn the_phone_filter_reads_a_bounded_amount_on_a_large_data_source() {
    let api = TestApi::start_with(|config| config.phone_filter_scan_most = 20).await;
    let (small, _) = api.source_with_contacts("acme", 20).await;
    let (large, ids) = api.source_with_contacts("acme", 21).await;
    let path = |source: &str, filter: &str| {
        format!("/api/dataSource/{source}/contacts?phoneNumber={filter}")
    };

    // At the bound: a partial number matches every contact holding it.
    let (page, _) = measured(&api, "acme", "small, partial", &path(&small, "13800")).await;
    assert_eq!(page["total"], 20);

    // Above it: a whole number is found by its guard, reading three items.
    let wanted = api
        .store
        .contact(&tenant("acme"), &id(&large), &id(&ids[7]))
        .await
        .unwrap();
    let (page, read) = measured(
        &api,
        "acme",
        "large, whole number",
        &path(&large, wanted.phone.as_str()),
    )
    .await;
    assert_eq!(page["total"], 1);
    assert_eq!(page["rows"][0]["id"], ids[7].as_str());
    assert_eq!(page["rows"][0]["phoneNumber"], wanted.phone.as_str());
    // The guard, the head, the record, and the data source's country for its `e164` (D14).
    assert!(read.returned() <= 4 && read.scanned == 0, "{read}");
    let (page, _) = measured(&api, "acme", "large, unknown", &path(&large, "19999999999")).await;
    assert_eq!(
        (
            page["total"].as_u64(),
            page["rows"].as_array().map(Vec::len)
        ),
        (Some(0), Some(0))
    );

    // A partial number there would read every contact: refused, naming the bound.
    api.get("acme", &path(&large, "1380")).await.err(
        400,
        "phoneNumber must be a whole phone number on a dataSource of more than 20 contacts",
    );
}

/// D5, D16: the do-not-call list's `phoneNumber` filter follows the contacts' rule with the same
/// bound (`PHONE_FILTER_SCAN_MOST`, 5 here): on a list of at most 5 entries it matches any part
/// of a number, as before; on a longer one a whole number, in any form the list reads it, is
/// found by its guards (a bounded read: the count, the settings, the guards and the entry, no
/// Query) and a partial one is 400, so no request's cost grows with the list.
#[tokio::test]
async fn the_do_not_call_filter_reads_a_bounded_amount_on_a_long_list() {
    let api = TestApi::start_with(|config| config.phone_filter_scan_most = 5).await;
    for (tenant, entries) in [("short", 5), ("long", 6)] {
        api.post(
            tenant,
            "/api/settings/update",
            json!({"defaultCountry": "US"}),
        )
        .await
        .ok();
        for n in 0..entries {
            api.post(
                tenant,
                "/api/dnc/add",
                json!({"phoneNumber": format!("212555010{n}")}),
            )
            .await
            .ok();
        }
    }
    let path = |filter: &str| format!("/api/dnc/list?phoneNumber={filter}");
    let numbers = |page: &Value| -> Vec<String> {
        page["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["phoneNumber"].as_str().unwrap().to_owned())
            .collect()
    };

    // At the bound: any part of a number, every entry holding it.
    let (page, _) = measured(&api, "short", "short, partial", &path("555010")).await;
    assert_eq!(page["total"], 5);
    let (page, _) = measured(&api, "short", "short, e164 part", &path("%2B1212")).await;
    assert_eq!(page["total"], 5, "the E.164 form matches too");

    // A tenant's count is taken from its entries once, by the first read that needs it (D5's
    // `COUNTS`), and kept exact from then on: here a page that does not reach the end.
    let (page, _) = measured(
        &api,
        "long",
        "long, first count",
        "/api/dnc/list?pageSize=1",
    )
    .await;
    assert_eq!(page["total"], 6);
    // Above it: a whole number, written as listed, in E.164, with separators or with its
    // country code and no `+`.
    for filter in [
        "2125550103",
        "%2B12125550103",
        "(212)%20555-0103",
        "12125550103",
    ] {
        let (page, read) = measured(&api, "long", "long, whole number", &path(filter)).await;
        assert_eq!(page["total"], 1, "{filter}");
        assert_eq!(numbers(&page), ["2125550103"], "{filter}");
        assert_eq!(page["rows"][0]["e164"], "+12125550103");
        assert_eq!(page["nextToken"], Value::Null);
        // COUNTS, SETTINGS, the guards that exist and the entry: nothing scanned.
        assert!(
            read.returned() <= 4 && read.scanned == 0,
            "{filter}: {read}"
        );
    }
    let (page, read) = measured(&api, "long", "long, unlisted", &path("2125550199")).await;
    assert_eq!((page["total"].as_u64(), numbers(&page).len()), (Some(0), 0));
    assert_eq!(read.scanned, 0, "{read}");

    // A partial number there would read every entry: refused, naming the bound.
    api.get("long", &path("0103")).await.err(
        400,
        "phoneNumber must be a whole phone number on a do-not-call list of more than 5 entries",
    );
    // Without the filter the list pages as before.
    assert_eq!(api.get("long", "/api/dnc/list").await.ok()["total"], 6);
}

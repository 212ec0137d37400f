//! A data source's contacts and phone guards spread over its contact shards (D5, D7;
//! `docs/data-model.md`): every guarantee of one partition still holds across several. Numbers
//! stay unique under single adds racing an import of the same numbers, `contactCount` stays
//! exact, pages by offset and by `nextToken` walk every contact once, newest first, across shard
//! boundaries, and exports and the dialer read every contact once.

use crate::dialing_support::{fast_settings, ALL_SUCCESS};
use crate::support::{contact_op, id, phone, row_ids, tenant, TestApi};
use outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS;
use outbound_model::plan::ManualClock;
use outbound_model::TaskStatus;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const TENANT: &str = "acme";

/// A CSV of one `phoneNumber` column holding `numbers`.
fn csv_of(numbers: &[String]) -> Vec<u8> {
    let mut file = String::from("phoneNumber\n");
    for number in numbers {
        file.push_str(number);
        file.push('\n');
    }
    file.into_bytes()
}

/// The contacts stored in each shard partition and the phone guards, read past the service.
async fn stored_layout(api: &TestApi, source: &str) -> (BTreeMap<String, usize>, Vec<String>) {
    let shards = api
        .store
        .shards(&tenant(TENANT), &id(source))
        .await
        .unwrap();
    let partitions: Vec<String> = shards.partitions().collect();
    let mut contacts = BTreeMap::new();
    let mut guards = Vec::new();
    for ((pk, sk), item) in api.snapshot().await {
        if !partitions.contains(&pk) {
            continue;
        }
        if sk.starts_with("C#") && sk != "C#~" {
            *contacts.entry(pk.clone()).or_default() += 1;
        } else if let Some(number) = sk.strip_prefix("P#") {
            // The guard is on its number's shard, and names a stored contact.
            assert_eq!(
                pk,
                shards.of_phone(&outbound_model::Phone::parse(number).unwrap())
            );
            assert!(item.contains_key("contact_id"));
            guards.push(number.to_owned());
        }
    }
    guards.sort();
    (contacts, guards)
}

/// D7 across shards: 30 single adds race a posted import of the same 60 numbers; every number
/// is stored once, whichever write won it, with one guard on its shard, and `contactCount` is
/// exactly the number of contacts.
#[tokio::test]
async fn single_adds_racing_an_import_of_the_same_numbers_store_each_once() {
    // 31 requests at once: past a tenant's default 20 in flight (D29), raised here.
    let api = TestApi::start_with(|config| config.tenant_limits.requests.in_flight = 64).await;
    let source = api.data_source(TENANT, "Sharded race").await;
    let numbers: Vec<String> = (0..60).map(phone).collect();
    let add = contact_op(&source, "add");
    let adds = numbers[..30]
        .iter()
        .map(|number| api.post(TENANT, &add, json!({"phoneNumber": number})));
    let import = api.batch_import(TENANT, &source, "race.csv", csv_of(&numbers));
    let (adds, imported) = tokio::join!(futures::future::join_all(adds), import);
    // An add that lost its number to the import is 409; nothing else.
    for answer in adds.iter().filter(|answer| answer.status != 200) {
        answer.code(409);
    }
    let added = adds.iter().filter(|answer| answer.status == 200).count();
    let report = imported.ok().clone();
    let stored_by_import = report["successCount"].as_u64().unwrap() as usize;
    assert_eq!(
        added + stored_by_import,
        60,
        "each number stored by exactly one of the writes: {report}"
    );
    assert_eq!(api.contact_count(TENANT, &source).await, 60);
    let listed: Vec<String> = api
        .all_contacts(TENANT, &source)
        .await
        .iter()
        .map(|contact| contact["phoneNumber"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed.len(), 60);
    let unique: BTreeSet<&String> = listed.iter().collect();
    assert_eq!(unique.len(), 60, "no number twice");
    let (per_shard, guards) = stored_layout(&api, &source).await;
    assert_eq!(per_shard.values().sum::<usize>(), 60);
    assert!(
        per_shard.len() > 1,
        "the contacts are spread over the shards: {per_shard:?}"
    );
    let mut expected: Vec<String> = numbers.clone();
    expected.sort();
    assert_eq!(guards, expected, "one guard a number");
}

/// D5 across shards: 45 contacts over 8 shards, walked by `nextToken` 7 at a time and by offset
/// 7 at a time: both walks give every contact once, newest first (ids descending), the same
/// pages; `total` is exact on every page.
#[tokio::test]
async fn pages_walk_every_contact_once_newest_first_across_shards() {
    let api = TestApi::start().await;
    let (source, mut ids) = api.source_with_contacts(TENANT, 45).await;
    ids.sort();
    ids.reverse();
    let path = format!("/api/dataSource/{source}/contacts");
    let mut by_token = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let query = match &token {
            None => "pageSize=7".to_owned(),
            Some(token) => format!("pageSize=7&nextToken={token}"),
        };
        let page = api.get(TENANT, &format!("{path}?{query}")).await;
        let page = page.ok();
        assert_eq!(page["total"], 45);
        by_token.extend(row_ids(page));
        match page["nextToken"].as_str() {
            Some(next) => token = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        by_token, ids,
        "by nextToken: every contact once, newest first"
    );
    let mut by_offset = Vec::new();
    for page_num in 1..=7 {
        let page = api
            .get(TENANT, &format!("{path}?pageSize=7&pageNum={page_num}"))
            .await;
        by_offset.extend(row_ids(page.ok()));
    }
    assert_eq!(by_offset, ids, "by offset: the same order");
    let shards_used = stored_layout(&api, &source).await.0.len();
    assert!((2..=DEFAULT_CONTACT_SHARDS as usize).contains(&shards_used));
}

/// Exports and the dialer read every contact of a sharded data source once: the CSV export has
/// each number once, and a task over it calls each contact once and completes.
#[tokio::test]
async fn exports_and_the_dialer_read_every_contact_once() {
    let api = TestApi::start().await;
    api.numbers_read_in(TENANT, "CN").await;
    let (source, ids) = api.source_with_contacts(TENANT, 40).await;
    let (code, _, bytes) = api
        .download(
            TENANT,
            &format!("/api/dataSource/{source}/contact/batchExport?format=csv"),
        )
        .await;
    assert_eq!(code, 200);
    let text = String::from_utf8(bytes).unwrap();
    let mut reader = csv::Reader::from_reader(text.trim_start_matches('\u{feff}').as_bytes());
    let titles = reader.headers().unwrap().clone();
    let id_column = titles.iter().position(|t| t == "id").unwrap();
    let exported: Vec<String> = reader
        .records()
        .map(|row| row.unwrap()[id_column].to_owned())
        .collect();
    let mut sorted_ids = ids.clone();
    sorted_ids.sort();
    assert_eq!(exported, sorted_ids, "oldest first, each once");

    let clock = ManualClock::starting_now();
    let engine = api.engine(fast_settings(&api, ALL_SUCCESS), clock.clone());
    let task = api
        .task(TENANT, "Sharded task", &source, json!({"maxDialCount": 1}))
        .await;
    api.post(TENANT, "/api/task/publish", json!({"id": task}))
        .await
        .ok();
    api.dial_until(
        &engine,
        &clock,
        Duration::from_secs(60),
        (TENANT, &task),
        TaskStatus::Completed,
        40,
    )
    .await;
    let mut placed: Vec<String> = engine
        .provider
        .placed
        .lock()
        .unwrap()
        .iter()
        .map(|token| token.split('-').nth(1).unwrap().to_owned())
        .collect();
    placed.sort();
    assert_eq!(placed, sorted_ids, "each contact called once");
    let stored = api.stored_task(TENANT, &task).await;
    assert_eq!(stored.counters.calls, 40);
}

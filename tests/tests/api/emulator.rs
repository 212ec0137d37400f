//! The DynamoDB semantics the store relies on, asserted on whichever emulator serves the test:
//! dynoxide, each test on a database of its own, by default; AWS's DynamoDB Local under
//! `make conformance` (`DYNAMODB_ENDPOINT`), each test on a table of its own. Each test states a
//! behaviour as DynamoDB's documentation does (the exact error code, what is stored after), so
//! an emulator that answers otherwise fails here rather than in a test of the store, and the
//! differences found are written down in `docs/emulators.md`.
//!
//! The calls go straight to DynamoDB through the SDK (no store in between), on the table
//! `Stack::provision` creates: keys `pk`/`sk`, and the GSIs `gsi1` and `gsi2`.

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, CancellationReason, ConditionCheck, Delete, KeySchemaElement,
    KeyType, KeysAndAttributes, Put, PutRequest, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType, TransactWriteItem, Update, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use futures::future::join_all;
use outbound_adapters::store::keys;
use outbound_tests::stack::{put_items, unique, Stack};
use std::collections::HashMap;

type Item = HashMap<String, AttributeValue>;

/// DynamoDB's limit on an item's size: 400 KB, attribute names and values counted in UTF-8.
const MAX_ITEM_SIZE: usize = 400 * 1024;

fn s(value: &str) -> AttributeValue {
    AttributeValue::S(value.to_owned())
}

fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The table key `pk`/`sk`.
fn key(pk: &str, sk: &str) -> Item {
    HashMap::from([(keys::PK.to_owned(), s(pk)), (keys::SK.to_owned(), s(sk))])
}

/// The item of key `pk`/`sk` with the further attributes `rest`.
fn item(pk: &str, sk: &str, rest: &[(&str, AttributeValue)]) -> Item {
    let mut item = key(pk, sk);
    item.extend(
        rest.iter()
            .map(|(name, value)| ((*name).to_owned(), value.clone())),
    );
    item
}

/// A DynamoDB client of the test's database.
fn client(stack: &Stack) -> Client {
    Client::new(&stack.sdk)
}

/// A client that sends each request once: every answer of a race is the answer to one attempt
/// (a retried write whose first attempt landed would be counted as lost).
fn client_without_retries(stack: &Stack) -> Client {
    Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
            .retry_config(RetryConfig::disabled())
            .build(),
    )
}

/// The code and message of the service error `result` was answered with.
fn service_error<
    T: std::fmt::Debug,
    E: ProvideErrorMetadata + std::fmt::Debug,
    R: std::fmt::Debug,
>(
    result: Result<T, SdkError<E, R>>,
    what: &str,
) -> (String, String) {
    let error = match result {
        Ok(output) => panic!("{what}: accepted, answered {output:?}"),
        Err(error) => error,
    };
    match error.as_service_error() {
        Some(service) => (
            service.code().unwrap_or_default().to_owned(),
            service.message().unwrap_or_default().to_owned(),
        ),
        None => panic!("{what}: no answer from the service: {error:?}"),
    }
}

/// Asserts `result` was refused with a ValidationException; answers its message.
fn validation<T: std::fmt::Debug, E: ProvideErrorMetadata + std::fmt::Debug, R: std::fmt::Debug>(
    result: Result<T, SdkError<E, R>>,
    what: &str,
) -> String {
    let (code, message) = service_error(result, what);
    assert_eq!(code, "ValidationException", "{what}: {message}");
    eprintln!("{what}: ValidationException: {}", elided(&message));
    message
}

/// `message` without the request value a validation message may quote whole (`Value '[...]'
/// at 'transactItems'`, all 101 actions), for the log.
fn elided(message: &str) -> String {
    match (message.find("Value '"), message.rfind("' at '")) {
        (Some(start), Some(end)) if end > start + 80 => {
            format!("{}Value '...{}", &message[..start], &message[end..])
        }
        _ => message.to_owned(),
    }
}

/// Every item of `table`, sorted by key (a test's table holds a few hundred at most).
async fn scan_all(client: &Client, table: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = client
            .scan()
            .table_name(table)
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("the table scans");
        items.extend(page.items().iter().cloned());
        start = page.last_evaluated_key;
        if start.is_none() {
            break;
        }
    }
    let sort_key = |item: &Item| {
        [keys::PK, keys::SK].map(|name| {
            item.get(name)
                .and_then(|value| value.as_s().ok())
                .cloned()
                .unwrap_or_default()
        })
    };
    items.sort_by_key(sort_key);
    items
}

/// The item of key `pk`/`sk`, read strongly consistent.
async fn get(client: &Client, table: &str, pk: &str, sk: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .set_key(Some(key(pk, sk)))
        .consistent_read(true)
        .send()
        .await
        .expect("the item reads")
        .item
}

/// Puts `items` one by one.
async fn put_all(client: &Client, table: &str, items: impl IntoIterator<Item = Item>) {
    for item in items {
        client
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .send()
            .await
            .expect("the item is put");
    }
}

/// The codes of a cancelled transaction's reasons, `""` for a reason without one.
fn codes(reasons: &[CancellationReason]) -> Vec<&str> {
    reasons
        .iter()
        .map(|reason| reason.code().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn the_tests_reach_the_stacks_own_dynamodb() {
    // Every test here asserts what the emulator serving it answers, so that must be the stack's
    // own DynamoDB (dynoxide, or the server at DYNAMODB_ENDPOINT), not moto, which serves S3,
    // SQS and EventBridge at the SDK configuration's shared endpoint: the table is there, and an
    // item put through `Client::new(&stack.sdk)` is read back from it.
    let stack = Stack::provision().await;
    let table = stack.resources.table.clone();
    let own = Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
            .endpoint_url(stack.dynamodb.url())
            .build(),
    );
    let marker = item("emulator", "marker", &[]);
    put_all(&client(&stack), &table, [marker.clone()]).await;
    let read = own
        .get_item()
        .table_name(&table)
        .set_key(Some(key("emulator", "marker")))
        .consistent_read(true)
        .send()
        .await;
    match read {
        Ok(output) => assert_eq!(output.item, Some(marker)),
        Err(error) => panic!(
            "the table {table} is not on the stack's DynamoDB at {}: {error:?}",
            stack.dynamodb.url()
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_conditional_put_raced_by_32_clients_has_exactly_one_winner() {
    // PutItem with `attribute_not_exists(pk)` is the store's uniqueness guard (names, numbers,
    // claims, D3, D7): of 32 clients putting one key at once, exactly one must win and the 31
    // others get ConditionalCheckFailedException, each carrying (ALL_OLD) the winner's item.
    // Each client is a task of its own, released together, so the puts are in flight at once.
    let stack = Stack::provision().await;
    let table = stack.resources.table.clone();
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(32));
    let tasks = (0..32).map(|writer| {
        let (client, table, start) = (client_without_retries(&stack), table.clone(), start.clone());
        tokio::spawn(async move {
            start.wait().await;
            client
                .put_item()
                .table_name(&table)
                .set_item(Some(item("race", "guard", &[("writer", n(writer))])))
                .condition_expression("attribute_not_exists(pk)")
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await
        })
    });
    let mut results = Vec::new();
    for task in join_all(tasks).await {
        results.push(task.expect("the client's task ends"));
    }

    let stored = get(&client(&stack), &table, "race", "guard")
        .await
        .expect("the winner's item is stored");
    let mut winners = Vec::new();
    let mut losers = 0;
    for (writer, result) in results.into_iter().enumerate() {
        match result {
            Ok(_) => winners.push(writer),
            Err(error) => match error.into_service_error() {
                PutItemError::ConditionalCheckFailedException(failed) => {
                    assert_eq!(failed.item(), Some(&stored), "writer {writer}");
                    losers += 1;
                }
                other => panic!("writer {writer}: {other:?}"),
            },
        }
    }
    assert_eq!(winners.len(), 1, "winners {winners:?}");
    assert_eq!(losers, 31);
    assert_eq!(
        stored,
        item("race", "guard", &[("writer", n(winners[0] as i64))])
    );
}

/// How one optimistic transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Committed,
    /// Cancelled with a ConditionalCheckFailed reason: another client committed since the read.
    ConditionFailed,
    /// Cancelled with a TransactionConflict reason: another transaction held an item.
    Conflict,
}

/// `rounds` times: reads the version of `occ/a`, then moves `occ/a` and `occ/b` to the next
/// version in one transaction conditioned on both still being at the version read.
async fn optimistic_writer(client: Client, table: String, rounds: usize) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let read = get(&client, &table, "occ", "a")
            .await
            .and_then(|item| item.get("version")?.as_n().ok()?.parse::<i64>().ok())
            .expect("occ/a has a version");
        let update = |sk: &str| {
            let update = Update::builder()
                .table_name(&table)
                .set_key(Some(key("occ", sk)))
                .update_expression("SET #version = :next")
                .condition_expression("#version = :read")
                .expression_attribute_names("#version", "version")
                .expression_attribute_values(":read", n(read))
                .expression_attribute_values(":next", n(read + 1))
                .build()
                .expect("the update is complete");
            TransactWriteItem::builder().update(update).build()
        };
        let result = client
            .transact_write_items()
            .transact_items(update("a"))
            .transact_items(update("b"))
            .send()
            .await;
        let outcome = match result {
            Ok(_) => Outcome::Committed,
            Err(error) => match error.into_service_error() {
                TransactWriteItemsError::TransactionCanceledException(cancelled) => {
                    let codes = codes(cancelled.cancellation_reasons());
                    assert_eq!(codes.len(), 2, "{cancelled:?}");
                    let known = |code: &&str| {
                        matches!(
                            *code,
                            "None" | "ConditionalCheckFailed" | "TransactionConflict"
                        )
                    };
                    assert!(codes.iter().all(known), "{cancelled:?}");
                    if codes.contains(&"TransactionConflict") {
                        Outcome::Conflict
                    } else if codes.contains(&"ConditionalCheckFailed") {
                        Outcome::ConditionFailed
                    } else {
                        panic!("cancelled without a reason: {cancelled:?}")
                    }
                }
                other => panic!("{other:?}"),
            },
        };
        outcomes.push(outcome);
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn optimistic_two_item_transactions_commit_exactly_once_per_version() {
    // The store's counters and state changes are optimistic transactions over several items
    // (read, then TransactWriteItems conditioned on what was read, D7, D13): under 16 clients
    // doing 20 each, every version is committed exactly once, on both items, and every loser
    // is a TransactionCanceledException whose reasons say why (ConditionalCheckFailed, or
    // TransactionConflict, which DynamoDB may answer instead under contention).
    let stack = Stack::provision().await;
    let table = stack.resources.table.clone();
    put_all(
        &client(&stack),
        &table,
        ["a", "b"].map(|sk| item("occ", sk, &[("version", n(0))])),
    )
    .await;
    let (clients, rounds) = (16, 20);
    let writers = (0..clients).map(|_| {
        tokio::spawn(optimistic_writer(
            client_without_retries(&stack),
            table.clone(),
            rounds,
        ))
    });
    let outcomes: Vec<Outcome> = join_all(writers)
        .await
        .into_iter()
        .flat_map(|writer| writer.expect("the client's task ends"))
        .collect();

    let count = |wanted| {
        outcomes
            .iter()
            .filter(|outcome| **outcome == wanted)
            .count()
    };
    let (committed, failed, conflicts) = (
        count(Outcome::Committed),
        count(Outcome::ConditionFailed),
        count(Outcome::Conflict),
    );
    eprintln!(
        "{committed} committed, {failed} cancelled ConditionalCheckFailed, {conflicts} cancelled TransactionConflict"
    );
    assert_eq!(committed + failed + conflicts, clients * rounds);
    // Each of a client's rounds either committed, met a conflict, or failed its condition
    // because another client committed between its read and its write: its rounds are one
    // after the other, so those commits are distinct.
    assert!(committed + conflicts >= rounds, "{committed} committed");
    for sk in ["a", "b"] {
        assert_eq!(
            get(&client(&stack), &table, "occ", sk).await,
            Some(item("occ", sk, &[("version", n(committed as i64))])),
            "occ/{sk}"
        );
    }
}

#[tokio::test]
async fn a_cancelled_transaction_gives_one_reason_per_action_in_order() {
    // The store tells which of a transaction's conditions failed from the position of the
    // reason (D7's "already exists" against "not found"): one reason per action, in the order
    // of the actions, `None` for those that passed and ConditionalCheckFailed for the failing
    // one, which carries the item when the action asked for ALL_OLD; nothing is written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let before = ["a", "b", "c"].map(|sk| item("tx", sk, &[("v", n(1))]));
    put_all(&client, &table, before.clone()).await;

    let actions = |on_failure: ReturnValuesOnConditionCheckFailure| {
        vec![
            TransactWriteItem::builder()
                .condition_check(
                    ConditionCheck::builder()
                        .table_name(&table)
                        .set_key(Some(key("tx", "a")))
                        .condition_expression("attribute_exists(pk)")
                        .build()
                        .expect("the check is complete"),
                )
                .build(),
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&table)
                        .set_item(Some(item("tx", "d", &[("v", n(1))])))
                        .build()
                        .expect("the put is complete"),
                )
                .build(),
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name(&table)
                        .set_key(Some(key("tx", "b")))
                        .update_expression("SET v = :two")
                        .condition_expression("v = :zero")
                        .expression_attribute_values(":two", n(2))
                        .expression_attribute_values(":zero", n(0))
                        .return_values_on_condition_check_failure(on_failure)
                        .build()
                        .expect("the update is complete"),
                )
                .build(),
            TransactWriteItem::builder()
                .delete(
                    Delete::builder()
                        .table_name(&table)
                        .set_key(Some(key("tx", "c")))
                        .condition_expression("attribute_exists(pk)")
                        .build()
                        .expect("the delete is complete"),
                )
                .build(),
        ]
    };

    for (on_failure, carried) in [
        (
            ReturnValuesOnConditionCheckFailure::AllOld,
            Some(&before[1]),
        ),
        (ReturnValuesOnConditionCheckFailure::None, None),
    ] {
        let result = client
            .transact_write_items()
            .set_transact_items(Some(actions(on_failure.clone())))
            .send()
            .await;
        let cancelled = match result.map_err(SdkError::into_service_error) {
            Err(TransactWriteItemsError::TransactionCanceledException(cancelled)) => cancelled,
            other => panic!("{on_failure:?}: {other:?}"),
        };
        let reasons = cancelled.cancellation_reasons();
        assert_eq!(
            codes(reasons),
            ["None", "None", "ConditionalCheckFailed", "None"],
            "{on_failure:?}: {cancelled:?}"
        );
        let items: Vec<Option<&Item>> = reasons.iter().map(CancellationReason::item).collect();
        assert_eq!(items, [None, None, carried, None], "{on_failure:?}");
        assert_eq!(scan_all(&client, &table).await, before, "{on_failure:?}");
    }
}

#[tokio::test]
async fn two_actions_on_one_item_in_a_transaction_are_refused() {
    // DynamoDB refuses a transaction with two actions on one item (ValidationException) rather
    // than applying them in some order; the store's transactions are built never to do it, and
    // nothing of a refused one is written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let put = |sk: &str| {
        TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&table)
                    .set_item(Some(item("twice", sk, &[("v", n(1))])))
                    .build()
                    .expect("the put is complete"),
            )
            .build()
    };
    let update = TransactWriteItem::builder()
        .update(
            Update::builder()
                .table_name(&table)
                .set_key(Some(key("twice", "x")))
                .update_expression("SET v = :two")
                .expression_attribute_values(":two", n(2))
                .build()
                .expect("the update is complete"),
        )
        .build();
    let result = client
        .transact_write_items()
        .transact_items(put("other"))
        .transact_items(put("x"))
        .transact_items(update)
        .send()
        .await;
    validation(result, "a put and an update of one item");
    assert_eq!(scan_all(&client, &table).await, Vec::<Item>::new());
}

/// `count` puts of distinct items of partition `pk` as transaction actions.
fn transaction_puts(table: &str, pk: &str, count: usize) -> Vec<TransactWriteItem> {
    (0..count)
        .map(|i| {
            let put = Put::builder()
                .table_name(table)
                .set_item(Some(item(pk, &format!("{i:03}"), &[])))
                .build()
                .expect("the put is complete");
            TransactWriteItem::builder().put(put).build()
        })
        .collect()
}

#[tokio::test]
async fn a_transaction_holds_at_most_100_actions() {
    // DynamoDB's limit on TransactWriteItems is 100 actions: the store splits what it writes
    // atomically at it (D7's bulk deletes, D8's imports). 100 are accepted; 101 are refused
    // (ValidationException) and nothing of them is written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    client
        .transact_write_items()
        .set_transact_items(Some(transaction_puts(&table, "hundred", 100)))
        .send()
        .await
        .expect("a transaction of 100 actions is accepted");
    assert_eq!(scan_all(&client, &table).await.len(), 100);

    let result = client
        .transact_write_items()
        .set_transact_items(Some(transaction_puts(&table, "more", 101)))
        .send()
        .await;
    validation(result, "a transaction of 101 actions");
    let stored = scan_all(&client, &table).await;
    assert_eq!(stored.len(), 100);
    assert!(stored
        .iter()
        .all(|item| item.get(keys::PK) == Some(&s("hundred"))));
}

/// `count` put requests of distinct items of partition `pk`.
fn write_requests(pk: &str, count: usize) -> Vec<WriteRequest> {
    (0..count)
        .map(|i| {
            let put = PutRequest::builder()
                .set_item(Some(item(pk, &format!("{i:03}"), &[])))
                .build()
                .expect("the put request is complete");
            WriteRequest::builder().put_request(put).build()
        })
        .collect()
}

#[tokio::test]
async fn batches_hold_at_most_25_writes_and_100_reads() {
    // DynamoDB's limits on batches, at which the store splits them (stack::put_items, the
    // store's batch reads): BatchWriteItem takes 25 requests, BatchGetItem 100 keys; one more
    // is refused (ValidationException), nothing of it written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let written = client
        .batch_write_item()
        .request_items(&table, write_requests("batch", 25))
        .send()
        .await
        .expect("a batch of 25 writes is accepted");
    assert!(
        written.unprocessed_items().is_none_or(HashMap::is_empty),
        "{written:?}"
    );
    assert_eq!(scan_all(&client, &table).await.len(), 25);

    let result = client
        .batch_write_item()
        .request_items(&table, write_requests("more", 26))
        .send()
        .await;
    validation(result, "a batch of 26 writes");
    assert_eq!(scan_all(&client, &table).await.len(), 25);

    let items: Vec<Item> = (0..100)
        .map(|i| item("read", &format!("{i:03}"), &[]))
        .collect();
    put_items(&client, &table, items.clone())
        .await
        .expect("the items to read are put");
    let batch_get = |count: usize| {
        let keys = (0..count)
            .map(|i| key("read", &format!("{i:03}")))
            .collect();
        let keys = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .build()
            .expect("the keys are complete");
        client.batch_get_item().request_items(&table, keys).send()
    };
    let read = batch_get(100)
        .await
        .expect("a batch of 100 reads is accepted");
    assert!(
        read.unprocessed_keys().is_none_or(HashMap::is_empty),
        "{read:?}"
    );
    let mut returned = read
        .responses()
        .and_then(|tables| tables.get(&table))
        .cloned()
        .unwrap_or_default();
    returned.sort_by_key(|item| item.get(keys::SK).and_then(|sk| sk.as_s().ok()).cloned());
    assert_eq!(returned, items);

    validation(batch_get(101).await, "a batch of 101 reads");
}

/// An item of key `size`/`sk` whose DynamoDB size (names and values in UTF-8) is `size` bytes.
fn item_of_size(sk: &str, size: usize) -> Item {
    let overhead = keys::PK.len() + "size".len() + keys::SK.len() + sk.len() + "data".len();
    item("size", sk, &[("data", s(&"x".repeat(size - overhead)))])
}

#[tokio::test]
async fn an_item_of_400_kb_is_stored_and_a_larger_one_refused() {
    // DynamoDB stores items of up to 400 KB (names and values counted): the store keeps its
    // largest items (task contact lists, D8's job items) under that. An item of exactly the
    // limit is stored whole; one byte more is refused (ValidationException) and not written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let largest = item_of_size("largest", MAX_ITEM_SIZE);
    put_all(&client, &table, [largest.clone()]).await;
    assert_eq!(get(&client, &table, "size", "largest").await, Some(largest));

    let result = client
        .put_item()
        .table_name(&table)
        .set_item(Some(item_of_size("over", MAX_ITEM_SIZE + 1)))
        .send()
        .await;
    validation(result, "an item of 400 KB and one byte");
    assert_eq!(get(&client, &table, "size", "over").await, None);
}

#[tokio::test]
async fn expressions_and_keys_are_validated_as_dynamodb_does() {
    // What DynamoDB refuses with a ValidationException and the store must never send: an empty
    // string as a key value, a reserved word (`status`) used by name in an expression (accepted
    // through an expression attribute name, as the store writes it), and an expression
    // attribute value no expression uses. Nothing refused is written.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let result = client
        .put_item()
        .table_name(&table)
        .set_item(Some(item("", "empty", &[])))
        .send()
        .await;
    validation(result, "an empty string as the partition key");

    let result = client
        .update_item()
        .table_name(&table)
        .set_key(Some(key("words", "x")))
        .update_expression("SET status = :status")
        .expression_attribute_values(":status", s("open"))
        .send()
        .await;
    validation(result, "the reserved word status in an update expression");
    assert_eq!(scan_all(&client, &table).await, Vec::<Item>::new());

    client
        .update_item()
        .table_name(&table)
        .set_key(Some(key("words", "x")))
        .update_expression("SET #status = :status")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":status", s("open"))
        .send()
        .await
        .expect("status through an expression attribute name is accepted");

    let result = client
        .update_item()
        .table_name(&table)
        .set_key(Some(key("words", "x")))
        .update_expression("SET #status = :status")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":status", s("closed"))
        .expression_attribute_values(":unused", s("unused"))
        .send()
        .await;
    validation(result, "an unused expression attribute value");
    assert_eq!(
        scan_all(&client, &table).await,
        [item("words", "x", &[("status", s("open"))])]
    );
}

/// Creates a table `name` keyed by `pk` alone.
async fn create_table(
    client: &Client,
    name: &str,
) -> Result<
    aws_sdk_dynamodb::operation::create_table::CreateTableOutput,
    SdkError<aws_sdk_dynamodb::operation::create_table::CreateTableError>,
> {
    client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name(keys::PK)
                .key_type(KeyType::Hash)
                .build()
                .expect("the key is complete"),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(keys::PK)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .expect("the attribute is complete"),
        )
        .send()
        .await
}

#[tokio::test]
async fn table_names_are_3_to_255_characters() {
    // DynamoDB's table names are 3 to 255 characters of [a-zA-Z0-9_.-]; CreateTable refuses
    // others (ValidationException), where moto accepted a table named `t`. Names of 3 and 255
    // characters are accepted (and the tables deleted again: under `make conformance` the
    // server is shared).
    let stack = Stack::provision().await;
    let client = client(&stack);
    for name in ["t", "tt"] {
        validation(
            create_table(&client, name).await,
            &format!("a table named {name:?}"),
        );
    }
    let id = unique("n");
    let three = id[id.len() - 3..].to_owned();
    let longest = format!("{id}{}", "x".repeat(255 - id.len()));
    for name in [&three, &longest] {
        create_table(&client, name)
            .await
            .unwrap_or_else(|error| panic!("a table named {name:?} is refused: {error:?}"));
        client
            .delete_table()
            .table_name(name)
            .send()
            .await
            .expect("the table is deleted");
    }
    validation(
        create_table(&client, &format!("{longest}x")).await,
        "a table name of 256 characters",
    );
}

#[tokio::test]
async fn a_gsi_query_returns_items_in_sort_key_order_and_pages_exactly() {
    // The store's lists (D5) are GSI queries read a page at a time: items come in the index's
    // sort-key order (either way), a page stops at Limit with LastEvaluatedKey the key (index
    // and table) of its last item, and the next page starts right after it, so the pages
    // together hold each item once. A page that stops at Limit has a LastEvaluatedKey even when
    // nothing follows (the next page is then empty and has none); one that reached the end
    // has none. Items of other index partitions, and those without the index's keys, are not
    // read.
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    // Written out of order, each under a table key unrelated to its place in the index.
    let order = [6, 2, 8, 0, 4, 7, 1, 5, 3];
    let indexed = |i: usize| {
        item(
            &format!("base#{}", 8 - i),
            "item",
            &[
                (keys::GSI1_PK, s("list")),
                (keys::GSI1_SK, s(&format!("k{i:02}"))),
                ("i", n(i as i64)),
            ],
        )
    };
    put_all(&client, &table, order.map(indexed)).await;
    put_all(
        &client,
        &table,
        [
            item(
                "elsewhere",
                "item",
                &[(keys::GSI1_PK, s("other")), (keys::GSI1_SK, s("k00"))],
            ),
            item("unindexed", "item", &[(keys::GSI1_PK, s("list"))]),
        ],
    )
    .await;
    let expected: Vec<Item> = (0..9).map(indexed).collect();

    let page = |limit: i32, forward: bool, start: Option<Item>| {
        client
            .query()
            .table_name(&table)
            .index_name(keys::GSI1)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", keys::GSI1_PK)
            .expression_attribute_values(":pk", s("list"))
            .scan_index_forward(forward)
            .limit(limit)
            .set_exclusive_start_key(start)
            .send()
    };
    let index_key = |item: &Item| -> Item {
        [keys::GSI1_PK, keys::GSI1_SK, keys::PK, keys::SK]
            .into_iter()
            .filter_map(|name| Some((name.to_owned(), item.get(name)?.clone())))
            .collect()
    };

    let whole = page(100, true, None).await.expect("the index is queried");
    assert_eq!(whole.items(), expected.as_slice());
    assert_eq!(whole.last_evaluated_key(), None);
    let backwards = page(100, false, None).await.expect("the index is queried");
    let reversed: Vec<Item> = expected.iter().rev().cloned().collect();
    assert_eq!(backwards.items(), reversed.as_slice());

    // Pages of 4: 4, 4 and the last one (stopped by the end, not by Limit); pages of 3: 3, 3,
    // 3 (stopped by Limit, so with a LastEvaluatedKey) and an empty one.
    for (limit, sizes) in [(4, vec![4, 4, 1]), (3, vec![3, 3, 3, 0])] {
        let mut read: Vec<Item> = Vec::new();
        let mut start = None;
        for (number, size) in sizes.iter().enumerate() {
            let answer = page(limit, true, start.clone())
                .await
                .expect("the index is queried");
            assert_eq!(answer.items().len(), *size, "limit {limit}, page {number}");
            read.extend(answer.items().iter().cloned());
            let last = number + 1 == sizes.len();
            start = answer.last_evaluated_key;
            if last {
                assert_eq!(start, None, "limit {limit}, the last page");
            } else {
                let last_item = read.last().expect("the page has items");
                assert_eq!(
                    start.as_ref(),
                    Some(&index_key(last_item)),
                    "limit {limit}, page {number}"
                );
            }
        }
        assert_eq!(read, expected, "limit {limit}");
    }
}

#[tokio::test]
async fn a_failed_conditional_update_changes_nothing_and_returns_the_old_item() {
    // A conditional update whose condition fails writes nothing (no attribute of it, not even
    // one its condition does not mention) and, asked for ALL_OLD on failure, answers the item as
    // it is: the store reads why a write was refused from it without a second read (D7).
    let stack = Stack::provision().await;
    let (client, table) = (client(&stack), stack.resources.table.clone());
    let before = item("cond", "x", &[("v", n(1)), ("note", s("kept"))]);
    put_all(&client, &table, [before.clone()]).await;

    for (on_failure, carried) in [
        (ReturnValuesOnConditionCheckFailure::AllOld, Some(&before)),
        (ReturnValuesOnConditionCheckFailure::None, None),
    ] {
        let result = client
            .update_item()
            .table_name(&table)
            .set_key(Some(key("cond", "x")))
            .update_expression("SET v = :two, note = :changed, added = :changed")
            .condition_expression("v = :zero")
            .expression_attribute_values(":two", n(2))
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":changed", s("changed"))
            .return_values_on_condition_check_failure(on_failure.clone())
            .send()
            .await;
        match result.map_err(SdkError::into_service_error) {
            Err(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                assert_eq!(failed.item(), carried, "{on_failure:?}");
            }
            other => panic!("{on_failure:?}: {other:?}"),
        }
        assert_eq!(
            get(&client, &table, "cond", "x").await,
            Some(before.clone())
        );
    }
}

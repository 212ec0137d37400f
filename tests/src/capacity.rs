//! Write capacity of the counted DynamoDB calls, for the benchmarks: every write request and the
//! items it writes, and the write capacity units (WCU) DynamoDB would charge for them.
//!
//! moto answers no real `ConsumedCapacity` (a fixed 1.0 per call, nothing for transactions), so
//! the units are computed from the requests with DynamoDB's rules: a standard write costs 1 WCU
//! per started KB of the item, a transactional one 2 (condition checks included); an item's size
//! is its attribute names plus values. A Put carries its whole item; an Update, Delete or
//! condition check only the key, so its size is the item as stored afterwards
//! ([`stored_sizes`]), or 1 KB when it is gone. Index writes (GSIs project every attribute) come
//! on top and are not counted here.

use aws_sdk_dynamodb::config::{ConfigBag, Intercept};
use aws_sdk_dynamodb::error::BoxError;
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::Item;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// An item's primary key: partition and sort key values.
pub type ItemKey = (String, String);

/// One item a write request writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub key: ItemKey,
    /// The whole item's size when the request carries it (a Put).
    pub bytes: Option<usize>,
}

/// One write request: its operation, and the items it writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteRequest {
    /// `PutItem`, `UpdateItem`, `DeleteItem`, `BatchWriteItem` or `TransactWriteItems`.
    pub operation: &'static str,
    pub items: Vec<Written>,
}

impl WriteRequest {
    pub fn transactional(&self) -> bool {
        self.operation == "TransactWriteItems"
    }

    /// Whether any item it writes has a sort key starting with `prefix`.
    pub fn writes_sort_key(&self, prefix: &str) -> bool {
        self.items.iter().any(|item| item.key.1.starts_with(prefix))
    }

    /// Whether any item it writes has a partition key starting with `prefix`.
    pub fn writes_partition(&self, prefix: &str) -> bool {
        self.items.iter().any(|item| item.key.0.starts_with(prefix))
    }

    /// Its write capacity units, with `stored` giving the sizes of items it does not carry.
    pub fn wcus(&self, stored: &HashMap<ItemKey, usize>) -> u64 {
        self.items
            .iter()
            .map(|item| self.item_wcus(item, stored))
            .sum()
    }

    fn item_wcus(&self, item: &Written, stored: &HashMap<ItemKey, usize>) -> u64 {
        let bytes = item
            .bytes
            .or_else(|| stored.get(&item.key).copied())
            .unwrap_or(1024);
        outbound_adapters::store::write_cost::write_units(bytes, self.transactional())
    }
}

/// The write capacity units `requests` spent on each partition key, busiest first: DynamoDB's
/// limit of 1,000 WCU a second is a key's, so the busiest key bounds how fast they can be written.
pub fn wcus_by_partition<'a>(
    requests: impl IntoIterator<Item = &'a WriteRequest>,
    stored: &HashMap<ItemKey, usize>,
) -> Vec<(String, u64)> {
    let mut by_key: HashMap<String, u64> = HashMap::new();
    for request in requests {
        for item in &request.items {
            *by_key.entry(item.key.0.clone()).or_default() += request.item_wcus(item, stored);
        }
    }
    let mut keys: Vec<(String, u64)> = by_key.into_iter().collect();
    keys.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keys
}

/// Totals of a set of write requests.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriteTotals {
    pub requests: usize,
    pub items: usize,
    pub wcus: u64,
}

impl WriteTotals {
    pub fn of<'a>(
        requests: impl IntoIterator<Item = &'a WriteRequest>,
        stored: &HashMap<ItemKey, usize>,
    ) -> WriteTotals {
        requests
            .into_iter()
            .fold(WriteTotals::default(), |totals, request| WriteTotals {
                requests: totals.requests + 1,
                items: totals.items + request.items.len(),
                wcus: totals.wcus + request.wcus(stored),
            })
    }
}

/// Records the write requests of the client it is attached to, until taken.
#[derive(Clone, Debug, Default)]
pub struct WriteLog(Arc<Mutex<Vec<WriteRequest>>>);

impl WriteLog {
    /// The write requests since the last take.
    pub fn take(&self) -> Vec<WriteRequest> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn push(&self, request: WriteRequest) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
    }
}

impl Intercept for WriteLog {
    fn name(&self) -> &'static str {
        "WriteLog"
    }

    fn read_before_execution(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<
            '_,
        >,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        use aws_sdk_dynamodb::operation::batch_write_item::BatchWriteItemInput;
        use aws_sdk_dynamodb::operation::delete_item::DeleteItemInput;
        use aws_sdk_dynamodb::operation::put_item::PutItemInput;
        use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
        use aws_sdk_dynamodb::operation::update_item::UpdateItemInput;
        let input = context.input();
        let (operation, items) = if let Some(put) = input.downcast_ref::<PutItemInput>() {
            ("PutItem", put.item().map(put_written).into_iter().collect())
        } else if let Some(update) = input.downcast_ref::<UpdateItemInput>() {
            (
                "UpdateItem",
                update.key().map(key_written).into_iter().collect(),
            )
        } else if let Some(delete) = input.downcast_ref::<DeleteItemInput>() {
            (
                "DeleteItem",
                delete.key().map(key_written).into_iter().collect(),
            )
        } else if let Some(batch) = input.downcast_ref::<BatchWriteItemInput>() {
            let items = batch
                .request_items()
                .into_iter()
                .flat_map(|tables| tables.values().flatten())
                .filter_map(
                    |request| match (request.put_request(), request.delete_request()) {
                        (Some(put), _) => Some(put_written(put.item())),
                        (None, Some(delete)) => Some(key_written(delete.key())),
                        (None, None) => None,
                    },
                )
                .collect();
            ("BatchWriteItem", items)
        } else if let Some(transaction) = input.downcast_ref::<TransactWriteItemsInput>() {
            let items = transaction
                .transact_items()
                .iter()
                .filter_map(|action| {
                    if let Some(put) = action.put() {
                        Some(put_written(put.item()))
                    } else if let Some(update) = action.update() {
                        Some(key_written(update.key()))
                    } else if let Some(delete) = action.delete() {
                        Some(key_written(delete.key()))
                    } else {
                        action
                            .condition_check()
                            .map(|check| key_written(check.key()))
                    }
                })
                .collect();
            ("TransactWriteItems", items)
        } else {
            return Ok(());
        };
        self.push(WriteRequest { operation, items });
        Ok(())
    }
}

fn key_of(item: &HashMap<String, AttributeValue>) -> ItemKey {
    let text = |name| match item.get(name) {
        Some(AttributeValue::S(value)) => value.clone(),
        _ => String::new(),
    };
    (
        text(outbound_adapters::store::keys::PK),
        text(outbound_adapters::store::keys::SK),
    )
}

fn put_written(item: &HashMap<String, AttributeValue>) -> Written {
    Written {
        key: key_of(item),
        bytes: Some(item_bytes(item)),
    }
}

fn key_written(key: &HashMap<String, AttributeValue>) -> Written {
    Written {
        key: key_of(key),
        bytes: None,
    }
}

pub use outbound_adapters::store::write_cost::item_bytes;

/// The sizes of the items at `keys` as stored now, read past any counter (BatchGetItem, 100
/// keys a request). Keys of items that are gone are left out.
pub async fn stored_sizes(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    keys: impl IntoIterator<Item = ItemKey>,
) -> Result<HashMap<ItemKey, usize>, aws_sdk_dynamodb::Error> {
    use aws_sdk_dynamodb::types::KeysAndAttributes;
    use outbound_adapters::store::keys::{PK, SK};
    let mut keys: Vec<ItemKey> = keys.into_iter().collect();
    keys.sort();
    keys.dedup();
    let mut sizes = HashMap::with_capacity(keys.len());
    for chunk in keys.chunks(100) {
        let mut wanted: Vec<Item> = chunk
            .iter()
            .map(|(pk, sk)| {
                Item::from([
                    (PK.to_owned(), AttributeValue::S(pk.clone())),
                    (SK.to_owned(), AttributeValue::S(sk.clone())),
                ])
            })
            .collect();
        while !wanted.is_empty() {
            let output = client
                .batch_get_item()
                .request_items(
                    table,
                    KeysAndAttributes::builder()
                        .set_keys(Some(wanted))
                        .build()
                        .map_err(aws_sdk_dynamodb::Error::from)?,
                )
                .send()
                .await?;
            for item in output
                .responses
                .into_iter()
                .flatten()
                .flat_map(|(_, items)| items)
            {
                sizes.insert(key_of(&item), item_bytes(&item));
            }
            wanted = output
                .unprocessed_keys
                .and_then(|mut left| left.remove(table))
                .map(|left| left.keys)
                .unwrap_or_default();
        }
    }
    Ok(sizes)
}

/// The sizes (as stored now) of every item `requests` write without carrying it.
pub async fn sizes_for(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    requests: &[WriteRequest],
) -> Result<HashMap<ItemKey, usize>, aws_sdk_dynamodb::Error> {
    let keys = requests
        .iter()
        .flat_map(|request| &request.items)
        .filter(|item| item.bytes.is_none())
        .map(|item| item.key.clone());
    stored_sizes(client, table, keys).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transactional_write_costs_two_units_per_started_kilobyte() {
        let small = Written {
            key: ("a".into(), "b".into()),
            bytes: Some(200),
        };
        let large = Written {
            key: ("a".into(), "c".into()),
            bytes: Some(1025),
        };
        let gone = Written {
            key: ("a".into(), "d".into()),
            bytes: None,
        };
        let transaction = WriteRequest {
            operation: "TransactWriteItems",
            items: vec![small.clone(), large.clone(), gone],
        };
        assert_eq!(transaction.wcus(&HashMap::new()), 2 + 4 + 2);
        let standard = WriteRequest {
            operation: "BatchWriteItem",
            items: vec![small, large],
        };
        assert_eq!(standard.wcus(&HashMap::new()), 1 + 2);
    }

    #[test]
    fn sizes_count_names_and_values() {
        let item = HashMap::from([
            ("pk".to_owned(), AttributeValue::S("T#acme".into())),
            ("n".to_owned(), AttributeValue::N("12345".into())),
        ]);
        assert_eq!(item_bytes(&item), 2 + 6 + 1 + 4);
    }
}

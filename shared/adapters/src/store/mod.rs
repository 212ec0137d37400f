//! DynamoDB: the key layout, item codecs, and every read and write. Uniqueness, counters and
//! state transitions are conditional writes or transactions. A failed condition becomes a domain
//! error (404, 405, 409); anything else is a busy or failing dependency (503) or an internal
//! error, with its cause kept for the log.
//!
//! Each action of a transaction is built with a label of that transaction's choosing (`Actions`:
//! usually a small enum of its steps), and a cancelled transaction's failed conditions are read
//! back by those labels (`ConditionFailure::failed`, `ConditionFailure::stored`), never by
//! position: what a failure means travels with its action, wherever it sits in the transaction.
//! A single conditional write is its own only action, labelled `()`.

mod backend;
pub mod callback;
pub mod contact;
pub mod counters;
pub mod datasource;
pub mod dialing;
pub mod dnc;
pub mod export;
pub mod history;
pub mod import;
pub mod keys;
mod names;
pub mod outbox;
mod paging;
pub mod rate;
pub mod recall;
pub mod reclaim;
pub mod settings;
pub mod shards;
pub mod slots;
pub mod task;
pub mod telephony;
mod transition;
pub mod write_cost;

use crate::aws::Dependency;
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{AttributeValue, CancellationReason, TransactWriteItem};
use aws_sdk_dynamodb::Client;
pub use backend::{Answer, InProcessDynamoDb};
pub(crate) use backend::{Backend, SendTo};
use outbound_model::error::Error;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::HashMap;
use std::time::Duration;

/// A DynamoDB item.
pub type Item = HashMap<String, AttributeValue>;

/// The table and the client to reach it; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pub(crate) client: Client,
    /// Where its requests go: through `client`, or to a database in this process.
    pub(crate) backend: Backend,
    pub(crate) table: String,
    /// WCU per second an import may ask of its data source's partition ([`write_cost::WritePace`]).
    pub(crate) import_units_per_second: u32,
    /// Partitions the service's calls in flight and provider rate are spread over
    /// (`DIAL_CAPACITY_SHARDS`), so no one key takes every claim and outcome (D13).
    pub(crate) capacity_shards: u32,
    /// Shards of the contacts of a data source created from now on (`CONTACT_SHARDS`).
    pub(crate) contact_shards: u32,
    /// The shards of the data sources seen so far, by partition key: fixed once a data source
    /// exists, so kept for the life of the process ([`Store::shards`]).
    pub(crate) shard_counts: std::sync::Arc<std::sync::Mutex<HashMap<String, u32>>>,
    /// Partitions the running-task and calls-in-flight indexes are spread over
    /// (`DIAL_INDEX_PARTITIONS`).
    pub(crate) index_partitions: u32,
    /// What one tenant may hold (D26), enforced on its counts in the creating transactions.
    pub(crate) limits: outbound_model::limits::TenantLimits,
}

/// Why a conditional write or transaction did not happen. `L` labels the actions of a
/// transaction ([`Actions`]); a single write is its own only action, labelled `()`.
#[derive(Debug)]
pub(crate) enum WriteFailure<L = ()> {
    /// A condition failed: which action's, and what was stored.
    Condition(ConditionFailure<L>),
    /// Anything else: throttling that outlived retries, network, permissions, ...
    Other(Error),
}

/// What an SDK error says before the actions it is about are named.
enum Refusal {
    /// The condition of a single write failed; `item` is the stored item, when asked for.
    Condition {
        item: Option<Item>,
    },
    /// A transaction was cancelled because a condition failed; one reason per action, in order.
    Cancelled(Vec<CancellationReason>),
    Other(Error),
}

impl Refusal {
    /// A failed condition keeps what the stored data says; anything else is a busy or failing
    /// dependency (D1: 503) or an internal error, never a domain answer. A transaction cancelled
    /// without any failed condition (throttled, conflicting) says nothing about the data.
    fn from_sdk<E>(context: &'static str, error: SdkError<E, HttpResponse>) -> Self
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata
            + std::error::Error
            + Send
            + Sync
            + 'static,
        aws_sdk_dynamodb::Error: From<SdkError<E, HttpResponse>>,
    {
        let code = error
            .as_service_error()
            .and_then(|e| e.code())
            .map(str::to_owned);
        match code.as_deref() {
            Some("ConditionalCheckFailedException" | "TransactionCanceledException") => {
                match aws_sdk_dynamodb::Error::from(error) {
                    aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => {
                        Refusal::Condition {
                            item: e.item().cloned(),
                        }
                    }
                    aws_sdk_dynamodb::Error::TransactionCanceledException(e) => {
                        let reasons = e.cancellation_reasons();
                        if reasons.iter().any(condition_failed) {
                            Refusal::Cancelled(reasons.to_vec())
                        } else {
                            Refusal::Other(Error::unavailable(context, e))
                        }
                    }
                    other => Refusal::Other(Error::internal(context, other)),
                }
            }
            _ => Refusal::Other(Error::dependency(context, error)),
        }
    }

    /// Names the actions the refusal is about, in the order they were sent. A single write's
    /// failed condition is that of the first (only) action.
    fn labelled<L>(self, labels: Vec<L>) -> WriteFailure<L> {
        match self {
            Refusal::Condition { item } => {
                let only = labels.into_iter().next().map(|label| Verdict {
                    label,
                    failed: true,
                    stored: item,
                });
                WriteFailure::Condition(ConditionFailure {
                    actions: only.into_iter().collect(),
                })
            }
            Refusal::Cancelled(reasons) => {
                WriteFailure::Condition(ConditionFailure::from_reasons(labels, reasons))
            }
            Refusal::Other(error) => WriteFailure::Other(error),
        }
    }
}

fn condition_failed(reason: &CancellationReason) -> bool {
    reason.code() == Some("ConditionalCheckFailed")
}

impl WriteFailure {
    /// The failure of a single conditional write (PutItem, UpdateItem, DeleteItem).
    pub(crate) fn from_sdk<E>(context: &'static str, error: SdkError<E, HttpResponse>) -> Self
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata
            + std::error::Error
            + Send
            + Sync
            + 'static,
        aws_sdk_dynamodb::Error: From<SdkError<E, HttpResponse>>,
    {
        Refusal::from_sdk(context, error).labelled(vec![()])
    }

    /// The record a single conditional update ([`Store::update_one`]) left, or `None` when its
    /// condition failed (a claim someone else holds, a record in another state).
    pub(crate) fn updated<T: DeserializeOwned>(
        written: Result<Item, WriteFailure>,
    ) -> Result<Option<T>, Error> {
        match written {
            Ok(item) => from_item(item).map(Some),
            Err(WriteFailure::Condition(_)) => Ok(None),
            Err(WriteFailure::Other(error)) => Err(error),
        }
    }

    /// Whether a single conditional update ([`Store::update_one`]) took effect. A failed
    /// condition is no error here: the write was not needed (done before, or the record moved on).
    pub(crate) fn took_effect<T>(written: Result<T, WriteFailure>) -> Result<bool, Error> {
        match written {
            Ok(_) => Ok(true),
            Err(WriteFailure::Condition(_)) => Ok(false),
            Err(WriteFailure::Other(error)) => Err(error),
        }
    }

    /// Whether a single conditional write took effect. A failed condition is no error here: the
    /// write was not needed (done before, or the record moved on).
    pub(crate) fn applied<O, E>(
        context: &'static str,
        result: Result<O, SdkError<E, HttpResponse>>,
    ) -> Result<bool, Error>
    where
        E: aws_sdk_dynamodb::error::ProvideErrorMetadata
            + std::error::Error
            + Send
            + Sync
            + 'static,
        aws_sdk_dynamodb::Error: From<SdkError<E, HttpResponse>>,
    {
        match result.map_err(|error| WriteFailure::from_sdk(context, error)) {
            Ok(_) => Ok(true),
            Err(WriteFailure::Condition(_)) => Ok(false),
            Err(WriteFailure::Other(error)) => Err(error),
        }
    }
}

impl<L> WriteFailure<L> {
    /// The failed condition, or the error when the write failed for another reason.
    pub(crate) fn condition(self) -> Result<ConditionFailure<L>, Error> {
        match self {
            WriteFailure::Condition(condition) => Ok(condition),
            WriteFailure::Other(error) => Err(error),
        }
    }

    /// Keeps the domain meaning of a failed condition; other failures pass through as they are.
    pub(crate) fn or_else(self, domain: impl FnOnce(ConditionFailure<L>) -> Error) -> Error {
        match self.condition() {
            Ok(condition) => domain(condition),
            Err(error) => error,
        }
    }
}

/// The failed condition of a write, for the caller to turn into a domain error: each action by
/// its label, whether its condition failed, and the stored item it returned (`ALL_OLD`).
#[derive(Debug)]
pub(crate) struct ConditionFailure<L> {
    actions: Vec<Verdict<L>>,
}

#[derive(Debug)]
struct Verdict<L> {
    label: L,
    failed: bool,
    stored: Option<Item>,
}

impl<L> ConditionFailure<L> {
    /// A cancelled transaction's reasons, one per action in the order they were sent, paired
    /// with the labels of those actions.
    fn from_reasons(labels: Vec<L>, reasons: Vec<CancellationReason>) -> Self {
        let actions = labels
            .into_iter()
            .zip(reasons)
            .map(|(label, reason)| Verdict {
                label,
                failed: condition_failed(&reason),
                stored: reason.item,
            });
        ConditionFailure {
            actions: actions.collect(),
        }
    }
}

impl<L: PartialEq> ConditionFailure<L> {
    /// Whether the condition of the action labelled `label` failed.
    pub(crate) fn failed(&self, label: L) -> bool {
        self.actions
            .iter()
            .any(|action| action.label == label && action.failed)
    }

    /// The item stored under the action labelled `label`, as its failed condition found it;
    /// `None` when the item is missing (or the condition held).
    pub(crate) fn stored(&self, label: L) -> Option<&Item> {
        self.actions
            .iter()
            .filter(|action| action.label == label)
            .find_map(|action| action.stored.as_ref())
    }
}

/// A transaction cancelled only by concurrent transactions on the same items is worth retrying.
fn is_conflict_only(reasons: &[CancellationReason]) -> bool {
    let mut conflict = false;
    for code in reasons.iter().filter_map(CancellationReason::code) {
        match code {
            "None" => {}
            "TransactionConflict" => conflict = true,
            _ => return false,
        }
    }
    conflict
}

/// Attempts of a transaction cancelled only by conflicts, with backoff in between.
const TRANSACTION_ATTEMPTS: u32 = 6;

/// How long to wait before attempt `attempt + 1`: "full jitter", a random time up to an
/// exponential ceiling (25 ms, 50 ms, ... at most 1 s), so writers that conflicted once do not
/// meet again on the same item at the same instant.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let ceiling = (25u64 << attempt.min(6)).min(1_000);
    Duration::from_millis(1 + outbound_model::simulation::random_below(ceiling))
}

impl Store {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Store {
            client,
            backend: Backend::Sdk,
            table: table.into(),
            import_units_per_second: write_cost::DEFAULT_IMPORT_WCU_PER_SECOND,
            capacity_shards: 1,
            index_partitions: keys::INDEX_PARTITIONS,
            contact_shards: shards::DEFAULT_CONTACT_SHARDS,
            shard_counts: Default::default(),
            limits: Default::default(),
        }
    }

    /// The same store, holding each tenant to `limits` (D26).
    pub fn with_tenant_limits(mut self, limits: outbound_model::limits::TenantLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits each tenant is held to (D26).
    pub fn tenant_limits(&self) -> &outbound_model::limits::TenantLimits {
        &self.limits
    }

    /// The same store, creating data sources with `shards` contact shards (`CONTACT_SHARDS`).
    pub fn with_contact_shards(mut self, shards: u32) -> Self {
        self.contact_shards = shards.clamp(1, shards::MAX_CONTACT_SHARDS);
        self
    }

    /// The same store, its requests answered by `db` in this process instead of through the
    /// SDK's client (the deterministic simulation).
    pub fn in_process(mut self, db: std::sync::Arc<dyn InProcessDynamoDb>) -> Self {
        self.backend = Backend::InProcess(db);
        self
    }

    /// The same store, its running-task and calls-in-flight indexes spread over `partitions`.
    pub fn with_index_partitions(mut self, partitions: u32) -> Self {
        self.index_partitions = partitions.max(1);
        self
    }

    /// Partitions the running-task and calls-in-flight indexes are spread over: a sweep of
    /// either reads each.
    pub fn index_partitions(&self) -> u32 {
        self.index_partitions
    }

    /// The same store, its dialing counters spread over `shards` partitions.
    pub fn with_capacity_shards(mut self, shards: u32) -> Self {
        self.capacity_shards = shards.max(1);
        self
    }

    /// The same store, importing at `units_per_second` WCU per second (`IMPORT_WCU_PER_SECOND`).
    pub fn with_import_pace(mut self, units_per_second: u32) -> Self {
        self.import_units_per_second = units_per_second;
        self
    }

    /// Builds the client from the shared AWS configuration, its calls timed per API request.
    pub fn from_config(sdk: &aws_config::SdkConfig, table: impl Into<String>) -> Self {
        Store::new(
            Client::from_conf(crate::aws::timing::dynamodb(sdk).build()),
            table,
        )
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    /// One UpdateItem alone, described as a transaction's [`Actions::update`] is: the key, the
    /// update, an optional condition and the values of both. Answers the item as the write left
    /// it (`ALL_NEW`); a failed condition comes back with the item as stored (`ALL_OLD`), told
    /// apart from a busy or failing table ([`WriteFailure`]).
    pub(crate) async fn update_one(
        &self,
        context: &'static str,
        (pk, sk): (String, String),
        update: &str,
        condition: Option<&str>,
        expr: Expr,
    ) -> Result<Item, WriteFailure> {
        self.client
            .update_item()
            .table_name(&self.table)
            .key(keys::PK, s(pk))
            .key(keys::SK, s(sk))
            .update_expression(update)
            .set_condition_expression(condition.map(str::to_owned))
            .set_expression_attribute_values(expr.values(&[Some(update), condition]))
            .set_expression_attribute_names(expr.names(&[Some(update), condition]))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .return_values_on_condition_check_failure(ALL_OLD)
            .send_to(&self.backend)
            .await
            .map(|output| output.attributes.unwrap_or_default())
            .map_err(|error| WriteFailure::from_sdk(context, error))
    }

    /// Runs a transaction, retrying those cancelled only by concurrent transactions. A failed
    /// condition comes back labelled by the actions' own labels.
    pub(crate) async fn transact<L>(
        &self,
        context: &'static str,
        actions: Actions<'_, L>,
    ) -> Result<(), WriteFailure<L>> {
        let Actions { items, labels, .. } = actions;
        let mut attempt = 0;
        loop {
            attempt += 1;
            // No client request token is named: the SDK gives each `send` one of its own and
            // sends it again with every retry of that call, so a retry of a transaction whose
            // answer was lost after it committed is answered as the first was, not applied
            // again (and failed on its own writes).
            let result = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items.clone()))
                .send_to(&self.backend)
                .await;
            match result {
                Ok(_) => return Ok(()),
                Err(error) => {
                    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
                    let retry = matches!(
                        error.as_service_error(),
                        Some(TransactWriteItemsError::TransactionCanceledException(e))
                            if is_conflict_only(e.cancellation_reasons())
                    );
                    if retry && attempt < TRANSACTION_ATTEMPTS {
                        tokio::time::sleep(backoff(attempt)).await;
                        continue;
                    }
                    return Err(Refusal::from_sdk(context, error).labelled(labels));
                }
            }
        }
    }

    /// A strongly consistent read of one item.
    pub(crate) async fn get_item(&self, pk: String, sk: String) -> Result<Option<Item>, Error> {
        self.get_item_with(pk, sk, None).await
    }

    /// A strongly consistent read of one item's partition key and attribute `attribute` only
    /// (absent from the answer when the item lacks it).
    pub(crate) async fn get_attribute(
        &self,
        pk: String,
        sk: String,
        attribute: &str,
    ) -> Result<Option<Item>, Error> {
        self.get_item_with(pk, sk, Some(attribute)).await
    }

    async fn get_item_with(
        &self,
        pk: String,
        sk: String,
        attribute: Option<&str>,
    ) -> Result<Option<Item>, Error> {
        let mut read = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(keys::PK, AttributeValue::S(pk))
            .key(keys::SK, AttributeValue::S(sk))
            .consistent_read(true);
        if let Some(attribute) = attribute {
            read = read
                .projection_expression("pk, #attribute")
                .expression_attribute_names("#attribute", attribute);
        }
        let output = read
            .send_to(&self.backend)
            .await
            .map_err(|e| Error::dependency("get item", e))?;
        Ok(output.item)
    }

    /// The stored ones of the items at `keys` (any number of them), read consistently with
    /// `projection`, 100 keys a request, keys left unprocessed asked again with backoff.
    pub(crate) async fn batch_get(
        &self,
        wanted: Vec<Item>,
        projection: &str,
    ) -> Result<Vec<Item>, Error> {
        self.batch_get_with(wanted, Some(projection)).await
    }

    /// [`Store::batch_get`], of whole items when `projection` is `None`.
    pub(crate) async fn batch_get_with(
        &self,
        mut wanted: Vec<Item>,
        projection: Option<&str>,
    ) -> Result<Vec<Item>, Error> {
        use aws_sdk_dynamodb::types::KeysAndAttributes;
        let mut found = Vec::new();
        while !wanted.is_empty() {
            let rest = wanted.split_off(wanted.len().min(100));
            let mut batch = std::mem::replace(&mut wanted, rest);
            for attempt in 0..8u32 {
                let request = KeysAndAttributes::builder()
                    .set_keys(Some(batch))
                    .set_projection_expression(projection.map(str::to_owned))
                    .consistent_read(true)
                    .build()
                    .map_err(|e| Error::internal("build batch get", e))?;
                let output = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, request)
                    .send_to(&self.backend)
                    .await
                    .map_err(|e| Error::dependency("batch get", e))?;
                found.extend(
                    output
                        .responses
                        .and_then(|mut r| r.remove(&self.table))
                        .unwrap_or_default(),
                );
                batch = output
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(&self.table))
                    .map(|k| k.keys)
                    .unwrap_or_default();
                if batch.is_empty() {
                    break;
                }
                if attempt == 7 {
                    return Err(Error::internal(
                        "batch get",
                        "unprocessed keys after 8 attempts",
                    ));
                }
                tokio::time::sleep(backoff(attempt)).await;
            }
        }
        Ok(found)
    }

    /// Every record of a tenant whose sort key starts with `prefix`, newest first (ids sort by
    /// creation time): one Query, on the table or on GSI1 (`index`), for up to ~1 MB of them.
    pub(crate) async fn tenant_records<T: DeserializeOwned>(
        &self,
        tenant: &outbound_model::Tenant,
        index: Option<&str>,
        prefix: &str,
    ) -> Result<Vec<T>, Error> {
        let pk = keys::tenant(tenant);
        let condition = match index {
            Some(_) => "gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
            None => "pk = :pk AND begins_with(sk, :prefix)",
        };
        let items = self
            .query_all(
                |query| {
                    query
                        .set_index_name(index.map(str::to_owned))
                        .key_condition_expression(condition)
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":prefix", s(prefix))
                        .scan_index_forward(false)
                },
                None,
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }

    /// Every item of a Query, following pages. `build` sets the key condition and values;
    /// `stop_after` ends the reading once that many items are in.
    pub(crate) async fn query_all(
        &self,
        build: impl Fn(QueryBuilder) -> QueryBuilder,
        stop_after: Option<usize>,
    ) -> Result<Vec<Item>, Error> {
        let mut items = Vec::new();
        self.query_pages(
            |query| match stop_after {
                Some(limit) => build(query).limit(i32::try_from(limit.max(1)).unwrap_or(i32::MAX)),
                None => build(query),
            },
            |page| {
                items.extend(page);
                Ok(stop_after.is_none_or(|limit| items.len() < limit))
            },
        )
        .await?;
        Ok(items)
    }

    /// Hands each page of a Query to `on_page` until it answers `false` or the pages run out, so
    /// a whole partition can be read in bounded memory.
    pub(crate) async fn query_pages(
        &self,
        build: impl Fn(QueryBuilder) -> QueryBuilder,
        mut on_page: impl FnMut(Vec<Item>) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        let mut start = None;
        loop {
            let output = build(self.client.query().table_name(&self.table))
                .set_exclusive_start_key(start.take())
                .send_to(&self.backend)
                .await
                .map_err(|e| Error::dependency("query", e))?;
            let more = on_page(output.items.unwrap_or_default())?;
            start = output.last_evaluated_key;
            if start.is_none() || !more {
                return Ok(());
            }
        }
    }
}

pub(crate) type QueryBuilder = aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;

/// Encodes a record and its keys as an item.
pub(crate) fn to_item<T: Serialize>(
    record: &T,
    keys: impl IntoIterator<Item = (&'static str, String)>,
) -> Result<Item, Error> {
    let mut item: Item =
        serde_dynamo::to_item(record).map_err(|e| Error::internal("encode item", e))?;
    for (name, value) in keys {
        item.insert(name.to_owned(), AttributeValue::S(value));
    }
    Ok(item)
}

/// Encodes a value as one attribute (a struct as a map).
pub(crate) fn to_attribute<T: Serialize>(value: &T) -> Result<AttributeValue, Error> {
    serde_dynamo::to_attribute_value(value).map_err(|e| Error::internal("encode attribute", e))
}

/// Decodes a record from an item, ignoring key attributes.
pub(crate) fn from_item<T: DeserializeOwned>(item: Item) -> Result<T, Error> {
    serde_dynamo::from_item(item).map_err(|e| Error::internal("decode item", e))
}

/// The string attribute `name` of an item, if present.
pub(crate) fn string_attr<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|value| value.as_s().ok())
        .map(String::as_str)
}

/// Whether the boolean attribute `name` of an item is there and true.
pub(crate) fn flag_attr(item: &Item, name: &str) -> bool {
    item.get(name)
        .and_then(|value| value.as_bool().ok())
        .is_some_and(|set| *set)
}

pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

pub(crate) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// Builds the actions of a transaction against one table. Each action carries a label of the
/// transaction's own choosing (usually a small enum of its steps, or one carrying an item's
/// place among many alike), by which a failed condition is read back
/// ([`ConditionFailure::failed`], [`ConditionFailure::stored`]): what a failure means follows
/// the action, wherever it sits in the transaction. Labels are told apart with `PartialEq`, so
/// each action should have its own.
pub(crate) struct Actions<'a, L> {
    table: &'a str,
    items: Vec<TransactWriteItem>,
    labels: Vec<L>,
}

/// `ReturnValuesOnConditionCheckFailure=ALL_OLD` on every conditional action, so a failure
/// tells "missing" from "in another state" without a second read.
const ALL_OLD: aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure =
    aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld;

fn built<T>(result: Result<T, aws_sdk_dynamodb::error::BuildError>) -> Result<T, Error> {
    result.map_err(|e| Error::internal("build transaction action", e))
}

/// Values and names for one expression.
#[derive(Clone, Default)]
pub(crate) struct Expr {
    pub values: HashMap<String, AttributeValue>,
    pub names: HashMap<String, String>,
}

impl Expr {
    pub(crate) fn value(mut self, name: &str, value: AttributeValue) -> Self {
        self.values.insert(name.to_owned(), value);
        self
    }
    pub(crate) fn name(mut self, placeholder: &str, attribute: &str) -> Self {
        self.names
            .insert(placeholder.to_owned(), attribute.to_owned());
        self
    }
    /// The values that `expressions` use. DynamoDB refuses a request that gives a value (or a
    /// name) none of its expressions uses, and an `Expr` is often built for whichever clauses a
    /// write turns out to need: only the placeholders the request's expressions hold are sent.
    fn values(&self, expressions: &[Option<&str>]) -> Option<HashMap<String, AttributeValue>> {
        used(&self.values, expressions)
    }
    /// The names that `expressions` use (see [`Expr::values`]).
    fn names(&self, expressions: &[Option<&str>]) -> Option<HashMap<String, String>> {
        used(&self.names, expressions)
    }
}

/// The entries of `placeholders` that occur in one of `expressions`, or `None` for none.
fn used<V: Clone>(
    placeholders: &HashMap<String, V>,
    expressions: &[Option<&str>],
) -> Option<HashMap<String, V>> {
    let kept: HashMap<String, V> = placeholders
        .iter()
        .filter(|(placeholder, _)| {
            expressions
                .iter()
                .flatten()
                .any(|expression| holds_placeholder(expression, placeholder))
        })
        .map(|(placeholder, value)| (placeholder.clone(), value.clone()))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// Whether `expression` holds `placeholder` as a whole token (`:one` is not in `:one_more`).
fn holds_placeholder(expression: &str, placeholder: &str) -> bool {
    expression.match_indices(placeholder).any(|(at, _)| {
        !expression[at + placeholder.len()..]
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    })
}

impl<'a, L> Actions<'a, L> {
    pub(crate) fn new(table: &'a str) -> Self {
        Actions {
            table,
            items: Vec::new(),
            labels: Vec::new(),
        }
    }

    fn push(mut self, label: L, item: TransactWriteItem) -> Self {
        self.items.push(item);
        self.labels.push(label);
        self
    }

    pub(crate) fn put(
        self,
        label: L,
        item: Item,
        condition: Option<(&str, Expr)>,
    ) -> Result<Self, Error> {
        use aws_sdk_dynamodb::types::Put;
        let mut put = Put::builder().table_name(self.table).set_item(Some(item));
        if let Some((expression, expr)) = condition {
            put = put
                .condition_expression(expression)
                .set_expression_attribute_values(expr.values(&[Some(expression)]))
                .set_expression_attribute_names(expr.names(&[Some(expression)]))
                .return_values_on_condition_check_failure(ALL_OLD);
        }
        Ok(self.push(
            label,
            TransactWriteItem::builder()
                .put(built(put.build())?)
                .build(),
        ))
    }

    pub(crate) fn delete(
        self,
        label: L,
        pk: String,
        sk: String,
        condition: Option<(&str, Expr)>,
    ) -> Result<Self, Error> {
        use aws_sdk_dynamodb::types::Delete;
        let mut delete = Delete::builder()
            .table_name(self.table)
            .key(keys::PK, s(pk))
            .key(keys::SK, s(sk));
        if let Some((expression, expr)) = condition {
            delete = delete
                .condition_expression(expression)
                .set_expression_attribute_values(expr.values(&[Some(expression)]))
                .set_expression_attribute_names(expr.names(&[Some(expression)]))
                .return_values_on_condition_check_failure(ALL_OLD);
        }
        Ok(self.push(
            label,
            TransactWriteItem::builder()
                .delete(built(delete.build())?)
                .build(),
        ))
    }

    pub(crate) fn update(
        self,
        label: L,
        pk: String,
        sk: String,
        update: &str,
        condition: Option<&str>,
        expr: Expr,
    ) -> Result<Self, Error> {
        use aws_sdk_dynamodb::types::Update;
        let update = Update::builder()
            .table_name(self.table)
            .key(keys::PK, s(pk))
            .key(keys::SK, s(sk))
            .update_expression(update)
            .set_condition_expression(condition.map(str::to_owned))
            .set_expression_attribute_values(expr.values(&[Some(update), condition]))
            .set_expression_attribute_names(expr.names(&[Some(update), condition]))
            .return_values_on_condition_check_failure(ALL_OLD);
        Ok(self.push(
            label,
            TransactWriteItem::builder()
                .update(built(update.build())?)
                .build(),
        ))
    }

    pub(crate) fn check(
        self,
        label: L,
        pk: String,
        sk: String,
        condition: &str,
        expr: Expr,
    ) -> Result<Self, Error> {
        use aws_sdk_dynamodb::types::ConditionCheck;
        let check = ConditionCheck::builder()
            .table_name(self.table)
            .key(keys::PK, s(pk))
            .key(keys::SK, s(sk))
            .condition_expression(condition)
            .set_expression_attribute_values(expr.values(&[Some(condition)]))
            .set_expression_attribute_names(expr.names(&[Some(condition)]))
            .return_values_on_condition_check_failure(ALL_OLD);
        Ok(self.push(
            label,
            TransactWriteItem::builder()
                .condition_check(built(check.build())?)
                .build(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DynamoDB refuses an expression value or name no expression of the request uses (an
    /// outcome's `:read` and `:minus_one` were sent unused): only the used ones go.
    #[test]
    fn a_request_carries_only_the_placeholders_its_expressions_use() {
        let expr = Expr::default()
            .value(":one", n(1))
            .value(":one_more", n(2))
            .value(":read", n(0))
            .name("#c", "counters")
            .name("#calls", "calls");
        let update = "ADD #calls :one_more";
        let condition = Some("attribute_exists(pk)");
        let values = expr.values(&[Some(update), condition]).unwrap();
        assert_eq!(values.keys().collect::<Vec<_>>(), [":one_more"]);
        let names = expr.names(&[Some(update), condition]).unwrap();
        assert_eq!(names.keys().collect::<Vec<_>>(), ["#calls"]);
        let both = expr
            .values(&[Some("SET #c.#calls = :one"), Some("x = :read")])
            .unwrap();
        let mut kept: Vec<_> = both.keys().cloned().collect();
        kept.sort();
        assert_eq!(kept, [":one", ":read"]);
        assert_eq!(expr.values(&[None, Some("attribute_exists(pk)")]), None);
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Part {
        A,
        B,
    }

    /// The reasons of a transaction of two actions whose second one's condition failed.
    fn second_failed(stored: &Item) -> Vec<CancellationReason> {
        vec![
            CancellationReason::builder().code("None").build(),
            CancellationReason::builder()
                .code("ConditionalCheckFailed")
                .set_item(Some(stored.clone()))
                .build(),
        ]
    }

    #[test]
    fn shard_parts_add_up_to_the_whole_and_differ_by_one_at_most() {
        for total in 0..70 {
            for shards in 1..9 {
                let parts: Vec<u32> = (0..shards)
                    .map(|shard| keys::shard_part(total, shards, shard))
                    .collect();
                assert_eq!(parts.iter().sum::<u32>(), total, "{total} over {shards}");
                assert!(parts.iter().max().unwrap() - parts.iter().min().unwrap() <= 1);
            }
        }
        assert_eq!(keys::dialer(0), keys::DIALER, "one shard keeps its key");
        assert_eq!(keys::dialer(3), "DIALER#3");
    }

    #[test]
    fn conflict_backoff_is_jittered_under_an_exponential_ceiling() {
        for attempt in 0..10 {
            let ceiling = (25u64 << attempt.min(6)).min(1_000);
            let waits: std::collections::HashSet<u128> =
                (0..200).map(|_| backoff(attempt).as_millis()).collect();
            assert!(waits
                .iter()
                .all(|ms| (1..=u128::from(ceiling)).contains(ms)));
            assert!(waits.len() > 1, "attempt {attempt}: every wait the same");
        }
    }

    #[test]
    fn a_failed_condition_follows_its_label_not_its_position() {
        let stored: Item = [("pk".to_owned(), s("T#acme"))].into();

        let sent_b_then_a = Refusal::Cancelled(second_failed(&stored))
            .labelled(vec![Part::B, Part::A])
            .condition()
            .unwrap();
        assert!(sent_b_then_a.failed(Part::A));
        assert!(!sent_b_then_a.failed(Part::B));
        assert_eq!(sent_b_then_a.stored(Part::A), Some(&stored));
        assert_eq!(sent_b_then_a.stored(Part::B), None);

        let sent_a_then_b = Refusal::Cancelled(second_failed(&stored))
            .labelled(vec![Part::A, Part::B])
            .condition()
            .unwrap();
        assert!(sent_a_then_b.failed(Part::B));
        assert!(!sent_a_then_b.failed(Part::A));
        assert_eq!(sent_a_then_b.stored(Part::B), Some(&stored));
        assert_eq!(sent_a_then_b.stored(Part::A), None);
    }
}

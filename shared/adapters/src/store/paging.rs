//! Bounded list reads (D5). A page costs about its own rows whatever the list's length:
//!
//! - the first page, or the page after a `nextToken`'s row, is one Query with `Limit` = the
//!   page + 1 (the extra row says whether a next page exists), started after that row;
//! - a page at an offset (at most 10,000 rows deep) skips the rows before it with a Query
//!   projected to the sort key, then reads the page's records with one BatchGetItem;
//! - a filtered page reads every candidate projected to its key and the filtered attributes
//!   (`total` counts every match), then BatchGetItem of the page's records;
//! - `total` of an unfiltered list is a counter moved in the transactions that create and
//!   delete its records (tenant item `COUNTS`), read only when the page does not reach the end.

use super::keys::{self, PK, SK};
use super::{flag_attr, n, s, string_attr, Actions, Expr, Item, QueryBuilder, Store, WriteFailure};
use crate::aws::Dependency;
use crate::store::SendTo;
use aws_sdk_dynamodb::types::{AttributeValue, Select};
use outbound_model::error::Error;
use outbound_model::page::{Page, PageQuery, Start};
use outbound_model::Id;
use outbound_model::Tenant;
use std::collections::HashMap;

/// The per-tenant counts of records, on the tenant item `COUNTS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    Tasks,
    DataSources,
    DncEntries,
}

impl Counted {
    fn count(self) -> &'static str {
        match self {
            Counted::Tasks => "task_count",
            Counted::DataSources => "data_source_count",
            Counted::DncEntries => "dnc_count",
        }
    }

    /// Set once the count was taken from the records themselves: before that (a tenant whose
    /// records predate the counter) the stored count is only the changes since it appeared.
    fn exact(self) -> &'static str {
        match self {
            Counted::Tasks => "task_count_exact",
            Counted::DataSources => "data_source_count_exact",
            Counted::DncEntries => "dnc_count_exact",
        }
    }

    /// The tenant-partition items to count, one per record, read consistently: the tasks, and
    /// the data sources' name guards (the data sources themselves are only in GSI1 there).
    fn items_prefix(self) -> &'static str {
        match self {
            Counted::Tasks => keys::TASK_PREFIX,
            Counted::DataSources => keys::DATA_SOURCE_NAME_PREFIX,
            Counted::DncEntries => keys::DNC_PREFIX,
        }
    }
}

/// Every change of a count also moves `changes`, so a count taken from the records is stored
/// only if nothing changed while it was taken.
const CHANGES: &str = "changes";

impl<L> Actions<'_, L> {
    /// Counts one more record of `counted` in the same transaction as the record, as the
    /// action labelled `label`, on condition that the tenant holds fewer than `limit` (D26):
    /// its failure is `Limited::reached`.
    pub(crate) fn count_one_more(
        self,
        label: L,
        tenant: &Tenant,
        counted: Counted,
        limit: u64,
    ) -> Result<Self, Error> {
        self.move_count(label, tenant, counted, 1, Some(limit))
    }

    /// Moves the tenant's count of `counted` by `delta` in the same transaction as the record,
    /// as the action labelled `label` (it has no condition).
    pub(crate) fn count_change(
        self,
        label: L,
        tenant: &Tenant,
        counted: Counted,
        delta: i64,
    ) -> Result<Self, Error> {
        self.move_count(label, tenant, counted, delta, None)
    }

    fn move_count(
        self,
        label: L,
        tenant: &Tenant,
        counted: Counted,
        delta: i64,
        below: Option<u64>,
    ) -> Result<Self, Error> {
        let mut expr = Expr::default()
            .name("#count", counted.count())
            .name("#changes", CHANGES)
            .value(":delta", n(delta))
            .value(":one", n(1));
        if let Some(limit) = below {
            expr = expr.value(":limit", n(limit));
        }
        self.update(
            label,
            keys::tenant(tenant),
            keys::COUNTS.to_owned(),
            "ADD #count :delta, #changes :one",
            below.map(|_| "attribute_not_exists(#count) OR #count < :limit"),
            expr,
        )
    }
}

/// A list of one tenant's records in the order of a sort key, newest first: the tasks (table,
/// `pk = T#{t}`, `sk = TASK#{id}`) or the data sources (GSI1, `gsi1pk = T#{t}`, `gsi1sk = DS#{id}`).
pub(crate) struct TenantList {
    pub index: Option<&'static str>,
    pub pk_attr: &'static str,
    pub sk_attr: &'static str,
    pub pk: String,
    pub prefix: &'static str,
    /// Strongly consistent reads (not on a GSI).
    pub consistent: bool,
    /// The table key of record `id`, for BatchGetItem.
    pub record_key: Box<dyn Fn(&Id) -> Item + Send + Sync>,
    /// The key a Query continues after, for the record `id` (ExclusiveStartKey).
    pub start_key: Box<dyn Fn(&Id) -> Item + Send + Sync>,
    pub counted: Counted,
}

/// Which rows of a list match: attributes projected besides the sort key, an optional
/// FilterExpression DynamoDB applies, and a test applied here to each projected row.
pub(crate) struct RowFilter {
    pub projection: &'static str,
    pub names: Vec<(&'static str, &'static str)>,
    pub expression: Option<&'static str>,
    pub values: Vec<(&'static str, AttributeValue)>,
    pub keep: Box<dyn Fn(&Item) -> bool + Send + Sync>,
}

impl TenantList {
    fn query(&self, query: QueryBuilder) -> QueryBuilder {
        query
            .set_index_name(self.index.map(str::to_owned))
            .key_condition_expression("#lpk = :lpk AND begins_with(#lsk, :lprefix)")
            .expression_attribute_names("#lpk", self.pk_attr)
            .expression_attribute_names("#lsk", self.sk_attr)
            .expression_attribute_values(":lpk", s(&self.pk))
            .expression_attribute_values(":lprefix", s(self.prefix))
            .scan_index_forward(false)
            .consistent_read(self.consistent)
    }

    fn id_of(&self, item: &Item) -> Option<Id> {
        string_attr(item, self.sk_attr)
            .and_then(|sk| sk.strip_prefix(self.prefix))
            .and_then(Id::parse)
    }
}

/// The id of the last of `rows` when more follow.
fn next_of(ids: &[Id], more: bool) -> Option<Id> {
    more.then(|| ids.last().cloned()).flatten()
}

impl Store {
    /// One page of a tenant list, as stored items (see the module documentation for its cost).
    pub(crate) async fn list_page(
        &self,
        tenant: &Tenant,
        list: &TenantList,
        page: &PageQuery,
        filter: Option<RowFilter>,
    ) -> Result<Page<Item>, Error> {
        if let Some(filter) = filter {
            let projection = format!("#lsk, {}", filter.projection);
            let candidates = self
                .query_all(
                    |query| {
                        let mut query = list.query(query).projection_expression(&projection);
                        for (placeholder, name) in &filter.names {
                            query = query.expression_attribute_names(*placeholder, *name);
                        }
                        for (placeholder, value) in &filter.values {
                            query = query.expression_attribute_values(*placeholder, value.clone());
                        }
                        query.set_filter_expression(filter.expression.map(str::to_owned))
                    },
                    None,
                )
                .await?;
            let ids: Vec<Id> = candidates
                .iter()
                .filter(|item| (filter.keep)(item))
                .filter_map(|item| list.id_of(item))
                .collect();
            let total = ids.len() as u64;
            let (ids, more) = page.pick(ids);
            let rows = self
                .records_in_order(ids.iter().map(|id| (list.record_key)(id)).collect())
                .await?;
            return Ok(Page {
                total,
                rows,
                next: next_of(&ids, more),
            });
        }
        match &page.start {
            Start::Offset(0) | Start::After(_) => {
                let after = match &page.start {
                    Start::After(id) => Some((list.start_key)(id)),
                    Start::Offset(_) => None,
                };
                let from_top = after.is_none();
                let mut rows = self
                    .query_upto(|query| list.query(query), after, page.size + 1)
                    .await?;
                let more = rows.len() > page.size;
                rows.truncate(page.size);
                let ids: Vec<Id> = rows.iter().filter_map(|item| list.id_of(item)).collect();
                let total = if from_top && !more {
                    rows.len() as u64
                } else {
                    self.record_count(tenant, list.counted).await?
                };
                Ok(Page {
                    total,
                    rows,
                    next: next_of(&ids, more),
                })
            }
            Start::Offset(offset) => {
                let keys = self
                    .query_upto(
                        |query| list.query(query).projection_expression("#lsk"),
                        None,
                        offset + page.size + 1,
                    )
                    .await?;
                let ids: Vec<Id> = keys.iter().filter_map(|item| list.id_of(item)).collect();
                let read = ids.len();
                let (ids, more) = page.pick(ids);
                let total = if more {
                    self.record_count(tenant, list.counted).await?
                } else {
                    read as u64
                };
                let rows = self
                    .records_in_order(ids.iter().map(|id| (list.record_key)(id)).collect())
                    .await?;
                Ok(Page {
                    total,
                    rows,
                    next: next_of(&ids, more),
                })
            }
        }
    }

    /// The items of a Query from `start` on, until `want` are in (each call asks only for what
    /// is still missing) or the key range ends.
    pub(crate) async fn query_upto(
        &self,
        build: impl Fn(QueryBuilder) -> QueryBuilder,
        mut start: Option<Item>,
        want: usize,
    ) -> Result<Vec<Item>, Error> {
        let mut items = Vec::new();
        while items.len() < want {
            let missing = i32::try_from(want - items.len()).unwrap_or(i32::MAX);
            let output = build(self.client.query().table_name(&self.table))
                .set_exclusive_start_key(start.take())
                .limit(missing)
                .send_to(&self.backend)
                .await
                .map_err(|e| Error::dependency("query", e))?;
            items.extend(output.items.unwrap_or_default());
            start = output.last_evaluated_key;
            if start.is_none() {
                break;
            }
        }
        Ok(items)
    }

    /// The records at `keys` (table keys), read consistently, in the order of `keys`; those
    /// deleted meanwhile are left out.
    pub(crate) async fn records_in_order(&self, keys: Vec<Item>) -> Result<Vec<Item>, Error> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let key_of = |item: &Item| {
            (
                string_attr(item, PK).unwrap_or_default().to_owned(),
                string_attr(item, SK).unwrap_or_default().to_owned(),
            )
        };
        let order: Vec<(String, String)> = keys.iter().map(key_of).collect();
        let mut found: HashMap<(String, String), Item> = self
            .batch_get_with(keys, None)
            .await?
            .into_iter()
            .map(|item| (key_of(&item), item))
            .collect();
        Ok(order.iter().filter_map(|key| found.remove(key)).collect())
    }

    /// The tenant's number of `counted` records. A tenant whose records predate the counter
    /// has it taken once from the records (a consistent Query of their keys, `Select=COUNT`) and
    /// stored, unless a create or delete moved it meanwhile (then it is taken again next time).
    pub(crate) async fn record_count(
        &self,
        tenant: &Tenant,
        counted: Counted,
    ) -> Result<u64, Error> {
        let pk = keys::tenant(tenant);
        let item = self.get_item(pk.clone(), keys::COUNTS.to_owned()).await?;
        let number = |item: &Item, name: &str| {
            item.get(name)
                .and_then(|value| value.as_n().ok())
                .and_then(|raw| raw.parse::<i64>().ok())
        };
        if let Some(item) = &item {
            if flag_attr(item, counted.exact()) {
                return Ok(number(item, counted.count()).unwrap_or(0).max(0) as u64);
            }
        }
        let seen = item.as_ref().and_then(|item| item.get(CHANGES)).cloned();
        let mut total = 0u64;
        let mut start = None;
        loop {
            let output = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                .expression_attribute_values(":pk", s(&pk))
                .expression_attribute_values(":prefix", s(counted.items_prefix()))
                .select(Select::Count)
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send_to(&self.backend)
                .await
                .map_err(|e| Error::dependency("count records", e))?;
            total += output.count.max(0) as u64;
            start = output.last_evaluated_key;
            if start.is_none() {
                break;
            }
        }
        let (condition, expr) = match seen {
            None => ("attribute_not_exists(#changes)", Expr::default()),
            Some(value) => ("#changes = :seen", Expr::default().value(":seen", value)),
        };
        let expr = expr
            .name("#changes", CHANGES)
            .name("#count", counted.count())
            .name("#exact", counted.exact())
            .value(":total", n(total))
            .value(":true", AttributeValue::Bool(true));
        let stored = self
            .update_one(
                "store count",
                (pk, keys::COUNTS.to_owned()),
                "SET #count = :total, #exact = :true",
                Some(condition),
                expr,
            )
            .await;
        WriteFailure::took_effect(stored)?;
        Ok(total)
    }
}

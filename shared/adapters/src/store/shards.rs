//! Write sharding of a data source's contacts and phone guards (D5, D7; `docs/scaling.md` 5.1).
//!
//! A data source keeps its contacts and phone guards over S partition keys, S fixed when it is
//! created (`CONTACT_SHARDS`) and stored on its head (`contact_shards`; a head without it has
//! one). Shard 0 is the data source's own partition, which also holds its head and imports, so
//! with S = 1 every key is what it was before sharding; shard n > 0 is `{partition}#S{n}`. A
//! contact's shard comes from its id and a phone guard's from its number (FNV-1a), so each is
//! found by its key alone, and a bulk import's writes spread evenly over S keys, each under its
//! partition's 1,000 WCU a second.
//!
//! Reads in contact order ([`Store::merged`]) merge the shards' Queries: each shard is read a
//! bounded page at a time and the pages are merged by sort key, so a page of N contacts costs
//! one Query a shard (seldom two) and at most about 2N + 2S items read, not S times N.

use super::keys::{self, PK, SK};
use super::{s, string_attr, Item, QueryBuilder, SendTo, Store};
use crate::aws::Dependency;
use outbound_model::error::Error;
use outbound_model::{Id, Phone, Tenant};
use std::collections::VecDeque;

/// Most shards a data source may have.
pub const MAX_CONTACT_SHARDS: u32 = 64;
/// Shards of a new data source unless configured otherwise (`CONTACT_SHARDS`).
pub const DEFAULT_CONTACT_SHARDS: u32 = 8;
/// The head attribute that holds a data source's number of shards.
pub(crate) const SHARDS_ATTRIBUTE: &str = "contact_shards";

/// The partition keys of one data source's contacts and phone guards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContactShards {
    home: String,
    count: u32,
}

impl ContactShards {
    /// The shards of data source `source` of `tenant`, `count` of them (at least one).
    pub fn new(tenant: &Tenant, source: &Id, count: u32) -> Self {
        ContactShards {
            home: keys::data_source(tenant, source),
            count: count.clamp(1, MAX_CONTACT_SHARDS),
        }
    }

    /// The data source's own partition: its head, its imports, and shard 0.
    pub fn home(&self) -> &str {
        &self.home
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// The partition key of shard `shard`.
    pub fn partition(&self, shard: u32) -> String {
        match shard {
            0 => self.home.clone(),
            n => format!("{}#S{n}", self.home),
        }
    }

    /// Every shard's partition key, shard 0 first.
    pub fn partitions(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.count).map(|shard| self.partition(shard))
    }

    /// The partition of contact `id`.
    pub fn of_contact(&self, id: &Id) -> String {
        self.partition(keys::fnv1a(&keys::contact(id)) % self.count)
    }

    /// The partition of the guard of phone number `phone`.
    pub fn of_phone(&self, phone: &Phone) -> String {
        self.partition(keys::fnv1a(&keys::phone(phone)) % self.count)
    }

    /// The table key of contact `id`.
    pub(crate) fn contact_key(&self, id: &Id) -> Item {
        [
            (PK.to_owned(), s(self.of_contact(id))),
            (SK.to_owned(), s(keys::contact(id))),
        ]
        .into()
    }
}

/// A read of every shard of a data source in sort-key order: each shard's Query followed a
/// page at a time, the pages merged by sort key. Each item is read once however many batches
/// the read is taken in.
pub(crate) struct Merged {
    shards: Vec<ShardRead>,
    backend: super::Backend,
    forward: bool,
    page: Option<i32>,
}

/// One shard's place in a merged read: the items read and not yet merged, and where its next
/// page starts (`None` once it is read to its end).
struct ShardRead {
    query: QueryBuilder,
    buffer: VecDeque<Item>,
    start: Option<Item>,
    started: bool,
}

impl ShardRead {
    fn exhausted(&self) -> bool {
        self.started && self.start.is_none()
    }

    fn front(&self) -> Option<&str> {
        self.buffer.front().and_then(|item| string_attr(item, SK))
    }
}

impl Merged {
    /// A read of `shards` with the Query `build` makes for each (`:pk` is set), ascending when
    /// `forward`, after the sort key `after` (exclusive), each shard `page` items a Query
    /// (`None`: up to DynamoDB's 1 MB).
    pub(crate) fn new(
        store: &Store,
        shards: &ContactShards,
        build: impl Fn(QueryBuilder) -> QueryBuilder,
        forward: bool,
        after: Option<&str>,
        page: Option<usize>,
    ) -> Self {
        let shards = shards
            .partitions()
            .map(|pk| ShardRead {
                query: build(store.client.query().table_name(&store.table))
                    .expression_attribute_values(":pk", s(&pk))
                    .scan_index_forward(forward)
                    .consistent_read(true),
                buffer: VecDeque::new(),
                start: after
                    .map(|sk| -> Item { [(PK.to_owned(), s(&pk)), (SK.to_owned(), s(sk))].into() }),
                started: false,
            })
            .collect();
        Merged {
            shards,
            backend: store.backend.clone(),
            forward,
            page: page.map(|page| i32::try_from(page.max(1)).unwrap_or(i32::MAX)),
        }
    }

    /// Up to `want` more items, in order; fewer only at the end of every shard.
    pub(crate) async fn next(&mut self, want: usize) -> Result<Vec<Item>, Error> {
        let mut merged = Vec::new();
        while merged.len() < want {
            // Every shard that may hold the next item must show its front before one is taken.
            let empty: Vec<usize> = (0..self.shards.len())
                .filter(|&i| self.shards[i].buffer.is_empty() && !self.shards[i].exhausted())
                .collect();
            if !empty.is_empty() {
                let pages = futures::future::try_join_all(empty.iter().map(|&i| {
                    let shard = &self.shards[i];
                    shard
                        .query
                        .clone()
                        .set_exclusive_start_key(shard.start.clone())
                        .set_limit(self.page)
                        .send_to(&self.backend)
                }))
                .await
                .map_err(|e| Error::dependency("query", e))?;
                for (&i, output) in empty.iter().zip(pages) {
                    let shard = &mut self.shards[i];
                    shard.started = true;
                    shard.buffer.extend(output.items.unwrap_or_default());
                    shard.start = output.last_evaluated_key;
                }
                continue;
            }
            let forward = self.forward;
            let next = (0..self.shards.len())
                .filter_map(|i| self.shards[i].front().map(|sk| (sk, i)))
                .reduce(|best, other| {
                    if (other.0 < best.0) == forward {
                        other
                    } else {
                        best
                    }
                })
                .map(|(_, i)| i);
            let Some(item) = next.and_then(|i| self.shards[i].buffer.pop_front()) else {
                break;
            };
            merged.push(item);
        }
        Ok(merged)
    }
}

impl Store {
    /// The shards of data source `source` (404 when it is gone). The count never changes once
    /// the data source exists, so it is kept for the life of the process after its first read.
    pub async fn shards(&self, tenant: &Tenant, source: &Id) -> Result<ContactShards, Error> {
        let home = keys::data_source(tenant, source);
        if let Some(count) = self.known_shards(&home) {
            return Ok(ContactShards { home, count });
        }
        let head = self
            .get_attribute(home.clone(), keys::HEAD.to_owned(), SHARDS_ATTRIBUTE)
            .await?
            .ok_or_else(|| Error::NotFound(format!("dataSource {source} not found")))?;
        let count = shards_of_head(&head);
        self.remember_shards(&home, count);
        Ok(ContactShards { home, count })
    }

    /// [`Store::shards`], or `None` when the data source is gone.
    pub(crate) async fn shards_if_exists(
        &self,
        tenant: &Tenant,
        source: &Id,
    ) -> Result<Option<ContactShards>, Error> {
        match self.shards(tenant, source).await {
            Ok(shards) => Ok(Some(shards)),
            Err(Error::NotFound(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Up to `want` contacts of data source `source` after the sort key `after` (`None`: from
    /// the first), oldest first, projected to `projection`; none when it is gone.
    pub(crate) async fn contacts_after_key(
        &self,
        tenant: &Tenant,
        source: &Id,
        after: Option<&str>,
        want: usize,
        projection: &str,
    ) -> Result<Vec<Item>, Error> {
        let Some(shards) = self.shards_if_exists(tenant, source).await? else {
            return Ok(Vec::new());
        };
        let range = |query: QueryBuilder| {
            let query = query
                .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :last")
                .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                .expression_attribute_values(":last", s(keys::CONTACTS_END))
                .projection_expression(projection);
            // `fields` is a reserved word of DynamoDB's expressions.
            if projection.contains("#fields") {
                query.expression_attribute_names("#fields", "fields")
            } else {
                query
            }
        };
        self.merged(&shards, range, true, after, want).await
    }

    fn known_shards(&self, home: &str) -> Option<u32> {
        self.shard_counts
            .lock()
            .ok()
            .and_then(|known| known.get(home).copied())
    }

    /// Keeps the shards of a data source whose head was read (or written) some other way.
    pub(crate) fn remember_shards(&self, home: &str, count: u32) {
        if let Ok(mut known) = self.shard_counts.lock() {
            // Bounded: a process that has seen this many data sources starts over.
            if known.len() >= 100_000 {
                known.clear();
            }
            known.insert(home.to_owned(), count);
        }
    }

    /// Up to `want` items of every shard of `shards` in sort-key order (ascending when
    /// `forward`), after the sort key `after` (exclusive); `build` sets the Query's key
    /// condition, filter and projection (`:pk` is set). One shard is read as one Query always
    /// was; with S of them, each is read [`shard_page`] items at a time, in parallel.
    pub(crate) async fn merged(
        &self,
        shards: &ContactShards,
        build: impl Fn(QueryBuilder) -> QueryBuilder,
        forward: bool,
        after: Option<&str>,
        want: usize,
    ) -> Result<Vec<Item>, Error> {
        let page = match shards.count {
            1 => want,
            count => shard_page(want, count),
        };
        Merged::new(self, shards, build, forward, after, Some(page))
            .next(want)
            .await
    }
}

/// Items a merged read of `want` asks of each of `count` shards at a time: twice an even share
/// and two more, so a shard holding more than its share of the first `want` is seldom read a
/// second time. A Query is billed by the 4 KB it reads (at least one unit), so a few items more
/// cost nothing, where a second request costs a unit.
pub fn shard_page(want: usize, count: u32) -> usize {
    want.div_ceil(count.max(1) as usize)
        .saturating_mul(2)
        .saturating_add(2)
}

/// The number of shards a head item names (one when it names none: made before sharding).
pub(crate) fn shards_of_head(head: &Item) -> u32 {
    head.get(SHARDS_ATTRIBUTE)
        .and_then(|value| value.as_n().ok())
        .and_then(|raw| raw.parse::<u32>().ok())
        .unwrap_or(1)
        .clamp(1, MAX_CONTACT_SHARDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shard_is_the_data_source_partition() {
        let tenant = Tenant::parse("acme").unwrap();
        let source = Id::new();
        let one = ContactShards::new(&tenant, &source, 1);
        let contact = Id::new();
        assert_eq!(
            one.of_contact(&contact),
            keys::data_source(&tenant, &source)
        );
        assert_eq!(one.partitions().count(), 1);
    }

    #[test]
    fn contacts_spread_over_every_shard() {
        let tenant = Tenant::parse("acme").unwrap();
        let shards = ContactShards::new(&tenant, &Id::new(), 8);
        let mut per_shard = std::collections::HashMap::<String, usize>::new();
        for _ in 0..8_000 {
            *per_shard.entry(shards.of_contact(&Id::new())).or_default() += 1;
        }
        assert_eq!(per_shard.len(), 8);
        assert!(
            per_shard.values().all(|&n| (800..1_200).contains(&n)),
            "{per_shard:?}"
        );
        assert_eq!(shards.partition(0), shards.home());
        assert_eq!(shards.partition(3), format!("{}#S3", shards.home()));
    }
}

//! What the tick and a dial run read (D13): the running tasks, the calls in flight and those
//! overdue, a task's due retries and its never-dialled contacts, and their phone numbers.

use crate::store::counters;
use crate::store::keys::{self, PK, SK};
use crate::store::Item;
use crate::store::{
    flag_attr, from_item, n, s, string_attr, to_attribute, Expr, Store, WriteFailure,
};
use outbound_model::call::{Target, SCRIPT_FIELD};
use outbound_model::error::Error;
use outbound_model::pacing::QueueAgents;
use outbound_model::run_slice::FreshContact;
use outbound_model::task::{Fresh, HeldBack};
use outbound_model::task::{Judged, TaskContact};
use outbound_model::telephony::SIMULATED_RESULTS_FIELD;
use outbound_model::Tenant;
use outbound_model::{Id, Phone, Task, TaskStatus, Timestamp};
use std::collections::HashMap;

use super::RunningTask;
use outbound_model::callback::CALLBACK_RANK;

/// The ranks of a task's waiting index, in the order they are called (D13): callbacks (D31),
/// recalled contacts by recall priority, then plain retries.
const WAITING_RANKS: [Option<u8>; 7] = [
    Some(CALLBACK_RANK),
    Some(1),
    Some(2),
    Some(3),
    Some(4),
    Some(5),
    None,
];

/// What the tick reads of a running task's data source and tenant (D23, D24).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceNow {
    pub judged: Judged,
    /// The data source's contacts (0 once it is gone).
    pub contacts: u64,
    /// The tenant's claims check its do-not-call guards under their own keys (D16).
    pub guards_apart: bool,
}

impl Store {
    /// Every running task, from the shards of the running-task index read at once (eventually
    /// consistent; the dialer reads each task again before it calls), with their counters: one
    /// Query a shard, then one BatchGetItem per 100 tasks that keep them apart.
    pub async fn running_tasks(&self) -> Result<Vec<RunningTask>, Error> {
        let shards = (0..self.index_partitions).map(|shard| self.running_task_items(shard));
        let items = futures::future::try_join_all(shards)
            .await?
            .into_iter()
            .flatten()
            .collect();
        let mut tasks = Vec::new();
        // What the calls moved is on the task's counters item when it keeps them apart.
        for item in self.with_counters(items).await? {
            let tenant = string_attr(&item, PK)
                .and_then(keys::tenant_of)
                .ok_or_else(|| Error::internal("running task", "no tenant in its key"))?;
            let count = |name: &str| {
                item.get(name)
                    .and_then(|value| value.as_n().ok())
                    .and_then(|raw| raw.parse::<i64>().ok())
                    .map_or(0, |n| n.max(0) as u64)
            };
            let (settled, waiting) = (
                count(counters::CONTACTS_FINAL),
                count(counters::CONTACTS_WAITING),
            );
            tasks.push(RunningTask {
                tenant,
                task: from_item(item)?,
                settled,
                waiting,
            });
        }
        Ok(tasks)
    }

    /// The task items of one shard of the running-task index.
    async fn running_task_items(&self, shard: u32) -> Result<Vec<Item>, Error> {
        let pk = keys::running_partition(shard);
        let mut items = Vec::new();
        self.query_pages(
            |query| {
                query
                    .index_name(keys::GSI1)
                    .key_condition_expression("gsi1pk = :pk")
                    .expression_attribute_values(":pk", s(&pk))
            },
            |page| {
                items.extend(page);
                Ok(true)
            },
        )
        .await?;
        Ok(items)
    }

    /// What each of these tasks' contacts would be judged under now (D23, D24): the rules time
    /// of its tenant's settings and data source, and the data source's `contacts_added`, read
    /// together (one BatchGetItem per 100 distinct items), so the tick wakes a resting task
    /// whose rules changed or whose data source gained contacts since it was judged; and the
    /// data source's count of contacts, what a task's demand is read from (D23).
    pub async fn judged_now(
        &self,
        tasks: &[(&Tenant, &Id)],
    ) -> Result<HashMap<(Tenant, Id), SourceNow>, Error> {
        let mut wanted: Vec<(String, String)> = Vec::new();
        for (tenant, source) in tasks {
            wanted.push((keys::tenant(tenant), keys::SETTINGS.to_owned()));
            wanted.push((keys::data_source(tenant, source), keys::HEAD.to_owned()));
        }
        wanted.sort();
        wanted.dedup();
        let keys: Vec<Item> = wanted
            .into_iter()
            .map(|(pk, sk)| [(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))].into())
            .collect();
        let items = self
            .batch_get_with(
                keys,
                Some("pk, sk, rules_at, contacts_added, contact_count, dial_guards"),
            )
            .await?;
        let guards_apart: std::collections::HashSet<&str> = items
            .iter()
            .filter(|item| flag_attr(item, "dial_guards"))
            .filter_map(|item| string_attr(item, PK))
            .collect();
        let stamp = |item: &Item, name: &str| {
            item.get(name)
                .and_then(|value| value.as_n().ok())
                .and_then(|value| value.parse::<i64>().ok())
                .unwrap_or(0)
        };
        let mut stamps: HashMap<(String, String), (i64, i64, i64)> = HashMap::new();
        for item in &items {
            let (Some(pk), Some(sk)) = (string_attr(item, PK), string_attr(item, SK)) else {
                continue;
            };
            let read = if sk == keys::SETTINGS {
                (stamp(item, "rules_at"), 0, 0)
            } else {
                (
                    stamp(item, "rules_at"),
                    stamp(item, "contacts_added"),
                    stamp(item, "contact_count"),
                )
            };
            stamps.insert((pk.to_owned(), sk.to_owned()), read);
        }
        let of = |pk: String, sk: &str| {
            stamps
                .get(&(pk, sk.to_owned()))
                .copied()
                .unwrap_or((0, 0, 0))
        };
        Ok(tasks
            .iter()
            .map(|(tenant, source)| {
                let (settings, _, _) = of(keys::tenant(tenant), keys::SETTINGS);
                let (head, added, contacts) = of(keys::data_source(tenant, source), keys::HEAD);
                let now = SourceNow {
                    judged: Judged {
                        rules_at: Timestamp(settings.max(head)),
                        contacts_added: u64::try_from(added).unwrap_or(0),
                    },
                    contacts: u64::try_from(contacts).unwrap_or(0),
                    guards_apart: guards_apart.contains(keys::tenant(tenant).as_str()),
                };
                (((*tenant).clone(), (*source).clone()), now)
            })
            .collect())
    }

    /// Calls in flight in the whole service: the sum over its capacity shards.
    pub async fn calls_in_flight(&self) -> Result<u32, Error> {
        let reads = (0..self.capacity_shards)
            .map(|shard| self.get_item(keys::dialer(shard), keys::CAPACITY.to_owned()));
        let items = futures::future::try_join_all(reads).await?;
        Ok(items
            .iter()
            .filter_map(|item| {
                item.as_ref()?
                    .get("in_flight")?
                    .as_n()
                    .ok()?
                    .parse::<i64>()
                    .ok()
            })
            .map(|value| value.max(0) as u32)
            .sum())
    }

    /// Marks `task`, as read, idle until `until` (D23): refused, changing nothing, when an
    /// outcome, a transition or a recall changed it since it was read (each may make work due).
    pub async fn mark_idle(
        &self,
        tenant: &Tenant,
        task: &Task,
        until: Timestamp,
        judged: Judged,
    ) -> Result<(), Error> {
        let written = self
            .update_one(
                "mark a task idle",
                counters::key_of_task(tenant, task),
                "SET idle_until = :until, idle_rules_at = :rules_at, \
                 idle_contacts_added = :added",
                Some(
                    "#status = :running \
                     AND (attribute_not_exists(awake) OR awake = :seen)",
                ),
                Expr::default()
                    .name("#status", "status")
                    .value(":running", n(TaskStatus::Running.code()))
                    .value(":seen", n(task.awake))
                    .value(":until", n(until.0))
                    .value(":rules_at", n(judged.rules_at.0))
                    .value(":added", n(judged.contacts_added)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// Marks a running task held back `by` capacity (D23: it had contacts due and no room in
    /// its share) or by its queue's agents (D30) at `now`. Its next claim clears the mark.
    pub async fn mark_held_back(
        &self,
        tenant: &Tenant,
        task: &Task,
        by: HeldBack,
        now: Timestamp,
    ) -> Result<(), Error> {
        let mark = match by {
            HeldBack::Capacity => "held_back_at",
            HeldBack::NoAgents => "no_agents_at",
        };
        let written = self
            .update_one(
                "mark a task held back",
                counters::key_of_task(tenant, task),
                &format!("SET {mark} = :now"),
                Some("attribute_exists(pk)"),
                Expr::default().value(":now", n(now.0)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// Keeps what the tick read of `queue`'s agents at `now` for the tenant's diagnostics and
    /// the runs it paces (D30): one write a queue a tick, so a page watching a task never asks
    /// the provider itself. A newer reading kept first stays.
    pub async fn save_queue_agents(
        &self,
        tenant: &Tenant,
        queue: &str,
        agents: &QueueAgents,
        now: Timestamp,
    ) -> Result<(), Error> {
        let written = self
            .update_one(
                "keep a queue's agents",
                (keys::tenant(tenant), keys::queue_agents(queue)),
                "SET agents = :agents, read_at = :now",
                // A pass that read the agents earlier and writes later leaves the newer reading.
                Some("attribute_not_exists(read_at) OR read_at <= :now"),
                Expr::default()
                    .value(":agents", to_attribute(agents)?)
                    .value(":now", n(now.0)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// `queue`'s agents as the tick last read them for the tenant, and when (D30).
    pub async fn queue_agents(
        &self,
        tenant: &Tenant,
        queue: &str,
    ) -> Result<Option<(QueueAgents, Timestamp)>, Error> {
        #[derive(serde::Deserialize)]
        struct Reading {
            agents: QueueAgents,
            read_at: Timestamp,
        }
        let item = self
            .get_item(keys::tenant(tenant), keys::queue_agents(queue))
            .await?;
        let reading = item.map(from_item::<Reading>).transpose()?;
        Ok(reading.map(|reading| (reading.agents, reading.read_at)))
    }

    /// Whether the service found the provider's campaign quota missing (D23): remembered for
    /// every dialer, not one process.
    pub async fn campaign_quota_missing(&self) -> Result<bool, Error> {
        let item = self
            .get_item(keys::DIALER.to_owned(), keys::CAMPAIGN_QUOTA.to_owned())
            .await?;
        Ok(item.is_some())
    }

    /// Remembers that the provider's campaign quota is missing (D23), from `now`. Deleting the
    /// item (once the quota is raised) lets campaign calls be tried again.
    pub async fn remember_campaign_quota_missing(&self, now: Timestamp) -> Result<(), Error> {
        let written = self
            .update_one(
                "remember the campaign quota is missing",
                (keys::DIALER.to_owned(), keys::CAMPAIGN_QUOTA.to_owned()),
                "SET since = if_not_exists(since, :now)",
                None,
                Expr::default().value(":now", n(now.0)),
            )
            .await;
        // Unconditional: it takes effect, or the table failed.
        WriteFailure::took_effect(written).map(drop)
    }

    /// Every call still without an outcome that was due a look before `before` (D13, D28: a
    /// claim whose provider id was not saved soon after it, a placed call a reconcile time after
    /// it), from the shards of the calls-in-flight index read at once: one Query a shard.
    pub async fn stale_calls(
        &self,
        before: Timestamp,
    ) -> Result<Vec<(Tenant, Id, TaskContact)>, Error> {
        let shards = (0..self.index_partitions).map(|shard| self.stale_calls_of(shard, before));
        Ok(futures::future::try_join_all(shards)
            .await?
            .into_iter()
            .flatten()
            .collect())
    }

    /// [`Store::stale_calls`] of one shard: the in-flight index orders its calls by when they
    /// are next to be looked at.
    async fn stale_calls_of(
        &self,
        shard: u32,
        before: Timestamp,
    ) -> Result<Vec<(Tenant, Id, TaskContact)>, Error> {
        let pk = keys::in_flight_partition(shard);
        let items = self
            .query_all(
                |query| {
                    query
                        .index_name(keys::GSI2)
                        .key_condition_expression("gsi2pk = :pk AND gsi2sk < :before")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":before", s(format!("{:013}", before.0)))
                },
                Some(1000),
            )
            .await?;
        items
            .into_iter()
            .map(|item| {
                let (tenant, task) = string_attr(&item, PK)
                    .and_then(keys::parse_task_contacts)
                    .ok_or_else(|| Error::internal("stale call", "unexpected key"))?;
                Ok((tenant, task, from_item(item)?))
            })
            .collect()
    }

    /// Up to `limit` of a task's contacts whose retry or recall call is due at `now`: recalled
    /// ones by recall priority, then plain retries, each longest waiting first, then those
    /// parked outside their window: any parked under rules older than `rules_at` (judged again
    /// now, D24), then those whose window opens by `now`. One Query per rank, bounded so a
    /// contact not yet due is never read, stopping once `limit` are found (D13); a rank below
    /// the index's first key holds nothing and is not read ([`Store::first_waiting_key`]).
    pub async fn due_retries(
        &self,
        tenant: &Tenant,
        task: &Id,
        now: Timestamp,
        limit: usize,
        rules_at: Timestamp,
    ) -> Result<Vec<TaskContact>, Error> {
        let pk = keys::waiting(tenant, task);
        let Some(lowest) = self.first_waiting_key(&pk).await? else {
            return Ok(Vec::new());
        };
        let holds = |last: &str| last >= lowest.as_str();
        let mut states = Vec::new();
        for rank in WAITING_RANKS {
            if states.len() >= limit {
                break;
            }
            if !holds(&keys::waiting_order(rank, now.0)) {
                continue;
            }
            let found = self
                .waiting_of_rank(&pk, rank, now.0, limit - states.len())
                .await?;
            states.extend(found);
        }
        let (stale_first, stale_before) = parked_under_older_rules(rules_at);
        if states.len() < limit && holds(&stale_before) {
            // Judging parked contacts again never takes more than half a run (at least one), so
            // a change that wakes a great many of them does not hold fresh contacts back.
            let rejudged = (limit - states.len()).min(limit.div_ceil(2));
            let stale = self
                .waiting_between(&pk, &stale_first, &stale_before, rejudged)
                .await?;
            // Judged again now: the window they wait for was read under rules since changed.
            states.extend(stale.into_iter().map(|state| TaskContact {
                next_attempt_at: Some(now),
                ..state
            }));
        }
        let (first, last) = (
            keys::parked_order(rules_at.0, 0),
            keys::parked_order(rules_at.0, now.0),
        );
        if states.len() < limit && holds(&last) {
            let open = self
                .waiting_between(&pk, &first, &last, limit - states.len())
                .await?;
            states.extend(open);
        }
        Ok(states)
    }

    /// When the earliest of the task's waiting contacts is due: the index's first key, then one
    /// Query of one item per rank at or after it, at once (D19), whatever the number waiting.
    /// A contact parked under rules older than `rules_at` is due since then (D24).
    pub async fn earliest_waiting(
        &self,
        tenant: &Tenant,
        task: &Id,
        rules_at: Timestamp,
    ) -> Result<Option<Timestamp>, Error> {
        let pk = keys::waiting(tenant, task);
        let Some(lowest) = self.first_waiting_key(&pk).await? else {
            return Ok(None);
        };
        let (stale_first, stale_before) = parked_under_older_rules(rules_at);
        let parked = (
            keys::parked_order(rules_at.0, 0),
            keys::parked_order(rules_at.0, MAX_MILLIS),
        );
        // A range that ends before the first key holds nothing: it is not read.
        let (pk, lowest) = (pk.as_str(), lowest.as_str());
        let first_of = |first: String, last: String| async move {
            match last.as_str() >= lowest {
                true => self.waiting_between(pk, &first, &last, 1).await,
                false => Ok(Vec::new()),
            }
        };
        let ranks = WAITING_RANKS.map(|rank| {
            first_of(
                keys::waiting_order(rank, 0),
                keys::waiting_order(rank, MAX_MILLIS),
            )
        });
        let (firsts, stale, parked) = futures::future::try_join3(
            futures::future::try_join_all(ranks),
            first_of(stale_first, stale_before),
            first_of(parked.0, parked.1),
        )
        .await?;
        Ok(firsts
            .into_iter()
            .flatten()
            .chain(parked)
            .filter_map(|state| state.next_attempt_at)
            .chain(stale.first().map(|_| rules_at))
            .min())
    }

    /// Up to `limit` of a task's pending callbacks due at `until` at the latest (D31), earliest
    /// first: one Query of the waiting index's rank 0.
    pub async fn due_callbacks(
        &self,
        tenant: &Tenant,
        task: &Id,
        until: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskContact>, Error> {
        let pk = keys::waiting(tenant, task);
        self.waiting_of_rank(&pk, Some(CALLBACK_RANK), until.0, limit)
            .await
    }

    /// Up to `limit` contacts of one rank of a task's waiting index (partition `pk`), longest
    /// waiting first, due at `until` at the latest.
    async fn waiting_of_rank(
        &self,
        pk: &str,
        rank: Option<u8>,
        until: i64,
        limit: usize,
    ) -> Result<Vec<TaskContact>, Error> {
        let first = keys::waiting_order(rank, 0);
        let last = keys::waiting_order(rank, until);
        self.waiting_between(pk, &first, &last, limit).await
    }

    /// Up to `limit` contacts of a task's waiting index (partition `pk`) whose sort key is
    /// between `first` and `last`, both included, in key order.
    async fn waiting_between(
        &self,
        pk: &str,
        first: &str,
        last: &str,
        limit: usize,
    ) -> Result<Vec<TaskContact>, Error> {
        let items = self
            .query_all(
                |query| {
                    query
                        .index_name(keys::GSI1)
                        .key_condition_expression(
                            "gsi1pk = :pk AND gsi1sk BETWEEN :first AND :last",
                        )
                        .expression_attribute_values(":pk", s(pk))
                        .expression_attribute_values(":first", s(first))
                        .expression_attribute_values(":last", s(last))
                },
                Some(limit),
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }

    /// Whether any contact of the task waits for a retry or a recall call, due or not.
    pub async fn any_waiting(&self, tenant: &Tenant, task: &Id) -> Result<bool, Error> {
        let pk = keys::waiting(tenant, task);
        Ok(self.first_waiting_key(&pk).await?.is_some())
    }

    /// The first sort key of a task's waiting index (partition `pk`), none when nothing waits:
    /// one Query of one key. The ranks sort in the order they are called, so no range that ends
    /// before it holds anything, and a read of one is left out (most of a run's and a tick's
    /// Queries of the index, when few contacts wait; the key alone is read, due or not).
    async fn first_waiting_key(&self, pk: &str) -> Result<Option<String>, Error> {
        let items = self
            .query_all(
                |query| {
                    query
                        .index_name(keys::GSI1)
                        .key_condition_expression("gsi1pk = :pk")
                        .expression_attribute_values(":pk", s(pk))
                        .projection_expression(keys::GSI1_SK)
                },
                Some(1),
            )
            .await?;
        Ok(items
            .first()
            .and_then(|item| string_attr(item, keys::GSI1_SK))
            .map(str::to_owned))
    }

    /// Up to `limit` contacts of a data source created after the one with sort key `after`,
    /// oldest first, with their phone numbers and their values of the fields named `sent` (the
    /// task's `callAttributes`): the never-dialled ones a task's cursor has not reached.
    pub async fn contacts_after(
        &self,
        tenant: &Tenant,
        source: &Id,
        after: Option<&str>,
        limit: usize,
        sent: &[String],
    ) -> Result<Vec<FreshContact>, Error> {
        let items = self
            .contacts_after_key(tenant, source, after, limit, "sk, phone, #fields")
            .await?;
        let mut contacts = Vec::new();
        for item in items {
            let Some(sk) = string_attr(&item, SK) else {
                continue;
            };
            let (Some(id), Some(target)) = (
                sk.strip_prefix(keys::CONTACT_PREFIX).and_then(Id::parse),
                target_of(&item, sent),
            ) else {
                continue;
            };
            contacts.push((Fresh { contact_id: id }, target, sk.to_owned()));
            if contacts.len() == limit {
                break;
            }
        }
        Ok(contacts)
    }

    /// What a call needs of those of `ids` that are still contacts of data source `source`,
    /// with their values of the fields named `sent`.
    pub async fn contact_targets(
        &self,
        tenant: &Tenant,
        source: &Id,
        ids: &[Id],
        sent: &[String],
    ) -> Result<HashMap<Id, Target>, Error> {
        let Some(shards) = self.shards_if_exists(tenant, source).await? else {
            return Ok(HashMap::new());
        };
        let wanted = ids.iter().map(|id| shards.contact_key(id));
        // Whole items: a read costs the item's size whatever is projected.
        let items = self.batch_get_with(wanted.collect(), None).await?;
        Ok(items
            .iter()
            .filter_map(|item| {
                let id = string_attr(item, SK)?
                    .strip_prefix(keys::CONTACT_PREFIX)
                    .and_then(Id::parse)?;
                Some((id, target_of(item, sent)?))
            })
            .collect())
    }

    /// One contact's state in a task, read consistently.
    pub async fn task_contact(
        &self,
        tenant: &Tenant,
        task: &Id,
        contact: &Id,
    ) -> Result<Option<TaskContact>, Error> {
        self.get_item(keys::task_contacts(tenant, task), keys::contact(contact))
            .await?
            .map(from_item)
            .transpose()
    }
}

/// The latest time a waiting index's sort key can hold (13 digits of milliseconds).
const MAX_MILLIS: i64 = 9_999_999_999_999;

/// The sort keys of contacts parked under rules older than `rules_at` (D24): from the parked
/// rank's start up to, not including, the keys of `rules_at` itself.
fn parked_under_older_rules(rules_at: Timestamp) -> (String, String) {
    (keys::PARKED_RANK.to_owned(), keys::parked_under(rules_at.0))
}

/// A contact item's number, the fields that steer its call, and those of the fields named
/// `sent` it has.
fn target_of(item: &Item, sent: &[String]) -> Option<Target> {
    let phone = Phone::parse(string_attr(item, "phone")?).ok()?;
    let fields = item.get("fields").and_then(|fields| fields.as_m().ok());
    let field = |name: &str| {
        fields
            .and_then(|fields| fields.get(name))
            .and_then(|value| value.as_s().ok())
            .cloned()
    };
    Some(Target {
        phone,
        time_zone: field("timeZone"),
        script: field(SCRIPT_FIELD),
        fields: sent
            .iter()
            .filter_map(|name| Some((name.clone(), field(name)?)))
            .collect(),
        simulated_results: field(SIMULATED_RESULTS_FIELD),
    })
}

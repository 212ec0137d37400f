//! The dialing engine's reads and writes (D13). A call moves through three transactions, each
//! conditioned on what the one before left: the claim (the contact's attempt, a place in the
//! task's and the service's calls in flight, and a slot of this second's provider rate), the
//! placing (the provider's call id), and the outcome (the contact's state in the task, the task's
//! counters, the contact's status and call count, and the calls in flight given back). A claim
//! taken twice, an outcome recorded twice or a release after an outcome fails its condition and
//! changes nothing, so duplicated messages and overlapping runs place and count each call once.

use super::keys::{self, HEAD, PK, SK};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store, WriteFailure};
use crate::auth::Tenant;
use crate::dialing::plan::{AfterOutcome, Due, Fresh};
use crate::dialing::CallReport;
use crate::error::Error;
use crate::model::task::TaskContact;
use crate::model::{Id, Phone, Task, TaskStatus, Timestamp};
use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// A task found through the running-task index.
#[derive(Clone, Debug)]
pub struct RunningTask {
    pub tenant: Tenant,
    pub task: Task,
}

/// Everything the outcome of one call needs, written when the call is placed (the call record)
/// and read back through the provider's call id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    pub tenant: String,
    pub task_id: Id,
    pub data_source_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
    pub call_interval: u32,
    /// The contact's state as the claim left it, so the outcome needs no read of it; the
    /// outcome's condition on `updated_at` notices a recall in between.
    pub allowance: u32,
    pub recalled: bool,
    pub priority: u8,
    pub claimed_at: Timestamp,
}

/// The caps a claim must stay under (D13).
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub per_task: u32,
    pub total: u32,
    pub rate_per_second: u32,
}

/// Why a claim was not taken.
#[derive(Debug)]
pub enum ClaimRefused {
    /// Another run claimed this attempt first, or the contact's state moved on.
    Taken,
    /// The task is no longer RUNNING: no new calls (D10, D13).
    TaskNotRunning,
    /// The task has its most calls in flight.
    TaskFull,
    /// The service has its most calls in flight.
    ServiceFull,
    /// This second's provider rate is used up.
    RateLimited,
    /// DynamoDB did not answer: nothing was claimed.
    Store(Error),
}

/// What a sweep of a task's contacts found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Contacts of the data source the task has no state for: never dialled.
    pub never_dialled: Vec<Id>,
    /// Contacts still in the data source whose outcome in the task is not final.
    pub unfinished: usize,
}

/// The actions of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// The contact's state in the task: a fresh one, or the attempt taken.
    Contact,
    /// The task's calls in flight, while it is RUNNING.
    Task,
    /// The service's calls in flight.
    Service,
    /// This second's slot of the provider rate.
    Rate,
}

/// The actions of the writes that follow a claim: placing the call, its outcome, giving the
/// claim back, dropping an orphan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// The contact's state in the task, conditioned on the attempt being in flight.
    Contact,
    /// The task: its counters and calls in flight.
    Task,
    /// The service's calls in flight.
    Service,
    /// The contact in the data source: its status and call count.
    SourceContact,
    /// The call record, found by the provider's call id.
    Record,
}

/// A claim that could not be built or sent: nothing was claimed.
fn not_claimed<T>(result: Result<T, Error>) -> Result<T, ClaimRefused> {
    result.map_err(ClaimRefused::Store)
}

fn key_item(pk: String, sk: String) -> Item {
    [(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))].into()
}

impl<L> Actions<'_, L> {
    /// Gives back one of the service's calls in flight (D13): with an outcome, a release, or
    /// the end of a deleted task's call.
    fn give_back_service_slot(self, label: L) -> Result<Self, Error> {
        self.update(
            label,
            keys::DIALER.to_owned(),
            keys::CAPACITY.to_owned(),
            "ADD in_flight :minus_one",
            None,
            Expr::default().value(":minus_one", n(-1)),
        )
    }
}

impl Store {
    /// The running tasks of one shard of the running-task index (eventually consistent; the
    /// dialer reads each task again before it calls).
    pub async fn running_tasks(&self, shard: u32) -> Result<Vec<RunningTask>, Error> {
        let pk = keys::running_shard(shard);
        let mut tasks = Vec::new();
        self.query_pages(
            |query| {
                query
                    .index_name(keys::GSI1)
                    .key_condition_expression("gsi1pk = :pk")
                    .expression_attribute_values(":pk", s(&pk))
            },
            |page| {
                for item in page {
                    let tenant = string_attr(&item, PK)
                        .and_then(|pk| pk.strip_prefix("T#"))
                        .ok_or_else(|| Error::internal("running task", "no tenant in its key"))
                        .and_then(Tenant::parse)?;
                    tasks.push(RunningTask {
                        tenant,
                        task: from_item(item)?,
                    });
                }
                Ok(true)
            },
        )
        .await?;
        Ok(tasks)
    }

    /// Calls in flight in the whole service.
    pub async fn calls_in_flight(&self) -> Result<u32, Error> {
        let item = self
            .get_item(keys::DIALER.to_owned(), keys::CAPACITY.to_owned())
            .await?;
        Ok(item
            .as_ref()
            .and_then(|item| item.get("in_flight"))
            .and_then(|value| value.as_n().ok())
            .and_then(|value| value.parse::<i64>().ok())
            .map_or(0, |value| value.max(0) as u32))
    }

    /// Calls of one shard claimed before `before` and still without an outcome.
    pub async fn stale_calls(
        &self,
        shard: u32,
        before: Timestamp,
    ) -> Result<Vec<(Tenant, Id, TaskContact)>, Error> {
        let pk = keys::in_flight_shard(shard);
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
                    .and_then(parse_task_contacts_key)
                    .ok_or_else(|| Error::internal("stale call", "unexpected key"))?;
                Ok((tenant, task, from_item(item)?))
            })
            .collect()
    }

    /// Up to `limit` of a task's contacts whose retry or recall call is due at `now`: recalled
    /// ones by recall priority, then plain retries, each longest waiting first. One Query per
    /// rank, bounded by `{rank}#{now}` so a contact not yet due is never read, stopping once
    /// `limit` are found (D13).
    pub async fn due_retries(
        &self,
        tenant: &Tenant,
        task: &Id,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<TaskContact>, Error> {
        let pk = keys::waiting(tenant, task);
        let mut states = Vec::new();
        for rank in [Some(1), Some(2), Some(3), Some(4), Some(5), None] {
            if states.len() >= limit {
                break;
            }
            let first = keys::waiting_order(rank, 0);
            let last = keys::waiting_order(rank, now.0);
            let items = self
                .query_all(
                    |query| {
                        query
                            .index_name(keys::GSI1)
                            .key_condition_expression(
                                "gsi1pk = :pk AND gsi1sk BETWEEN :first AND :last",
                            )
                            .expression_attribute_values(":pk", s(&pk))
                            .expression_attribute_values(":first", s(&first))
                            .expression_attribute_values(":last", s(&last))
                    },
                    Some(limit - states.len()),
                )
                .await?;
            for item in items {
                states.push(from_item(item)?);
            }
        }
        Ok(states)
    }

    /// Whether any contact of the task waits for a retry or a recall call, due or not.
    pub async fn any_waiting(&self, tenant: &Tenant, task: &Id) -> Result<bool, Error> {
        let pk = keys::waiting(tenant, task);
        let items = self
            .query_all(
                |query| {
                    query
                        .index_name(keys::GSI1)
                        .key_condition_expression("gsi1pk = :pk")
                        .expression_attribute_values(":pk", s(&pk))
                        .projection_expression("pk, sk")
                },
                Some(1),
            )
            .await?;
        Ok(!items.is_empty())
    }

    /// Up to `limit` contacts of a data source created after the one with sort key `after`,
    /// oldest first, with their phone numbers: the never-dialled ones a task's cursor has not
    /// reached.
    pub async fn contacts_after(
        &self,
        tenant: &Tenant,
        source: &Id,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(Fresh, Phone, String)>, Error> {
        let pk = keys::data_source(tenant, source);
        let from = after.unwrap_or(keys::CONTACT_PREFIX).to_owned();
        // The bound itself and the head come back too: two more than asked.
        let items = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND sk BETWEEN :from AND :head")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":from", s(&from))
                        .expression_attribute_values(":head", s(HEAD))
                        .projection_expression("sk, phone")
                        .consistent_read(true)
                },
                Some(limit + 2),
            )
            .await?;
        let mut contacts = Vec::new();
        for item in items {
            let Some(sk) = string_attr(&item, SK) else {
                continue;
            };
            if sk == from || sk == HEAD {
                continue;
            }
            let (Some(id), Some(phone)) = (
                sk.strip_prefix(keys::CONTACT_PREFIX).and_then(Id::parse),
                string_attr(&item, "phone").and_then(|p| Phone::parse(p).ok()),
            ) else {
                continue;
            };
            contacts.push((Fresh { contact_id: id }, phone, sk.to_owned()));
            if contacts.len() == limit {
                break;
            }
        }
        Ok(contacts)
    }

    /// The phone numbers of those of `ids` that are still contacts of data source `source`.
    pub async fn contact_phones(
        &self,
        tenant: &Tenant,
        source: &Id,
        ids: &[Id],
    ) -> Result<HashMap<Id, Phone>, Error> {
        let pk = keys::data_source(tenant, source);
        let wanted = ids.iter().map(|id| key_item(pk.clone(), keys::contact(id)));
        let items = self.batch_get(wanted.collect(), "sk, phone").await?;
        Ok(items
            .iter()
            .filter_map(|item| {
                let id = string_attr(item, SK)?
                    .strip_prefix(keys::CONTACT_PREFIX)
                    .and_then(Id::parse)?;
                let phone = Phone::parse(string_attr(item, "phone")?).ok()?;
                Some((id, phone))
            })
            .collect())
    }

    /// Claims attempt `due.attempt` of a contact for a call now (D13): one transaction that
    /// takes the contact's attempt, a place among the task's and the service's calls in flight,
    /// and a slot of this second's provider rate, or nothing at all.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), task = %task.id, contact = %due.contact_id, attempt = due.attempt))]
    pub async fn claim_call(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        caps: Caps,
        now: Timestamp,
    ) -> Result<CallRef, ClaimRefused> {
        let pk = keys::task_contacts(tenant, &task.id);
        let sk = keys::contact(&due.contact_id);
        let in_flight = [
            (keys::GSI2_PK, keys::in_flight_shard(keys::shard_of(&pk))),
            (keys::GSI2_SK, format!("{:013}#{}", now.0, due.contact_id)),
        ];
        let (actions, call) = match &due.state {
            None => {
                let state = TaskContact {
                    contact_id: due.contact_id.clone(),
                    attempts: 0,
                    allowance: u32::from(task.settings.max_dial_count),
                    last_outcome: 0,
                    last_duration: 0,
                    next_attempt_at: None,
                    priority: task.settings.priority,
                    updated_at: now,
                    done: false,
                    recalled: false,
                    in_call: Some(1),
                    claimed_at: Some(now),
                    call_id: None,
                };
                let keys = [(PK, pk.clone()), (SK, sk.clone())].into_iter();
                let item =
                    to_item(&state, keys.chain(in_flight.clone())).map_err(ClaimRefused::Store)?;
                let actions = not_claimed(Actions::new(&self.table).put(
                    Claim::Contact,
                    item,
                    Some(("attribute_not_exists(pk)", Expr::default())),
                ))?;
                (actions, self.call_ref(tenant, task, &state, 1, now))
            }
            Some(state) => {
                let expr = Expr::default()
                    .value(":attempt", n(due.attempt))
                    .value(":now", n(now.0))
                    .value(":fly_pk", s(&in_flight[0].1))
                    .value(":fly_sk", s(&in_flight[1].1))
                    .value(":attempts", n(state.attempts))
                    .value(":seen", n(state.updated_at.0))
                    .value(":false", AttributeValue::Bool(false));
                let actions = not_claimed(Actions::new(&self.table).update(
                    Claim::Contact,
                    pk.clone(),
                    sk.clone(),
                    "SET in_call = :attempt, claimed_at = :now, updated_at = :now, \
                     gsi2pk = :fly_pk, gsi2sk = :fly_sk REMOVE gsi1pk, gsi1sk",
                    Some(
                        "attribute_exists(pk) AND attribute_not_exists(in_call) \
                         AND attempts = :attempts AND updated_at = :seen AND done = :false",
                    ),
                    expr,
                ))?;
                (
                    actions,
                    self.call_ref(tenant, task, state, due.attempt, now),
                )
            }
        };
        let second = now.0.div_euclid(1000);
        let actions = not_claimed(
            actions
                .update(
                    Claim::Task,
                    keys::tenant(tenant),
                    keys::task(&task.id),
                    "ADD in_flight :one",
                    Some(
                        "#status = :running AND (attribute_not_exists(in_flight) OR in_flight < :cap)",
                    ),
                    Expr::default()
                        .name("#status", "status")
                        .value(":running", n(TaskStatus::Running.code()))
                        .value(":one", n(1))
                        .value(":cap", n(caps.per_task)),
                )
                .and_then(|a| {
                    a.update(
                        Claim::Service,
                        keys::DIALER.to_owned(),
                        keys::CAPACITY.to_owned(),
                        "ADD in_flight :one",
                        Some("attribute_not_exists(in_flight) OR in_flight < :cap"),
                        Expr::default()
                            .value(":one", n(1))
                            .value(":cap", n(caps.total)),
                    )
                })
                .and_then(|a| {
                    a.update(
                        Claim::Rate,
                        keys::DIALER.to_owned(),
                        keys::rate_slot(second),
                        "ADD placed :one SET expires_at = :expires",
                        Some("attribute_not_exists(placed) OR placed < :rate"),
                        Expr::default()
                            .value(":one", n(1))
                            .value(":rate", n(caps.rate_per_second))
                            // Kept a day (the table's TTL attribute), so a clock skew cannot reuse it.
                            .value(":expires", n(second + 86_400)),
                    )
                }),
        )?;
        match self.transact("claim call", actions).await {
            Ok(()) => Ok(call),
            Err(failure) => {
                let failed = failure.condition().map_err(ClaimRefused::Store)?;
                Err(if failed.failed(Claim::Contact) {
                    ClaimRefused::Taken
                } else if failed.failed(Claim::Task) {
                    let stored = failed.stored(Claim::Task).cloned();
                    match stored.map(from_item::<Task>) {
                        Some(Ok(task)) if task.status == TaskStatus::Running => {
                            ClaimRefused::TaskFull
                        }
                        _ => ClaimRefused::TaskNotRunning,
                    }
                } else if failed.failed(Claim::Service) {
                    ClaimRefused::ServiceFull
                } else {
                    ClaimRefused::RateLimited
                })
            }
        }
    }

    fn call_ref(
        &self,
        tenant: &Tenant,
        task: &Task,
        state: &TaskContact,
        attempt: u32,
        now: Timestamp,
    ) -> CallRef {
        CallRef {
            tenant: tenant.as_str().to_owned(),
            task_id: task.id.clone(),
            data_source_id: task.data_source_id.clone(),
            contact_id: state.contact_id.clone(),
            attempt,
            call_interval: task.settings.call_interval,
            allowance: state.allowance,
            recalled: state.recalled,
            priority: state.priority,
            claimed_at: now,
        }
    }

    /// Records the provider's id of a claimed call, and the call record its outcome event is
    /// found by. Answers false when the attempt is no longer in flight.
    pub async fn mark_placed(&self, call: &CallRef, call_id: &str) -> Result<bool, Error> {
        let tenant = Tenant::parse(&call.tenant)?;
        let record = to_item(
            call,
            [(PK, keys::call(call_id)), (SK, keys::CALL.to_owned())],
        )?;
        let mut record = record;
        // Kept two days after placing (the table's TTL attribute): far past any outcome event.
        record.insert(
            "expires_at".to_owned(),
            n(call.claimed_at.0 / 1000 + 2 * 86_400),
        );
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(&tenant, &call.task_id),
                keys::contact(&call.contact_id),
                "SET call_id = :id",
                Some("in_call = :attempt"),
                Expr::default()
                    .value(":id", s(call_id))
                    .value(":attempt", n(call.attempt)),
            )?
            .put(Call::Record, record, None)?;
        match self.transact("mark call placed", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }

    /// The call placed under the provider's id `call_id`, if its record exists.
    pub async fn call_by_provider_id(&self, call_id: &str) -> Result<Option<CallRef>, Error> {
        self.get_item(keys::call(call_id), keys::CALL.to_owned())
            .await?
            .map(from_item)
            .transpose()
    }

    /// Gives back a claim the provider refused for rate or capacity: not an attempt (D13). The
    /// contact waits until `retry_at`, ahead of the plain retries as before.
    pub async fn release_call(&self, call: &CallRef, retry_at: Timestamp) -> Result<(), Error> {
        let tenant = Tenant::parse(&call.tenant)?;
        let rank = call.recalled.then_some(call.priority);
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(&tenant, &call.task_id),
                keys::contact(&call.contact_id),
                "SET next_attempt_at = :at, gsi1pk = :wait_pk, gsi1sk = :wait_sk \
                 REMOVE in_call, claimed_at, call_id, gsi2pk, gsi2sk",
                Some("in_call = :attempt"),
                Expr::default()
                    .value(":at", n(retry_at.0))
                    .value(":wait_pk", s(keys::waiting(&tenant, &call.task_id)))
                    .value(":wait_sk", s(keys::waiting_order(rank, retry_at.0)))
                    .value(":attempt", n(call.attempt)),
            )?
            .update(
                Call::Task,
                keys::tenant(&tenant),
                keys::task(&call.task_id),
                "ADD in_flight :minus_one",
                Some("attribute_exists(pk)"),
                Expr::default().value(":minus_one", n(-1)),
            )?
            .give_back_service_slot(Call::Service)?;
        match self.transact("release call", actions).await {
            Ok(()) => Ok(()),
            // Already released or recorded, or the task is gone: nothing is held.
            Err(failure) => failure.condition().map(drop),
        }
    }

    /// Records the outcome of a call exactly once (D7, D13): the contact's state in the task,
    /// the task's counters and calls in flight, the contact's status and call count, and the
    /// service's calls in flight, in one transaction conditioned on that attempt being in flight.
    #[tracing::instrument(skip_all, fields(tenant = %call.tenant, task = %call.task_id, contact = %call.contact_id, attempt = call.attempt))]
    pub async fn record_outcome(
        &self,
        call: &CallRef,
        report: &CallReport,
        next: &AfterOutcome,
        now: Timestamp,
        with_contact: bool,
    ) -> Result<RecordFailure, Error> {
        let tenant = Tenant::parse(&call.tenant)?;
        let counter = match report.outcome {
            crate::dialing::Outcome::Success => "success",
            crate::dialing::Outcome::Failed => "failed",
            crate::dialing::Outcome::NoAnswer => "no_answer",
        };
        let mut state_expr = Expr::default()
            .value(":attempt", n(call.attempt))
            .value(":claimed", n(call.claimed_at.0))
            .value(":outcome", n(report.outcome.code()))
            .value(":duration", n(report.duration))
            .value(":now", n(now.0))
            .value(":done", AttributeValue::Bool(next.done))
            .value(":allowance", n(call.allowance));
        let state_update = match next.next_attempt_at {
            Some(at) => {
                let rank = call.recalled.then_some(call.priority);
                state_expr = state_expr
                    .value(":next", n(at.0))
                    .value(":wait_pk", s(keys::waiting(&tenant, &call.task_id)))
                    .value(":wait_sk", s(keys::waiting_order(rank, at.0)));
                "SET attempts = :attempt, last_outcome = :outcome, last_duration = :duration, \
                 allowance = :allowance, updated_at = :now, done = :done, next_attempt_at = :next, \
                 gsi1pk = :wait_pk, gsi1sk = :wait_sk \
                 REMOVE in_call, claimed_at, call_id, gsi2pk, gsi2sk"
            }
            None => {
                "SET attempts = :attempt, last_outcome = :outcome, last_duration = :duration, \
                 allowance = :allowance, updated_at = :now, done = :done \
                 REMOVE in_call, claimed_at, call_id, next_attempt_at, gsi1pk, gsi1sk, gsi2pk, gsi2sk"
            }
        };
        let mut actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(&tenant, &call.task_id),
                keys::contact(&call.contact_id),
                state_update,
                Some("in_call = :attempt AND updated_at = :claimed"),
                state_expr,
            )?
            .update(
                Call::Task,
                keys::tenant(&tenant),
                keys::task(&call.task_id),
                "SET #c.#calls = #c.#calls + :one, #c.#outcome = #c.#outcome + :one, \
                 #c.#duration = #c.#duration + :duration, updated_at = :now \
                 ADD in_flight :minus_one",
                Some("attribute_exists(pk)"),
                Expr::default()
                    .name("#c", "counters")
                    .name("#calls", "calls")
                    .name("#outcome", counter)
                    .name("#duration", "duration")
                    .value(":one", n(1))
                    .value(":minus_one", n(-1))
                    .value(":duration", n(report.duration))
                    .value(":now", n(now.0)),
            )?
            .give_back_service_slot(Call::Service)?;
        if with_contact {
            actions = actions.update(
                Call::SourceContact,
                keys::data_source(&tenant, &call.data_source_id),
                keys::contact(&call.contact_id),
                "SET #status = :outcome ADD call_count :one",
                Some("attribute_exists(pk)"),
                Expr::default()
                    .name("#status", "status")
                    .value(":outcome", n(report.outcome.code()))
                    .value(":one", n(1)),
            )?;
        }
        match self.transact("record call outcome", actions).await {
            Ok(()) => Ok(RecordFailure::None),
            Err(failure) => {
                let failed = failure.condition()?;
                Ok(if failed.failed(Call::Contact) {
                    let stored = failed.stored(Call::Contact).cloned();
                    match stored.map(from_item::<TaskContact>).transpose()? {
                        Some(state) if state.in_call == Some(call.attempt) => {
                            RecordFailure::StateChanged(state)
                        }
                        _ => RecordFailure::NotInFlight,
                    }
                } else if failed.failed(Call::Task) {
                    RecordFailure::TaskGone
                } else {
                    RecordFailure::ContactGone
                })
            }
        }
    }

    /// Ends a call whose task was deleted while it was in flight: gives back the service's
    /// place, once, whichever of this and the task's reclaim comes first.
    pub async fn drop_orphan_call(
        &self,
        tenant: &Tenant,
        task: &Id,
        contact: &Id,
        attempt: u32,
    ) -> Result<(), Error> {
        let actions = Actions::new(&self.table)
            .delete(
                Call::Contact,
                keys::task_contacts(tenant, task),
                keys::contact(contact),
                Some((
                    "in_call = :attempt",
                    Expr::default().value(":attempt", n(attempt)),
                )),
            )?
            .give_back_service_slot(Call::Service)?;
        match self.transact("drop orphan call", actions).await {
            Ok(()) => Ok(()),
            Err(failure) => failure.condition().map(drop),
        }
    }

    /// Moves a task's cursor forward to `sk` (never back).
    pub async fn advance_cursor(&self, tenant: &Tenant, task: &Id, sk: &str) -> Result<(), Error> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(keys::tenant(tenant)))
            .key(SK, s(keys::task(task)))
            .update_expression("SET #cursor = :sk")
            .condition_expression(
                "attribute_exists(pk) AND (attribute_not_exists(#cursor) OR #cursor < :sk)",
            )
            .expression_attribute_names("#cursor", "cursor")
            .expression_attribute_values(":sk", s(sk))
            .send()
            .await;
        WriteFailure::applied("advance cursor", result).map(drop)
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

    /// Makes final the state of a contact deleted from the data source, so it neither waits nor
    /// keeps the task from completing (D13).
    pub async fn finish_deleted(
        &self,
        tenant: &Tenant,
        task: &Id,
        contact: &Id,
    ) -> Result<(), Error> {
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(keys::task_contacts(tenant, task)))
            .key(SK, s(keys::contact(contact)))
            .update_expression("SET done = :true REMOVE gsi1pk, gsi1sk")
            .condition_expression("attribute_exists(pk) AND attribute_not_exists(in_call)")
            .expression_attribute_values(":true", AttributeValue::Bool(true))
            .send()
            .await;
        WriteFailure::applied("finish deleted contact", result).map(drop)
    }

    /// Reads every contact id of the data source and every state of the task, to tell whether
    /// the task is over (D13). Only run when cheaper signs say it may be: nothing in flight,
    /// nothing waiting, the cursor at the end.
    pub async fn sweep(&self, tenant: &Tenant, task: &Task) -> Result<Sweep, Error> {
        let source_pk = keys::data_source(tenant, &task.data_source_id);
        let mut contacts = HashSet::new();
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :last")
                    .expression_attribute_values(":pk", s(&source_pk))
                    .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                    .expression_attribute_values(":last", s(format!("{}~", keys::CONTACT_PREFIX)))
                    .projection_expression("sk")
                    .consistent_read(true)
            },
            |page| {
                contacts.extend(page.iter().filter_map(|item| {
                    string_attr(item, SK)?
                        .strip_prefix(keys::CONTACT_PREFIX)
                        .and_then(Id::parse)
                }));
                Ok(true)
            },
        )
        .await?;
        let states_pk = keys::task_contacts(tenant, &task.id);
        let mut sweep = Sweep::default();
        let mut seen = HashSet::new();
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                    .expression_attribute_values(":pk", s(&states_pk))
                    .expression_attribute_values(":prefix", s(keys::CONTACT_PREFIX))
                    .projection_expression("sk, done")
                    .consistent_read(true)
            },
            |page| {
                for item in page {
                    let Some(id) = string_attr(&item, SK)
                        .and_then(|sk| sk.strip_prefix(keys::CONTACT_PREFIX))
                        .and_then(Id::parse)
                    else {
                        continue;
                    };
                    let done = item.get("done").and_then(|v| v.as_bool().ok()) == Some(&true);
                    if !done && contacts.contains(&id) {
                        sweep.unfinished += 1;
                    }
                    seen.insert(id);
                }
                Ok(true)
            },
        )
        .await?;
        sweep.never_dialled = contacts
            .into_iter()
            .filter(|id| !seen.contains(id))
            .collect();
        sweep.never_dialled.sort();
        Ok(sweep)
    }

    /// Queues never-dialled contacts the cursor passed by (their ids were made before contacts
    /// stored earlier) as due now, unless they have a state already.
    pub async fn queue_never_dialled(
        &self,
        tenant: &Tenant,
        task: &Task,
        ids: &[Id],
        now: Timestamp,
    ) -> Result<(), Error> {
        let pk = keys::task_contacts(tenant, &task.id);
        for id in ids {
            let state = TaskContact {
                contact_id: id.clone(),
                attempts: 0,
                allowance: u32::from(task.settings.max_dial_count),
                last_outcome: 0,
                last_duration: 0,
                next_attempt_at: Some(now),
                priority: task.settings.priority,
                updated_at: now,
                done: false,
                recalled: false,
                in_call: None,
                claimed_at: None,
                call_id: None,
            };
            let item = to_item(
                &state,
                [
                    (PK, pk.clone()),
                    (SK, keys::contact(id)),
                    (keys::GSI1_PK, keys::waiting(tenant, &task.id)),
                    (keys::GSI1_SK, keys::waiting_order(None, now.0)),
                ],
            )?;
            let result = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(pk)")
                .send()
                .await;
            WriteFailure::applied("queue never-dialled contact", result)?;
        }
        Ok(())
    }
}

/// Why an outcome was not recorded as it was sent.
#[derive(Debug)]
pub enum RecordFailure {
    /// It was recorded.
    None,
    /// That attempt is not in flight: recorded before, or never claimed.
    NotInFlight,
    /// A recall changed the contact's state during the call: record again from this state.
    StateChanged(TaskContact),
    /// The task was deleted during the call.
    TaskGone,
    /// The contact was deleted from the data source during the call.
    ContactGone,
}

/// `T#{tenant}#TASK#{id}` -> (tenant, task id).
fn parse_task_contacts_key(pk: &str) -> Option<(Tenant, Id)> {
    let rest = pk.strip_prefix("T#")?;
    let (tenant, id) = rest.rsplit_once("#TASK#")?;
    Some((Tenant::parse(tenant).ok()?, Id::parse(id)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_contact_partitions_name_their_tenant_and_task() {
        let tenant = Tenant::parse("acme:eu").unwrap();
        let id = Id::new();
        let (t, i) = parse_task_contacts_key(&keys::task_contacts(&tenant, &id)).unwrap();
        assert_eq!((t.as_str(), i), ("acme:eu", id));
        assert!(parse_task_contacts_key("T#acme#DS#x").is_none());
    }
}

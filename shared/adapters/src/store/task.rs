//! Task records in the tenant partition, their name guards, edits and deletes as conditional
//! writes on the stored status, and the per-task contact state that recall writes (D10, D12);
//! their state transitions are [`super::transition`]'s.

use super::keys::{self, HEAD, PK, SK};
use super::names::NameGuard;
use super::paging::{Counted, RowFilter, TenantList};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store};
use crate::store::counters;
use outbound_model::call::{Reason, Skip};
use outbound_model::diagnostics::TaskCounters;
use outbound_model::error::Error;
use outbound_model::limits::Limited;
use outbound_model::page::{Page, PageQuery};
use outbound_model::task::{not_allowed, TaskContact, TaskOperation};
use outbound_model::Tenant;
use outbound_model::{Id, Name, Task, TaskStatus, Timestamp};
use std::collections::{HashMap, HashSet};

fn task_not_found(id: &Id) -> Error {
    Error::NotFound(format!("task {id} not found"))
}

fn name_taken(name: &Name) -> Error {
    Error::Conflict(format!("taskName {:?} already exists", name.as_str()))
}

/// The condition "the stored status is one of `from`", with its values.
pub(crate) fn status_in(from: &[TaskStatus], expr: Expr) -> (String, Expr) {
    let mut expr = expr.name("#status", "status");
    let mut placeholders = Vec::new();
    for (i, status) in from.iter().enumerate() {
        let placeholder = format!(":from{i}");
        expr = expr.value(&placeholder, n(status.code()));
        placeholders.push(placeholder);
    }
    (
        format!(
            "attribute_exists(pk) AND #status IN ({})",
            placeholders.join(", ")
        ),
        expr,
    )
}

/// 404 when the task is gone, else 405 naming the state it is in now.
pub(crate) fn refused(operation: TaskOperation, id: &Id, stored: Option<&Item>) -> Error {
    match stored.map(|item| from_item::<Task>(item.clone())) {
        None => task_not_found(id),
        Some(Ok(task)) => not_allowed(operation, task.status),
        Some(Err(error)) => error,
    }
}

impl Store {
    fn task_item(&self, tenant: &Tenant, task: &Task) -> Result<Item, Error> {
        to_item(
            task,
            [(PK, keys::tenant(tenant)), (SK, keys::task(&task.id))],
        )
    }

    fn task_name_guard<'a>(&self, tenant: &'a Tenant, task: &'a Task) -> NameGuard<'a> {
        NameGuard {
            tenant,
            name_key: keys::task_name(task.name.as_str()),
            holder: ("task_id", &task.id),
        }
    }

    /// Stores a new task and claims its name, while its data source still exists (else 400).
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %task.id))]
    pub async fn create_task(&self, tenant: &Tenant, task: &Task) -> Result<(), Error> {
        #[derive(PartialEq)]
        enum Part {
            Task,
            Counters,
            NameGuard,
            DataSource,
            Count,
        }
        let absent = || Some(("attribute_not_exists(pk)", Expr::default()));
        let (item, counted) = counters::split(tenant, task, self.task_item(tenant, task)?);
        let mut actions = Actions::new(&self.table).put(Part::Task, item, absent())?;
        if let Some(counted) = counted {
            actions = actions.put(Part::Counters, counted, absent())?;
        }
        let actions = actions
            .take_name(Part::NameGuard, &self.task_name_guard(tenant, task))?
            .check(
                Part::DataSource,
                keys::data_source(tenant, &task.data_source_id),
                HEAD.to_owned(),
                "attribute_exists(pk)",
                Expr::default(),
            )?
            .count_one_more(Part::Count, tenant, Counted::Tasks, self.limits.tasks)?;
        self.transact("create task", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed(Part::DataSource) {
                        Error::invalid(format!("dataSource {} does not exist", task.data_source_id))
                    } else if condition.failed(Part::NameGuard) {
                        name_taken(&task.name)
                    } else if condition.failed(Part::Count) {
                        Limited::Tasks.reached(self.limits.tasks)
                    } else {
                        Error::internal("create task", "fresh id already stored")
                    }
                })
            })
    }

    /// One task, read consistently.
    pub async fn task(&self, tenant: &Tenant, id: &Id) -> Result<Task, Error> {
        from_item(self.task_item_read(tenant, id).await?)
    }

    /// The task's item with its counters laid over it ([`counters::overlay`]): both items in one
    /// consistent BatchGetItem, since the task item says where its counters are only once read.
    async fn task_item_read(&self, tenant: &Tenant, id: &Id) -> Result<Item, Error> {
        let key = |(pk, sk): (String, String)| -> Item {
            [(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))].into()
        };
        let (task_key, counters_key) = (
            (keys::tenant(tenant), keys::task(id)),
            keys::task_counters(tenant, id),
        );
        let read = self
            .batch_get_with(vec![key(task_key.clone()), key(counters_key.clone())], None)
            .await?;
        let is = |item: &Item, (pk, sk): &(String, String)| {
            string_attr(item, PK) == Some(pk.as_str()) && string_attr(item, SK) == Some(sk.as_str())
        };
        let mut item = read
            .iter()
            .find(|item| is(item, &task_key))
            .cloned()
            .ok_or_else(|| task_not_found(id))?;
        // A task created before its counters had an item of their own never reads one.
        if counters::kept_apart(&item) {
            if let Some(counted) = read.into_iter().find(|item| is(item, &counters_key)) {
                counters::overlay(&mut item, counted);
            }
        }
        Ok(item)
    }

    /// Task items as read, each with its counters item laid over it when it keeps them apart:
    /// one BatchGetItem per 100 of those.
    pub(crate) async fn with_counters(&self, mut items: Vec<Item>) -> Result<Vec<Item>, Error> {
        let counters_key = |item: &Item| {
            let tenant = string_attr(item, PK).and_then(keys::tenant_of)?;
            let id = Id::parse(string_attr(item, "id")?)?;
            counters::kept_apart(item).then(|| keys::task_counters(&tenant, &id))
        };
        let wanted: Vec<Item> = items
            .iter()
            .filter_map(counters_key)
            .map(|(pk, sk)| [(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))].into())
            .collect();
        if wanted.is_empty() {
            return Ok(items);
        }
        let mut found: HashMap<String, Item> = self
            .batch_get_with(wanted, None)
            .await?
            .into_iter()
            .filter_map(|item| Some((string_attr(&item, PK)?.to_owned(), item)))
            .collect();
        for item in &mut items {
            let Some((pk, _)) = counters_key(item) else {
                continue;
            };
            // A task deleted between the two reads has no counters item left: it reads as
            // stored.
            if let Some(counted) = found.remove(&pk) {
                counters::overlay(item, counted);
            }
        }
        Ok(items)
    }

    /// A task and its diagnostic counters (D19), read consistently.
    pub async fn task_with_counters(
        &self,
        tenant: &Tenant,
        id: &Id,
    ) -> Result<(Task, TaskCounters), Error> {
        let item = self.task_item_read(tenant, id).await?;
        let number = |name: &str| {
            item.get(name)
                .and_then(|value| value.as_n().ok())
                .and_then(|raw| raw.parse::<i64>().ok())
        };
        let count = |name: &str| number(name).unwrap_or(0).max(0) as u64;
        let counters = TaskCounters {
            waiting: count(counters::CONTACTS_WAITING),
            final_: count(counters::CONTACTS_FINAL),
            skips: Skip::ALL
                .iter()
                .map(|skip| (*skip, count(&counters::contacts_skipped(*skip))))
                .collect(),
            reasons: Reason::ALL
                .iter()
                .map(|reason| (*reason, count(&counters::attempts_ended(*reason))))
                .collect(),
            last_call_at: number("last_call_at").map(Timestamp),
            last_outcome_at: number("last_outcome_at").map(Timestamp),
            busy_until: number("busy_until").map(Timestamp),
            answered: count(counters::CONTACTS_ANSWERED),
        };
        Ok((from_item(item)?, counters))
    }

    /// A page of the tenant's tasks, newest first, optionally those whose name contains
    /// `name_lowercase` (compared lowercased) and those in `status` (D5). Its cost is bounded
    /// by the page (see `store::paging`); filters read the tasks projected to key, name and
    /// status, then the page's records.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str()))]
    pub async fn tasks_page(
        &self,
        tenant: &Tenant,
        page: &PageQuery,
        name_lowercase: Option<&str>,
        status: Option<TaskStatus>,
    ) -> Result<Page<Task>, Error> {
        let pk = keys::tenant(tenant);
        let list = TenantList {
            index: None,
            pk_attr: PK,
            sk_attr: SK,
            pk: pk.clone(),
            prefix: keys::TASK_PREFIX,
            consistent: true,
            record_key: Box::new({
                let pk = pk.clone();
                move |id| [(PK.to_owned(), s(&pk)), (SK.to_owned(), s(keys::task(id)))].into()
            }),
            start_key: Box::new({
                let pk = pk.clone();
                move |id| [(PK.to_owned(), s(&pk)), (SK.to_owned(), s(keys::task(id)))].into()
            }),
            counted: Counted::Tasks,
        };
        let filter = (name_lowercase.is_some() || status.is_some()).then(|| {
            let name = name_lowercase.map(str::to_owned);
            let mut filter = RowFilter {
                projection: "#name",
                names: vec![("#name", "name")],
                expression: None,
                values: Vec::new(),
                keep: Box::new(move |item: &Item| {
                    name.as_deref().is_none_or(|fragment| {
                        string_attr(item, "name")
                            .is_some_and(|stored| stored.to_lowercase().contains(fragment))
                    })
                }),
            };
            if let Some(status) = status {
                filter.expression = Some("#status = :status");
                filter.names.push(("#status", "status"));
                filter.values.push((":status", n(status.code())));
            }
            filter
        });
        let page = self.list_page(tenant, &list, page, filter).await?;
        let rows = self.with_counters(page.rows).await?;
        Page { rows, ..page }.try_map(from_item)
    }

    /// Replaces a DRAFT task's name, description and settings, moving the name guard on rename.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn update_task(
        &self,
        tenant: &Tenant,
        current: &Task,
        next: &Task,
    ) -> Result<(), Error> {
        let settings = serde_dynamo::to_attribute_value(&next.settings)
            .map_err(|e| Error::internal("encode task settings", e))?;
        let expr = Expr::default()
            .name("#name", "name")
            .name("#description", "description")
            .value(":name", s(next.name.as_str()))
            .value(":old", s(current.name.as_str()))
            .value(":description", s(next.description.as_str()))
            .value(":settings", settings)
            .value(":at", n(next.updated_at.0))
            .value(":seen", n(current.updated_at.0));
        let (condition, expr) = status_in(TaskOperation::Update.allowed_from(), expr);
        let renamed = next.name != current.name;
        #[derive(PartialEq)]
        enum Part {
            Task,
            OldNameGuard,
            NewNameGuard,
        }
        let mut actions = Actions::new(&self.table).update(
            Part::Task,
            keys::tenant(tenant),
            keys::task(&current.id),
            "SET #name = :name, #description = :description, settings = :settings, updated_at = :at",
            // Versioned by updated_at: of two concurrent updates the second answers 409 and
            // is sent again on the record it reads then, so neither's fields are lost.
            Some(&format!("{condition} AND #name = :old AND updated_at = :seen")),
            expr,
        )?;
        if renamed {
            actions = actions.move_name(
                (Part::OldNameGuard, Part::NewNameGuard),
                keys::task_name(current.name.as_str()),
                &self.task_name_guard(tenant, next),
            )?;
        }
        self.transact("update task", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if !condition.failed(Part::Task) {
                        return name_taken(&next.name);
                    }
                    match condition
                        .stored(Part::Task)
                        .map(|item| from_item::<Task>(item.clone()))
                    {
                        Some(Ok(stored)) if stored.status == TaskStatus::Draft => {
                            Error::Conflict(format!(
                                "task {} was changed by another request; read it again",
                                current.id
                            ))
                        }
                        _ => refused(
                            TaskOperation::Update,
                            &current.id,
                            condition.stored(Part::Task),
                        ),
                    }
                })
            })
    }

    /// Deletes a task in a state that allows it and frees its name (D10).
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn delete_task(
        &self,
        tenant: &Tenant,
        current: &Task,
        reclaim: &outbound_model::reclaim::ReclaimJob,
    ) -> Result<(), Error> {
        // The name read is the name whose guard goes: a rename in between fails the delete
        // instead of stranding the new name's guard.
        let (condition, expr) = status_in(
            TaskOperation::Delete.allowed_from(),
            Expr::default()
                .name("#name", "name")
                .value(":name", s(current.name.as_str())),
        );
        let condition = format!("{condition} AND #name = :name");
        #[derive(PartialEq)]
        enum Part {
            Task,
            Counters,
            NameGuard,
            ReclaimIntent,
            Count,
        }
        let (counters_pk, counters_sk) = keys::task_counters(tenant, &current.id);
        let actions = Actions::new(&self.table)
            .delete(
                Part::Task,
                keys::tenant(tenant),
                keys::task(&current.id),
                Some((&condition, expr)),
            )?
            .delete(Part::Counters, counters_pk, counters_sk, None)?
            .retire(
                (Part::NameGuard, Part::ReclaimIntent, Part::Count),
                tenant,
                keys::task_name(current.name.as_str()),
                reclaim,
                Counted::Tasks,
            )?;
        self.transact("delete task", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    match condition
                        .stored(Part::Task)
                        .map(|item| from_item::<Task>(item.clone()))
                    {
                        Some(Ok(stored))
                            if TaskOperation::Delete
                                .allowed_from()
                                .contains(&stored.status) =>
                        {
                            Error::Conflict(format!(
                                "task {} was changed by another request; read it again",
                                current.id
                            ))
                        }
                        _ => refused(
                            TaskOperation::Delete,
                            &current.id,
                            condition.stored(Part::Task),
                        ),
                    }
                })
            })
    }

    /// Which of `ids` are contacts of data source `source` (all of them gone when it is).
    pub async fn existing_contacts(
        &self,
        tenant: &Tenant,
        source: &Id,
        ids: &[Id],
    ) -> Result<HashSet<Id>, Error> {
        let Some(shards) = self.shards_if_exists(tenant, source).await? else {
            return Ok(HashSet::new());
        };
        let head: Item = [(PK.to_owned(), s(shards.home())), (SK.to_owned(), s(HEAD))].into();
        let wanted: Vec<Item> = std::iter::once(head)
            .chain(ids.iter().map(|id| shards.contact_key(id)))
            .collect();
        let mut found = HashSet::new();
        let mut head_seen = false;
        for item in self.batch_get(wanted, "sk").await? {
            match string_attr(&item, SK) {
                Some(HEAD) => head_seen = true,
                Some(sk) => {
                    if let Some(id) = sk.strip_prefix(keys::CONTACT_PREFIX).and_then(Id::parse) {
                        found.insert(id);
                    }
                }
                None => {}
            }
        }
        if !head_seen {
            found.clear();
        }
        Ok(found)
    }

    /// The first `most` contacts of `task`, in contact order, whose latest outcome in it is
    /// failed or no answer (D12). A task whose outcomes keep recall marks reads only its marks:
    /// one Query of `F#` keys, at most `most` of them, whatever its number of contacts. One
    /// created before the marks reads every contact state (filtered on the outcome), as before.
    pub async fn failed_task_contacts(
        &self,
        tenant: &Tenant,
        task: &Task,
        most: usize,
    ) -> Result<Vec<Id>, Error> {
        let pk = keys::task_contacts(tenant, &task.id);
        if task.recall_marks {
            let marks = self
                .query_all(
                    |query| {
                        query
                            .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                            .expression_attribute_values(":pk", s(&pk))
                            .expression_attribute_values(":prefix", s(keys::RECALLABLE_PREFIX))
                            .projection_expression("sk")
                            .consistent_read(true)
                    },
                    Some(most),
                )
                .await?;
            return Ok(marks
                .iter()
                .filter_map(|mark| {
                    string_attr(mark, SK)
                        .and_then(|sk| sk.strip_prefix(keys::RECALLABLE_PREFIX))
                        .and_then(Id::parse)
                })
                .take(most)
                .collect());
        }
        let items = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .filter_expression("last_outcome IN (:failed, :no_answer)")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":prefix", s(keys::CONTACT_PREFIX))
                        .expression_attribute_values(
                            ":failed",
                            n(outbound_model::contact::status::FAILED),
                        )
                        .expression_attribute_values(
                            ":no_answer",
                            n(outbound_model::contact::status::NO_ANSWER),
                        )
                        .projection_expression("contact_id")
                        .consistent_read(true)
                },
                Some(most),
            )
            .await?;
        Ok(items
            .iter()
            .filter_map(|item| string_attr(item, "contact_id").and_then(Id::parse))
            .take(most)
            .collect())
    }

    /// Every per-contact state of a task (for export and statistics).
    pub async fn task_contacts(
        &self,
        tenant: &Tenant,
        task: &Id,
    ) -> Result<Vec<TaskContact>, Error> {
        let pk = keys::task_contacts(tenant, task);
        let items = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":prefix", s(keys::CONTACT_PREFIX))
                },
                None,
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }
}

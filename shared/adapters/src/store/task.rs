//! Task records in the tenant partition, their name guards, state transitions as conditional
//! writes on the stored status, and the per-task contact state that recall writes (D10, D12).

use super::keys::{self, HEAD, PK, SK};
use super::names::NameGuard;
use super::paging::{Counted, RowFilter, TenantList};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store, WriteFailure};
use crate::store::counters;
use outbound_model::call::{Reason, Skip};
use outbound_model::diagnostics::TaskCounters;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::limits::Limited;
use outbound_model::page::{Page, PageQuery};
use outbound_model::task::{not_allowed, TaskContact, TaskOperation};
use outbound_model::transition::{Hold, RunPlace, Transition};
use outbound_model::Tenant;
use outbound_model::{Id, Name, Task, TaskStatus, Timestamp};
use std::collections::{HashMap, HashSet};

fn task_not_found(id: &Id) -> Error {
    Error::NotFound(format!("task {id} not found"))
}

fn name_taken(name: &Name) -> Error {
    Error::Conflict(format!("taskName {:?} already exists", name.as_str()))
}

/// The task attribute that marks a RUNNING task as holding one of its tenant's places (D26).
const RUN_PLACE: &str = "run_place";
/// The tenant's count of RUNNING tasks holding a place, on its `COUNTS` item (D26).
const RUNNING_TASKS: &str = "running_tasks";

/// Why one try of a transition did not commit.
enum Moved {
    /// The task is in `status` now, which the change may also leave: try again from there.
    To(TaskStatus),
    /// The task left RUNNING holds no place (it entered RUNNING before places were counted):
    /// try again without giving one back.
    Uncounted,
    Refused(Error),
}

/// The data source's side of a change that takes or gives back its hold (D11).
fn hold_expression(change: &Transition) -> (&'static str, String, Expr) {
    let (hold_update, hold_condition, hold_values) = match change.hold {
        Hold::Acquire => (
            "ADD active_tasks :one",
            "attribute_exists(pk) AND contact_count > :zero",
            Expr::default().value(":one", n(1)).value(":zero", n(0)),
        ),
        // Never below zero: a negative count would make every read of the data source fail.
        _ => (
            "ADD active_tasks :minus_one",
            "attribute_exists(pk) AND active_tasks > :zero",
            Expr::default()
                .value(":minus_one", n(-1))
                .value(":zero", n(0)),
        ),
    };
    match change.contacts_added {
        None => (hold_update, hold_condition.to_owned(), hold_values),
        Some(0) => (
            hold_update,
            format!("{hold_condition} AND (attribute_not_exists(contacts_added) OR contacts_added = :added)"),
            hold_values.value(":added", n(0)),
        ),
        Some(added) => (
            hold_update,
            format!("{hold_condition} AND contacts_added = :added"),
            hold_values.value(":added", n(added)),
        ),
    }
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

/// The update, condition and values of a state change of task `id` from `from` exactly: the
/// event that tells of it names the state it left (D20).
fn transition_expression(
    tenant: &Tenant,
    id: &Id,
    from: TaskStatus,
    change: &Transition,
    place: RunPlace,
) -> (String, String, Expr) {
    let mut sets = vec!["#status = :to", "updated_at = :at"];
    let mut expr = Expr::default()
        .value(":to", n(change.to.code()))
        .value(":at", n(change.at.0));
    if place == RunPlace::Take {
        sets.push("#run_place = :run_place");
        expr = expr.name("#run_place", RUN_PLACE).value(":run_place", n(1));
    }
    if change.set_started {
        sets.push("started_at = :at");
    }
    if change.set_ended {
        sets.push("ended_at = :at");
    }
    if let Some(reason) = &change.stop_reason {
        sets.push("stop_reason = :stop_reason");
        expr = expr.value(":stop_reason", s(reason));
    }
    if let Some(reason) = &change.fail_reason {
        sets.push("fail_reason = :fail_reason");
        expr = expr.value(":fail_reason", s(reason));
    }
    if let Some(count) = change.contact_count {
        sets.push("contact_count = :contact_count");
        expr = expr.value(":contact_count", n(count));
    }
    if let Some((caller, flow)) = &change.setup {
        if let Some(caller) = caller {
            sets.push("#settings.caller_id = :fixed_caller");
            expr = expr
                .name("#settings", "settings")
                .value(":fixed_caller", s(caller.as_str()));
        }
        if let Some(flow) = flow {
            sets.push("#settings.contact_flow_id = :fixed_flow");
            expr = expr
                .name("#settings", "settings")
                .value(":fixed_flow", s(flow));
        }
    }
    if change.to == TaskStatus::Running {
        // Only running tasks are in the running-task index the dialer's tick reads (D13).
        sets.push("gsi1pk = :run_pk, gsi1sk = :run_sk");
        let entry = keys::task(id);
        expr = expr
            .value(
                ":run_pk",
                s(keys::running_partition(keys::index_partition_of(&entry))),
            )
            .value(":run_sk", s(format!("{}#{entry}", keys::tenant(tenant))));
    }
    let mut update = format!("SET {}", sets.join(", "));
    if change.to == TaskStatus::Running {
        // A running task has not ended: a recall that requeues a COMPLETED task clears endTime.
        // Whatever made it idle may have changed while it was not running (D23).
        update.push_str(" REMOVE ended_at, idle_until, held_back_at");
    } else {
        update.push_str(" REMOVE gsi1pk, gsi1sk");
    }
    let (mut condition, mut expr) = status_in(&[from], expr);
    if let RunPlace::GiveBack { counted } = place {
        // The place given back is the one this task took: none for a task that holds none.
        if counted {
            update.push_str(", #run_place");
            condition.push_str(" AND attribute_exists(#run_place)");
        } else {
            condition.push_str(" AND attribute_not_exists(#run_place)");
        }
        expr = expr.name("#run_place", RUN_PLACE);
    }
    if let Some(revision) = change.idle_at_revision {
        condition.push_str(
            " AND (attribute_not_exists(in_flight) OR in_flight = :no_calls) \
             AND (attribute_not_exists(revision) OR revision = :revision) \
             AND attribute_not_exists(pending_recall)",
        );
        expr = expr
            .value(":no_calls", n(0))
            .value(":revision", n(revision));
    }
    // Whatever the change, a run that read the task before it marks it idle no more (D23).
    update.push_str(" ADD awake :one");
    expr = expr.value(":one", n(1));
    if let Some((recall, at)) = &change.pending_recall {
        update = update.replacen(
            "SET ",
            "SET pending_recall = :recall, pending_recall_at = :recall_at, ",
            1,
        );
        update.push_str(", revision :one");
        condition.push_str(" AND attribute_not_exists(pending_recall)");
        expr = expr
            .value(":recall", s(recall.as_str()))
            .value(":recall_at", n(at.0));
    }
    (update, condition, expr)
}

/// The change's write of the task's counters item ([`keys::task_counters`]): the copy of the
/// status the claim's condition reads, the wake of a run's idle mark, and for the engine's end
/// of a task the condition that no call is in flight. Written whatever the task's layout: a
/// task created before the counters had their own item never reads it, and its delete removes
/// it.
fn counters_expression(change: &Transition) -> (String, Option<&'static str>, Expr) {
    let mut update = "SET #status = :to ADD awake :one".to_owned();
    if change.to == TaskStatus::Running {
        update.push_str(" REMOVE idle_until, held_back_at");
    }
    let expr = Expr::default()
        .name("#status", "status")
        .value(":to", n(change.to.code()))
        .value(":one", n(1));
    match change.idle_at_revision {
        Some(_) => (
            update,
            Some("attribute_not_exists(in_flight) OR in_flight = :no_calls"),
            expr.value(":no_calls", n(0)),
        ),
        None => (update, None, expr),
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

    /// The dialing engine's end of a task (D10, D13): completes `current` unless a call is in
    /// flight or a recall came after it was read at its revision (405).
    pub async fn complete_idle(
        &self,
        tenant: &Tenant,
        current: &Task,
        contacts_added: u64,
    ) -> Result<Task, Error> {
        let mut complete = Transition::of(TaskOperation::Complete, Timestamp::now());
        complete.idle_at_revision = Some(current.revision);
        complete.contacts_added = Some(contacts_added);
        self.transition(tenant, current, &complete).await
    }

    /// The dialing engine's verdict that a task cannot go on: FAILED with `reason`.
    pub async fn fail_task(&self, tenant: &Tenant, id: &Id, reason: String) -> Result<Task, Error> {
        let current = self.task(tenant, id).await?;
        TaskOperation::Fail.apply(current.status)?;
        let mut fail = Transition::of(TaskOperation::Fail, Timestamp::now());
        fail.fail_reason = Some(reason);
        self.transition(tenant, &current, &fail).await
    }

    /// Applies a state change to `current` as read: the task's update conditioned on the state
    /// it was read in, its event (D20), and when the change takes or gives back the data source,
    /// its `active_tasks` counter, in one transaction, so a data source delete and a publish can
    /// never both succeed (D11). Of concurrent conflicting changes exactly one succeeds, the
    /// others get 405.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id, op = %change.operation))]
    pub async fn transition(
        &self,
        tenant: &Tenant,
        current: &Task,
        change: &Transition,
    ) -> Result<Task, Error> {
        let source = Some(&current.data_source_id);
        self.transition_from_any(tenant, &current.id, source, current.status, change)
            .await?;
        Ok(change.applied_to(current.clone()))
    }

    /// Applies a state change that keeps the data source as it is ([`Hold::Keep`]) without
    /// reading the task first: one transaction of the update and its event (D20), tried from the
    /// change's first source state; answers the state it is in now.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %id, op = %change.operation))]
    pub async fn transition_in_place(
        &self,
        tenant: &Tenant,
        id: &Id,
        change: &Transition,
    ) -> Result<TaskStatus, Error> {
        debug_assert_eq!(change.hold, Hold::Keep);
        self.transition_from_any(tenant, id, None, change.from[0], change)
            .await?;
        Ok(change.to)
    }

    /// Tries the change from `first`, then, when the task is found in another state the change
    /// may also leave, from that one: the event names the state it left.
    async fn transition_from_any(
        &self,
        tenant: &Tenant,
        id: &Id,
        source: Option<&Id>,
        first: TaskStatus,
        change: &Transition,
    ) -> Result<(), Error> {
        let (mut from, mut counted) = (first, true);
        // Each round either commits, refuses, or learns one thing: another source state, or
        // that the task holds no place to give back.
        for _ in 0..=change.from.len() {
            match self
                .transition_from(tenant, id, source, from, change, counted)
                .await
            {
                Ok(()) => return Ok(()),
                Err(Moved::To(status)) => from = status,
                Err(Moved::Uncounted) => counted = false,
                Err(Moved::Refused(error)) => return Err(error),
            }
        }
        Err(Error::Conflict(format!(
            "task {id} was changed by another request; read it again"
        )))
    }

    /// One try of a transition of task `id`, from `from` exactly; `source` is its data source,
    /// needed when the change takes or gives back its hold. A change out of RUNNING gives back
    /// the task's place when `counted` (see [`RunPlace`]).
    async fn transition_from(
        &self,
        tenant: &Tenant,
        id: &Id,
        source: Option<&Id>,
        from: TaskStatus,
        change: &Transition,
        counted: bool,
    ) -> Result<(), Moved> {
        if !change.from.contains(&from) {
            return Err(Moved::Refused(not_allowed(change.operation, from)));
        }
        let place = match RunPlace::between(from, change.to) {
            RunPlace::GiveBack { .. } => RunPlace::GiveBack { counted },
            place => place,
        };
        let (update, condition, expr) = transition_expression(tenant, id, from, change, place);
        let (pk, sk) = (keys::tenant(tenant), keys::task(id));
        #[derive(PartialEq)]
        enum Part {
            Task,
            Counters,
            Event,
            DataSource,
            RunningCount,
        }
        let limit = self.limits.running_tasks;
        let event = Event::task_state_changed(
            tenant,
            change.at,
            id,
            from,
            change.to,
            change.operation,
            change
                .stop_reason
                .clone()
                .or_else(|| change.fail_reason.clone()),
        );
        let (counters_update, counters_condition, counters_expr) = counters_expression(change);
        let (counters_pk, counters_sk) = keys::task_counters(tenant, id);
        let mut actions = Actions::new(&self.table)
            .update(Part::Task, pk, sk, &update, Some(&condition), expr)
            .and_then(|actions| {
                actions.update(
                    Part::Counters,
                    counters_pk,
                    counters_sk,
                    &counters_update,
                    counters_condition,
                    counters_expr,
                )
            })
            .and_then(|actions| actions.event(Part::Event, &event))
            .map_err(Moved::Refused)?;
        let source = match (change.hold, source) {
            (Hold::Keep, _) => None,
            (_, Some(source)) => Some(source),
            (_, None) => {
                return Err(Moved::Refused(Error::internal(
                    "task transition",
                    "a change of the data source's hold without the data source",
                )))
            }
        };
        let running = |update: &str, condition: Option<&str>, expr: Expr| {
            let expr = expr.name("#running", RUNNING_TASKS);
            (update.to_owned(), condition.map(str::to_owned), expr)
        };
        let count = match place {
            RunPlace::Take => Some(running(
                "ADD #running :one",
                Some("attribute_not_exists(#running) OR #running < :limit"),
                Expr::default()
                    .value(":one", n(1))
                    .value(":limit", n(limit)),
            )),
            RunPlace::GiveBack { counted: true } => Some(running(
                "ADD #running :minus_one",
                None,
                Expr::default().value(":minus_one", n(-1)),
            )),
            RunPlace::GiveBack { counted: false } | RunPlace::Keep => None,
        };
        if let Some((update, condition, expr)) = count {
            actions = actions
                .update(
                    Part::RunningCount,
                    keys::tenant(tenant),
                    keys::COUNTS.to_owned(),
                    &update,
                    condition.as_deref(),
                    expr,
                )
                .map_err(Moved::Refused)?;
        }
        if let Some(source) = source {
            let (hold_update, hold_condition, hold_values) = hold_expression(change);
            actions = actions
                .update(
                    Part::DataSource,
                    keys::data_source(tenant, source),
                    HEAD.to_owned(),
                    hold_update,
                    Some(&hold_condition),
                    hold_values,
                )
                .map_err(Moved::Refused)?;
        }
        let condition = match self.transact("task transition", actions).await {
            Ok(()) => return Ok(()),
            Err(WriteFailure::Other(error)) => return Err(Moved::Refused(error)),
            Err(WriteFailure::Condition(condition)) => condition,
        };
        let source = source.map_or("", Id::as_str);
        Err(Moved::Refused(if condition.failed(Part::Task) {
            let stored = condition.stored(Part::Task);
            match stored.map(|item| from_item::<Task>(item.clone())) {
                Some(Ok(task)) if task.status != from && change.from.contains(&task.status) => {
                    return Err(Moved::To(task.status));
                }
                Some(Ok(task))
                    if task.status == from
                        && place == (RunPlace::GiveBack { counted: true })
                        && stored.is_some_and(|item| !item.contains_key(RUN_PLACE)) =>
                {
                    return Err(Moved::Uncounted);
                }
                _ => refused(change.operation, id, stored),
            }
        } else if condition.failed(Part::Counters) {
            // A call went out since the task was read: it is not idle.
            not_allowed(change.operation, from)
        } else if condition.failed(Part::RunningCount) {
            Limited::RunningTasks.reached(limit)
        } else if change.hold == Hold::Release && change.contacts_added.is_some() {
            Error::Conflict(format!(
                "dataSource {source} gained contacts during the completion check"
            ))
        } else if change.hold == Hold::Release {
            Error::internal("task transition", "data source hold already released")
        } else if condition.stored(Part::DataSource).is_none() {
            Error::invalid(format!("dataSource {source} does not exist"))
        } else {
            Error::invalid(format!("dataSource {source} has no contacts"))
        }))
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

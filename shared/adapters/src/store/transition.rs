//! A task's state transitions (D10, D11, D13, D26): one conditional write on the stored status,
//! in one transaction with what moves with it (the data source's hold, the tenant's count of
//! running tasks, the counters item's copy of the status, the change in the task's history),
//! tried again from whatever state a concurrent change left, and the engine's own ends of a task
//! (completed when idle, failed).

use super::history::state_change_item;
use super::keys::{self, HEAD};
use super::task::{refused, status_in};
use super::{from_item, n, s, Actions, Expr, Store, WriteFailure};
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::history::StateChange;
use outbound_model::limits::Limited;
use outbound_model::task::{not_allowed, TaskOperation};
use outbound_model::transition::{Hold, RunPlace, Transition};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};

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

/// The update, condition and values of a state change of task `id` from `from` exactly: the
/// event that tells of it names the state it left (D20).
fn transition_expression(
    tenant: &Tenant,
    id: &Id,
    from: TaskStatus,
    change: &Transition,
    place: RunPlace,
    index_partitions: u32,
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
                s(keys::running_partition(keys::index_partition_of(
                    &entry,
                    index_partitions,
                ))),
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
        let (update, condition, expr) =
            transition_expression(tenant, id, from, change, place, self.index_partitions);
        let (pk, sk) = (keys::tenant(tenant), keys::task(id));
        #[derive(PartialEq)]
        enum Part {
            Task,
            Counters,
            Event,
            History,
            DataSource,
            RunningCount,
        }
        let limit = self.limits.running_tasks;
        // Its stop or failure reason, told by its event and kept in its history.
        let reason = (change.stop_reason.clone()).or_else(|| change.fail_reason.clone());
        let event = Event::task_state_changed(
            tenant,
            change.at,
            id,
            from,
            change.to,
            change.operation,
            reason.clone(),
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
            .and_then(|actions| {
                let change = StateChange {
                    at: change.at,
                    status: change.to,
                    reason,
                };
                actions.put(Part::History, state_change_item(tenant, id, &change)?, None)
            })
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
}

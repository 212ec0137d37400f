//! Recall's writes (D12), all-or-nothing from the client's view. A recall of up to
//! [`RECALL_IN_ONE`] contacts is one transaction with the task. A larger one is committed by a
//! single conditional write on the task (`pending_recall`) once its list of contacts is stored,
//! and the dialer's recall job then applies it contact by contact, idempotently: a recall the
//! client was told succeeded is applied in full, one it was told failed changes nothing.

use super::dialing::{Deltas, WAKE};
use super::keys::{self};
use super::task::{refused, status_in};
use super::{from_item, n, s, string_attr, Actions, Expr, Store, WriteFailure};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::error::Error;
use outbound_model::task::TaskContact;
use outbound_model::task::TaskOperation;
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use std::collections::HashMap;

/// Contacts one recall transaction holds beside its task and its counters item (DynamoDB takes
/// 100 actions).
pub const RECALL_IN_ONE: usize = 98;

/// Reads and tries of one group of a recall whose contacts keep moving under it.
const RECALL_TRIES: u32 = 8;

/// The condition on the task item in a recall's transaction, with its values. Each group moves
/// the task's revision, so a completion that read the task before it fails its condition, and
/// wakes it (D23): its recalled contacts are due.
struct TaskStep<'a> {
    condition: &'a str,
    expr: Expr,
}

/// The condition that a contact's state still stands where the recall read it (absent, or with
/// the attributes its place in the counters follows from), so concurrent recalls, which change
/// none of them but `done`, meet at most once.
pub(super) fn standing_as_read(before: Option<&TaskContact>, expr: Expr) -> (String, Expr) {
    let Some(state) = before else {
        return ("attribute_not_exists(pk)".to_owned(), expr);
    };
    let mut parts = vec![
        "attempts = :seen_attempts".to_owned(),
        if state.done {
            "done = :true".to_owned()
        } else {
            "(attribute_not_exists(done) OR done = :false)".to_owned()
        },
        if state.in_call.is_some() {
            "attribute_exists(in_call)".to_owned()
        } else {
            "attribute_not_exists(in_call)".to_owned()
        },
    ];
    let mut expr = expr.value(":seen_attempts", n(state.attempts));
    match state.skip {
        Some(skip) => {
            parts.push("skip = :seen_skip".to_owned());
            expr = expr.value(":seen_skip", s(skip.name()));
        }
        None => parts.push("attribute_not_exists(skip)".to_owned()),
    }
    (parts.join(" AND "), expr)
}

/// Why a group of a recall was not written.
enum GroupFailure {
    /// The task's condition failed: what was stored, if anything.
    Task(Option<crate::store::Item>),
    Other(Error),
}

/// The update that gives a contact a fresh allowance of `maxDialCount` attempts at `priority`,
/// due at `at`, in the waiting index (D12, D13); `applied` marks it as done by that recall.
fn recalled_contact(
    tenant: &Tenant,
    task: &Task,
    id: &Id,
    priority: u8,
    at: Timestamp,
    applied: Option<&Id>,
) -> (String, Expr) {
    let mut update = "SET contact_id = :id, allowance = if_not_exists(attempts, :zero) + :max, \
                      attempts = if_not_exists(attempts, :zero), \
                      last_outcome = if_not_exists(last_outcome, :zero), \
                      priority = :priority, next_attempt_at = :at, updated_at = :at, \
                      done = :false, recalled = :true, gsi1pk = :wait_pk, gsi1sk = :wait_sk"
        .to_owned();
    let mut expr = Expr::default()
        .value(":id", s(id.as_str()))
        .value(":zero", n(0))
        .value(":max", n(task.settings.max_dial_count))
        .value(":priority", n(priority))
        .value(":at", n(at.0))
        .value(":false", AttributeValue::Bool(false))
        .value(":true", AttributeValue::Bool(true))
        .value(":wait_pk", s(keys::waiting(tenant, &task.id)))
        .value(":wait_sk", s(keys::waiting_order(Some(priority), at.0)));
    if let Some(recall) = applied {
        update.push_str(", applied_recall = :recall");
        expr = expr.value(":recall", s(recall.as_str()));
    }
    (update, expr)
}

fn recall_pending(task: &Id) -> Error {
    Error::Conflict(format!(
        "task {task} is still applying an earlier recall; try again shortly"
    ))
}

impl Store {
    /// Recalls up to [`RECALL_IN_ONE`] contacts in one transaction with the task, while the task
    /// is RUNNING or PAUSED (else 405: a COMPLETED task is requeued with its recall instead,
    /// never recalled in place, where nothing would dial the recalled contacts). The task's
    /// revision moves, so a completion that read the task before this recall fails its condition
    /// instead of ending a task with contacts queued.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %task.id, count = ids.len()))]
    pub async fn queue_recall(
        &self,
        tenant: &Tenant,
        task: &Task,
        ids: &[Id],
        priority: u8,
        at: Timestamp,
    ) -> Result<(), Error> {
        debug_assert!(ids.len() <= RECALL_IN_ONE);
        let (condition, expr) = status_in(
            &[TaskStatus::Running, TaskStatus::Paused],
            Expr::default().value(":one", n(1)),
        );
        let task_step = TaskStep {
            condition: &condition,
            expr,
        };
        match self
            .recall_group(tenant, task, ids, priority, at, None, task_step)
            .await
        {
            Ok(_) => Ok(()),
            Err(GroupFailure::Task(stored)) => {
                Err(refused(TaskOperation::Recall, &task.id, stored.as_ref()))
            }
            Err(GroupFailure::Other(error)) => Err(error),
        }
    }

    /// Recalls `ids` (at most [`RECALL_IN_ONE`]) in one transaction with the task: each contact
    /// as read just before (its state unchanged since, or still absent), and the task's counters
    /// (D19) moved by what the recall makes of each. A contact another writer moved meanwhile
    /// makes the group read again and try once more; one already given this recall (`applied`)
    /// is left alone. Answers the number recalled.
    #[allow(clippy::too_many_arguments)]
    async fn recall_group(
        &self,
        tenant: &Tenant,
        task: &Task,
        ids: &[Id],
        priority: u8,
        at: Timestamp,
        applied: Option<&Id>,
        task_step: TaskStep<'_>,
    ) -> Result<usize, GroupFailure> {
        #[derive(Clone, Copy, PartialEq)]
        enum Part {
            Task,
            Counters,
            Contact,
        }
        let pk = keys::task_contacts(tenant, &task.id);
        for attempt in 0..RECALL_TRIES {
            let wanted = ids
                .iter()
                .map(|id| {
                    [
                        (keys::PK.to_owned(), s(&pk)),
                        (keys::SK.to_owned(), s(keys::contact(id))),
                    ]
                    .into()
                })
                .collect();
            let states: HashMap<Id, (TaskContact, bool)> = self
                .batch_get_with(wanted, None)
                .await
                .map_err(GroupFailure::Other)?
                .into_iter()
                .map(|item| {
                    let done_here = applied.is_some_and(|recall| {
                        string_attr(&item, "applied_recall") == Some(recall.as_str())
                    });
                    from_item::<TaskContact>(item)
                        .map(|state| (state.contact_id.clone(), (state, done_here)))
                })
                .collect::<Result<_, Error>>()
                .map_err(GroupFailure::Other)?;
            let mut moved = Deltas::default();
            let mut contacts = Vec::new();
            for id in ids {
                let before = states.get(id);
                if before.is_some_and(|(_, done_here)| *done_here) {
                    continue;
                }
                let before = before.map(|(state, _)| state);
                let base = before
                    .cloned()
                    .unwrap_or_else(|| TaskContact::undialled(id.clone(), 0, priority, at));
                let after = TaskContact {
                    done: false,
                    recalled: true,
                    ..base
                };
                moved.moved(before, Some(&after));
                let (update, expr) = recalled_contact(tenant, task, id, priority, at, applied);
                let (condition, expr) = standing_as_read(before, expr);
                contacts.push((id, update, condition, expr));
            }
            if contacts.is_empty() {
                return Ok(0);
            }
            let mut actions = Actions::new(&self.table)
                .task_woken(
                    (Part::Task, Part::Counters),
                    (tenant, task),
                    &moved,
                    (task_step.condition, task_step.expr.clone()),
                )
                .map_err(GroupFailure::Other)?;
            let count = contacts.len();
            for (id, update, condition, expr) in contacts {
                actions = actions
                    .update(
                        Part::Contact,
                        pk.clone(),
                        keys::contact(id),
                        &update,
                        Some(&condition),
                        expr,
                    )
                    .map_err(GroupFailure::Other)?;
            }
            match self.transact("recall contacts", actions).await {
                Ok(()) => return Ok(count),
                Err(failure) => {
                    let condition = failure.condition().map_err(GroupFailure::Other)?;
                    if condition.failed(Part::Task) {
                        return Err(GroupFailure::Task(condition.stored(Part::Task).cloned()));
                    }
                    if condition.failed(Part::Counters) {
                        // Deleted between the two: gone.
                        return Err(GroupFailure::Task(None));
                    }
                    // A contact moved since it was read (an outcome, a claim, another recall):
                    // read again.
                    tokio::time::sleep(crate::store::backoff(attempt)).await;
                }
            }
        }
        Err(GroupFailure::Other(Error::unavailable(
            "recall contacts",
            "the contacts kept changing while they were recalled",
        )))
    }

    /// Commits a large recall on a RUNNING or PAUSED task: one conditional write records it as
    /// pending (and moves the revision), once at a time (409 while another is being applied).
    pub async fn start_recall(
        &self,
        tenant: &Tenant,
        task: &Id,
        recall: &Id,
        at: Timestamp,
    ) -> Result<(), Error> {
        let (condition, expr) = status_in(
            &[TaskStatus::Running, TaskStatus::Paused],
            Expr::default()
                .value(":recall", s(recall.as_str()))
                .value(":at", n(at.0))
                .value(":one", n(1)),
        );
        let condition = format!("{condition} AND attribute_not_exists(pending_recall)");
        #[derive(PartialEq)]
        enum Part {
            Task,
            Counters,
        }
        // The wake goes to the counters item whatever the task's layout, as a transition's does.
        let (counters_pk, counters_sk) = keys::task_counters(tenant, task);
        let actions = Actions::new(&self.table)
            .update(
                Part::Task,
                keys::tenant(tenant),
                keys::task(task),
                "SET pending_recall = :recall, pending_recall_at = :at \
                 REMOVE idle_until ADD revision :one, awake :one",
                Some(&condition),
                expr,
            )?
            .update(
                Part::Counters,
                counters_pk,
                counters_sk,
                WAKE,
                None,
                Expr::default().value(":one", n(1)),
            )?;
        let Err(failure) = self.transact("start recall", actions).await else {
            return Ok(());
        };
        match failure.condition()?.stored(Part::Task) {
            Some(item) if item.contains_key("pending_recall") => Err(recall_pending(task)),
            item => Err(refused(TaskOperation::Recall, task, item)),
        }
    }

    /// Applies a committed recall to `ids`, each at most once whatever the number of runs, in
    /// groups of [`RECALL_IN_ONE`] contacts, each one transaction with the task's counters.
    pub async fn apply_recall(
        &self,
        tenant: &Tenant,
        task: &Task,
        recall: &Id,
        ids: &[Id],
        priority: u8,
        at: Timestamp,
    ) -> Result<usize, Error> {
        let mut applied = 0;
        for group in ids.chunks(RECALL_IN_ONE) {
            // Each group wakes the task and moves its revision, as the recall's start did: a
            // run may have rested it between two groups, before the contacts of the next were
            // due.
            let task_step = TaskStep {
                condition: "attribute_exists(pk)",
                expr: Expr::default().value(":one", n(1)),
            };
            match self
                .recall_group(tenant, task, group, priority, at, Some(recall), task_step)
                .await
            {
                Ok(count) => applied += count,
                // The task is gone: nothing is left to recall.
                Err(GroupFailure::Task(_)) => return Ok(applied),
                Err(GroupFailure::Other(error)) => return Err(error),
            }
        }
        Ok(applied)
    }

    /// Records that the first `applied` contacts of a pending recall's list are applied, and when,
    /// so a later job resumes there and the tick leaves a recall in progress alone. Only forward,
    /// and only while that recall is pending.
    pub async fn advance_recall(
        &self,
        tenant: &Tenant,
        task: &Id,
        recall: &Id,
        applied: u64,
        at: Timestamp,
    ) -> Result<(), Error> {
        let written = self
            .update_one(
                "advance recall",
                (keys::tenant(tenant), keys::task(task)),
                "SET pending_recall_applied = :applied, pending_recall_at = :at",
                Some(
                    "pending_recall = :recall AND (attribute_not_exists(pending_recall_applied) \
                     OR pending_recall_applied < :applied)",
                ),
                Expr::default()
                    .value(":recall", s(recall.as_str()))
                    .value(":applied", n(applied))
                    .value(":at", n(at.0)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// Marks a recall applied: the task may complete again.
    pub async fn finish_recall(
        &self,
        tenant: &Tenant,
        task: &Id,
        recall: &Id,
    ) -> Result<(), Error> {
        let written = self
            .update_one(
                "finish recall",
                (keys::tenant(tenant), keys::task(task)),
                "REMOVE pending_recall, pending_recall_at, pending_recall_applied",
                Some("pending_recall = :recall"),
                Expr::default().value(":recall", s(recall.as_str())),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }
}

//! Recall's writes (D12), all-or-nothing from the client's view. A recall of up to
//! [`RECALL_IN_ONE`] contacts is one transaction with the task. A larger one is committed by a
//! single conditional write on the task (`pending_recall`) once its list of contacts is stored,
//! and the dialer's recall job then applies it contact by contact, idempotently: a recall the
//! client was told succeeded is applied in full, one it was told failed changes nothing.

use super::keys::{self};
use super::task::{refused, status_in};
use super::{n, s, Actions, Expr, Store, WriteFailure};
use crate::error::Error;
use crate::model::task::TaskOperation;
use crate::model::Tenant;
use crate::model::{Id, Task, TaskStatus, Timestamp};
use aws_sdk_dynamodb::types::AttributeValue;

/// Contacts one recall transaction holds beside its task (DynamoDB takes 100 actions).
pub const RECALL_IN_ONE: usize = 99;

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
        #[derive(PartialEq)]
        enum Step {
            Task,
            Contact,
        }
        let mut actions = Actions::new(&self.table).update(
            Step::Task,
            keys::tenant(tenant),
            keys::task(&task.id),
            "ADD revision :one",
            Some(&condition),
            expr,
        )?;
        let pk = keys::task_contacts(tenant, &task.id);
        for id in ids {
            let (update, expr) = recalled_contact(tenant, task, id, priority, at, None);
            actions = actions.update(
                Step::Contact,
                pk.clone(),
                keys::contact(id),
                &update,
                None,
                expr,
            )?;
        }
        self.transact("queue recall", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    refused(
                        TaskOperation::Recall,
                        &task.id,
                        condition.stored(Step::Task),
                    )
                })
            })
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
        let written = self
            .update_one(
                "start recall",
                (keys::tenant(tenant), keys::task(task)),
                "SET pending_recall = :recall, pending_recall_at = :at ADD revision :one",
                Some(&condition),
                expr,
            )
            .await;
        let Err(failure) = written else {
            return Ok(());
        };
        match failure.condition()?.stored(()) {
            Some(item) if item.contains_key("pending_recall") => Err(recall_pending(task)),
            item => Err(refused(TaskOperation::Recall, task, item)),
        }
    }

    /// Applies a committed recall to `ids`, each at most once whatever the number of runs.
    pub async fn apply_recall(
        &self,
        tenant: &Tenant,
        task: &Task,
        recall: &Id,
        ids: &[Id],
        priority: u8,
        at: Timestamp,
    ) -> Result<usize, Error> {
        use futures::stream::{self, StreamExt, TryStreamExt};
        let pk = keys::task_contacts(tenant, &task.id);
        // Each contact is its own item: 16 writes at once keep a chunk well inside a run.
        let writes: Vec<_> = ids
            .iter()
            .map(|id| {
                let (update, expr) = recalled_contact(tenant, task, id, priority, at, Some(recall));
                ((pk.clone(), keys::contact(id)), update, expr)
            })
            .collect();
        stream::iter(writes)
            .map(|(key, update, expr)| async move {
                let written = self
                    .update_one(
                        "apply recall",
                        key,
                        &update,
                        Some("attribute_not_exists(applied_recall) OR applied_recall <> :recall"),
                        expr,
                    )
                    .await;
                WriteFailure::took_effect(written).map(usize::from)
            })
            .buffer_unordered(16)
            .try_fold(0, |sum, one| async move { Ok(sum + one) })
            .await
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

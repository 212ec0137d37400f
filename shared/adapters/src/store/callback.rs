//! Callbacks' writes and list (D31). Setting, moving and cancelling one is a transaction of the
//! contact's state in the task (its whole item, conditioned on the state as read), the
//! callback's record, the task (its state must allow it; its revision moves, so a completion
//! that read it before fails) and its counters item (the wake, and what the change does to the
//! diagnostics' counts, D19). The outcome of a callback's call and a final skip settle its
//! record in their own transactions ([`super::dialing`]).

use super::dialing::Deltas;
use super::keys::{self, PK, SK};
use super::paging::{Counted, RowFilter, TenantList};
use super::recall::standing_as_read;
use super::task::{refused, status_in};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::callback::{
    Before, CallbackRecord, CallbackSource, CallbackStatus, PendingCallback, CALLBACK_RANK,
    MAX_CALLBACKS,
};
use outbound_model::error::Error;
use outbound_model::page::PageQuery;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{TaskContact, TaskOperation};
use outbound_model::{Id, Page, Task, TaskStatus, Tenant, Timestamp};

/// Reads and tries of a callback's write whose contact keeps moving under it.
const TRIES: u32 = 6;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Task,
    Counters,
    Contact,
    Record,
}

/// What a callback write does to the contact's state.
enum Change<'a> {
    /// A new callback, or a pending one moved to another time.
    Set {
        at: Timestamp,
        source: CallbackSource,
        phone: &'a str,
    },
    Cancel,
}

impl Store {
    /// Promises the contact `contact` (whose number is `phone`) of `task` a call at `at`, as the
    /// API asks (D31), or moves its pending callback there. 409 when a call of it is in flight or it had its three callbacks; 405
    /// unless the task is RUNNING or PAUSED (a COMPLETED one is requeued first by the caller).
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), task = %task.id, contact = %contact))]
    pub async fn set_callback(
        &self,
        tenant: &Tenant,
        task: &Task,
        (contact, phone): (&Id, &str),
        at: Timestamp,
        now: Timestamp,
    ) -> Result<(), Error> {
        let source = CallbackSource::Api;
        let change = Change::Set { at, source, phone };
        self.change_callback(tenant, task, contact, &change, now)
            .await
    }

    /// Cancels the contact's pending callback (D31): its state goes back to where it stood
    /// before the callback was set. 404 when it has none pending.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), task = %task.id, contact = %contact))]
    pub async fn cancel_callback(
        &self,
        tenant: &Tenant,
        task: &Task,
        contact: &Id,
        now: Timestamp,
    ) -> Result<(), Error> {
        self.change_callback(tenant, task, contact, &Change::Cancel, now)
            .await
    }

    async fn change_callback(
        &self,
        tenant: &Tenant,
        task: &Task,
        contact: &Id,
        change: &Change<'_>,
        now: Timestamp,
    ) -> Result<(), Error> {
        for attempt in 0..TRIES {
            let before = self.task_contact(tenant, &task.id, contact).await?;
            if before.as_ref().is_some_and(|state| state.in_call.is_some()) {
                return Err(Error::Conflict(format!(
                    "contact {contact} has a call in flight: change its callback once the call \
                     has ended"
                )));
            }
            let actions =
                self.callback_actions(tenant, task, contact, before.as_ref(), change, now)?;
            let failure = match self.transact("change callback", actions).await {
                Ok(()) => return Ok(()),
                Err(failure) => failure.condition()?,
            };
            if failure.failed(Part::Task) {
                let stored = failure.stored(Part::Task);
                return Err(refused(TaskOperation::Callback, &task.id, stored));
            }
            if failure.failed(Part::Counters) {
                return Err(refused(TaskOperation::Callback, &task.id, None));
            }
            // The contact moved since it was read (a claim, an outcome, a skip): read again.
            tokio::time::sleep(super::backoff(attempt)).await;
        }
        Err(Error::unavailable(
            "change callback",
            "the contact kept changing while its callback was written",
        ))
    }

    fn callback_actions(
        &self,
        tenant: &Tenant,
        task: &Task,
        contact: &Id,
        before: Option<&TaskContact>,
        change: &Change<'_>,
        now: Timestamp,
    ) -> Result<Actions<'_, Part>, Error> {
        let pending = before.and_then(|state| state.callback.as_ref());
        let base = before.cloned().unwrap_or_else(|| {
            TaskContact::undialled(
                contact.clone(),
                u32::from(task.settings.max_dial_count),
                task.settings.priority,
                now,
            )
        });
        let pk = keys::task_contacts(tenant, &task.id);
        let (after, record) = match (change, pending) {
            (Change::Cancel, None) => {
                return Err(Error::NotFound(format!(
                    "contact {contact} has no pending callback in task {}",
                    task.id
                )))
            }
            (Change::Cancel, Some(pending)) => {
                let back = pending.before;
                let after = TaskContact {
                    allowance: back.allowance,
                    done: back.done,
                    next_attempt_at: (!back.done)
                        .then(|| back.next_attempt_at.unwrap_or(now).max(now)),
                    recalled: back.recalled,
                    priority: back.priority,
                    callback: None,
                    callback_at: back.callback_at,
                    updated_at: now,
                    ..base
                };
                let record = RecordWrite::Status(pending.id.clone(), CallbackStatus::Cancelled);
                (after, record)
            }
            (Change::Set { at, .. }, Some(pending)) => {
                let after = TaskContact {
                    next_attempt_at: Some(*at),
                    skip: None,
                    callback: Some(PendingCallback {
                        at: *at,
                        ..pending.clone()
                    }),
                    callback_at: Some(*at),
                    updated_at: now,
                    ..base
                };
                (after, RecordWrite::Moved(pending.id.clone(), *at))
            }
            (Change::Set { at, source, phone }, None) => {
                if base.callbacks >= MAX_CALLBACKS {
                    return Err(Error::Conflict(format!(
                        "contact {contact} has had {MAX_CALLBACKS} callbacks in this task, the \
                         most it may"
                    )));
                }
                let id = Id::new();
                let pending = PendingCallback {
                    id: id.clone(),
                    at: *at,
                    source: *source,
                    before: Before {
                        allowance: base.allowance,
                        done: base.done,
                        next_attempt_at: base.next_attempt_at,
                        recalled: base.recalled,
                        priority: base.priority,
                        callback_at: base.callback_at,
                    },
                };
                let record = CallbackRecord {
                    id,
                    contact_id: contact.clone(),
                    phone: (*phone).to_owned(),
                    at: *at,
                    source: *source,
                    status: CallbackStatus::Pending,
                    reason: None,
                    created_at: now,
                };
                // Two tries (D31): the callback's call, and one more if it is not answered.
                let after = TaskContact {
                    allowance: base.attempts + 2,
                    done: false,
                    next_attempt_at: Some(*at),
                    recalled: true,
                    priority: CALLBACK_RANK,
                    skip: None,
                    callback: Some(pending),
                    callbacks: base.callbacks + 1,
                    callback_at: Some(*at),
                    updated_at: now,
                    ..base
                };
                (after, RecordWrite::New(record))
            }
        };
        let mut after = after;
        if planted(Bug::CallbackEarly) && after.callback.is_some() {
            after.next_attempt_at = Some(now);
        }
        let mut moved = Deltas::default();
        moved.moved(before, Some(&after));
        let mut item = to_item(&after, [(PK, pk.clone()), (SK, keys::contact(contact))])?;
        if let Some(due) = after.next_attempt_at.filter(|_| !after.done) {
            let rank = after.recalled.then_some(after.priority);
            item.insert(keys::GSI1_PK.to_owned(), s(keys::waiting(tenant, &task.id)));
            item.insert(
                keys::GSI1_SK.to_owned(),
                s(keys::waiting_order(rank, due.0)),
            );
        }
        let (condition, expr) = state_as_read(before);
        // A COMPLETED task is requeued before (D31); a STOPPED one's callbacks are missed.
        let (task_condition, task_expr) = status_in(
            &[TaskStatus::Running, TaskStatus::Paused],
            Expr::default().value(":one", n(1)),
        );
        let mut actions = Actions::new(&self.table).task_woken(
            (Part::Task, Part::Counters),
            (tenant, task),
            &moved,
            (&task_condition, task_expr),
        )?;
        actions = actions.put(Part::Contact, item, Some((&condition, expr)))?;
        actions = match record {
            RecordWrite::New(record) => {
                let item = to_item(&record, [(PK, pk), (SK, keys::callback(&record.id))])?;
                actions.put(
                    Part::Record,
                    item,
                    Some(("attribute_not_exists(pk)", Expr::default())),
                )?
            }
            RecordWrite::Moved(id, at) => actions.update(
                Part::Record,
                pk,
                keys::callback(&id),
                "SET #at = :at",
                Some("#status = :pending"),
                pending_expr().name("#at", "at").value(":at", n(at.0)),
            )?,
            RecordWrite::Status(id, status) => actions.update(
                Part::Record,
                pk,
                keys::callback(&id),
                "SET #status = :status",
                Some("#status = :pending"),
                pending_expr().value(":status", s(status.name())),
            )?,
        };
        Ok(actions)
    }

    /// A page of the task's callbacks (D5, D31), in the order they were set, those whose
    /// status as shown (see [`CallbackRecord::shown_status`]) is `status` when one is asked.
    /// Reads every callback record of the task projected to its status, then the page's.
    pub async fn callbacks_page(
        &self,
        tenant: &Tenant,
        task: &Task,
        page: &PageQuery,
        status: Option<CallbackStatus>,
    ) -> Result<Page<CallbackRecord>, Error> {
        let pk = keys::task_contacts(tenant, &task.id);
        let key = {
            let pk = pk.clone();
            move |id: &Id| -> Item {
                [
                    (PK.to_owned(), s(&pk)),
                    (SK.to_owned(), s(keys::callback(id))),
                ]
                .into()
            }
        };
        let list = TenantList {
            index: None,
            pk_attr: PK,
            sk_attr: SK,
            pk,
            prefix: keys::CALLBACK_PREFIX,
            consistent: true,
            record_key: Box::new(key.clone()),
            start_key: Box::new(key),
            // Never read: the list is always read as a filtered one, whose total is its matches.
            counted: Counted::Tasks,
        };
        let task_status = task.status;
        let filter = RowFilter {
            projection: "#cbstatus",
            names: vec![("#cbstatus", "status")],
            expression: None,
            values: Vec::new(),
            keep: Box::new(move |item: &Item| {
                let Some(wanted) = status else {
                    return true;
                };
                let stored = string_attr(item, "status")
                    .and_then(|raw| CallbackStatus::parse(raw).ok())
                    .unwrap_or(CallbackStatus::Pending);
                stored.shown(task_status) == wanted
            }),
        };
        self.list_page(tenant, &list, page, Some(filter))
            .await?
            .try_map(from_item)
    }
}

/// What a callback write does to the callback's record.
enum RecordWrite {
    New(CallbackRecord),
    Moved(Id, Timestamp),
    Status(Id, CallbackStatus),
}

fn pending_expr() -> Expr {
    Expr::default()
        .name("#status", "status")
        .value(":pending", s(CallbackStatus::Pending.name()))
}

/// The condition that the contact's state is still the one read: absent, or standing where it
/// stood with nothing written since (every writer of a state moves its `updated_at`).
fn state_as_read(before: Option<&TaskContact>) -> (String, Expr) {
    let expr = Expr::default()
        .value(":true", AttributeValue::Bool(true))
        .value(":false", AttributeValue::Bool(false));
    let (condition, expr) = standing_as_read(before, expr);
    match before {
        None => (condition, expr),
        Some(state) => (
            format!("{condition} AND updated_at = :seen_updated"),
            expr.value(":seen_updated", n(state.updated_at.0)),
        ),
    }
}

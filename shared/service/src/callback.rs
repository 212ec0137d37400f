//! Callbacks by the API (D31): set one for a contact of a task, move it, cancel it, list them.
//! A callback is checked against the clock (60 s to 30 days ahead) and the contact's calling
//! hours in its own zones before anything is written; a COMPLETED task is requeued first, as a
//! recall requeues it (D10, D12).

use outbound_adapters::store::Store;
use outbound_model::callback::{check_ahead, CallbackSource, CallbackStatus, CallbackView};
use outbound_model::error::Error;
use outbound_model::local_time::{contact_zones, Windows};
use outbound_model::numbers::e164;
use outbound_model::page::PageQuery;
use outbound_model::task::TaskOperation;
use outbound_model::transition::{Hold, Transition};
use outbound_model::{Id, Page, Task, TaskStatus, Tenant, Timestamp};

/// Promises contact `contact` of task `task` a call at `at` (D31), or moves its pending one
/// there: the callback as it now stands.
pub async fn set(
    store: &Store,
    tenant: &Tenant,
    (task, contact): (&Id, &Id),
    at: Timestamp,
    zone: chrono_tz::Tz,
) -> Result<CallbackView, Error> {
    let now = Timestamp::now();
    check_ahead(at, now)?;
    let task = store.task(tenant, task).await?;
    TaskOperation::Callback.apply(task.status)?;
    let (settings, source, targets) = futures::future::try_join3(
        store.settings(tenant),
        store.data_source(tenant, &task.data_source_id),
        store.contact_targets(
            tenant,
            &task.data_source_id,
            std::slice::from_ref(contact),
            &[],
        ),
    )
    .await?;
    let target = targets.get(contact).ok_or_else(|| {
        Error::NotFound(format!(
            "contact {contact} not found in the task's data source"
        ))
    })?;
    // The calling hours hold for a callback (D31), read in the contact's own zones.
    let country = source.default_country.or(settings.default_country);
    let number = e164(&target.phone, country);
    let windows = Windows::of(&task.settings, settings.calling_hours, zone).calling_hours_only();
    let zones = contact_zones(target.time_zone.as_deref(), number.as_deref(), zone);
    if windows.check(&zones, at).is_err() {
        return Err(Error::invalid(
            "at is outside the contact's calling hours in its local time",
        ));
    }
    let task = requeued(store, tenant, task, now).await?;
    let phone = target.phone.as_str();
    store
        .set_callback(tenant, &task, (contact, phone), at, now)
        .await?;
    Ok(CallbackView {
        contact_id: contact.clone(),
        phone_number: phone.to_owned(),
        at: at.rfc3339(),
        source: CallbackSource::Api,
        status: CallbackStatus::Pending,
        reason: None,
    })
}

/// Cancels the contact's pending callback in the task (D31).
pub async fn cancel(store: &Store, tenant: &Tenant, task: &Id, contact: &Id) -> Result<(), Error> {
    let task = store.task(tenant, task).await?;
    TaskOperation::Callback.apply(task.status)?;
    store
        .cancel_callback(tenant, &task, contact, Timestamp::now())
        .await
}

/// A page of the task's callbacks, those shown as `status` when one is asked (D5, D31).
pub async fn list(
    store: &Store,
    tenant: &Tenant,
    task: &Id,
    page: &PageQuery,
    status: Option<CallbackStatus>,
) -> Result<(Task, Page<outbound_model::callback::CallbackRecord>), Error> {
    let task = store.task(tenant, task).await?;
    let mut found = store.callbacks_page(tenant, &task, page, status).await?;
    // A callback the flow asked for names its contact, not its number: read from the contact.
    let mut unnamed: Vec<Id> = (found.rows.iter())
        .filter(|record| record.phone.is_empty())
        .map(|record| record.contact_id.clone())
        .collect();
    // A batch read refuses a key named twice: a contact may have had several callbacks.
    unnamed.sort();
    unnamed.dedup();
    if !unnamed.is_empty() {
        let targets = store
            .contact_targets(tenant, &task.data_source_id, &unnamed, &[])
            .await?;
        for record in found.rows.iter_mut().filter(|r| r.phone.is_empty()) {
            if let Some(target) = targets.get(&record.contact_id) {
                record.phone = target.phone.as_str().to_owned();
            }
        }
    }
    Ok((task, found))
}

/// The task ready for a callback: a COMPLETED one made RUNNING again (D31, as a recall makes
/// it, D10), holding its data source and a place among its tenant's running tasks (D26).
async fn requeued(
    store: &Store,
    tenant: &Tenant,
    task: Task,
    now: Timestamp,
) -> Result<Task, Error> {
    if task.status != TaskStatus::Completed {
        return Ok(task);
    }
    // D20: `time` orders one task's events; the requeue comes after the completion.
    let at = Timestamp(now.0.max(task.updated_at.0 + 1));
    let requeue = Transition {
        from: &[TaskStatus::Completed],
        to: TaskOperation::requeue(TaskStatus::Completed),
        hold: Hold::Acquire,
        ..Transition::of(TaskOperation::Recall, at)
    };
    match store.transition(tenant, &task, &requeue).await {
        Ok(task) => Ok(task),
        // Requeued by another request meanwhile: the task as it is now.
        Err(Error::NotAllowed(_)) => store.task(tenant, &task.id).await,
        Err(error) => Err(error),
    }
}

//! Task operations (D9, D10, D12): add, update, the state changes, delete, recall; and the
//! dialing engine's entry points into the same state machine.

use chrono_tz::Tz;
use outbound_adapters::blob::Blob;
use outbound_adapters::queue::Queue;
use outbound_adapters::store::recall::RECALL_IN_ONE;
use outbound_adapters::store::slots::JobKind;
use outbound_adapters::store::Store;
use outbound_app::config::dialing::{DialerConfig, TelephonyRules};
use outbound_model::call::{RetryRule, Skip};
use outbound_model::diagnostics::{
    blocked_by, held_back_recent, no_agents_shown, AgentsView, ContactCounts, DiagnosticsView,
    ReasonCounts, Situation, SkipCounts,
};
use outbound_model::error::Error;
use outbound_model::filter::ContactFilter;
use outbound_model::history::TaskHistory;
use outbound_model::job::{DialJob, RecallManifest, RECALL_JOB_LOST_AFTER_MILLIS};
use outbound_model::local_time::Windows;
use outbound_model::pacing::{
    AgentPacing, DialingMode, Hundredths, ABANDONMENT_TARGET, CALLS_PER_AGENT,
};
use outbound_model::page::PageQuery;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::schedule::Schedule;
use outbound_model::settings::TenantSettings;
use outbound_model::task::{
    check_retry_rules, rules_time, DialSettings, HeldBack, TaskOperation, TaskStat, WindowZone,
    ZoneName,
};
use outbound_model::telephony::{fixed_at_publish, CallerIdChoice, TaskResults, Voicemail};
use outbound_model::time_of_day::{ClockTime, DailyWindow};
use outbound_model::transition::{Hold, Transition};
use outbound_model::Tenant;
use outbound_model::{Description, Id, Name, Page, Task, TaskStatus, Timestamp};
use std::collections::HashSet;

/// Changes to dialing settings; `None` keeps the value. For the window and zone,
/// `Some(None)` clears it.
#[derive(Clone, Debug, Default)]
pub struct SettingsPatch {
    pub priority: Option<u8>,
    pub max_dial_count: Option<u8>,
    pub call_interval: Option<u32>,
    pub daily_start: Option<Option<ClockTime>>,
    pub daily_end: Option<Option<ClockTime>>,
    pub time_zone: Option<Option<ZoneName>>,
    pub window_zone: Option<WindowZone>,
    pub retry_rules: Option<Vec<RetryRule>>,
    /// `Some(None)` clears it (D22).
    pub caller_id: Option<Option<CallerIdChoice>>,
    /// `Some(None)` clears it (D22).
    pub contact_flow_id: Option<Option<String>>,
    pub call_attributes: Option<Vec<String>>,
    pub result_attributes: Option<Vec<String>>,
    pub voicemail: Option<Voicemail>,
    pub pacing: PacingPatch,
    /// `Some(None)` clears it (D31).
    pub start_at: Option<Option<Timestamp>>,
    /// `Some(None)` clears it (D31).
    pub end_at: Option<Option<Timestamp>>,
    /// An empty filter clears it (D31).
    pub filter: Option<ContactFilter>,
}

/// Changes to how a task paces its calls to agents (D30); `None` keeps the value.
#[derive(Clone, Debug, Default)]
pub struct PacingPatch {
    pub mode: Option<DialingMode>,
    /// `Some(None)` clears it.
    pub queue_id: Option<Option<String>>,
    pub calls_per_agent: Option<Hundredths>,
    pub abandonment_target: Option<Hundredths>,
}

impl PacingPatch {
    /// The pacing after this patch: agentless, or a mode with its queue (required) and its
    /// numbers, kept from `base` or their defaults when not sent.
    fn apply(self, base: Option<AgentPacing>) -> Result<Option<AgentPacing>, Error> {
        let mode = (self.mode)
            .or(base.as_ref().map(|b| b.mode))
            .unwrap_or_default();
        if !mode.paced() {
            return Ok(None);
        }
        let queue_id = match self.queue_id {
            Some(queue) => queue,
            None => base.as_ref().map(|b| b.queue_id.clone()),
        };
        let Some(queue_id) = queue_id else {
            return Err(Error::invalid(format!(
                "queueId is required when dialingMode is {}",
                mode.name()
            )));
        };
        Ok(Some(AgentPacing {
            mode,
            queue_id,
            calls_per_agent: (self.calls_per_agent)
                .or(base.as_ref().map(|b| b.calls_per_agent))
                .unwrap_or(CALLS_PER_AGENT.default),
            abandonment_target: (self.abandonment_target)
                .or(base.as_ref().map(|b| b.abandonment_target))
                .unwrap_or(ABANDONMENT_TARGET.default),
        }))
    }
}

impl SettingsPatch {
    /// Whether it names a caller ID, flow or queue, which must be the tenant's (D22, D30).
    fn names_telephony(&self) -> bool {
        matches!(self.caller_id, Some(Some(CallerIdChoice::Number(_))))
            || matches!(self.contact_flow_id, Some(Some(_)))
            || matches!(self.pacing.queue_id, Some(Some(_)))
            || self.pacing.mode.is_some_and(DialingMode::paced)
    }

    /// The settings after this patch; the window must still be both-or-neither, start < end.
    pub fn apply(self, base: DialSettings) -> Result<DialSettings, Error> {
        let start = self.daily_start.unwrap_or(base.window.map(|w| w.start));
        let end = self.daily_end.unwrap_or(base.window.map(|w| w.end));
        let settings = DialSettings {
            priority: self.priority.unwrap_or(base.priority),
            max_dial_count: self.max_dial_count.unwrap_or(base.max_dial_count),
            call_interval: self.call_interval.unwrap_or(base.call_interval),
            window: DailyWindow::from_parts(start, end)?,
            time_zone: self.time_zone.unwrap_or(base.time_zone),
            window_zone: self.window_zone.unwrap_or(base.window_zone),
            retry_rules: self.retry_rules.unwrap_or(base.retry_rules),
            caller_id: self.caller_id.unwrap_or(base.caller_id),
            contact_flow_id: self.contact_flow_id.unwrap_or(base.contact_flow_id),
            call_attributes: self.call_attributes.unwrap_or(base.call_attributes),
            result_attributes: self.result_attributes.unwrap_or(base.result_attributes),
            voicemail: self.voicemail.unwrap_or(base.voicemail),
            agents: self.pacing.apply(base.agents)?,
            schedule: Schedule::new(
                self.start_at.unwrap_or(base.schedule.start_at()),
                self.end_at.unwrap_or(base.schedule.end_at()),
            )?,
            filter: self.filter.unwrap_or(base.filter),
        };
        check_retry_rules(&settings.retry_rules, settings.max_dial_count)?;
        outbound_model::telephony::check_results_are_the_flows(
            &settings.call_attributes,
            &settings.result_attributes,
        )?;
        Ok(settings)
    }
}

/// A task to create.
pub struct NewTask {
    pub name: Name,
    pub description: Description,
    /// As sent: an id that names no data source of the tenant is 400, not 404 (D1).
    pub data_source_id: String,
    pub settings: SettingsPatch,
}

/// Changes to a DRAFT task.
pub struct TaskUpdate {
    pub id: Id,
    pub name: Option<Name>,
    pub description: Option<Description>,
    pub settings: SettingsPatch,
}

fn unknown_data_source(raw: &str) -> Error {
    let shown: String = raw.chars().take(64).collect();
    Error::invalid(format!("dataSource {shown} does not exist"))
}

pub async fn add(store: &Store, tenant: &Tenant, new: NewTask) -> Result<Task, Error> {
    let names_telephony = new.settings.names_telephony();
    let settings = new.settings.apply(DialSettings::default())?;
    if names_telephony {
        check_telephony(&store.settings(tenant).await?, &settings)?;
    }
    let source_id =
        Id::parse(&new.data_source_id).ok_or_else(|| unknown_data_source(&new.data_source_id))?;
    let source = store
        .data_source(tenant, &source_id)
        .await
        .map_err(|error| match error {
            Error::NotFound(_) => unknown_data_source(&new.data_source_id),
            other => other,
        })?;
    let task = Task::draft(
        new.name,
        new.description,
        (source.id, source.contact_count),
        settings,
        Timestamp::now(),
    );
    store.create_task(tenant, &task).await?;
    Ok(task)
}

pub async fn detail(store: &Store, tenant: &Tenant, id: &Id) -> Result<Task, Error> {
    store.task(tenant, id).await
}

/// The statistics of `/api/task/{id}/stat` (D7, D31): the task laid over its counters item,
/// whose diagnostics' counters give the contacts its filter left out.
pub async fn stat(store: &Store, tenant: &Tenant, id: &Id, zone: Tz) -> Result<TaskStat, Error> {
    let (task, counters) = store.task_with_counters(tenant, id).await?;
    Ok(task.stat_view(zone, counters.skip(Skip::Filtered)))
}

/// `GET /api/task/{id}/history` (D31): the task as it is, and its history's partition, read at
/// once. 404 for an unknown task.
pub async fn history(store: &Store, tenant: &Tenant, id: &Id) -> Result<TaskHistory, Error> {
    let (task, stored) = tokio::try_join!(store.task(tenant, id), store.history(tenant, id))?;
    Ok(TaskHistory::of(
        &task,
        stored.snapshots,
        stored.states,
        Timestamp::now(),
    ))
}

/// What the flows of a task's answered calls reported (D22), over each contact's latest answered
/// attempt: the task item, then the counters of its result attributes in one BatchGetItem of at
/// most 10 items, whatever the number of contacts. 404 for an unknown task.
pub async fn results(store: &Store, tenant: &Tenant, id: &Id) -> Result<TaskResults, Error> {
    let (task, counters) = store.task_with_counters(tenant, id).await?;
    let names = &task.settings.result_attributes;
    if names.is_empty() {
        return Ok(TaskResults {
            attributes: Vec::new(),
        });
    }
    let tallies = store.result_tallies(tenant, id, names).await?;
    Ok(TaskResults {
        attributes: names
            .iter()
            .zip(tallies)
            .map(|(name, tally)| tally.view(name, counters.answered))
            .collect(),
    })
}

/// The tenant's tasks, newest first, filtered by a name fragment (case-insensitive) and status
/// (D5).
pub async fn list(
    store: &Store,
    tenant: &Tenant,
    page: &PageQuery,
    name: Option<&str>,
    status: Option<TaskStatus>,
) -> Result<Page<Task>, Error> {
    let fragment = name.map(str::to_lowercase);
    store
        .tasks_page(tenant, page, fragment.as_deref(), status)
        .await
}

pub async fn update(store: &Store, tenant: &Tenant, update: TaskUpdate) -> Result<Task, Error> {
    let current = store.task(tenant, &update.id).await?;
    TaskOperation::Update.apply(current.status)?;
    let names_telephony = update.settings.names_telephony();
    let next = Task {
        name: update.name.unwrap_or_else(|| current.name.clone()),
        description: update
            .description
            .unwrap_or_else(|| current.description.clone()),
        settings: update.settings.apply(current.settings.clone())?,
        updated_at: Timestamp::now(),
        ..current.clone()
    };
    if names_telephony {
        check_telephony(&store.settings(tenant).await?, &next.settings)?;
    }
    store.update_task(tenant, &current, &next).await?;
    Ok(next)
}

/// A task's caller ID and flow are among its tenant's (D22): a number or flow the operator has
/// not assigned it is 400.
fn check_telephony(tenant: &TenantSettings, settings: &DialSettings) -> Result<(), Error> {
    if let Some(CallerIdChoice::Number(number)) = &settings.caller_id {
        if !tenant.caller_ids.contains(number) {
            return Err(Error::invalid(format!(
                "callerId {number} is not one of the tenant's caller IDs"
            )));
        }
    }
    if let Some(flow) = &settings.contact_flow_id {
        if !tenant.holds_flow(flow) {
            return Err(Error::invalid(format!(
                "contactFlowId {flow} is not one of the tenant's contact flows"
            )));
        }
    }
    if let Some(agents) = &settings.agents {
        if !tenant.holds_queue(&agents.queue_id) {
            return Err(Error::invalid(format!(
                "queueId {} is not one of the tenant's queues",
                agents.queue_id
            )));
        }
    }
    Ok(())
}

/// Whether a task can call as the deployment allows (D22): its number and flow still the
/// tenant's; a per-call caller ID only where the provider can set one; and, with
/// `TELEPHONY_FALLBACK=off`, a number and a flow of its own or its tenant's for every call.
fn check_calls_possible(
    rules: TelephonyRules,
    tenant: &TenantSettings,
    settings: &DialSettings,
) -> Result<(), Error> {
    check_telephony(tenant, settings)?;
    let number = match &settings.caller_id {
        Some(CallerIdChoice::Number(number)) => Some(number.as_str()),
        // Numbers in countries where the tenant has none call from the task's default.
        Some(CallerIdChoice::LocalPresence) | None => tenant.default_caller_id.as_deref(),
    };
    if !rules.per_call_caller_id {
        if let Some(shown) = settings
            .caller_id
            .as_ref()
            .map(CallerIdChoice::as_str)
            .or(number)
        {
            return Err(Error::invalid(format!(
                "callerId {shown} cannot be used: this deployment places its calls through an \
                 Amazon Connect queue (CONNECT_QUEUE_ID), which calls from the queue's own number"
            )));
        }
    }
    if rules.fallback {
        return Ok(());
    }
    let mut missing = Vec::new();
    if number.is_none() {
        missing.push(match settings.caller_id {
            Some(CallerIdChoice::LocalPresence) => {
                "callerId (LOCAL_PRESENCE needs the tenant's defaultCallerId for the numbers no \
                 caller ID of the tenant is local to)"
            }
            _ => "callerId (neither the task's nor the tenant's defaultCallerId)",
        });
    }
    if settings.contact_flow_id.is_none() && tenant.default_contact_flow_id.is_none() {
        missing.push("contactFlowId (neither the task's nor the tenant's defaultContactFlowId)");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "the task cannot be published without {}: this deployment does not call with its own \
         number and flow (TELEPHONY_FALLBACK=off)",
        missing.join(" and ")
    )))
}

/// Publish (D10): DRAFT -> RUNNING, refreshing `contactCount`; a data source without contacts is 400.
pub async fn publish(
    store: &Store,
    tenant: &Tenant,
    id: &Id,
    rules: TelephonyRules,
) -> Result<Task, Error> {
    let current = store.task(tenant, id).await?;
    TaskOperation::Publish.apply(current.status)?;
    // The tenant's settings: what the task names must be the tenant's, and what it leaves to
    // the tenant's defaults is fixed now (D28), so a later change of a default does not reach it.
    let source = async {
        store
            .data_source(tenant, &current.data_source_id)
            .await
            .map_err(|error| match error {
                Error::NotFound(_) => unknown_data_source(current.data_source_id.as_str()),
                other => other,
            })
    };
    let (settings, source) = futures::future::try_join(store.settings(tenant), source).await?;
    check_calls_possible(rules, &settings, &current.settings)?;
    current
        .settings
        .schedule
        .check_at_publish(Timestamp::now())?;
    if source.contact_count == 0 {
        return Err(Error::invalid(format!(
            "dataSource {} has no contacts",
            source.id
        )));
    }
    let mut publish = Transition::of(TaskOperation::Publish, Timestamp::now());
    publish.contact_count = Some(source.contact_count);
    publish.setup = Some(fixed_at_publish(&current.settings, &settings));
    store.transition(tenant, &current, &publish).await
}

/// Pause, resume and close: one transaction of the conditional update and its event (D20), no
/// read. Answers the task's state now.
pub async fn set_state(
    store: &Store,
    tenant: &Tenant,
    id: &Id,
    operation: TaskOperation,
) -> Result<TaskStatus, Error> {
    let transition = Transition::of(operation, Timestamp::now());
    store.transition_in_place(tenant, id, &transition).await
}

/// Stop (D10): RUNNING or PAUSED -> STOPPED, keeping the reason.
pub async fn stop(
    store: &Store,
    tenant: &Tenant,
    id: &Id,
    reason: Option<String>,
) -> Result<Task, Error> {
    let current = store.task(tenant, id).await?;
    TaskOperation::Stop.apply(current.status)?;
    let mut stop = Transition::of(TaskOperation::Stop, Timestamp::now());
    stop.stop_reason = reason;
    store.transition(tenant, &current, &stop).await
}

/// A task's end when every contact has a final outcome and nothing is in flight (D10, D13),
/// checked against the data source's contacts added meanwhile. The engine's completion check
/// writes the same `complete_idle`; this is that end asked for by id (the tests drive it).
pub async fn complete(store: &Store, tenant: &Tenant, id: &Id) -> Result<Task, Error> {
    let current = store.task(tenant, id).await?;
    TaskOperation::Complete.apply(current.status)?;
    let source = store.data_source(tenant, &current.data_source_id).await?;
    store
        .complete_idle(tenant, &current, source.contacts_added)
        .await
}

/// The dialing engine's verdict that a task cannot go on (FAILED with `reason`, D13), asked
/// for by id.
pub async fn fail(store: &Store, tenant: &Tenant, id: &Id, reason: String) -> Result<Task, Error> {
    store.fail_task(tenant, id, reason).await
}

/// Delete (D10) and queue the reclaim of the task's per-contact state.
pub async fn delete(
    store: &Store,
    reclaim: &Queue<ReclaimJob>,
    tenant: &Tenant,
    id: &Id,
) -> Result<(), Error> {
    let current = store.task(tenant, id).await?;
    TaskOperation::Delete.apply(current.status)?;
    let job = ReclaimJob::Task {
        tenant: tenant.clone(),
        id: id.clone(),
    };
    store.delete_task(tenant, &current, &job).await?;
    super::reclaim::enqueue(reclaim, &job).await;
    Ok(())
}

/// Most ids one recall may name.
pub const MAX_RECALL_IDS: usize = 10_000;

/// Recall (D12): the named contacts, or every failed / unanswered one, get a fresh allowance.
/// Answers the recalled ids; ids that are not contacts of the task's data source are ignored.
///
/// All or nothing from the client's view. Up to [`RECALL_IN_ONE`] contacts of a RUNNING or
/// PAUSED task are one transaction. Otherwise the list is stored first, then one conditional
/// write commits the recall on the task (with the COMPLETED -> RUNNING requeue and its data
/// source hold, D10); a small one is then applied at once, a large one by the dialer's recall
/// job, which the tick sends again if it is lost. Until it is applied the task cannot complete.
/// A tenant has at most `TENANT_RUNNING_RECALLS` large recalls being applied at once (D32):
/// beyond, 409 and nothing changes.
pub async fn recall(
    store: &Store,
    blob: &Blob,
    dial_jobs: &Queue<DialJob>,
    tenant: &Tenant,
    id: &Id,
    contact_ids: &[&str],
    priority: u8,
) -> Result<Vec<Id>, Error> {
    if contact_ids.len() > MAX_RECALL_IDS {
        return Err(Error::invalid(format!(
            "contactIds may name at most {MAX_RECALL_IDS} contacts"
        )));
    }
    let mut task = store.task(tenant, id).await?;
    TaskOperation::Recall.apply(task.status)?;
    resend_lost_recall(dial_jobs, tenant, &task).await;
    let candidates: Vec<Id> = if contact_ids.is_empty() {
        // Bounded as a list of ids is (D12): the answer's recallIds fit any response.
        store
            .failed_task_contacts(tenant, &task, MAX_RECALL_IDS)
            .await?
    } else {
        let mut seen = HashSet::new();
        contact_ids
            .iter()
            .filter_map(|raw| Id::parse(raw))
            .filter(|id| seen.insert(id.clone()))
            .collect()
    };
    let existing = store
        .existing_contacts(tenant, &task.data_source_id, &candidates)
        .await?;
    let recalled: Vec<Id> = candidates
        .into_iter()
        .filter(|id| existing.contains(id))
        .collect();
    if recalled.is_empty() {
        return Ok(recalled);
    }
    let now = Timestamp::now();
    let small = recalled.len() <= RECALL_IN_ONE;
    if task.status != TaskStatus::Completed && small {
        match store
            .queue_recall(tenant, &task, &recalled, priority, now)
            .await
        {
            Ok(()) => return Ok(recalled),
            // The engine completed the task since it was read: it is requeued with the recall
            // below (D10), never left COMPLETED with contacts queued that nothing dials.
            Err(Error::NotAllowed(refused)) => {
                task = store.task(tenant, id).await?;
                if task.status != TaskStatus::Completed {
                    return Err(Error::NotAllowed(refused));
                }
            }
            Err(error) => return Err(error),
        }
    }
    if task.status == TaskStatus::Completed {
        still_the_tenants(store, tenant, &task).await?;
    }
    let recall = Id::new();
    // A tenant applies at most `running_recalls` large recalls at once (D32): their jobs share
    // the dial queue's workers with every tenant's calls. The slot is taken before anything is
    // written and given back when the recall is not committed. A small one (of a COMPLETED
    // task) is applied within this request and takes none.
    let slot = match small {
        true => None,
        false => {
            let cap = store.tenant_limits().running_recalls;
            let slot = store
                .take_job_slot(tenant, JobKind::Recall, &recall, cap, now)
                .await?;
            Some(slot)
        }
    };
    let pending: Result<bool, Error> = async {
        let manifest = RecallManifest {
            ids: recalled.clone(),
            priority,
            at: now,
        };
        let body =
            serde_json::to_vec(&manifest).map_err(|e| Error::internal("encode recall", e))?;
        blob.put(
            &outbound_adapters::blob::recall_key(tenant, id, &recall),
            body,
            "application/json",
        )
        .await?;
        if let Some(requeued) = requeue_with_recall(store, tenant, &task, &recall, now).await? {
            // A concurrent recall requeued it first: it is RUNNING (or PAUSED since), where this
            // one is a recall like any other. Not a 405.
            if small {
                store
                    .queue_recall(tenant, &requeued, &recalled, priority, now)
                    .await?;
                return Ok(false);
            }
            store.start_recall(tenant, id, &recall, now).await?;
        }
        Ok(true)
    }
    .await;
    match pending {
        Ok(true) => {}
        // A small one, queued on the task a concurrent recall requeued: it took no slot.
        Ok(false) => return Ok(recalled),
        Err(error) => {
            give_back_recall_slot(store, tenant, slot, &recall).await;
            return Err(error);
        }
    }
    // Committed: from here on the recall happens, whatever fails below.
    if small {
        let applied = async {
            store
                .apply_recall(tenant, &task, &recall, &recalled, priority, now)
                .await?;
            store.finish_recall(tenant, id, &recall).await
        };
        if let Err(error) = applied.await {
            tracing::warn!(%error, "recall not applied at once; its job applies it");
        } else {
            return Ok(recalled);
        }
    }
    let job = DialJob::Recall {
        tenant: tenant.clone(),
        task_id: id.clone(),
        recall_id: recall,
    };
    if let Err(error) = dial_jobs.send(&job, 0).await {
        tracing::warn!(%error, "recall job not queued; the tick queues it again");
    }
    Ok(recalled)
}

/// Gives back a recall's slot, if it took one (D32); when that fails its lease frees it.
async fn give_back_recall_slot(store: &Store, tenant: &Tenant, slot: Option<u32>, recall: &Id) {
    let Some(slot) = slot else {
        return;
    };
    if let Err(error) = store
        .release_slot(tenant, JobKind::Recall, slot, recall)
        .await
    {
        tracing::warn!(%error, "recall slot not given back; its lease frees it");
    }
}

/// An earlier recall still pending with no progress for a minute lost its job: it is sent
/// again now (best effort). The tick does so only for RUNNING tasks; without this a PAUSED
/// task's recalls would answer 409 until it was resumed.
async fn resend_lost_recall(dial_jobs: &Queue<DialJob>, tenant: &Tenant, task: &Task) {
    let (Some(pending), Some(at)) = (&task.pending_recall, task.pending_recall_at) else {
        return;
    };
    if Timestamp::now().0 - at.0 <= RECALL_JOB_LOST_AFTER_MILLIS {
        return;
    }
    let job = DialJob::Recall {
        tenant: tenant.clone(),
        task_id: task.id.clone(),
        recall_id: pending.clone(),
    };
    if let Err(error) = dial_jobs.send(&job, 0).await {
        tracing::warn!(%error, "a lost recall job was not sent again");
    }
}

/// A COMPLETED task is requeued only while the number and flow it was published with are still
/// its tenant's (D28): 409 naming the field otherwise (the operator may take back a finished
/// task's number). The claim's check on the number's guard holds for the calls either way.
async fn still_the_tenants(store: &Store, tenant: &Tenant, task: &Task) -> Result<(), Error> {
    let names_number = matches!(task.settings.caller_id, Some(CallerIdChoice::Number(_)));
    if !names_number && task.settings.contact_flow_id.is_none() {
        return Ok(());
    }
    let settings = store.settings(tenant).await?;
    if let Some(CallerIdChoice::Number(number)) = &task.settings.caller_id {
        if !settings.caller_ids.contains(number) {
            return Err(Error::Conflict(format!(
                "callerId {number} is no longer assigned to this tenant: the task cannot be \
                 dialled again"
            )));
        }
    }
    if let Some(flow) = &task.settings.contact_flow_id {
        if !settings.holds_flow(flow) {
            return Err(Error::Conflict(format!(
                "contactFlowId {flow} is no longer assigned to this tenant: the task cannot be \
                 dialled again"
            )));
        }
    }
    Ok(())
}

/// The commit point of a recall that is not one transaction: a COMPLETED task is requeued with
/// the recall pending (D10), a RUNNING or PAUSED one records it pending. Answers the task as it
/// is now when a concurrent recall requeued it first, and nothing is committed yet.
async fn requeue_with_recall(
    store: &Store,
    tenant: &Tenant,
    task: &Task,
    recall: &Id,
    at: Timestamp,
) -> Result<Option<Task>, Error> {
    if task.status != TaskStatus::Completed {
        store.start_recall(tenant, &task.id, recall, at).await?;
        return Ok(None);
    }
    // D20: `time` orders one task's events. The completion this undoes may have committed
    // after `at` was read (it won the race, or its clock is ahead): the requeue comes after it.
    let at = Timestamp(at.0.max(task.updated_at.0 + 1));
    let requeue = Transition {
        from: &[TaskStatus::Completed],
        to: TaskOperation::requeue(TaskStatus::Completed),
        hold: Hold::Acquire,
        pending_recall: Some((recall.clone(), at)),
        ..Transition::of(TaskOperation::Recall, at)
    };
    match store.transition(tenant, task, &requeue).await {
        Ok(_) => Ok(None),
        Err(Error::NotAllowed(refusal)) => {
            let now = store.task(tenant, &task.id).await?;
            if now.status.holds_data_source() {
                Ok(Some(now))
            } else {
                Err(Error::NotAllowed(refusal))
            }
        }
        Err(error) => Err(error),
    }
}

/// Why the task is or is not dialling (D19): its counters, its data source's count, the task's
/// own window, the earliest waiting contact and the service's calls in flight, each one read
/// whatever the number of contacts.
pub async fn diagnostics(
    store: &Store,
    tenant: &Tenant,
    id: &Id,
    dialer: &DialerConfig,
    zone: chrono_tz::Tz,
) -> Result<DiagnosticsView, Error> {
    let (task, counters) = store.task_with_counters(tenant, id).await?;
    let source = async {
        match store.data_source(tenant, &task.data_source_id).await {
            Ok(source) => Ok(Some(source)),
            Err(Error::NotFound(_)) => Ok(None),
            Err(error) => Err(error),
        }
    };
    // An agent-paced task's queue as the tick last read it (D30), beside the others.
    let queue = async {
        match &task.settings.agents {
            Some(pacing) => store.queue_agents(tenant, &pacing.queue_id).await,
            None => Ok(None),
        }
    };
    let (source, settings, queue) =
        futures::future::try_join3(source, store.settings(tenant), queue).await?;
    let total = source.as_ref().map_or(0, |source| source.contact_count);
    // Contacts parked under rules changed since are due now (D24), never shown as waiting.
    let rules_at = rules_time(&settings, source.as_ref());
    let earliest = store.earliest_waiting(tenant, id, rules_at).await?;
    let now = Timestamp::now();
    let in_flight = u64::from(task.in_flight);
    let not_dialled = total.saturating_sub(counters.waiting + counters.final_ + in_flight);
    // The task's own window alone: the calling hours are read in each called party's zone
    // (D15), so only the contacts' skips say when they hold a call back.
    let windows = Windows::of(&task.settings, None, zone);
    let task_window_closed = (task.settings.window_zone == WindowZone::Task)
        .then(|| {
            windows
                .check(&[windows.task_zone], now)
                .err()
                .map(|(_, at)| at)
        })
        .flatten();
    // A held-back mark stands two ticks, and `NO_AGENTS` only while the queue's reading shown
    // beside it has no agent available: never a cause older than the facts it contradicts.
    let available = queue.as_ref().map(|(agents, _)| agents.available);
    let situation = Situation {
        status: task.status,
        now,
        not_dialled,
        waiting: counters.waiting,
        in_flight,
        waiting_for_window: counters.skip(Skip::OutsideWindow) + counters.skip(Skip::CallingHours),
        earliest_waiting: earliest,
        task_window_closed,
        // The task's own share, never the service's total (other tenants' activity, D23): at
        // its cap, or its last run had contacts due and no room.
        at_capacity: task.in_flight >= dialer.max_in_flight_per_task
            || held_back_recent(task.held_back(HeldBack::Capacity), now),
        provider_busy: counters
            .busy_until
            .is_some_and(|until| until.0 > now.0 - 60_000),
        no_agents: task.settings.agents.is_some()
            && no_agents_shown(task.held_back(HeldBack::NoAgents), available, now),
        starts_at: task.settings.schedule.start_at(),
    };
    let (blocked, next) = blocked_by(&situation);
    let agents = (task.settings.agents.as_ref())
        .zip(queue)
        .map(|(pacing, (agents, at))| AgentsView {
            queue_id: pacing.queue_id.clone(),
            available: agents.available,
            busy: agents.on_contact,
            soon_free: agents.soon_free,
            read_time: at.display(zone),
        });
    Ok(DiagnosticsView {
        task_id: task.id.clone(),
        status: task.status,
        dialing: task.status == TaskStatus::Running && blocked.is_none(),
        blocked_by: blocked,
        next_dial_time: next.map(|at| at.display(zone)),
        in_flight,
        contacts: ContactCounts {
            total,
            not_dialled,
            waiting: counters.waiting,
            in_flight,
            final_: counters.final_,
        },
        skips: SkipCounts::of(&counters),
        reasons: ReasonCounts::of(&counters),
        last_call_time: counters.last_call_at.map(|at| at.display(zone)),
        last_outcome_time: counters.last_outcome_at.map(|at| at.display(zone)),
        agents,
    })
}

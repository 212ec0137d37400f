//! `/api/task/...`: tasks, their state changes, recall and statistics.

use super::contract::{
    ById, Conflict, FileResponses, NotAllowed, NotFound, Nothing, Refused, Success, TooLarge,
};
use super::datasource::FormatQuery;
use super::extract::{existing_id, filter, Paging, Payload, Query};
use super::fields::{Decimal, Flat, Integer, Ranged, Strings, Text};
use super::{App, Envelope, Refusal, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{Path, State};
use axum::response::Response;
use outbound_model::call::{Reason, RetryRule};
use outbound_model::contact::{FieldName, PHONE_FIELD};
use outbound_model::diagnostics::DiagnosticsView;
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::filter::ContactFilter;
use outbound_model::history::TaskHistory;
use outbound_model::in_range;
use outbound_model::pacing::{DialingMode, ABANDONMENT_TARGET, CALLS_PER_AGENT};
use outbound_model::page::PageTokens;
use outbound_model::page::{ListScope, PageView};
use outbound_model::task::{TaskOperation, TaskRow, TaskStat, TaskView, WindowZone, ZoneName};
use outbound_model::telephony::{
    check_result_name, refuse_own, CallerIdChoice, TaskResults, Voicemail, E164_ATTRIBUTE,
    MAX_CALL_ATTRIBUTES, MAX_RESULT_ATTRIBUTES,
};
use outbound_model::time_of_day::ClockTime;
use outbound_model::Tenant;
use outbound_model::{Description, Id, Name, TaskStatus, Timestamp};
use outbound_service::export::{self, OutcomeFilter};
use outbound_service::task::{self, NewTask, PacingPatch, SettingsPatch, TaskUpdate};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

const KIND: &str = "task";

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc)
        .route(route!(list))
        .route(route!(detail))
        .route(route!(add))
        .route(route!(update))
        .route(route!(publish))
        .route(route!(pause))
        .route(route!(resume))
        .route(route!(stop))
        .route(route!(close))
        .route(route!(delete))
        .route(route!(recall))
        .route(route!(stat))
        .route(route!(history))
        .route(route!(diagnostics))
        .route(route!(results))
        .route(route!(export_contacts))
        .route(route!(super::export::task_job))
}

/// How a task dials (D9); on update, absent fields stay as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SettingsInput {
    /// 1 (first) to 5 (default 3): tasks share the dialing budget by priority.
    #[serde(default)]
    #[schema(value_type = Option<u8>, minimum = 1, maximum = 5)]
    priority: Option<Ranged<1, 5>>,
    /// Attempts per contact, 1-10 (default 3).
    #[serde(default)]
    #[schema(value_type = Option<u8>, minimum = 1, maximum = 10)]
    max_dial_count: Option<Ranged<1, 10>>,
    /// Seconds between attempts at one contact, 10-86400 (default 60).
    #[serde(default)]
    #[schema(value_type = Option<u32>, minimum = 10, maximum = 86400)]
    call_interval: Option<Ranged<10, 86_400>>,
    /// `HH:MM`: no call before it each day; `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "09:00")]
    daily_start_time: Option<Text>,
    /// `HH:MM`: no call after it each day; `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "18:00")]
    daily_end_time: Option<Text>,
    /// IANA zone of the window (default the service's zone); `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "Asia/Shanghai")]
    time_zone: Option<Text>,
    /// Where the daily window is read (D15): `CALLED_PARTY` (default), in each contact's local
    /// time; `TASK`, in `timeZone`.
    #[serde(default)]
    #[schema(value_type = Option<WindowZone>)]
    window_time_zone: Option<Text>,
    /// Up to 6 rules, one per reason (D18); `[]` clears them on update.
    #[serde(default)]
    #[schema(value_type = Option<Vec<RetryRule>>)]
    retry_rules: Option<Vec<RetryRuleInput>>,
    /// One of the tenant's caller IDs (E.164) or `LOCAL_PRESENCE`: per call, the tenant's
    /// number in the called party's country and area code (D22). Unset: the tenant's
    /// `defaultCallerId`; `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "LOCAL_PRESENCE")]
    caller_id: Option<Text>,
    /// One of the tenant's contact flows. Unset: the tenant's `defaultContactFlowId`; `""`
    /// clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    contact_flow_id: Option<Text>,
    /// Up to 20 contact fields (known, custom, or `e164`) whose values each call sends its flow
    /// as attributes; `[]` clears them on update.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, example = json!(["name", "orderId"]))]
    call_attributes: Option<Strings>,
    /// Up to 10 names (`[A-Za-z0-9_]{1,32}`) the flow may set, recorded when an answered call
    /// ends; `[]` clears them on update.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, example = json!(["outcome", "callbackAt"]))]
    result_attributes: Option<Strings>,
    /// `HANG_UP` (default) or `LEAVE_MESSAGE`: a call that reaches voicemail waits for the beep
    /// and plays the flow's message.
    #[serde(default)]
    #[schema(value_type = Option<Voicemail>)]
    voicemail: Option<Text>,
    /// `AGENTLESS` (default): calls go to the flow; `PROGRESSIVE` or `PREDICTIVE`: answered calls
    /// go to `queueId`'s agents, paced to them (D30).
    #[serde(default)]
    #[schema(value_type = Option<DialingMode>)]
    dialing_mode: Option<Text>,
    /// One of the tenant's queues: required for `PROGRESSIVE` and `PREDICTIVE`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    queue_id: Option<Text>,
    /// `PROGRESSIVE`: calls ringing per free agent, 1.0-3.0 (default 1.0, two decimals kept).
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 1.0, maximum = 3.0, example = 1.5)]
    calls_per_agent: Option<Decimal>,
    /// `PREDICTIVE`: the most abandoned calls, as a percentage of the calls a person answered
    /// over the task's life, 0-10 (default 3).
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0.0, maximum = 10.0, example = 3)]
    abandonment_target: Option<Decimal>,
    /// No call before it (D31): RFC 3339 with its offset; `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2026-12-01T09:00:00+01:00")]
    start_at: Option<Text>,
    /// The engine stops the task at it (`stopReason` `schedule ended`), after `startAt` and in
    /// the future at publish (D31): RFC 3339 with its offset; `""` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2026-12-05T18:00:00+01:00")]
    end_at: Option<Text>,
    /// Up to 10 conditions a contact must all meet to be dialled (D31); the others are final
    /// with `skipReason` `FILTERED`. `[]` clears it on update.
    #[serde(default)]
    #[schema(value_type = Option<Vec<outbound_model::filter::FilterCondition>>)]
    filter: Option<serde_json::Value>,
}

/// A retry rule as sent (D18).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RetryRuleInput {
    reason: Text,
    #[serde(default)]
    delay_seconds: Option<Integer>,
    #[serde(default)]
    max_attempts: Option<Integer>,
}

impl SettingsInput {
    fn patch(self) -> Result<SettingsPatch, Error> {
        // "" clears a window bound or the zone on update.
        let clock = |field: &str, raw: Option<Text>| -> Result<Option<Option<ClockTime>>, Error> {
            raw.map(|raw| match raw.as_str().trim() {
                "" => Ok(None),
                value => ClockTime::parse(field, value).map(Some),
            })
            .transpose()
        };
        let retry_rules = self
            .retry_rules
            .map(|rules| {
                rules
                    .into_iter()
                    .enumerate()
                    .map(|(at, rule)| {
                        let field = |name: &str| format!("retryRules[{at}].{name}");
                        let reason = Reason::parse(rule.reason.as_str()).ok_or_else(|| {
                            Error::invalid(format!(
                                "{} must be one of {}",
                                field("reason"),
                                Reason::retryable_names().join(", ")
                            ))
                        })?;
                        let delay = rule
                            .delay_seconds
                            .map(|v| in_range(&field("delaySeconds"), v.0, 10, 604_800))
                            .transpose()?;
                        let most = rule
                            .max_attempts
                            .map(|v| in_range(&field("maxAttempts"), v.0, 1, 10))
                            .transpose()?;
                        Ok(RetryRule {
                            reason,
                            delay_seconds: delay.map(|v| v as u32),
                            max_attempts: most.map(|v| v as u8),
                        })
                    })
                    .collect::<Result<Vec<_>, Error>>()
            })
            .transpose()?;
        // "" clears a schedule's end on update.
        let instant =
            |field: &str, raw: Option<Text>| -> Result<Option<Option<Timestamp>>, Error> {
                raw.map(|raw| match raw.as_str().trim() {
                    "" => Ok(None),
                    value => Timestamp::parse_rfc3339(field, value).map(Some),
                })
                .transpose()
            };
        Ok(SettingsPatch {
            start_at: instant("startAt", self.start_at)?,
            end_at: instant("endAt", self.end_at)?,
            filter: self.filter.as_ref().map(ContactFilter::parse).transpose()?,
            window_zone: self
                .window_time_zone
                .map(|raw| WindowZone::parse(raw.as_str()))
                .transpose()?,
            retry_rules,
            priority: self.priority.map(|v| v.0 as u8),
            max_dial_count: self.max_dial_count.map(|v| v.0 as u8),
            call_interval: self.call_interval.map(|v| v.0 as u32),
            daily_start: clock("dailyStartTime", self.daily_start_time)?,
            daily_end: clock("dailyEndTime", self.daily_end_time)?,
            time_zone: self
                .time_zone
                .map(|raw| match raw.as_str().trim() {
                    "" => Ok(None),
                    value => ZoneName::parse(value).map(Some),
                })
                .transpose()?,
            caller_id: self.caller_id.map(|raw| match raw.as_str().trim() {
                "" => None,
                value => Some(CallerIdChoice::from(value.to_owned())),
            }),
            contact_flow_id: self.contact_flow_id.map(|raw| match raw.as_str().trim() {
                "" => None,
                value => Some(value.to_owned()),
            }),
            call_attributes: self
                .call_attributes
                .map(|names| call_attributes(names.0))
                .transpose()?,
            result_attributes: self
                .result_attributes
                .map(|names| result_attributes(names.0))
                .transpose()?,
            voicemail: self
                .voicemail
                .map(|raw| Voicemail::parse("voicemail", raw.as_str()))
                .transpose()?,
            pacing: PacingPatch {
                mode: self
                    .dialing_mode
                    .map(|raw| DialingMode::parse("dialingMode", raw.as_str()))
                    .transpose()?,
                queue_id: self.queue_id.map(|raw| match raw.as_str().trim() {
                    "" => None,
                    value => Some(value.to_owned()),
                }),
                calls_per_agent: (self.calls_per_agent)
                    .map(|v| CALLS_PER_AGENT.parse(v.0))
                    .transpose()?,
                abandonment_target: (self.abandonment_target)
                    .map(|v| ABANDONMENT_TARGET.parse(v.0))
                    .transpose()?,
            },
        })
    }
}

/// `callAttributes` as sent: at most 20 distinct names, none of the service's own (D22).
/// Whether each names a field of the data source is the service's check.
fn call_attributes(names: Vec<String>) -> Result<Vec<String>, Error> {
    distinct_names(
        "callAttributes",
        names,
        MAX_CALL_ATTRIBUTES,
        |field, name| {
            refuse_own(field, name)?;
            let contact_field =
                FieldName::parse(name).is_ok() || [PHONE_FIELD, E164_ATTRIBUTE].contains(&name);
            if !contact_field {
                return Err(Error::invalid(format!(
                    "{field} must be a contact field: customerName, address, orderAmount, e164, \
                 phoneNumber, or a custom field name (letters, digits and _, starting with a \
                 letter, at most 64)"
                )));
            }
            Ok(())
        },
    )
}

/// `resultAttributes` as sent: at most 10 distinct names of `[A-Za-z0-9_]{1,32}` (D22).
fn result_attributes(names: Vec<String>) -> Result<Vec<String>, Error> {
    distinct_names(
        "resultAttributes",
        names,
        MAX_RESULT_ATTRIBUTES,
        check_result_name,
    )
}

fn distinct_names(
    list: &str,
    names: Vec<String>,
    most: usize,
    check: impl Fn(&str, &str) -> Result<(), Error>,
) -> Result<Vec<String>, Error> {
    if names.len() > most {
        return Err(Error::invalid(format!(
            "{list} must have at most {most} names"
        )));
    }
    let mut kept: Vec<String> = Vec::with_capacity(names.len());
    for (at, name) in names.into_iter().enumerate() {
        let name = name.trim().to_owned();
        let field = format!("{list}[{at}]");
        check(&field, &name)?;
        if kept.contains(&name) {
            return Err(Error::invalid(format!("{field} '{name}' is listed twice")));
        }
        kept.push(name);
    }
    Ok(kept)
}

fn description(raw: Option<Text>) -> Result<Option<Description>, Error> {
    raw.map(|raw| Description::parse("taskDesc", raw.as_str()))
        .transpose()
}

/// The task filters of the list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListFilter {
    /// Tasks whose name contains this (case-insensitive); blank means all.
    task_name: Option<String>,
    /// Only tasks in this state (D10).
    #[param(value_type = Option<TaskStatus>)]
    status: Option<String>,
}

#[utoipa::path(get, operation_id = "listTasks", path = "/api/task/list", tag = "task",
    summary = "List tasks, newest first (D5)",
    params(Paging, ListFilter),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PageView<TaskRow>>), Refused))]
async fn list(
    State(app): State<App>,
    State(tokens): State<PageTokens>,
    tenant: Tenant,
    Query(paging): Query<Paging>,
    Query(wanted): Query<ListFilter>,
) -> Reply<PageView<TaskRow>> {
    let status = wanted
        .status
        .as_deref()
        .map(|raw| {
            raw.parse::<u8>()
                .ok()
                .and_then(|code| TaskStatus::try_from(code).ok())
                .ok_or_else(|| Error::invalid("status must be an integer from 0 to 6"))
        })
        .transpose()?;
    let name = filter(&wanted.task_name);
    let scope = ListScope::new(&tenant, "task/list")
        .filter("taskName", name)
        .filter("status", wanted.status.as_deref());
    let page = paging.page_query(&tokens, &scope)?;
    let found = task::list(&app.store, &tenant, &page, name, status).await?;
    let found = found.map(|t| t.list_view(app.zone()));
    Ok(Envelope(found.answer(&tokens, &scope)))
}

#[utoipa::path(get, operation_id = "getTask", path = "/api/task/detail/{id}", tag = "task",
    summary = "One task, its settings and counters",
    params(("id" = String, Path, description = "The task's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskView>), NotFound, Refused))]
async fn detail(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply<TaskView> {
    let found = task::detail(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(found.detail_view(app.zone())))
}

#[utoipa::path(get, operation_id = "getTaskDiagnostics", path = "/api/task/{id}/diagnostics", tag = "task",
    summary = "Why the task is or is not dialling (D19)",
    params(("id" = String, Path, description = "The task's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<DiagnosticsView>), NotFound, Refused))]
async fn diagnostics(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Reply<DiagnosticsView> {
    let id = existing_id(KIND, &id)?;
    let zone = app.zone();
    let view = task::diagnostics(&app.store, &tenant, &id, &app.config.dialing, zone).await?;
    Ok(Envelope(view))
}

#[utoipa::path(get, operation_id = "getTaskResults", path = "/api/task/{id}/results", tag = "task",
    summary = "What the flows of the task's answered calls reported (D22)",
    description = "For each of the task's `resultAttributes`, in order, over each contact's latest \
        answered attempt: its 50 most common values with their counts (most common first, ties in \
        value order), the answered contacts that set another value (`otherCount`) and those that \
        did not set it (`missingCount`).",
    params(("id" = String, Path, description = "The task's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskResults>), NotFound, Refused))]
async fn results(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Reply<TaskResults> {
    let found = task::results(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(found))
}

#[utoipa::path(get, operation_id = "getTaskStat", path = "/api/task/{id}/stat", tag = "task",
    summary = "A task's statistics (D7)",
    params(("id" = String, Path, description = "The task's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskStat>), NotFound, Refused))]
async fn stat(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply<TaskStat> {
    let stat = task::stat(&app.store, &tenant, &existing_id(KIND, &id)?, app.zone()).await?;
    Ok(Envelope(stat))
}

#[utoipa::path(get, operation_id = "getTaskHistory", path = "/api/task/{id}/history", tag = "task",
    summary = "What the task's calls did over its whole campaign (D31)",
    description = "The outcomes recorded in each interval since the task was published, oldest \
        first (a minute's for the last day, an hour's for the last 30 days, a day's before; \
        intervals without calls left out), which sum to its statistics, and every change of \
        its state (its pauses, its end). Times are RFC 3339 in UTC.",
    params(("id" = String, Path, description = "The task's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskHistory>), NotFound, Refused))]
async fn history(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Reply<TaskHistory> {
    let history = task::history(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(history))
}

/// `POST /api/task/add`: a DRAFT task over a data source.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AddTask {
    /// 1-100 characters after trimming, unique in the tenant.
    #[schema(value_type = String)]
    task_name: Text,
    /// At most 500 characters after trimming.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    task_desc: Option<Text>,
    #[schema(value_type = String)]
    data_source_id: Text,
    #[serde(flatten)]
    #[schema(value_type = SettingsInput)]
    settings: Flat<SettingsInput>,
}

#[utoipa::path(post, operation_id = "addTask", path = "/api/task/add", tag = "task",
    summary = "Create a DRAFT task",
    request_body = AddTask,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskView>), NotFound, Conflict, TooLarge, Refused))]
async fn add(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<AddTask>,
) -> Reply<TaskView> {
    let new = NewTask {
        name: Name::parse("taskName", body.task_name.as_str())?,
        description: description(body.task_desc)?.unwrap_or_default(),
        data_source_id: body.data_source_id.0,
        settings: body.settings.0.patch()?,
    };
    let added = task::add(&app.store, &tenant, new).await?;
    Ok(Envelope(added.detail_view(app.zone())))
}

/// `POST /api/task/update`: a DRAFT task's fields that change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UpdateTask {
    #[schema(value_type = String)]
    id: Text,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    task_name: Option<Text>,
    /// At most 500 characters after trimming.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    task_desc: Option<Text>,
    #[serde(flatten)]
    #[schema(value_type = SettingsInput)]
    settings: Flat<SettingsInput>,
}

#[utoipa::path(post, operation_id = "updateTask", path = "/api/task/update", tag = "task",
    summary = "Change a DRAFT task",
    request_body = UpdateTask,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TaskView>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn update(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<UpdateTask>,
) -> Reply<TaskView> {
    let update = TaskUpdate {
        id: existing_id(KIND, body.id.as_str())?,
        name: body
            .task_name
            .map(|n| Name::parse("taskName", n.as_str()))
            .transpose()?,
        description: description(body.task_desc)?,
        settings: body.settings.0.patch()?,
    };
    let updated = task::update(&app.store, &tenant, update).await?;
    Ok(Envelope(updated.detail_view(app.zone())))
}

/// A task's new state.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct StateChange {
    id: Id,
    status: TaskStatus,
}

/// A published task: RUNNING since `startTime`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Published {
    id: Id,
    status: TaskStatus,
    start_time: Option<String>,
}

#[utoipa::path(post, operation_id = "publishTask", path = "/api/task/publish", tag = "task",
    summary = "Start dialing a DRAFT task (D10)",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<Published>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn publish(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<ById>,
) -> Reply<Published> {
    let id = existing_id(KIND, body.id.as_str())?;
    let published = task::publish(&app.store, &tenant, &id, app.config.dialing.telephony).await?;
    Ok(Envelope(Published {
        id: published.id,
        status: published.status,
        start_time: published.started_at.map(|t| t.display(app.zone())),
    }))
}

/// Pause, resume and close answer `{id, status}`.
async fn set_state(
    app: App,
    tenant: Tenant,
    body: ById,
    operation: TaskOperation,
) -> Reply<StateChange> {
    let id = existing_id(KIND, body.id.as_str())?;
    let status = task::set_state(&app.store, &tenant, &id, operation).await?;
    Ok(Envelope(StateChange { id, status }))
}

#[utoipa::path(post, operation_id = "pauseTask", path = "/api/task/pause", tag = "task",
    summary = "Pause a RUNNING task (D10)",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<StateChange>), NotFound, NotAllowed, TooLarge, Refused))]
async fn pause(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<ById>,
) -> Reply<StateChange> {
    set_state(app, tenant, body, TaskOperation::Pause).await
}

#[utoipa::path(post, operation_id = "resumeTask", path = "/api/task/resume", tag = "task",
    summary = "Resume a PAUSED task (D10)",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<StateChange>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn resume(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<ById>,
) -> Reply<StateChange> {
    set_state(app, tenant, body, TaskOperation::Resume).await
}

#[utoipa::path(post, operation_id = "closeTask", path = "/api/task/close", tag = "task",
    summary = "Close a finished task (D10)",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<StateChange>), NotFound, NotAllowed, TooLarge, Refused))]
async fn close(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<ById>,
) -> Reply<StateChange> {
    set_state(app, tenant, body, TaskOperation::Close).await
}

/// Longest stop reason kept.
const MAX_REASON_CHARS: usize = 500;

/// `POST /api/task/stop`.
#[derive(Debug, Deserialize, ToSchema)]
struct StopTask {
    #[schema(value_type = String)]
    id: Text,
    /// Why, at most 500 characters after trimming; shown as `stopReason`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    reason: Option<Text>,
}

#[utoipa::path(post, operation_id = "stopTask", path = "/api/task/stop", tag = "task",
    summary = "Stop a RUNNING or PAUSED task for good (D10)",
    request_body = StopTask,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<StateChange>), NotFound, NotAllowed, TooLarge, Refused))]
async fn stop(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<StopTask>,
) -> Reply<StateChange> {
    let id = existing_id(KIND, body.id.as_str())?;
    let reason = body
        .reason
        .as_ref()
        .map(|reason| reason.as_str().trim())
        .filter(|reason| !reason.is_empty())
        .map(|reason| {
            if reason.chars().count() > MAX_REASON_CHARS {
                Err(Error::invalid(format!(
                    "reason must be at most {MAX_REASON_CHARS} characters"
                )))
            } else {
                Ok(reason.to_owned())
            }
        })
        .transpose()?;
    let stopped = task::stop(&app.store, &tenant, &id, reason).await?;
    Ok(Envelope(StateChange {
        id: stopped.id,
        status: stopped.status,
    }))
}

#[utoipa::path(post, operation_id = "deleteTask", path = "/api/task/delete", tag = "task",
    summary = "Delete a task that is not RUNNING or PAUSED",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<Nothing>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn delete(State(app): State<App>, tenant: Tenant, Payload(body): Payload<ById>) -> Reply {
    let id = existing_id(KIND, body.id.as_str())?;
    task::delete(&app.store, &app.reclaim, &tenant, &id).await?;
    Ok(Envelope::empty())
}

/// `POST /api/task/{id}/recall` (D12).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct RecallRequest {
    /// The contacts to dial again; empty or absent means every contact whose latest outcome
    /// failed or went unanswered.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    contact_ids: Option<Strings>,
    /// 1 (first) to 5 (default): recalled contacts are dialled before the others, by priority.
    #[serde(default)]
    #[schema(value_type = Option<u8>, minimum = 1, maximum = 5)]
    priority: Option<Ranged<1, 5>>,
}

/// The contacts recalled, all or none (D12).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct Recalled {
    recall_count: usize,
    recall_ids: Vec<Id>,
}

#[utoipa::path(post, operation_id = "recallTask", path = "/api/task/{id}/recall", tag = "task",
    summary = "Dial contacts of a task again (D12)",
    params(("id" = String, Path, description = "The task's id")),
    request_body = RecallRequest,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<Recalled>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn recall(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    Payload(body): Payload<RecallRequest>,
) -> Reply<Recalled> {
    let id = existing_id(KIND, &id)?;
    let contact_ids = body.contact_ids.unwrap_or_default().0;
    let contact_ids: Vec<&str> = contact_ids.iter().map(String::as_str).collect();
    let priority = body.priority.map_or(5, |p| p.0);
    let recalled = task::recall(
        &app.store,
        &app.blob,
        &app.dial_jobs,
        &tenant,
        &id,
        &contact_ids,
        priority as u8,
    )
    .await?;
    Ok(Envelope(Recalled {
        recall_count: recalled.len(),
        recall_ids: recalled,
    }))
}

/// What a task export contains.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct OutcomeQuery {
    /// Which contacts, by their outcome in the task; all by default.
    #[param(value_type = Option<OutcomeFilter>)]
    status: Option<String>,
}

#[utoipa::path(get, operation_id = "exportTask", path = "/api/task/{id}/export", tag = "task",
    summary = "Export a task's contacts with their outcomes (D8)",
    params(("id" = String, Path, description = "The task's id"), FormatQuery, OutcomeQuery),
    responses(FileResponses, NotFound, Conflict, TooLarge, Refused))]
async fn export_contacts(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    Query(format): Query<FormatQuery>,
    Query(outcome): Query<OutcomeQuery>,
) -> Result<Response, Refusal> {
    let id = existing_id(KIND, &id)?;
    let format = ExportFormat::parse(format.format.as_deref())?;
    let filter = OutcomeFilter::parse(outcome.status.as_deref())?;
    let found = task::detail(&app.store, &tenant, &id).await?;
    let file = export::task_contacts(
        &app.store,
        &export::ExportTarget::of(&app, format),
        &tenant,
        &found,
        filter,
    )
    .await?;
    Ok(super::file_response(file))
}

//! `/api/task/...`: tasks, their state changes, recall and statistics.

use super::extract::{existing_id, Body, QueryParams};
use super::{App, Envelope, Reply};
use crate::auth::Tenant;
use crate::error::Error;
use crate::files::ExportFormat;
use crate::model::page::ListScope;
use crate::model::task::{in_range, ClockTime, TaskOperation, ZoneName};
use crate::model::{Description, Name, TaskStatus};
use crate::service::export::{self, OutcomeFilter};
use crate::service::task::{self, NewTask, SettingsPatch, TaskUpdate};
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use serde_json::json;

const KIND: &str = "task";

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/task/list", get(list))
        .route("/api/task/detail/{id}", get(detail))
        .route("/api/task/add", post(add))
        .route("/api/task/update", post(update))
        .route("/api/task/publish", post(publish))
        .route("/api/task/pause", post(pause))
        .route("/api/task/resume", post(resume))
        .route("/api/task/stop", post(stop))
        .route("/api/task/close", post(close))
        .route("/api/task/delete", post(delete))
        .route("/api/task/{id}/recall", post(recall))
        .route("/api/task/{id}/stat", get(stat))
        .route("/api/task/{id}/export", get(export_contacts))
        .route("/api/task/{id}/exportJob", post(super::export::task_job))
}

/// The dialing settings of a body (D9); absent fields are `None`.
fn settings(body: &Body) -> Result<SettingsPatch, Error> {
    let ranged = |field: &str, min: i64, max: i64| -> Result<Option<i64>, Error> {
        let invalid = || Error::invalid(format!("{field} must be an integer from {min} to {max}"));
        body.int(field)
            .map_err(|_| invalid())?
            .map(|value| in_range(field, value, min, max))
            .transpose()
    };
    // "" clears a window bound or the zone on update.
    let clock = |field: &str| -> Result<Option<Option<ClockTime>>, Error> {
        body.str(field)?
            .map(|raw| match raw.trim() {
                "" => Ok(None),
                value => ClockTime::parse(field, value).map(Some),
            })
            .transpose()
    };
    Ok(SettingsPatch {
        priority: ranged("priority", 1, 5)?.map(|v| v as u8),
        max_dial_count: ranged("maxDialCount", 1, 10)?.map(|v| v as u8),
        call_interval: ranged("callInterval", 10, 86_400)?.map(|v| v as u32),
        daily_start: clock("dailyStartTime")?,
        daily_end: clock("dailyEndTime")?,
        time_zone: body
            .str("timeZone")?
            .map(|raw| match raw.trim() {
                "" => Ok(None),
                value => ZoneName::parse(value).map(Some),
            })
            .transpose()?,
    })
}

fn description(body: &Body) -> Result<Option<Description>, Error> {
    body.str("taskDesc")?
        .map(|raw| Description::parse("taskDesc", raw))
        .transpose()
}

async fn list(State(app): State<App>, tenant: Tenant, query: QueryParams) -> Reply {
    let status = query
        .get("status")
        .map(|raw| {
            raw.parse::<u8>()
                .ok()
                .and_then(|code| TaskStatus::try_from(code).ok())
                .ok_or_else(|| Error::invalid("status must be an integer from 0 to 6"))
        })
        .transpose()?;
    let name = query.filter("taskName");
    let scope = ListScope::new(&tenant, "task/list")
        .filter("taskName", name)
        .filter("status", query.get("status"));
    let page = query.page_query(&app.config.page_tokens, &scope)?;
    let found = task::list(&app.store, &tenant, &page, name, status).await?;
    let found = found.map(|t| t.list_view(app.zone()));
    Ok(Envelope(found.answer(&app.config.page_tokens, &scope)))
}

async fn detail(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply {
    let found = task::detail(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(found.detail_view(app.zone())))
}

async fn stat(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply {
    let found = task::detail(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(found.stat_view(app.zone())))
}

async fn add(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let new = NewTask {
        name: Name::parse("taskName", body.required_str("taskName")?)?,
        description: description(&body)?.unwrap_or_default(),
        data_source_id: body.required_str("dataSourceId")?.to_owned(),
        settings: settings(&body)?,
    };
    let added = task::add(&app.store, &tenant, new).await?;
    Ok(Envelope(added.detail_view(app.zone())))
}

async fn update(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let update = TaskUpdate {
        id: existing_id(KIND, body.required_str("id")?)?,
        name: body
            .str("taskName")?
            .map(|n| Name::parse("taskName", n))
            .transpose()?,
        description: description(&body)?,
        settings: settings(&body)?,
    };
    let updated = task::update(&app.store, &tenant, update).await?;
    Ok(Envelope(updated.detail_view(app.zone())))
}

async fn publish(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let id = existing_id(KIND, body.required_str("id")?)?;
    let published = task::publish(&app.store, &tenant, &id).await?;
    Ok(Envelope(json!({
        "id": published.id,
        "status": published.status,
        "startTime": published.started_at.map(|t| t.display(app.zone())),
    })))
}

/// Pause, resume and close answer `{id, status}`.
async fn set_state(app: App, tenant: Tenant, body: Body, operation: TaskOperation) -> Reply {
    let id = existing_id(KIND, body.required_str("id")?)?;
    let changed = task::set_state(&app.store, &tenant, &id, operation).await?;
    Ok(Envelope(
        json!({"id": changed.id, "status": changed.status}),
    ))
}

async fn pause(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    set_state(app, tenant, body, TaskOperation::Pause).await
}

async fn resume(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    set_state(app, tenant, body, TaskOperation::Resume).await
}

async fn close(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    set_state(app, tenant, body, TaskOperation::Close).await
}

/// Longest stop reason kept.
const MAX_REASON_CHARS: usize = 500;

async fn stop(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let id = existing_id(KIND, body.required_str("id")?)?;
    let reason = body
        .str("reason")?
        .map(str::trim)
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
    Ok(Envelope(
        json!({"id": stopped.id, "status": stopped.status}),
    ))
}

async fn delete(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let id = existing_id(KIND, body.required_str("id")?)?;
    task::delete(&app.store, &app.reclaim, &tenant, &id).await?;
    Ok(Envelope::empty())
}

async fn recall(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply {
    let id = existing_id(KIND, &id)?;
    let contact_ids = body.strings("contactIds")?;
    let priority = match body.int("priority") {
        Ok(Some(value)) => in_range("priority", value, 1, 5)?,
        Ok(None) => 5,
        Err(_) => return Err(Error::invalid("priority must be an integer from 1 to 5")),
    };
    let recalled = task::recall(&app, &tenant, &id, &contact_ids, priority as u8).await?;
    Ok(Envelope(
        json!({"recallCount": recalled.len(), "recallIds": recalled}),
    ))
}

async fn export_contacts(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Response, Error> {
    let id = existing_id(KIND, &id)?;
    let format = ExportFormat::parse(query.get("format"))?;
    let filter = OutcomeFilter::parse(query.get("status"))?;
    let found = task::detail(&app.store, &tenant, &id).await?;
    let file = export::task_contacts(
        &app.store,
        &app.export_target(format),
        &tenant,
        &found,
        filter,
    )
    .await?;
    Ok(super::file_response(file))
}

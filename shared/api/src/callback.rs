//! `/api/task/callback...`: callbacks promised to a task's contacts (D31).

use super::contract::{Conflict, NotAllowed, NotFound, Nothing, Refused, Success, TooLarge};
use super::extract::{existing_id, Paging, Payload, Query};
use super::fields::Text;
use super::{App, Envelope, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{Path, State};
use outbound_model::callback::{CallbackStatus, CallbackView};
use outbound_model::page::{ListScope, PageTokens, PageView};
use outbound_model::{Tenant, Timestamp};
use outbound_service::callback;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

const TASK: &str = "task";
const CONTACT: &str = "contact";

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc)
        .route(route!(set))
        .route(route!(cancel))
        .route(route!(list))
}

/// `POST /api/task/callback`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct SetCallback {
    #[schema(value_type = String)]
    task_id: Text,
    /// A contact of the task's data source.
    #[schema(value_type = String)]
    contact_id: Text,
    /// RFC 3339 with its offset, 60 s to 30 days ahead, inside the contact's calling hours.
    #[schema(value_type = String, example = "2026-12-01T15:00:00-05:00")]
    at: Text,
}

#[utoipa::path(post, operation_id = "setCallback", path = "/api/task/callback", tag = "task",
    summary = "Promise a contact a call at a time, or move its pending callback (D31)",
    description = "The call is placed at `at`, never before and at most a tick after when \
        capacity is free, ahead of the task's other contacts. The do-not-call list and the \
        calling hours hold; the task's daily window, `maxDialCount` and the frequency cap do \
        not. Not answered, it is tried once more after the task's `callInterval`. At most 3 per \
        contact per task (a 4th is 409). A COMPLETED task becomes RUNNING.",
    request_body = SetCallback,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<CallbackView>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn set(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<SetCallback>,
) -> Reply<CallbackView> {
    let at = Timestamp::parse_rfc3339("at", body.at.as_str())?;
    let task = existing_id(TASK, body.task_id.as_str())?;
    let contact = existing_id(CONTACT, body.contact_id.as_str())?;
    let view = callback::set(&app.store, &tenant, (&task, &contact), at, app.zone()).await?;
    Ok(Envelope(view))
}

/// `POST /api/task/callback/cancel`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct CancelCallback {
    #[schema(value_type = String)]
    task_id: Text,
    #[schema(value_type = String)]
    contact_id: Text,
}

#[utoipa::path(post, operation_id = "cancelCallback", path = "/api/task/callback/cancel", tag = "task",
    summary = "Cancel a contact's pending callback (D31)",
    description = "The contact goes back to where it stood before the callback was set.",
    request_body = CancelCallback,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<Nothing>), NotFound, NotAllowed, Conflict, TooLarge, Refused))]
async fn cancel(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<CancelCallback>,
) -> Reply {
    let task = existing_id(TASK, body.task_id.as_str())?;
    let contact = existing_id(CONTACT, body.contact_id.as_str())?;
    callback::cancel(&app.store, &tenant, &task, &contact).await?;
    Ok(Envelope::empty())
}

/// Which callbacks.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
struct StatusQuery {
    /// `PENDING`, `DONE`, `MISSED` or `CANCELLED`; all by default.
    #[param(value_type = Option<CallbackStatus>)]
    status: Option<String>,
}

#[utoipa::path(get, operation_id = "listCallbacks", path = "/api/task/{id}/callbacks", tag = "task",
    summary = "A task's callbacks, in the order they were set (D5, D31)",
    params(("id" = String, Path, description = "The task's id"), Paging, StatusQuery),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PageView<CallbackView>>), NotFound, Refused))]
async fn list(
    State(app): State<App>,
    State(tokens): State<PageTokens>,
    tenant: Tenant,
    Path(id): Path<String>,
    Query(paging): Query<Paging>,
    Query(wanted): Query<StatusQuery>,
) -> Reply<PageView<CallbackView>> {
    let id = existing_id(TASK, &id)?;
    // An empty `status=` names no status: 400, as any other value outside the four.
    let status = (wanted.status.as_deref())
        .map(CallbackStatus::parse)
        .transpose()?;
    let scope = ListScope::new(&tenant, "task/callbacks")
        .filter("task", Some(id.as_str()))
        .filter("status", status.map(CallbackStatus::name));
    let page = paging.page_query(&tokens, &scope)?;
    let (task, found) = callback::list(&app.store, &tenant, &id, &page, status).await?;
    let stop_reason = task.stop_reason.as_deref();
    let found = found.map(|record| record.view(task.status, stop_reason));
    Ok(Envelope(found.answer(&tokens, &scope)))
}

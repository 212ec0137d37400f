//! Export jobs (D8): `POST /api/dataSource/{id}/contact/exportJob`, `POST /api/task/{id}/exportJob`
//! (routed with their groups) and `GET /api/export/{exportId}`.

use super::contract::{Conflict, NotFound, Refused, Success, TooLarge};
use super::extract::{body_bytes, existing_id, Body};
use super::{App, Envelope, Refusal, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{FromRequest, Path, Request, State};
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::export::{ExportSubject, ExportView};
use outbound_model::Id;
use outbound_model::Tenant;
use outbound_service::export::OutcomeFilter;
use outbound_service::export_job;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc).route(route!(status))
}

/// The body of a job request: a JSON object, or none at all (every field has a default). A body
/// of only whitespace is not JSON, and is refused as any malformed body is.
pub struct JobBody<T>(T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JobBody<T> {
    type Rejection = Refusal;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = body_bytes(request, state).await?;
        let object = if bytes.is_empty() {
            serde_json::Map::new()
        } else {
            Body::parse(&bytes)?.0
        };
        Ok(super::fields::from_object(object).map(JobBody)?)
    }
}

/// `POST /api/dataSource/{id}/contact/exportJob`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct DataSourceJob {
    /// The file's format; `excel` by default.
    #[serde(default)]
    #[schema(value_type = Option<ExportFormat>)]
    format: Option<Value>,
}

/// `POST /api/task/{id}/exportJob`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct TaskJob {
    /// The file's format; `excel` by default.
    #[serde(default)]
    #[schema(value_type = Option<ExportFormat>)]
    format: Option<Value>,
    /// Which contacts, by their outcome in the task; all by default.
    #[serde(default)]
    #[schema(value_type = Option<OutcomeFilter>)]
    status: Option<Value>,
}

/// `format`: `csv` or `excel`, default `excel`, as the direct exports take it.
fn format(raw: Option<Value>) -> Result<ExportFormat, Error> {
    match raw {
        None | Some(Value::Null) => Ok(ExportFormat::Excel),
        Some(Value::String(format)) => ExportFormat::parse(Some(&format)),
        Some(_) => Err(ExportFormat::refused()),
    }
}

/// `status`: the task export's filter, by its code (default all).
fn outcome_filter(raw: Option<Value>) -> Result<OutcomeFilter, Error> {
    match raw {
        None | Some(Value::Null) => Ok(OutcomeFilter::All),
        Some(Value::Number(code)) => code
            .as_i64()
            .map_or_else(|| Err(OutcomeFilter::refused()), OutcomeFilter::from_code),
        Some(_) => Err(OutcomeFilter::refused()),
    }
}

/// A queued export job.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobStarted {
    export_id: Id,
}

fn started(job: outbound_model::export::ExportJob) -> Reply<JobStarted> {
    Ok(Envelope(JobStarted { export_id: job.id }))
}

#[utoipa::path(post, operation_id = "startDataSourceExport", path = "/api/dataSource/{id}/contact/exportJob", tag = "export",
    summary = "Export a data source of any size in the background (D8)",
    params(("id" = String, Path, description = "The data source's id")),
    request_body = Option<DataSourceJob>,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<JobStarted>), NotFound, Conflict, TooLarge, Refused))]
pub async fn data_source_job(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    JobBody(body): JobBody<DataSourceJob>,
) -> Reply<JobStarted> {
    let source = existing_id("dataSource", &id)?;
    let format = format(body.format)?;
    let subject = ExportSubject::DataSource {
        data_source_id: source,
    };
    let cap = app.config.tenant_running_exports;
    let job = export_job::start(&app.store, &app.exports, &tenant, subject, format, cap).await?;
    started(job)
}

#[utoipa::path(post, operation_id = "startTaskExport", path = "/api/task/{id}/exportJob", tag = "export",
    summary = "Export a task of any size in the background (D8)",
    params(("id" = String, Path, description = "The task's id")),
    request_body = Option<TaskJob>,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<JobStarted>), NotFound, Conflict, TooLarge, Refused))]
pub async fn task_job(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    JobBody(body): JobBody<TaskJob>,
) -> Reply<JobStarted> {
    let task = existing_id("task", &id)?;
    let format = format(body.format)?;
    let filter = outcome_filter(body.status)?;
    let subject = ExportSubject::Task {
        task_id: task,
        outcome_filter: filter.code(),
    };
    let cap = app.config.tenant_running_exports;
    let job = export_job::start(&app.store, &app.exports, &tenant, subject, format, cap).await?;
    started(job)
}

#[utoipa::path(get, operation_id = "getExport", path = "/api/export/{exportId}", tag = "export",
    summary = "Where an export job is, and its download once done (D8)",
    params(("exportId" = String, Path, description = "The export's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<ExportView>), NotFound, Refused))]
async fn status(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Reply<ExportView> {
    let id = existing_id("export", &id)?;
    let (job, url) = export_job::status(&app.store, &app.blob, &tenant, &id).await?;
    Ok(Envelope(job.view(url, app.zone())))
}

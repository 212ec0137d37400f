//! Export jobs (D8): `POST /api/dataSource/{id}/contact/exportJob`, `POST /api/task/{id}/exportJob`
//! (routed with their groups) and `GET /api/export/{exportId}`.

use super::extract::{existing_id, Body, MAX_JSON_BODY};
use super::{App, Envelope, Reply};
use crate::auth::Tenant;
use crate::error::Error;
use crate::files::ExportFormat;
use crate::model::export::ExportSubject;
use crate::service::export::OutcomeFilter;
use crate::service::export_job;
use axum::body::Bytes;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

pub fn routes() -> Router<App> {
    Router::new().route("/api/export/{export_id}", get(status))
}

/// The body of a job request: a JSON object, or none at all (every field has a default).
pub struct JobBody(Body);

impl<S: Send + Sync> FromRequest<S> for JobBody {
    type Rejection = Error;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    Error::TooLarge(format!("request body is larger than {MAX_JSON_BODY} bytes"))
                } else {
                    Error::invalid("request body could not be read")
                }
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JobBody(Body(serde_json::Map::new())));
        }
        Body::parse(&bytes).map(JobBody)
    }
}

/// `format`: `csv` or `excel`, default `excel`, as the direct exports take it.
fn format(body: &Body) -> Result<ExportFormat, Error> {
    let raw = body
        .str("format")
        .map_err(|_| Error::invalid("format must be csv or excel"))?;
    ExportFormat::parse(raw)
}

/// `status`: the task export's filter, 0-3 (default 0, all).
fn outcome_filter(body: &Body) -> Result<OutcomeFilter, Error> {
    match body.0.get("status") {
        None | Some(Value::Null) => Ok(OutcomeFilter::All),
        Some(Value::Number(code)) => code
            .as_i64()
            .map_or_else(|| Err(OutcomeFilter::refused()), OutcomeFilter::from_code),
        Some(_) => Err(OutcomeFilter::refused()),
    }
}

fn started(job: &crate::model::export::ExportJob) -> Reply {
    Ok(Envelope(json!({ "exportId": job.id })))
}

pub async fn data_source_job(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    JobBody(body): JobBody,
) -> Reply {
    let source = existing_id("dataSource", &id)?;
    let format = format(&body)?;
    let subject = ExportSubject::DataSource {
        data_source_id: source,
    };
    let job = export_job::start(&app.store, &app.exports, &tenant, subject, format).await?;
    started(&job)
}

pub async fn task_job(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    JobBody(body): JobBody,
) -> Reply {
    let task = existing_id("task", &id)?;
    let format = format(&body)?;
    let filter = outcome_filter(&body)?;
    let subject = ExportSubject::Task {
        task_id: task,
        outcome_filter: filter.code(),
    };
    let job = export_job::start(&app.store, &app.exports, &tenant, subject, format).await?;
    started(&job)
}

async fn status(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply {
    let id = existing_id("export", &id)?;
    let (job, url) = export_job::status(&app.store, &app.blob, &tenant, &id).await?;
    Ok(Envelope(job.view(url.as_deref(), app.zone())))
}

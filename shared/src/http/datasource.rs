//! `/api/dataSource/...`: data sources and their contacts.

use super::extract::{existing_id, Body, QueryParams};
use super::{App, Envelope, Reply};
use crate::auth::Tenant;
use crate::error::Error;
use crate::files::{self, ExportFormat};
use crate::model::contact::ContactPatch;
use crate::model::page::ListScope;
use crate::model::{Description, Name};
use crate::service::datasource::{DataSourceUpdate, NewDataSource};
use crate::service::{contact, datasource};
use crate::service::{export, import};
use axum::extract::{DefaultBodyLimit, Multipart, Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use serde_json::Value;

const KIND: &str = "dataSource";

pub fn routes() -> Router<App> {
    Router::new()
        .route("/api/dataSource/list", get(list))
        .route("/api/dataSource/detail/{id}", get(detail))
        .route("/api/dataSource/add", post(add))
        .route("/api/dataSource/update", post(update))
        .route("/api/dataSource/delete", post(delete))
        .route("/api/dataSource/{id}/contacts", get(contacts))
        .route("/api/dataSource/{id}/contact/add", post(add_contact))
        .route("/api/dataSource/{id}/contact/update", post(update_contact))
        .route("/api/dataSource/{id}/contact/delete", post(delete_contact))
        .route(
            "/api/dataSource/{id}/contact/batchImport",
            // Room for the file and the multipart framing around it.
            post(batch_import).layer(DefaultBodyLimit::max(MAX_POSTED_BYTES + 64 * 1024)),
        )
        .route("/api/dataSource/{id}/contact/importUrl", post(import_url))
        .route(
            "/api/dataSource/{id}/contact/import/{import_id}",
            get(import_status),
        )
        .route(
            "/api/dataSource/{id}/contact/batchExport",
            get(batch_export),
        )
        .route(
            "/api/dataSource/{id}/contact/exportJob",
            post(super::export::data_source_job),
        )
}

async fn list(State(app): State<App>, tenant: Tenant, query: QueryParams) -> Reply {
    let name = query.filter("dataSourceName");
    let scope = ListScope::new(&tenant, "dataSource/list").filter("dataSourceName", name);
    let page = query.page_query(&app.config.page_tokens, &scope)?;
    let found = datasource::list(&app.store, &tenant, &page, name).await?;
    let found = found.map(|s| s.view(app.zone()));
    Ok(Envelope(found.answer(&app.config.page_tokens, &scope)))
}

async fn detail(State(app): State<App>, tenant: Tenant, Path(id): Path<String>) -> Reply {
    let source = datasource::detail(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(source.view(app.zone())))
}

async fn add(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let new = NewDataSource {
        name: Name::parse("dataSourceName", body.required_str("dataSourceName")?)?,
        description: Description::parse(
            "dataSourceDesc",
            body.str("dataSourceDesc")?.unwrap_or(""),
        )?,
    };
    let source = datasource::add(&app.store, &tenant, new).await?;
    Ok(Envelope(source.view(app.zone())))
}

async fn update(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let update = DataSourceUpdate {
        id: existing_id(KIND, body.required_str("id")?)?,
        name: body
            .str("dataSourceName")?
            .map(|n| Name::parse("dataSourceName", n))
            .transpose()?,
        description: body
            .str("dataSourceDesc")?
            .map(|d| Description::parse("dataSourceDesc", d))
            .transpose()?,
    };
    let source = datasource::update(&app.store, &tenant, update).await?;
    Ok(Envelope(source.view(app.zone())))
}

async fn delete(State(app): State<App>, tenant: Tenant, body: Body) -> Reply {
    let id = existing_id(KIND, body.required_str("id")?)?;
    datasource::delete(&app.store, &app.reclaim, &tenant, &id).await?;
    Ok(Envelope::empty())
}

async fn contacts(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: QueryParams,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let phone = query.filter("phoneNumber");
    let scope = ListScope::new(&tenant, &format!("dataSource/{source}/contacts"))
        .filter("phoneNumber", phone);
    let page = query.page_query(&app.config.page_tokens, &scope)?;
    let found = contact::list(&app.store, &tenant, &source, &page, phone).await?;
    let found = found.map(|c| c.view(app.zone()));
    Ok(Envelope(found.answer(&app.config.page_tokens, &scope)))
}

async fn add_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let patch = ContactPatch::from_json(&body.0)?;
    let added = contact::add(&app.store, &tenant, &source, patch).await?;
    Ok(Envelope(added.view(app.zone())))
}

async fn update_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let contact_id = existing_id("contact", body.required_str("contactId")?)?;
    let patch = ContactPatch::from_json(&body.0)?;
    let updated = contact::update(&app.store, &tenant, &source, &contact_id, patch).await?;
    Ok(Envelope(updated.view(app.zone())))
}

async fn delete_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let contact_id = existing_id("contact", body.required_str("contactId")?)?;
    contact::delete(&app.store, &tenant, &source, &contact_id).await?;
    Ok(Envelope(Value::Null))
}

/// The largest file `batchImport` takes in the request (4 MiB): a Lambda request carries at
/// most 6 MB, and the HTTP API hands it a file base64-encoded, a third larger. Larger files,
/// up to 20 MiB, go straight to S3 through `importUrl` (D8).
pub const MAX_POSTED_BYTES: usize = 4 * 1024 * 1024;

fn posted_too_large(source: &crate::model::Id) -> Error {
    Error::TooLarge(format!(
        "file is larger than 4 MiB, the most a request to the API can carry; upload files of up \
         to 20 MiB with POST /api/dataSource/{source}/contact/importUrl"
    ))
}

/// The `file` part of a multipart body: its name and bytes.
async fn file_part(
    mut form: Multipart,
    source: &crate::model::Id,
) -> Result<(String, Bytes), Error> {
    let unreadable = |error: axum::extract::multipart::MultipartError| {
        if error.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            posted_too_large(source)
        } else {
            Error::invalid(format!(
                "multipart body is malformed: {}",
                error.body_text()
            ))
        }
    };
    while let Some(field) = form.next_field().await.map_err(unreadable)? {
        if field.name() == Some("file") {
            let name = field.file_name().unwrap_or("upload").to_owned();
            let bytes = field.bytes().await.map_err(unreadable)?;
            if bytes.len() > MAX_POSTED_BYTES {
                return Err(posted_too_large(source));
            }
            return Ok((name, bytes));
        }
    }
    Err(Error::invalid("multipart field file is required"))
}

async fn batch_import(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    form: Multipart,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let (name, bytes) = file_part(form, &source).await?;
    let file_name = import::file_name(&name).unwrap_or_else(|_| "upload".into());
    let (done, report) =
        import::import_posted(&app.store, &app.blob, &tenant, &source, file_name, bytes).await?;
    let mut data =
        serde_json::to_value(&report).map_err(|e| Error::internal("encode import report", e))?;
    data["importId"] = done.id.as_str().into();
    Ok(Envelope(data))
}

async fn import_url(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let file_name = import::file_name(body.required_str("fileName")?)?;
    let size = upload_size(body.int("fileSize")?)?;
    let ticket =
        import::request_upload(&app.store, &app.blob, &tenant, &source, file_name, size).await?;
    Ok(Envelope(serde_json::json!({
        "importId": ticket.import.id,
        "uploadUrl": ticket.url,
        "method": "PUT",
        // The URL is signed for exactly this length: S3 refuses any other (D8: 20 MiB at most).
        "headers": {"Content-Length": size.to_string()},
        "expiresAt": ticket.expires_at.display(app.zone()),
    })))
}

/// The announced size of an upload: 1 byte to 20 MiB (D8); the upload URL is signed for it.
fn upload_size(size: Option<i64>) -> Result<u64, Error> {
    match size {
        None => Err(Error::invalid(
            "fileSize is required: the size of the file in bytes, which the upload URL is signed for",
        )),
        Some(size) if size > files::MAX_UPLOAD_BYTES as i64 => {
            Err(Error::TooLarge("file is larger than 20 MiB".into()))
        }
        Some(size) if size >= 1 => Ok(size as u64),
        Some(_) => Err(Error::invalid("fileSize must be a positive number of bytes")),
    }
}

async fn import_status(
    State(app): State<App>,
    tenant: Tenant,
    Path((id, import_id)): Path<(String, String)>,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let import_id = existing_id("import", &import_id)?;
    let (found, report) =
        import::status(&app.store, &app.blob, &tenant, &source, &import_id).await?;
    Ok(Envelope(found.view(report.as_ref(), app.zone())))
}

async fn batch_export(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    query: QueryParams,
) -> Result<Response, Error> {
    let source = existing_id(KIND, &id)?;
    let format = ExportFormat::parse(query.get("format"))?;
    let file = export::contacts(&app.store, &app.export_target(format), &tenant, &source).await?;
    Ok(super::file_response(file))
}

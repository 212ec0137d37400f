//! `/api/dataSource/...`: data sources and their contacts.

use super::contract::{ById, Conflict, NotFound, Refused, Success, TooLarge, UnsupportedType};
use super::extract::{existing_id, filter, Body, Paging, Payload, Query};
use super::fields::{Integer, Nullable, Text};
use super::{App, Envelope, Refusal, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{Multipart, Path, State};
use axum::response::Response;
use bytes::Bytes;
use outbound_files as files;
use outbound_model::contact::{ContactPatch, ContactView};
use outbound_model::datasource::DataSourceView;
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::import::{ImportReport, ImportView};
use outbound_model::numbers::Country;
use outbound_model::page::PageTokens;
use outbound_model::page::{ListScope, PageView};
use outbound_model::Tenant;
use outbound_model::{Description, Id, Name};
use outbound_service::datasource::{DataSourceUpdate, NewDataSource};
use outbound_service::{contact, datasource};
use outbound_service::{export, import};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

const KIND: &str = "dataSource";

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc)
        .route(route!(list))
        .route(route!(detail))
        .route(route!(add))
        .route(route!(update))
        .route(route!(delete))
        .route(route!(contacts))
        .route(route!(add_contact))
        .route(route!(update_contact))
        .route(route!(delete_contact))
        // Room for the file and the multipart framing around it.
        .route(route!(batch_import).body_limit(MAX_POSTED_BYTES + 64 * 1024))
        .route(route!(import_url))
        .route(route!(import_status))
        .route(route!(batch_export))
        .route(route!(super::export::data_source_job))
}

/// The data source filter of the list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListFilter {
    /// Data sources whose name contains this (case-insensitive); blank means all.
    data_source_name: Option<String>,
}

#[utoipa::path(get, operation_id = "listDataSources", path = "/api/dataSource/list", tag = "dataSource",
    summary = "List data sources, newest first (D5)",
    params(Paging, ListFilter),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PageView<DataSourceView>>), Refused))]
async fn list(
    State(app): State<App>,
    State(tokens): State<PageTokens>,
    tenant: Tenant,
    Query(paging): Query<Paging>,
    Query(wanted): Query<ListFilter>,
) -> Reply<PageView<DataSourceView>> {
    let name = filter(&wanted.data_source_name);
    let scope = ListScope::new(&tenant, "dataSource/list").filter("dataSourceName", name);
    let page = paging.page_query(&tokens, &scope)?;
    let found = datasource::list(&app.store, &tenant, &page, name).await?;
    let found = found.map(|s| s.view(app.zone()));
    Ok(Envelope(found.answer(&tokens, &scope)))
}

#[utoipa::path(get, operation_id = "getDataSource", path = "/api/dataSource/detail/{id}", tag = "dataSource",
    summary = "One data source",
    params(("id" = String, Path, description = "The data source's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<DataSourceView>), NotFound, Refused))]
async fn detail(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
) -> Reply<DataSourceView> {
    let source = datasource::detail(&app.store, &tenant, &existing_id(KIND, &id)?).await?;
    Ok(Envelope(source.view(app.zone())))
}

/// `POST /api/dataSource/add`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AddDataSource {
    /// 1-100 characters after trimming, unique in the tenant (D6).
    #[schema(value_type = String)]
    data_source_name: Text,
    /// At most 500 characters after trimming.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    data_source_desc: Option<Text>,
    /// ISO 3166-1 alpha-2: the country of its numbers written without `+`, over the tenant's
    /// (D14).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "US")]
    default_country: Option<Text>,
}

#[utoipa::path(post, operation_id = "addDataSource", path = "/api/dataSource/add", tag = "dataSource",
    summary = "Create a data source",
    request_body = AddDataSource,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<DataSourceView>), Conflict, TooLarge, Refused))]
async fn add(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<AddDataSource>,
) -> Reply<DataSourceView> {
    let new = NewDataSource {
        name: Name::parse("dataSourceName", body.data_source_name.as_str())?,
        description: description(body.data_source_desc)?.unwrap_or_default(),
        default_country: body
            .default_country
            .map(|raw| Country::parse("defaultCountry", raw.as_str()))
            .transpose()?,
    };
    let source = datasource::add(&app.store, &tenant, new).await?;
    Ok(Envelope(source.view(app.zone())))
}

fn description(raw: Option<Text>) -> Result<Option<Description>, Error> {
    raw.map(|d| Description::parse("dataSourceDesc", d.as_str()))
        .transpose()
}

/// `POST /api/dataSource/update`: the fields sent change, the others stay.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UpdateDataSource {
    #[schema(value_type = String)]
    id: Text,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    data_source_name: Option<Text>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    data_source_desc: Option<Text>,
    /// ISO 3166-1 alpha-2 (D14); `null` clears it, so the tenant's applies.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "US")]
    default_country: Nullable<Text>,
}

#[utoipa::path(post, operation_id = "updateDataSource", path = "/api/dataSource/update", tag = "dataSource",
    summary = "Rename or describe a data source",
    request_body = UpdateDataSource,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<DataSourceView>), NotFound, Conflict, TooLarge, Refused))]
async fn update(
    State(app): State<App>,
    tenant: Tenant,
    Payload(body): Payload<UpdateDataSource>,
) -> Reply<DataSourceView> {
    let update = DataSourceUpdate {
        id: existing_id(KIND, body.id.as_str())?,
        name: body
            .data_source_name
            .map(|n| Name::parse("dataSourceName", n.as_str()))
            .transpose()?,
        description: description(body.data_source_desc)?,
        default_country: body
            .default_country
            .change(|raw| Country::parse("defaultCountry", raw.as_str()))?,
    };
    let source = datasource::update(&app.store, &tenant, update).await?;
    Ok(Envelope(source.view(app.zone())))
}

#[utoipa::path(post, operation_id = "deleteDataSource", path = "/api/dataSource/delete", tag = "dataSource",
    summary = "Delete a data source and its contacts (not while a task runs on it, D11)",
    request_body = ById,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<super::contract::Nothing>), NotFound, Conflict, TooLarge, Refused))]
async fn delete(State(app): State<App>, tenant: Tenant, Payload(body): Payload<ById>) -> Reply {
    let id = existing_id(KIND, body.id.as_str())?;
    datasource::delete(&app.store, &app.reclaim, &tenant, &id).await?;
    Ok(Envelope::empty())
}

/// The contact filter of the list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ContactFilter {
    /// Contacts whose phone number contains these digits; blank means all. On a data source of
    /// more than 10,000 contacts (`PHONE_FILTER_SCAN_MOST`) only a whole number is looked up,
    /// and a partial one is 400 (D5).
    phone_number: Option<String>,
}

#[utoipa::path(get, operation_id = "listContacts", path = "/api/dataSource/{id}/contacts", tag = "dataSource",
    summary = "List a data source's contacts, newest first (D5)",
    params(("id" = String, Path, description = "The data source's id"), Paging, ContactFilter),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PageView<ContactView>>), NotFound, Refused))]
async fn contacts(
    State(app): State<App>,
    State(tokens): State<PageTokens>,
    tenant: Tenant,
    Path(id): Path<String>,
    Query(paging): Query<Paging>,
    Query(wanted): Query<ContactFilter>,
) -> Reply<PageView<ContactView>> {
    let source = existing_id(KIND, &id)?;
    let phone = filter(&wanted.phone_number);
    let scope = ListScope::new(&tenant, &format!("dataSource/{source}/contacts"))
        .filter("phoneNumber", phone);
    let page = paging.page_query(&tokens, &scope)?;
    let filter = phone.map(|phone| (phone, app.config.phone_filter_scan_most));
    let found = contact::list(&app.store, &tenant, &source, &page, filter).await?;
    let country = contact::country(&app.store, &tenant, &source).await?;
    let found = found.map(|c| c.view(app.zone(), country));
    Ok(Envelope(found.answer(&tokens, &scope)))
}

/// A contact's fields (D6): `phoneNumber`, the known fields and up to 30 custom ones, every
/// value a string. Read-only fields (`id`, `status`, `callCount`, times) are ignored.
// The handlers read it with `ContactPatch::from_json`; this type documents it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ContactInput {
    /// Required on add: 5-20 digits once spaces, dashes, dots, brackets and a leading `+` are
    /// removed; unique in the data source.
    phone_number: Option<String>,
    /// At most 100 characters after trimming; values are trimmed, `""` clears on update.
    customer_name: Option<String>,
    /// At most 500 characters after trimming.
    address: Option<String>,
    /// At most 100 characters after trimming.
    order_amount: Option<String>,
    /// An IANA time zone name: the zone the contact is called in (D15), over its number's.
    time_zone: Option<String>,
    /// Custom fields: names of letters, digits and `_` starting with a letter (at most 64),
    /// values of at most 1,000 characters.
    #[serde(flatten)]
    custom: std::collections::BTreeMap<String, String>,
}

/// A contact update: `contactId` and the fields that change (`""` clears one).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ContactUpdate {
    contact_id: String,
    #[serde(flatten)]
    fields: ContactInput,
}

#[utoipa::path(post, operation_id = "addContact", path = "/api/dataSource/{id}/contact/add", tag = "dataSource",
    summary = "Add a contact",
    params(("id" = String, Path, description = "The data source's id")),
    request_body = ContactInput,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<ContactView>), NotFound, Conflict, TooLarge, Refused))]
async fn add_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply<ContactView> {
    let source = existing_id(KIND, &id)?;
    let patch = ContactPatch::from_json(&body.0)?;
    let country = contact::country(&app.store, &tenant, &source).await?;
    let added = contact::add(&app.store, &tenant, &source, patch).await?;
    Ok(Envelope(added.view(app.zone(), country)))
}

/// The contact a request names.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContactRef {
    contact_id: Text,
}

#[utoipa::path(post, operation_id = "updateContact", path = "/api/dataSource/{id}/contact/update", tag = "dataSource",
    summary = "Change a contact's fields",
    params(("id" = String, Path, description = "The data source's id")),
    request_body = ContactUpdate,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<ContactView>), NotFound, Conflict, TooLarge, Refused))]
async fn update_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    body: Body,
) -> Reply<ContactView> {
    let source = existing_id(KIND, &id)?;
    let named: ContactRef = super::fields::from_object(body.0.clone())?;
    let contact_id = existing_id("contact", named.contact_id.as_str())?;
    let patch = ContactPatch::from_json(&body.0)?;
    let country = contact::country(&app.store, &tenant, &source).await?;
    let updated = contact::update(&app.store, &tenant, &source, &contact_id, patch).await?;
    Ok(Envelope(updated.view(app.zone(), country)))
}

/// `POST /api/dataSource/{id}/contact/delete`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct DeleteContact {
    #[schema(value_type = String)]
    contact_id: Text,
}

#[utoipa::path(post, operation_id = "deleteContact", path = "/api/dataSource/{id}/contact/delete", tag = "dataSource",
    summary = "Delete a contact",
    params(("id" = String, Path, description = "The data source's id")),
    request_body = DeleteContact,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<super::contract::Nothing>), NotFound, TooLarge, Refused))]
async fn delete_contact(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    Payload(body): Payload<DeleteContact>,
) -> Reply {
    let source = existing_id(KIND, &id)?;
    let contact_id = existing_id("contact", body.contact_id.as_str())?;
    contact::delete(&app.store, &tenant, &source, &contact_id).await?;
    Ok(Envelope::empty())
}

/// The largest file `batchImport` takes in the request (4 MiB): a Lambda request carries at
/// most 6 MB, and the HTTP API hands it a file base64-encoded, a third larger. Larger files,
/// up to 20 MiB, go straight to S3 through `importUrl` (D8).
pub const MAX_POSTED_BYTES: usize = 4 * 1024 * 1024;

fn posted_too_large(source: &outbound_model::Id) -> Error {
    Error::TooLarge(format!(
        "file is larger than 4 MiB, the most a request to the API can carry; upload files of up \
         to 20 MiB with POST /api/dataSource/{source}/contact/importUrl"
    ))
}

/// The `file` part of a multipart body: its name and bytes. `too_large` is the refusal of a
/// file past [`MAX_POSTED_BYTES`].
pub(super) async fn posted_file(
    mut form: Multipart,
    too_large: impl Fn() -> Error,
) -> Result<(String, Bytes), Error> {
    let unreadable = |error: axum::extract::multipart::MultipartError| {
        if error.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            too_large()
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
                return Err(too_large());
            }
            return Ok((name, bytes));
        }
    }
    Err(Error::invalid("multipart field file is required"))
}

/// A posted import: the file in the multipart field `file`.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
struct ImportUpload {
    /// A `.csv` (UTF-8) or `.xlsx` file of at most 4 MiB whose title row names a phone
    /// column (D8).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// The report of a posted import (D8), with the import's id.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct PostedImport {
    import_id: Id,
    #[serde(flatten)]
    report: ImportReport,
}

#[utoipa::path(post, operation_id = "importContacts", path = "/api/dataSource/{id}/contact/batchImport", tag = "dataSource",
    summary = "Import a file of up to 4 MiB within the request (D8)",
    params(("id" = String, Path, description = "The data source's id")),
    request_body(content = ImportUpload, content_type = "multipart/form-data"),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PostedImport>), NotFound, Conflict, TooLarge, UnsupportedType, Refused))]
async fn batch_import(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    form: Multipart,
) -> Reply<PostedImport> {
    let source = existing_id(KIND, &id)?;
    let (name, bytes) = posted_file(form, || posted_too_large(&source)).await?;
    let file_name = import::file_name(&name).unwrap_or_else(|_| "upload".into());
    let cap = app.config.tenant_running_imports;
    let (done, report) = import::import_posted(
        &app.store, &app.blob, &tenant, &source, file_name, bytes, cap,
    )
    .await?;
    Ok(Envelope(PostedImport {
        import_id: done.id,
        report,
    }))
}

/// `POST /api/dataSource/{id}/contact/importUrl`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ImportUrlRequest {
    /// `.csv` or `.xlsx`, 1-255 characters after trimming.
    #[schema(value_type = String)]
    file_name: Text,
    /// The file's size in bytes, 1 to 20 MiB: the upload URL is signed for exactly this length.
    #[serde(default)]
    #[schema(value_type = i64, required = true, minimum = 1, maximum = 20971520)]
    file_size: Option<Integer>,
}

/// Where to upload the file: `PUT` it to `uploadUrl` with these headers before `expiresAt`; the
/// import then runs in the background (see its status).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UploadTicketView {
    import_id: Id,
    upload_url: String,
    /// Always `PUT`.
    method: &'static str,
    headers: UploadHeaders,
    expires_at: String,
}

#[derive(Debug, Serialize, ToSchema)]
struct UploadHeaders {
    /// The file's size, as sent in `fileSize`.
    #[serde(rename = "Content-Length")]
    content_length: String,
}

#[utoipa::path(post, operation_id = "requestImportUpload", path = "/api/dataSource/{id}/contact/importUrl", tag = "dataSource",
    summary = "A presigned upload URL for a file of up to 20 MiB (D8)",
    params(("id" = String, Path, description = "The data source's id")),
    request_body = ImportUrlRequest,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<UploadTicketView>), NotFound, Conflict, TooLarge, UnsupportedType, Refused))]
async fn import_url(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    Payload(body): Payload<ImportUrlRequest>,
) -> Reply<UploadTicketView> {
    let source = existing_id(KIND, &id)?;
    let file_name = import::file_name(body.file_name.as_str())?;
    let size = upload_size(body.file_size.map(|size| size.0))?;
    let cap = app.config.tenant_running_imports;
    let ticket = import::request_upload(
        &app.store, &app.blob, &tenant, &source, file_name, size, cap,
    )
    .await?;
    Ok(Envelope(UploadTicketView {
        import_id: ticket.import.id,
        upload_url: ticket.url,
        method: "PUT",
        // The URL is signed for exactly this length: S3 refuses any other (D8: 20 MiB at most).
        headers: UploadHeaders {
            content_length: size.to_string(),
        },
        expires_at: ticket.expires_at.display(app.zone()),
    }))
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

#[utoipa::path(get, operation_id = "getImport", path = "/api/dataSource/{id}/contact/import/{importId}", tag = "dataSource",
    summary = "Where an import is, and its report once done (D8)",
    params(("id" = String, Path, description = "The data source's id"),
        ("importId" = String, Path, description = "The import's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<ImportView>), NotFound, Refused))]
async fn import_status(
    State(app): State<App>,
    tenant: Tenant,
    Path((id, import_id)): Path<(String, String)>,
) -> Reply<ImportView> {
    let source = existing_id(KIND, &id)?;
    let import_id = existing_id("import", &import_id)?;
    let (found, report) =
        import::status(&app.store, &app.blob, &tenant, &source, &import_id).await?;
    Ok(Envelope(found.view(report, app.zone())))
}

/// The format of an export.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The file's format; `excel` by default.
    #[param(value_type = Option<ExportFormat>)]
    pub format: Option<String>,
}

#[utoipa::path(get, operation_id = "exportContacts", path = "/api/dataSource/{id}/contact/batchExport", tag = "dataSource",
    summary = "Export every contact as CSV or Excel (D8)",
    params(("id" = String, Path, description = "The data source's id"), FormatQuery),
    responses(super::contract::FileResponses, NotFound, Conflict, TooLarge, Refused))]
async fn batch_export(
    State(app): State<App>,
    tenant: Tenant,
    Path(id): Path<String>,
    Query(query): Query<FormatQuery>,
) -> Result<Response, Refusal> {
    let source = existing_id(KIND, &id)?;
    let format = ExportFormat::parse(query.format.as_deref())?;
    let file = export::contacts(
        &app.store,
        &export::ExportTarget::of(&app, format),
        &tenant,
        &source,
    )
    .await?;
    Ok(super::file_response(file))
}

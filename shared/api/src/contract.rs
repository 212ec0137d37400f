//! The API contract: the envelope and refusal schemas, the refusals a route documents, and the
//! OpenAPI 3.1 document generated from the routes themselves (`openapi.yaml` at the repository
//! root, `GET /api/openapi.yaml` on the local API). A route is registered from its
//! `#[utoipa::path]`, so no route is served undocumented.

use std::collections::BTreeMap;
use utoipa::openapi::header::Header;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::Content;
use utoipa::openapi::{RefOr, Server};
use utoipa::{IntoResponses, Modify, OpenApi, PartialSchema, ToSchema};

/// `data: null`, for operations that answer nothing and for every refusal.
pub struct Nothing;

impl PartialSchema for Nothing {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new().schema_type(Type::Null).into()
    }
}

impl ToSchema for Nothing {}

/// A success (D1): `{"code":0,"message":"success","data":...}`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct Success<T> {
    /// Always 0.
    #[schema(minimum = 0, maximum = 0)]
    code: u16,
    /// Always `success`.
    #[schema(example = "success")]
    message: String,
    data: T,
}

/// A refusal (D1): `code` repeats the HTTP status, `message` names the field, id or state.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct Refusal {
    /// The HTTP status.
    #[schema(minimum = 400, maximum = 599)]
    code: u16,
    message: String,
    data: Nothing,
}

/// A request naming one record by `id`.
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct ById {
    #[schema(value_type = String)]
    pub id: super::fields::Text,
}

/// What any route can answer besides its own refusals.
#[derive(IntoResponses)]
#[allow(dead_code)]
pub enum Refused {
    /// The request is malformed, or a field breaks its rules; the message names it (D1, D6).
    #[response(status = 400)]
    Invalid(Refusal),
    /// No token, or a malformed, expired or wrongly signed one (D2), or not an access token (D25).
    #[response(status = 401)]
    Unauthenticated(Refusal),
    /// A valid token without a tenant (D3), without the route's scope, or without a `sub` on a
    /// change the audit records (D25).
    #[response(status = 403)]
    Forbidden(Refusal),
    /// The tenant sent requests faster than its rate (D26); nothing was done, send the same
    /// request again after `Retry-After` seconds.
    #[response(status = 429, headers(("Retry-After" = u32, description = "seconds to wait")))]
    TooManyRequests(Refusal),
    /// A dependency is busy; nothing changed, send the same request again after `Retry-After`
    /// seconds (D1).
    #[response(status = 503, headers(("Retry-After" = u32, description = "seconds to wait")))]
    Unavailable(Refusal),
    /// An internal failure; the cause is logged under the request's `x-request-id`.
    #[response(status = 500)]
    Internal(Refusal),
}

/// No such record for this tenant: another tenant's record answers the same (D3).
#[derive(IntoResponses)]
#[response(status = 404)]
#[allow(dead_code)]
pub struct NotFound(Refusal);

/// The operation is not allowed in the task's state (D10).
#[derive(IntoResponses)]
#[response(status = 405)]
#[allow(dead_code)]
pub struct NotAllowed(Refusal);

/// A name or phone number already exists, the record is in use, a concurrent change won, the
/// tenant already runs as many imports or export jobs as it may, or one of its limits is
/// reached (D26: records held, RUNNING tasks, direct exports at once); the message names it.
#[derive(IntoResponses)]
#[response(status = 409)]
#[allow(dead_code)]
pub struct Conflict(Refusal);

/// The body or file is larger than allowed; the message names the way that takes it.
#[derive(IntoResponses)]
#[response(status = 413)]
#[allow(dead_code)]
pub struct TooLarge(Refusal);

/// The file is of a type the service does not read (CSV and `.xlsx` only).
#[derive(IntoResponses)]
#[response(status = 415)]
#[allow(dead_code)]
pub struct UnsupportedType(Refusal);

/// A file download (D8): the file itself, or a 303 to a presigned download when it is larger
/// than `EXPORT_INLINE_MAX_BYTES`.
pub struct FileResponses;

impl IntoResponses for FileResponses {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let text = || ObjectBuilder::new().schema_type(Type::String);
        let binary = || {
            Content::new(Some(
                text().format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary))),
            ))
        };
        let file = ResponseBuilder::new()
            .description("The file, named in `Content-Disposition: attachment; filename=...`")
            .content(
                outbound_model::export::ExportFormat::Csv.content_type(),
                binary(),
            )
            .content(
                outbound_model::export::ExportFormat::Excel.content_type(),
                binary(),
            )
            .header("Content-Disposition", Header::new(text()))
            .build();
        let elsewhere = ResponseBuilder::new()
            .description("The file is large: `Location` is a presigned download, valid 10 minutes")
            .header("Location", Header::new(text()))
            .build();
        BTreeMap::from([
            ("200".to_owned(), file.into()),
            ("303".to_owned(), elsewhere.into()),
        ])
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "outbound",
        description = "Outbound calling: data sources (contact lists), bulk import and export, \
            and call tasks that dial them. Every answer is the envelope {code, message, data}; a \
            refusal carries the HTTP status in `code` and a message naming the field or id. \
            Every response carries `x-request-id`. Decisions D1-D19 settle what the API \
            reference leaves open.",
        license(name = "UNLICENSED")
    ),
    // Every reason an attempt ends for, the keys of `reasons` in the diagnostics: no body names
    // one since retry rules take only the retryable ones (RetryableReason).
    components(schemas(Refusal, outbound_model::call::Reason)),
    modifiers(&Bearer),
    security(("bearer" = [])),
    tags(
        (name = "dataSource", description = "Data sources and their contacts, import and export"),
        (name = "task", description = "Call tasks: lifecycle, recall, statistics, export"),
        (name = "export", description = "Export jobs (D8)"),
        (name = "settings", description = "The tenant's settings (D14)"),
        (name = "dnc", description = "The tenant's do-not-call list (D16)"),
        (name = "operator", description = "The operator's assignment of caller IDs and contact \
            flows to tenants (D22): the outbound/operator scope, whatever the token's tenant"),
    )
)]
struct Base;

/// The bearer scheme every route requires: a JWT naming the tenant (D2, D3).
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A JWT whose tenant claim (default `tenant_id`) names the tenant; \
                         verified by API Gateway's JWT authorizer (D2, D3)",
                    ))
                    .build(),
            ),
        );
    }
}

/// The whole document: every route of every function, as served.
pub fn document() -> utoipa::openapi::OpenApi {
    let (_, paths) = super::all_routes(super::ApiDoc::Built).split();
    let mut document = Base::openapi().merge_from(paths);
    document.servers = Some(vec![Server::new("/")]);
    document
}

/// [`document`] as YAML, the text of `openapi.yaml`.
pub fn yaml() -> String {
    document()
        .to_yaml()
        .unwrap_or_else(|error| format!("# the document could not be written: {error}\n"))
}

#[cfg(test)]
mod tests {
    /// `openapi.yaml` is what the code generates; `OPENAPI_UPDATE=1` (`make openapi`) rewrites it.
    #[test]
    fn the_committed_document_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi.yaml");
        let generated = super::yaml();
        if std::env::var_os("OPENAPI_UPDATE").is_some() {
            std::fs::write(path, &generated).expect("write openapi.yaml");
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "openapi.yaml differs from what the code generates: run `make openapi` and commit it"
        );
    }
}

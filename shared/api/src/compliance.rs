//! `/api/settings` (D14, D22) and `/api/dnc/...` (D16): what every task of a tenant obeys. Their
//! changes are made by a [`Principal`], the token's tenant and `sub`, whom their audit events
//! name (D25).

use super::auth::Principal;
use super::contract::{Conflict, NotFound, Nothing, Refused, Success, TooLarge, UnsupportedType};
use super::extract::{filter, Paging, Payload, Query};
use super::fields::{Nullable, Ranged, Text};
use super::{App, Envelope, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{Multipart, State};
use outbound_model::dnc::DncView;
use outbound_model::error::Error;
use outbound_model::import::ImportReport;
use outbound_model::numbers::Country;
use outbound_model::page::PageTokens;
use outbound_model::page::{ListScope, PageView};
use outbound_model::settings::{calling_hours, FrequencyCap, SettingsChange, SettingsView};
use outbound_model::{Description, Phone, Tenant};
use outbound_service::compliance;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc)
        .route(route!(settings))
        .route(route!(update_settings))
        .route(route!(dnc_add))
        .route(route!(dnc_delete))
        .route(route!(dnc_list))
        .route(route!(dnc_import).body_limit(super::datasource::MAX_POSTED_BYTES + 64 * 1024))
}

#[utoipa::path(get, operation_id = "getSettings", path = "/api/settings", tag = "settings",
    summary = "The tenant's settings (D14); unset fields are null",
    responses((status = 200, description = "Done; the result is in `data`", body = Success<SettingsView>), Refused))]
async fn settings(State(app): State<App>, tenant: Tenant) -> Reply<SettingsView> {
    let settings = compliance::settings(&app.store, &tenant).await?;
    Ok(Envelope(settings.view(app.zone())))
}

/// `{"start":"HH:MM","end":"HH:MM"}`: calls from `start` up to, not at, `end` (D24).
#[derive(Debug, Deserialize, ToSchema)]
struct HoursInput {
    #[schema(value_type = String, example = "08:00")]
    start: Text,
    #[schema(value_type = String, example = "21:00")]
    end: Text,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct CapInput {
    #[schema(value_type = u32, minimum = 1, maximum = 100)]
    max_calls: Ranged<1, 100>,
    #[schema(value_type = u32, minimum = 1, maximum = 720)]
    period_hours: Ranged<1, 720>,
}

/// `POST /api/settings/update`: any subset of the fields; `null` clears one (D14).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct UpdateSettings {
    /// ISO 3166-1 alpha-2, e.g. `US`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "US")]
    default_country: Nullable<Text>,
    /// In the called party's local time, on every task (D15).
    #[serde(default)]
    #[schema(value_type = Option<HoursInput>)]
    calling_hours: Nullable<HoursInput>,
    /// Across every task of the tenant (D17).
    #[serde(default)]
    #[schema(value_type = Option<CapInput>)]
    frequency_cap: Nullable<CapInput>,
    /// One of the tenant's `callerIds`: what a task without its own calls from (D22).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "+12125550100")]
    default_caller_id: Nullable<Text>,
    /// The id of one of the tenant's `contactFlows`: what a task without its own plays (D22).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    default_contact_flow_id: Nullable<Text>,
    /// Assigned by the operator (D22): a request that sends it is refused.
    #[serde(default)]
    #[schema(ignore)]
    caller_ids: Nullable<serde_json::Value>,
    /// Assigned by the operator (D22): a request that sends it is refused.
    #[serde(default)]
    #[schema(ignore)]
    contact_flows: Nullable<serde_json::Value>,
}

impl UpdateSettings {
    /// 400 when the request tries to set what only the operator assigns (D22).
    fn refuse_assignments(&self) -> Result<(), Error> {
        for (field, sent) in [
            ("callerIds", &self.caller_ids),
            ("contactFlows", &self.contact_flows),
        ] {
            if !matches!(sent, Nullable::Absent) {
                return Err(Error::invalid(format!(
                    "{field} are assigned by the operator (POST /api/operator/telephony/update), not set here"
                )));
            }
        }
        Ok(())
    }
}

#[utoipa::path(post, operation_id = "updateSettings", path = "/api/settings/update", tag = "settings",
    summary = "Change the tenant's settings (D14): the fields sent change, null clears one",
    description = "`defaultCallerId` and `defaultContactFlowId` must name one of the tenant's \
        `callerIds` and `contactFlows` (400 naming it), which the operator assigns: a request that \
        sends `callerIds` or `contactFlows` is 400 (D22).",
    request_body = UpdateSettings,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<SettingsView>), TooLarge, Refused))]
async fn update_settings(
    State(app): State<App>,
    Principal { tenant, actor }: Principal,
    Payload(body): Payload<UpdateSettings>,
) -> Reply<SettingsView> {
    body.refuse_assignments()?;
    let trimmed = |text: Text| Ok::<_, Error>(text.as_str().trim().to_owned());
    let change = SettingsChange {
        default_country: body
            .default_country
            .change(|raw| Country::parse("defaultCountry", raw.as_str()))?,
        calling_hours: body
            .calling_hours
            .change(|hours| calling_hours(hours.start.as_str(), hours.end.as_str()))?,
        frequency_cap: body
            .frequency_cap
            .change(|cap| FrequencyCap::new(cap.max_calls.0, cap.period_hours.0))?,
        default_caller_id: body.default_caller_id.change(trimmed)?,
        default_contact_flow_id: body.default_contact_flow_id.change(trimmed)?,
    };
    let settings = compliance::update_settings(&app.store, &tenant, &actor, &change).await?;
    Ok(Envelope(settings.view(app.zone())))
}

/// `POST /api/dnc/add`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AddDnc {
    /// The number to never call, as written (D7).
    #[schema(value_type = String)]
    phone_number: Text,
    /// ISO 3166-1 alpha-2: the country a number written without `+` is read in (D24); else
    /// the tenant's `defaultCountry`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "GB")]
    country: Option<Text>,
    /// At most 500 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    reason: Option<Text>,
}

#[utoipa::path(post, operation_id = "addDnc", path = "/api/dnc/add", tag = "dnc",
    summary = "Put a number on the tenant's do-not-call list (D16)",
    request_body = AddDnc,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<DncView>), Conflict, TooLarge, Refused))]
async fn dnc_add(
    State(app): State<App>,
    Principal { tenant, actor }: Principal,
    Payload(body): Payload<AddDnc>,
) -> Reply<DncView> {
    let number = Phone::parse(body.phone_number.as_str())?;
    let reason = body
        .reason
        .map(|r| Description::parse("reason", r.as_str()))
        .transpose()?
        .unwrap_or_default();
    let country = dnc_country(body.country.as_ref())?;
    let entry = compliance::add_dnc(&app.store, &tenant, &actor, number, country, reason).await?;
    Ok(Envelope(entry.view(app.zone())))
}

/// `POST /api/dnc/delete`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct DeleteDnc {
    #[schema(value_type = String)]
    phone_number: Text,
    /// As on add: the country a number written without `+` is read in (D24).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "GB")]
    country: Option<Text>,
}

/// The `country` of a do-not-call request, when sent.
fn dnc_country(country: Option<&Text>) -> Result<Option<Country>, Error> {
    country
        .map(|code| Country::parse("country", code.as_str()))
        .transpose()
}

#[utoipa::path(post, operation_id = "deleteDnc", path = "/api/dnc/delete", tag = "dnc",
    summary = "Take a number off the do-not-call list (D16), found by its E.164 form (D24)",
    request_body = DeleteDnc,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<Nothing>), NotFound, TooLarge, Refused))]
async fn dnc_delete(
    State(app): State<App>,
    Principal { tenant, actor }: Principal,
    Payload(body): Payload<DeleteDnc>,
) -> Reply {
    let number = Phone::parse(body.phone_number.as_str())?;
    let country = dnc_country(body.country.as_ref())?;
    compliance::delete_dnc(&app.store, &tenant, &actor, number, country).await?;
    Ok(Envelope::empty())
}

/// The filter of the do-not-call list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct DncFilter {
    /// Entries whose number (normal or E.164 form) contains this, separators ignored. On a list
    /// of more than 10,000 entries (`PHONE_FILTER_SCAN_MOST`) only a whole number is looked up,
    /// answered by the entries that list it, and a partial one is 400 (D5).
    phone_number: Option<String>,
}

#[utoipa::path(get, operation_id = "listDnc", path = "/api/dnc/list", tag = "dnc",
    summary = "List the do-not-call list, newest first (D5, D16)",
    params(Paging, DncFilter),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<PageView<DncView>>), Refused))]
async fn dnc_list(
    State(app): State<App>,
    State(tokens): State<PageTokens>,
    tenant: Tenant,
    Query(paging): Query<Paging>,
    Query(wanted): Query<DncFilter>,
) -> Reply<PageView<DncView>> {
    let number = filter(&wanted.phone_number);
    let scope = ListScope::new(&tenant, "dnc/list").filter("phoneNumber", number);
    let page = paging.page_query(&tokens, &scope)?;
    let scan_most = app.config.phone_filter_scan_most;
    let found = compliance::list_dnc(&app.store, &tenant, &page, number, scan_most).await?;
    let found = found.map(|entry| entry.view(app.zone()));
    Ok(Envelope(found.answer(&tokens, &scope)))
}

/// A posted do-not-call file: the multipart field `file`.
#[derive(Debug, ToSchema)]
#[allow(dead_code)]
struct DncUpload {
    /// A `.csv` (UTF-8) or `.xlsx` file of at most 4 MiB and 10,000 rows whose title row names
    /// a phone column (the D8 titles); optional `reason` and `country` columns (D24).
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

#[utoipa::path(post, operation_id = "importDnc", path = "/api/dnc/batchImport", tag = "dnc",
    summary = "List every number of a file (D16): the D8 readers and limits, rows refused reported",
    request_body(content = DncUpload, content_type = "multipart/form-data"),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<ImportReport>), Conflict, TooLarge, UnsupportedType, Refused))]
async fn dnc_import(
    State(app): State<App>,
    Principal { tenant, actor }: Principal,
    form: Multipart,
) -> Reply<ImportReport> {
    let too_large = || {
        Error::TooLarge("file is larger than 4 MiB, the most a request to the API can carry".into())
    };
    let (name, bytes) = super::datasource::posted_file(form, too_large).await?;
    let report = compliance::import_dnc(
        &app.store,
        &tenant,
        &actor,
        &bytes,
        Some(&name),
        app.config.tenant_running_imports,
    )
    .await?;
    Ok(Envelope(report))
}

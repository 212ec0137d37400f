//! `/api/operator/...` (D22): the operator assigns each tenant its caller IDs and contact flows.
//! Every route needs the `outbound/operator` scope, whatever `REQUIRE_SCOPES` says and whatever
//! tenant the token names ([`Operator`]); the tenant acted on is the one the request names.

use super::auth::Operator;
use super::contract::{Conflict, Refused, Success, TooLarge};
use super::extract::Payload;
use super::fields::{Strings, Text};
use super::{App, Envelope, Reply};
use crate::routes::{route, ApiDoc, Routes};
use axum::extract::{Path, State};
use outbound_model::error::Error;
use outbound_model::telephony::{AgentQueue, Assignment, ContactFlow, TelephonyView};
use outbound_model::Tenant;
use outbound_service::telephony;
use serde::Deserialize;
use utoipa::ToSchema;

pub fn routes(doc: ApiDoc) -> Routes {
    Routes::new(doc)
        .route(route!(telephony_of))
        .route(route!(assign))
}

/// The tenant a request names.
fn named_tenant(raw: &str) -> Result<Tenant, Error> {
    Tenant::parse(raw).map_err(|_| {
        Error::invalid(
            "tenant must be a tenant id: 1-128 letters, digits, '-', '_', '.', '@' or ':'",
        )
    })
}

#[utoipa::path(get, operation_id = "getTelephony", path = "/api/operator/telephony/{tenant}",
    tag = "operator",
    summary = "A tenant's caller IDs and contact flows (D22); empty lists for a tenant assigned none",
    params(("tenant" = String, Path, description = "The tenant's id")),
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TelephonyView>), Refused))]
async fn telephony_of(
    State(app): State<App>,
    _operator: Operator,
    Path(tenant): Path<String>,
) -> Reply<TelephonyView> {
    let tenant = named_tenant(&tenant)?;
    let settings = telephony::telephony(&app.store, &tenant).await?;
    Ok(Envelope(TelephonyView::of(&tenant, settings)))
}

/// A contact flow as sent.
#[derive(Debug, Deserialize, ToSchema)]
struct FlowInput {
    /// The provider's id of the flow: 1-128 letters, digits, `-` and `_`.
    #[serde(default)]
    #[schema(value_type = String, example = "8c2f1a9e-1b7d-4c3e-9f7a-2d4e6b8c0a1f")]
    id: Option<Text>,
    /// 1-100 characters.
    #[serde(default)]
    #[schema(value_type = String, example = "Order reminder")]
    name: Option<Text>,
}

/// `POST /api/operator/telephony/update`: the tenant's whole lists, which replace its own.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AssignTelephony {
    /// The tenant assigned.
    #[schema(value_type = String, example = "acme")]
    tenant: Text,
    /// Up to 100 numbers in E.164 (valid per libphonenumber), each once and of no other tenant.
    #[schema(value_type = Vec<String>, max_items = 100, example = json!(["+12125550100"]))]
    caller_ids: Strings,
    /// Up to 50 flows, each id once.
    #[schema(value_type = Vec<ContactFlow>, max_items = 50)]
    contact_flows: Vec<FlowInput>,
    /// Up to 50 agent queues, each id once (D30): what agent-paced tasks may name. Absent: the
    /// tenant keeps its queues.
    #[serde(default)]
    #[schema(value_type = Option<Vec<AgentQueue>>, max_items = 50)]
    queues: Option<Vec<FlowInput>>,
}

#[utoipa::path(post, operation_id = "assignTelephony", path = "/api/operator/telephony/update",
    tag = "operator",
    summary = "Replace a tenant's caller IDs, contact flows and agent queues (D22, D30); a default no longer assigned is cleared",
    description = "With Amazon Connect each new number must be claimed by the instance and each new flow \
        one of its published contact flows, and each new queue one of its standard queues (400 naming it). \
        409: a number another tenant holds, or a number, flow or queue removed that a DRAFT, RUNNING \
        or PAUSED task of the tenant names (the message \
        names the number or the task); nothing changes then. Every assignment is a TelephonyChanged \
        audit event (D25).",
    request_body = AssignTelephony,
    responses((status = 200, description = "Done; the result is in `data`", body = Success<TelephonyView>), Conflict, TooLarge, Refused))]
async fn assign(
    State(app): State<App>,
    Operator { actor }: Operator,
    Payload(body): Payload<AssignTelephony>,
) -> Reply<TelephonyView> {
    let tenant = named_tenant(body.tenant.as_str())?;
    let pairs = |entries: Vec<FlowInput>| -> Vec<(String, String)> {
        let text = |field: Option<Text>| field.map(|text| text.0).unwrap_or_default();
        (entries.into_iter())
            .map(|entry| (text(entry.id), text(entry.name)))
            .collect()
    };
    let flows = pairs(body.contact_flows);
    let assignment = match body.queues {
        Some(queues) => Assignment::with_queues(&body.caller_ids.0, &flows, &pairs(queues))?,
        None => Assignment::new(&body.caller_ids.0, &flows)?,
    };
    let catalog = app.catalog();
    let settings = telephony::assign(&app.store, &catalog, &actor, &tenant, &assignment).await?;
    Ok(Envelope(TelephonyView::of(&tenant, settings)))
}

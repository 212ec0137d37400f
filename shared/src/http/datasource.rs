//! `/api/dataSource/...`: data sources and their contacts.

use super::extract::{existing_id, Body, QueryParams};
use super::{App, Envelope, Reply};
use crate::auth::Tenant;
use crate::model::contact::ContactPatch;
use crate::model::{Description, Name};
use crate::service::datasource::{DataSourceUpdate, NewDataSource};
use crate::service::{contact, datasource};
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::Router;
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
}

async fn list(State(app): State<App>, tenant: Tenant, query: QueryParams) -> Reply {
    let page = query.page()?;
    let found = datasource::list(&app.store, &tenant, page, query.filter("dataSourceName")).await?;
    Ok(Envelope(
        serde_json::to_value(found.map(|s| s.view(app.zone()))).unwrap_or_default(),
    ))
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
    let page = query.page()?;
    let found = contact::list(
        &app.store,
        &tenant,
        &source,
        page,
        query.filter("phoneNumber"),
    )
    .await?;
    let page = found.map(|c| c.view(app.zone()));
    Ok(Envelope(
        serde_json::json!({"total": page.total, "rows": page.rows}),
    ))
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

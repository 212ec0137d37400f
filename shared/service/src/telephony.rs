//! The caller IDs and contact flows the operator assigns a tenant (D22): checked against what
//! the deployment's provider holds, then stored with their audit event (D25).

use outbound_adapters::store::Store;
use outbound_adapters::telephony::catalog::Catalog;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::settings::TenantSettings;
use outbound_model::telephony::Assignment;
use outbound_model::{Actor, Tenant, Timestamp};

/// The tenant's settings, which hold its numbers and flows: empty lists for a tenant never
/// assigned any.
pub async fn telephony(store: &Store, tenant: &Tenant) -> Result<TenantSettings, Error> {
    store.settings(tenant).await
}

/// Replaces the tenant's numbers and flows with `assignment`, by the operator `actor`: every new
/// entry must be one the provider holds (`catalog`); the store refuses a number another tenant
/// holds and a removal a task still needs. Answers the settings it leaves.
pub async fn assign(
    store: &Store,
    catalog: &impl Catalog,
    actor: &Actor,
    tenant: &Tenant,
    assignment: &Assignment,
) -> Result<TenantSettings, Error> {
    let held = store.settings(tenant).await?;
    catalog.check(assignment, &held).await?;
    let now = Timestamp::now();
    store
        .assign_telephony(tenant, assignment, now, |change| {
            Event::telephony_changed(tenant, now, actor, assignment, change)
        })
        .await
}

//! Data source operations (D3, D5, D6, D11).

use outbound_adapters::queue::Queue;
use outbound_adapters::store::datasource::DataSourceChanges;
use outbound_adapters::store::Store;
use outbound_model::error::Error;
use outbound_model::numbers::Country;
use outbound_model::page::PageQuery;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::settings::Change;
use outbound_model::Tenant;
use outbound_model::{DataSource, Description, Id, Name, Page, Timestamp};

/// A data source to create.
pub struct NewDataSource {
    pub name: Name,
    pub description: Description,
    pub default_country: Option<Country>,
}

/// Changes to a data source; `None` keeps the stored value.
pub struct DataSourceUpdate {
    pub id: Id,
    pub name: Option<Name>,
    pub description: Option<Description>,
    pub default_country: Change<Country>,
}

pub async fn add(store: &Store, tenant: &Tenant, new: NewDataSource) -> Result<DataSource, Error> {
    let now = Timestamp::now();
    let source = DataSource {
        id: Id::new(),
        name: new.name,
        description: new.description,
        contact_count: 0,
        active_tasks: 0,
        contacts_added: 0,
        default_country: new.default_country,
        created_at: now,
        updated_at: now,
        rules_at: None,
    };
    store.create_data_source(tenant, &source).await?;
    Ok(source)
}

pub async fn detail(store: &Store, tenant: &Tenant, id: &Id) -> Result<DataSource, Error> {
    store.data_source(tenant, id).await
}

/// The tenant's data sources, newest first, optionally those whose name contains `name`
/// (case-insensitive) (D5).
pub async fn list(
    store: &Store,
    tenant: &Tenant,
    page: &PageQuery,
    name: Option<&str>,
) -> Result<Page<DataSource>, Error> {
    let fragment = name.map(str::to_lowercase);
    store
        .data_sources_page(tenant, page, fragment.as_deref())
        .await
}

pub async fn update(
    store: &Store,
    tenant: &Tenant,
    update: DataSourceUpdate,
) -> Result<DataSource, Error> {
    let current = store.data_source(tenant, &update.id).await?;
    let changes = DataSourceChanges {
        name: update.name,
        description: update.description,
        default_country: update.default_country,
        at: Timestamp::now(),
    };
    store.update_data_source(tenant, &current, changes).await
}

/// Deletes a data source (D11) and queues the reclaim of its contacts.
pub async fn delete(
    store: &Store,
    reclaim: &Queue<ReclaimJob>,
    tenant: &Tenant,
    id: &Id,
) -> Result<(), Error> {
    let current = store.data_source(tenant, id).await?;
    let job = ReclaimJob::DataSource {
        tenant: tenant.clone(),
        id: id.clone(),
        contact_shards: store.shards(tenant, id).await?.count(),
    };
    store.delete_data_source(tenant, &current, &job).await?;
    super::reclaim::enqueue(reclaim, &job).await;
    Ok(())
}

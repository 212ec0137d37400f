//! Data source records: the head item in the data source's own partition (with a GSI entry for
//! the tenant's list) and the item that keeps its name unique within the tenant.

use super::keys::{self, GSI1_PK, GSI1_SK, HEAD, PK, SK};
use super::names::NameGuard;
use super::paging::{Counted, RowFilter, TenantList};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store};
use outbound_model::error::Error;
use outbound_model::limits::Limited;
use outbound_model::numbers::Country;
use outbound_model::page::{Page, PageQuery};
use outbound_model::reclaim::ReclaimJob;
use outbound_model::settings::Change;
use outbound_model::Tenant;
use outbound_model::{DataSource, Description, Id, Name, Timestamp};

pub(crate) fn not_found(id: &Id) -> Error {
    Error::NotFound(format!("dataSource {id} not found"))
}

fn name_taken(name: &Name) -> Error {
    Error::Conflict(format!("dataSourceName {:?} already exists", name.as_str()))
}

/// The changes of one data source update; `None` keeps the stored value.
pub struct DataSourceChanges {
    pub name: Option<Name>,
    pub description: Option<Description>,
    pub default_country: Change<Country>,
    pub at: Timestamp,
}

impl Store {
    /// The head of a new data source, with the number of shards its contacts will be spread
    /// over for its whole life ([`super::shards`]).
    fn new_head_item(&self, tenant: &Tenant, source: &DataSource) -> Result<super::Item, Error> {
        let mut item = to_item(
            source,
            [
                (PK, keys::data_source(tenant, &source.id)),
                (SK, HEAD.to_owned()),
                (GSI1_PK, keys::tenant(tenant)),
                (GSI1_SK, keys::data_source_in_tenant(&source.id)),
            ],
        )?;
        item.insert(
            super::shards::SHARDS_ATTRIBUTE.to_owned(),
            super::n(self.contact_shards),
        );
        Ok(item)
    }

    fn name_guard<'a>(&self, tenant: &'a Tenant, name: &Name, id: &'a Id) -> NameGuard<'a> {
        NameGuard {
            tenant,
            name_key: keys::data_source_name(name.as_str()),
            holder: ("data_source_id", id),
        }
    }

    /// Stores a new data source; 409 when the tenant already has one of that name.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %source.id))]
    pub async fn create_data_source(
        &self,
        tenant: &Tenant,
        source: &DataSource,
    ) -> Result<(), Error> {
        #[derive(PartialEq)]
        enum Part {
            Head,
            NameGuard,
            Count,
        }
        let absent = || Some(("attribute_not_exists(pk)", Expr::default()));
        let actions = Actions::new(&self.table)
            .put(Part::Head, self.new_head_item(tenant, source)?, absent())?
            .take_name(
                Part::NameGuard,
                &self.name_guard(tenant, &source.name, &source.id),
            )?
            .count_one_more(
                Part::Count,
                tenant,
                Counted::DataSources,
                self.limits.data_sources,
            )?;
        self.transact("create data source", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed(Part::NameGuard) {
                        name_taken(&source.name)
                    } else if condition.failed(Part::Count) {
                        Limited::DataSources.reached(self.limits.data_sources)
                    } else {
                        Error::internal("create data source", "fresh id already stored")
                    }
                })
            })?;
        self.remember_shards(&keys::data_source(tenant, &source.id), self.contact_shards);
        Ok(())
    }

    /// One data source, read consistently.
    pub async fn data_source(&self, tenant: &Tenant, id: &Id) -> Result<DataSource, Error> {
        let home = keys::data_source(tenant, id);
        let item = self
            .get_item(home.clone(), HEAD.to_owned())
            .await?
            .ok_or_else(|| not_found(id))?;
        self.remember_shards(&home, super::shards::shards_of_head(&item));
        from_item(item)
    }

    /// Every data source of the tenant, newest first: one Query on GSI1 for up to ~1 MB of them.
    pub async fn data_sources(&self, tenant: &Tenant) -> Result<Vec<DataSource>, Error> {
        self.tenant_records(tenant, Some(keys::GSI1), keys::DATA_SOURCE_PREFIX)
            .await
    }

    /// A page of the tenant's data sources from GSI1 (eventually consistent), newest first,
    /// optionally those whose name contains `name_lowercase` (compared lowercased) (D5). Its
    /// cost is bounded by the page (see `store::paging`); the name filter reads the index
    /// projected to key and name, then the page's records.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str()))]
    pub async fn data_sources_page(
        &self,
        tenant: &Tenant,
        page: &PageQuery,
        name_lowercase: Option<&str>,
    ) -> Result<Page<DataSource>, Error> {
        let list = TenantList {
            index: Some(keys::GSI1),
            pk_attr: GSI1_PK,
            sk_attr: GSI1_SK,
            pk: keys::tenant(tenant),
            prefix: keys::DATA_SOURCE_PREFIX,
            consistent: false,
            record_key: Box::new({
                let tenant = tenant.clone();
                move |id| {
                    [
                        (PK.to_owned(), s(keys::data_source(&tenant, id))),
                        (SK.to_owned(), s(HEAD)),
                    ]
                    .into()
                }
            }),
            start_key: Box::new({
                let tenant = tenant.clone();
                move |id| {
                    [
                        (PK.to_owned(), s(keys::data_source(&tenant, id))),
                        (SK.to_owned(), s(HEAD)),
                        (GSI1_PK.to_owned(), s(keys::tenant(&tenant))),
                        (GSI1_SK.to_owned(), s(keys::data_source_in_tenant(id))),
                    ]
                    .into()
                }
            }),
            counted: Counted::DataSources,
        };
        let filter = name_lowercase.map(|fragment| {
            let fragment = fragment.to_owned();
            RowFilter {
                projection: "#name",
                names: vec![("#name", "name")],
                expression: None,
                values: Vec::new(),
                keep: Box::new(move |item: &Item| {
                    string_attr(item, "name")
                        .is_some_and(|stored| stored.to_lowercase().contains(&fragment))
                }),
            }
        });
        self.list_page(tenant, &list, page, filter)
            .await?
            .try_map(from_item)
    }

    /// Applies `changes` to the stored data source `current` and answers the result. A rename
    /// moves the name guard in the same transaction.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn update_data_source(
        &self,
        tenant: &Tenant,
        current: &DataSource,
        changes: DataSourceChanges,
    ) -> Result<DataSource, Error> {
        let mut next = current.clone();
        let described = changes.description.is_some();
        if let Some(description) = changes.description {
            next.description = description;
        }
        let renamed = changes.name.filter(|name| *name != current.name);
        if let Some(name) = &renamed {
            next.name = name.clone();
        }
        next.updated_at = changes.at;
        let country = changes.default_country.clone();
        next.default_country = changes.default_country.apply(current.default_country);
        // Only what was sent is written, so concurrent updates of different fields both
        // survive; a rename is conditioned on the name it frees, whose guard it moves.
        let mut sets = vec!["updated_at = :at"];
        let mut removes = "";
        let mut condition = "attribute_exists(pk)";
        let mut expr = Expr::default().value(":at", n(next.updated_at.0));
        match country {
            Change::Keep => {}
            Change::Clear => removes = " REMOVE default_country",
            Change::Set(country) => {
                sets.push("default_country = :country");
                expr = expr.value(":country", s(country.as_str()));
            }
        }
        if next.default_country != current.default_country {
            // Its numbers' zones move: contacts parked under the earlier rules are judged
            // again (D24).
            sets.push("rules_at = :at");
            next.rules_at = Some(next.updated_at);
        }
        if described {
            sets.push("#description = :description");
            expr = expr
                .name("#description", "description")
                .value(":description", s(next.description.as_str()));
        }
        if renamed.is_some() {
            sets.push("#name = :name");
            condition = "attribute_exists(pk) AND #name = :old";
            expr = expr
                .name("#name", "name")
                .value(":name", s(next.name.as_str()))
                .value(":old", s(current.name.as_str()));
        }
        #[derive(PartialEq)]
        enum Part {
            Head,
            OldNameGuard,
            NewNameGuard,
        }
        let mut actions = Actions::new(&self.table).update(
            Part::Head,
            keys::data_source(tenant, &current.id),
            HEAD.to_owned(),
            &format!("SET {}{removes}", sets.join(", ")),
            Some(condition),
            expr,
        )?;
        if let Some(name) = &renamed {
            actions = actions.move_name(
                (Part::OldNameGuard, Part::NewNameGuard),
                keys::data_source_name(current.name.as_str()),
                &self.name_guard(tenant, name, &current.id),
            )?;
        }
        self.transact("update data source", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| match (condition.failed(Part::Head), &renamed) {
                    (true, _) if condition.stored(Part::Head).is_none() => not_found(&current.id),
                    (true, _) => Error::Conflict(format!(
                        "dataSource {} was changed by another request; read it again",
                        current.id
                    )),
                    (false, Some(name)) => name_taken(name),
                    (false, None) => Error::internal("update data source", "unexpected condition"),
                })
            })?;
        // The count is the one read just before: a transaction returns no values, and a third
        // call to refresh it would only narrow a race that concurrent contact writes reopen anyway.
        Ok(next)
    }

    /// Deletes the data source and frees its name in one transaction, unless a RUNNING or PAUSED
    /// task uses it (409). Its contacts become unreachable at once: every contact read goes
    /// through the head. Their items are reclaimed in the background.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn delete_data_source(
        &self,
        tenant: &Tenant,
        current: &DataSource,
        reclaim: &ReclaimJob,
    ) -> Result<(), Error> {
        let expr = Expr::default()
            .name("#name", "name")
            .value(":name", s(current.name.as_str()))
            .value(":zero", n(0));
        #[derive(PartialEq)]
        enum Part {
            Head,
            NameGuard,
            ReclaimIntent,
            Count,
        }
        let actions = Actions::new(&self.table)
            .delete(
                Part::Head,
                keys::data_source(tenant, &current.id),
                HEAD.to_owned(),
                Some((
                    "attribute_exists(pk) AND #name = :name \
                     AND (attribute_not_exists(active_tasks) OR active_tasks = :zero)",
                    expr,
                )),
            )?
            .retire(
                (Part::NameGuard, Part::ReclaimIntent, Part::Count),
                tenant,
                keys::data_source_name(current.name.as_str()),
                reclaim,
                Counted::DataSources,
            )?;
        self.transact("delete data source", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| match condition.stored(Part::Head) {
                    None => not_found(&current.id),
                    Some(item) => match from_item::<DataSource>(item.clone()) {
                        Ok(stored) if stored.active_tasks > 0 => Error::Conflict(format!(
                            "dataSource {} is used by a running or paused task",
                            current.id
                        )),
                        _ => Error::Conflict(format!(
                            "dataSource {} was changed by another request; try again",
                            current.id
                        )),
                    },
                })
            })
    }
}

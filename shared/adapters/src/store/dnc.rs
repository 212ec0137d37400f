//! The do-not-call list's records (D16), in the tenant partition: an entry per listed number
//! (`DNC#{id}`, counted on `COUNTS` like the tenant's other lists) and a guard per form of it
//! (`DNCN#{number}`), written in one transaction, so a number is listed once and the claim of a
//! call checks its guards' absence in its own transaction.

use super::keys::{self, PK, SK};
use super::paging::{Counted, RowFilter, TenantList};
use super::{from_item, s, string_attr, to_item, Actions, Expr, Item, Store};
use outbound_model::dnc::DncEntry;
use outbound_model::error::Error;
use outbound_model::page::PageQuery;
use outbound_model::{Id, Page, Tenant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Entry,
    Guard,
    Count,
}

impl Store {
    /// Lists a number (D16): 409 when it, or its E.164 form, is listed already.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str()))]
    pub async fn add_dnc(&self, tenant: &Tenant, entry: &DncEntry) -> Result<(), Error> {
        let pk = keys::tenant(tenant);
        let item = to_item(entry, [(PK, pk.clone()), (SK, keys::dnc_entry(&entry.id))])?;
        let mut actions = Actions::new(&self.table).put(Part::Entry, item, None)?;
        for number in entry.numbers() {
            let guard: Item = [
                (PK.to_owned(), s(&pk)),
                (SK.to_owned(), s(keys::dnc_number(number))),
                ("entry".to_owned(), s(entry.id.as_str())),
            ]
            .into();
            actions = actions.put(
                Part::Guard,
                guard,
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?;
        }
        let actions = actions.count_change(Part::Count, tenant, Counted::DncEntries, 1)?;
        self.transact("add do-not-call entry", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|_| {
                    Error::Conflict(format!(
                        "phoneNumber {} is already on the do-not-call list",
                        entry.phone
                    ))
                })
            })
    }

    /// The entry that lists any of `numbers`, if one does.
    pub async fn dnc_entry_of(
        &self,
        tenant: &Tenant,
        numbers: &[&str],
    ) -> Result<Option<DncEntry>, Error> {
        let pk = keys::tenant(tenant);
        for number in numbers {
            let Some(guard) = self.get_item(pk.clone(), keys::dnc_number(number)).await? else {
                continue;
            };
            let Some(id) = string_attr(&guard, "entry").and_then(Id::parse) else {
                continue;
            };
            if let Some(item) = self.get_item(pk.clone(), keys::dnc_entry(&id)).await? {
                return from_item(item).map(Some);
            }
        }
        Ok(None)
    }

    /// Removes an entry and its guards; 404 when another delete removed it first.
    pub async fn delete_dnc(&self, tenant: &Tenant, entry: &DncEntry) -> Result<(), Error> {
        let pk = keys::tenant(tenant);
        let mut actions = Actions::new(&self.table).delete(
            Part::Entry,
            pk.clone(),
            keys::dnc_entry(&entry.id),
            Some(("attribute_exists(pk)", Expr::default())),
        )?;
        for number in entry.numbers() {
            actions = actions.delete(
                Part::Guard,
                pk.clone(),
                keys::dnc_number(number),
                Some((
                    "entry = :id",
                    Expr::default().value(":id", s(entry.id.as_str())),
                )),
            )?;
        }
        let actions = actions.count_change(Part::Count, tenant, Counted::DncEntries, -1)?;
        self.transact("delete do-not-call entry", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|_| {
                    Error::NotFound(format!(
                        "phoneNumber {} is not on the do-not-call list",
                        entry.phone
                    ))
                })
            })
    }

    /// A page of the tenant's entries, newest first (D5), filtered by a fragment of the number.
    pub async fn dnc_page(
        &self,
        tenant: &Tenant,
        page: &PageQuery,
        fragment: Option<&str>,
    ) -> Result<Page<DncEntry>, Error> {
        let pk = keys::tenant(tenant);
        let key = {
            let pk = pk.clone();
            move |id: &Id| -> Item {
                [
                    (PK.to_owned(), s(&pk)),
                    (SK.to_owned(), s(keys::dnc_entry(id))),
                ]
                .into()
            }
        };
        let list = TenantList {
            index: None,
            pk_attr: PK,
            sk_attr: SK,
            pk: pk.clone(),
            prefix: keys::DNC_PREFIX,
            consistent: true,
            record_key: Box::new(key.clone()),
            start_key: Box::new(key),
            counted: Counted::DncEntries,
        };
        let filter = fragment.map(|fragment| {
            let fragment = fragment.to_owned();
            RowFilter {
                projection: "#phone, e164",
                names: vec![("#phone", "phone")],
                expression: None,
                values: Vec::new(),
                keep: Box::new(move |item: &Item| {
                    ["phone", "e164"].iter().any(|name| {
                        string_attr(item, name).is_some_and(|number| number.contains(&fragment))
                    })
                }),
            }
        });
        self.list_page(tenant, &list, page, filter)
            .await?
            .try_map(from_item)
    }
}

//! Contact records, the phone guard that keeps a number unique within its data source, and the
//! data source's `contact_count`, which changes in the same transaction as its contacts.

use super::keys::{self, HEAD, PK, SK};
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store};
use crate::auth::Tenant;
use crate::error::Error;
use crate::model::{Contact, DataSource, Id, Page, PageRequest, Phone};

fn data_source_gone(id: &Id) -> Error {
    Error::NotFound(format!("dataSource {id} not found"))
}

fn contact_not_found(id: &Id) -> Error {
    Error::NotFound(format!("contact {id} not found"))
}

fn phone_taken(phone: &Phone) -> Error {
    Error::Conflict(format!(
        "phoneNumber {phone} already exists in this dataSource"
    ))
}

/// The condition that a data source head still exists.
const HEAD_EXISTS: &str = "attribute_exists(pk)";

impl Store {
    pub(crate) fn contact_item(&self, tenant: &Tenant, contact: &Contact) -> Result<Item, Error> {
        to_item(
            contact,
            [
                (PK, keys::data_source(tenant, &contact.data_source_id)),
                (SK, keys::contact(&contact.id)),
            ],
        )
    }

    pub(crate) fn phone_guard(
        &self,
        tenant: &Tenant,
        contact: &Contact,
        import: Option<&Id>,
    ) -> Item {
        let mut item: Item = [
            (
                PK.to_owned(),
                s(keys::data_source(tenant, &contact.data_source_id)),
            ),
            (SK.to_owned(), s(keys::phone(&contact.phone))),
            ("contact_id".to_owned(), s(contact.id.as_str())),
        ]
        .into();
        if let Some(import) = import {
            item.insert("import_id".to_owned(), s(import.as_str()));
        }
        item
    }

    /// A page of a data source's contacts, newest first, with the data source itself.
    /// Unfiltered, this is one Query: the head comes first, then just enough contacts.
    /// With a phone fragment the whole partition is read and `total` counts the matches.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %id))]
    pub async fn contacts_page(
        &self,
        tenant: &Tenant,
        id: &Id,
        page: PageRequest,
        phone_fragment: Option<&str>,
    ) -> Result<(DataSource, Page<Contact>), Error> {
        let pk = keys::data_source(tenant, id);
        let items = self
            .query_all(
                |query| {
                    let query = query
                        .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :head")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                        .expression_attribute_values(":head", s(HEAD))
                        .scan_index_forward(false)
                        .consistent_read(true);
                    match phone_fragment {
                        None => query,
                        Some(fragment) => query
                            .filter_expression("sk = :head OR contains(#phone, :fragment)")
                            .expression_attribute_names("#phone", "phone")
                            .expression_attribute_values(":fragment", s(fragment)),
                    }
                },
                // The head, then every contact up to the end of the page.
                phone_fragment.is_none().then(|| page.end() + 1),
            )
            .await?;
        let mut items = items.into_iter();
        let head = items
            .next()
            .filter(|item| string_attr(item, SK) == Some(HEAD))
            .ok_or_else(|| data_source_gone(id))?;
        let source: DataSource = from_item(head)?;
        let contacts = items
            .map(from_item::<Contact>)
            .collect::<Result<Vec<_>, _>>()?;
        let result = match phone_fragment {
            None => Page {
                total: source.contact_count,
                rows: contacts.into_iter().skip(page.offset()).collect(),
            },
            Some(_) => page.slice(contacts),
        };
        Ok((source, result))
    }

    /// Hands every contact of a data source to `each`, oldest first, one Query page at a time,
    /// and answers the data source (404 when it is gone).
    pub async fn for_each_contact(
        &self,
        tenant: &Tenant,
        id: &Id,
        mut each: impl FnMut(Contact) -> Result<(), Error>,
    ) -> Result<DataSource, Error> {
        let pk = keys::data_source(tenant, id);
        let mut head = None;
        self.query_pages(
            |query| {
                query
                    .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :head")
                    .expression_attribute_values(":pk", s(&pk))
                    .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                    .expression_attribute_values(":head", s(HEAD))
            },
            |page| {
                for item in page {
                    if string_attr(&item, SK) == Some(HEAD) {
                        head = Some(from_item::<DataSource>(item)?);
                    } else {
                        each(from_item(item)?)?;
                    }
                }
                Ok(true)
            },
        )
        .await?;
        head.ok_or_else(|| data_source_gone(id))
    }

    /// One contact of a data source, read consistently.
    pub async fn contact(&self, tenant: &Tenant, source: &Id, id: &Id) -> Result<Contact, Error> {
        let item = self
            .get_item(keys::data_source(tenant, source), keys::contact(id))
            .await?
            .ok_or_else(|| contact_not_found(id))?;
        from_item(item)
    }

    /// Stores a new contact, claims its phone number and counts it, in one transaction.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %contact.id))]
    pub async fn add_contact(&self, tenant: &Tenant, contact: &Contact) -> Result<(), Error> {
        let absent = || Some(("attribute_not_exists(pk)", Expr::default()));
        let actions = Actions::new(&self.table)
            .put(self.contact_item(tenant, contact)?, absent())?
            .put(self.phone_guard(tenant, contact, None), absent())?
            .update(
                keys::data_source(tenant, &contact.data_source_id),
                HEAD.to_owned(),
                "ADD contact_count :one",
                Some(HEAD_EXISTS),
                Expr::default().value(":one", n(1)),
            )?;
        self.transact("add contact", actions.into_items())
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed_at(2) {
                        data_source_gone(&contact.data_source_id)
                    } else if condition.failed_at(1) {
                        phone_taken(&contact.phone)
                    } else {
                        Error::internal("add contact", "fresh id already stored")
                    }
                })
            })
    }

    /// Writes the fields a request sent (`sent`, by name) as they are in `next`, and a new phone
    /// number with its guard moved in the same transaction. Only what was sent is written, so
    /// concurrent updates of different fields both survive; a concurrent change of the number
    /// this one moves answers 409.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn update_contact(
        &self,
        tenant: &Tenant,
        current: &Contact,
        next: &Contact,
        sent: &[&str],
    ) -> Result<(), Error> {
        let pk = keys::data_source(tenant, &current.data_source_id);
        let moved = next.phone != current.phone;
        let mut sets = vec!["updated_at = :at".to_owned()];
        let mut removes = Vec::new();
        let mut conditions = vec!["attribute_exists(pk)".to_owned()];
        let mut expr = Expr::default().value(":at", n(next.updated_at.0));
        if !sent.is_empty() {
            expr = expr.name("#fields", "fields");
        }
        let mut added = 0;
        for (i, name) in sent.iter().enumerate() {
            let placeholder = format!("#f{i}");
            expr = expr.name(&placeholder, name);
            match next.fields.get(name) {
                Some(value) => {
                    sets.push(format!("#fields.{placeholder} = :f{i}"));
                    expr = expr.value(&format!(":f{i}"), s(value));
                    added += usize::from(current.fields.get(name).is_none());
                }
                None => removes.push(format!("#fields.{placeholder}")),
            }
        }
        if added > 0 {
            // Fields added by concurrent requests cannot together pass the D7 limit.
            conditions.push("size(#fields) <= :room".to_owned());
            let most = crate::model::contact::MAX_CUSTOM_FIELDS
                + crate::model::contact::KNOWN_FIELDS.len();
            expr = expr.value(":room", n(most.saturating_sub(added)));
        }
        if moved {
            sets.push("#phone = :phone".to_owned());
            conditions.push("#phone = :old".to_owned());
            expr = expr
                .name("#phone", "phone")
                .value(":phone", s(next.phone.as_str()))
                .value(":old", s(current.phone.as_str()));
        }
        let mut update = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            update.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        let mut actions = Actions::new(&self.table)
            .check(pk.clone(), HEAD.to_owned(), HEAD_EXISTS, Expr::default())?
            .update(
                pk.clone(),
                keys::contact(&current.id),
                &update,
                Some(&conditions.join(" AND ")),
                expr,
            )?;
        if moved {
            actions = actions
                .delete(pk.clone(), keys::phone(&current.phone), None)?
                .put(
                    self.phone_guard(tenant, next, None),
                    Some(("attribute_not_exists(pk)", Expr::default())),
                )?;
        }
        self.transact("update contact", actions.into_items())
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed_at(0) {
                        data_source_gone(&current.data_source_id)
                    } else if condition.failed_at(1) && condition.item_at(1).is_none() {
                        contact_not_found(&current.id)
                    } else if condition.failed_at(1) {
                        Error::Conflict(format!(
                            "contact {} was changed by another request; read it again",
                            current.id
                        ))
                    } else {
                        phone_taken(&next.phone)
                    }
                })
            })
    }

    /// Deletes a contact, frees its phone number and uncounts it, in one transaction.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %current.id))]
    pub async fn delete_contact(&self, tenant: &Tenant, current: &Contact) -> Result<(), Error> {
        let pk = keys::data_source(tenant, &current.data_source_id);
        let actions = Actions::new(&self.table)
            .update(
                pk.clone(),
                HEAD.to_owned(),
                "ADD contact_count :minus_one",
                Some(HEAD_EXISTS),
                Expr::default().value(":minus_one", n(-1)),
            )?
            .delete(
                pk.clone(),
                keys::contact(&current.id),
                // The phone guard deleted below must be the one of the stored contact.
                Some((
                    "attribute_exists(pk) AND #phone = :phone",
                    Expr::default()
                        .name("#phone", "phone")
                        .value(":phone", s(current.phone.as_str())),
                )),
            )?
            .delete(pk, keys::phone(&current.phone), None)?;
        self.transact("delete contact", actions.into_items())
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed_at(0) {
                        data_source_gone(&current.data_source_id)
                    } else if condition.item_at(1).is_none() {
                        contact_not_found(&current.id)
                    } else {
                        Error::Conflict(format!(
                            "contact {} was changed by another request; read it again",
                            current.id
                        ))
                    }
                })
            })
    }
}

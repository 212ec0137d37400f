//! Contact records, the phone guard that keeps a number unique within its data source, and the
//! data source's `contact_count`, which changes in the same transaction as its contacts.

use super::keys::{self, HEAD, PK, SK};
use super::shards::ContactShards;
use super::QueryBuilder;
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::contact::TIME_ZONE_FIELD;
use outbound_model::error::Error;
use outbound_model::page::{Page, PageQuery, Start};
use outbound_model::Tenant;
use outbound_model::{Contact, DataSource, Id, Phone};

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

/// Most distinct custom field names one data source may hold: an export's columns (D6).
pub const MAX_FIELD_NAMES: usize = 256;

/// The head attribute (a string set) of a data source's custom field names.
pub(crate) const FIELD_NAMES: &str = "field_names";

/// What a write adds to the head for the custom field names `names` (none: nothing): the
/// `ADD` clause, the condition that keeps the data source within [`MAX_FIELD_NAMES`] (room
/// for all of them, or, with `or_present`, every one there already) and their values, added
/// to `expr`. A single contact names at most 30; an import names only those new to the data
/// source, without `or_present`, whose condition would grow with them.
pub(crate) fn field_names_update(
    names: &[&str],
    mut expr: Expr,
    or_present: bool,
) -> (String, String, Expr) {
    if names.is_empty() {
        return (String::new(), String::new(), expr);
    }
    let mut fits =
        "attribute_not_exists(#field_names) OR size(#field_names) <= :field_room".to_owned();
    if or_present {
        let mut present = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            present.push(format!("contains(#field_names, :field_name{i})"));
            expr = expr.value(&format!(":field_name{i}"), s(*name));
        }
        fits.push_str(&format!(" OR ({})", present.join(" AND ")));
    }
    let expr = expr
        .name("#field_names", FIELD_NAMES)
        .value(
            ":field_names",
            AttributeValue::Ss(names.iter().map(|name| (*name).to_owned()).collect()),
        )
        .value(
            ":field_room",
            n(MAX_FIELD_NAMES.saturating_sub(names.len())),
        );
    (
        ", #field_names :field_names".to_owned(),
        format!(" AND ({fits})"),
        expr,
    )
}

pub(crate) fn too_many_field_names(source: &Id) -> Error {
    Error::invalid(format!(
        "dataSource {source} already has {MAX_FIELD_NAMES} custom field names, the most it may; use one of them"
    ))
}

/// The condition that a data source head still exists.
const HEAD_EXISTS: &str = "attribute_exists(pk)";

impl Store {
    /// The item of `contact`, in its shard.
    pub(crate) fn contact_item(shards: &ContactShards, contact: &Contact) -> Result<Item, Error> {
        to_item(
            contact,
            [
                (PK, shards.of_contact(&contact.id)),
                (SK, keys::contact(&contact.id)),
            ],
        )
    }

    /// The guard of `contact`'s phone number, in its shard, naming the contact (and the import
    /// that wrote it, if any).
    pub(crate) fn phone_guard(
        shards: &ContactShards,
        contact: &Contact,
        import: Option<&Id>,
    ) -> Item {
        let mut item: Item = [
            (PK.to_owned(), s(shards.of_phone(&contact.phone))),
            (SK.to_owned(), s(keys::phone(&contact.phone))),
            ("contact_id".to_owned(), s(contact.id.as_str())),
        ]
        .into();
        if let Some(import) = import {
            item.insert("import_id".to_owned(), s(import.as_str()));
        }
        item
    }

    /// A page of a data source's contacts, newest first (D5); `total` is the head's exact
    /// `contact_count`, or with a phone fragment the number of matches. Its cost is bounded by
    /// the page, not the data source:
    /// - the first page is one Query over `C#`..`C~`, descending: the head, then the page and
    ///   one more contact (whether a next page exists);
    /// - after a `nextToken`'s contact: GetItem of the head, and the same Query from there;
    /// - at an offset: the Query projected to the sort key (the head also to its count) skips
    ///   the contacts before the page, then BatchGetItem reads the page's contacts;
    /// - with a phone fragment, on a data source of at most `scan_most` contacts: the Query
    ///   projected to the sort key with the filter on the number (every match is counted), then
    ///   BatchGetItem of the page's contacts;
    /// - on a larger one, where that would read every contact: a whole number is looked up by
    ///   its phone guard (one GetItem), and a partial one is 400 (D5).
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %id))]
    pub async fn contacts_page(
        &self,
        tenant: &Tenant,
        id: &Id,
        page: &PageQuery,
        phone_filter: Option<(&str, u64)>,
    ) -> Result<Page<Contact>, Error> {
        let shards = self.shards(tenant, id).await?;
        let range = |query: QueryBuilder| {
            query
                .key_condition_expression("pk = :pk AND sk BETWEEN :first AND :head")
                .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                .expression_attribute_values(":head", s(HEAD))
        };
        // Newest first: the head (in shard 0, after every contact) comes before them.
        const NEWEST_FIRST: bool = false;
        let contact_id = |item: &Item| {
            string_attr(item, SK)
                .and_then(|sk| sk.strip_prefix(keys::CONTACT_PREFIX))
                .and_then(Id::parse)
        };
        // The head first (the data source exists), then the rest.
        let split_head = |items: Vec<Item>| {
            let mut items = items.into_iter();
            let head = items
                .next()
                .filter(|item| string_attr(item, SK) == Some(HEAD))
                .ok_or_else(|| data_source_gone(id))?;
            Ok::<_, Error>((head, items.collect::<Vec<_>>()))
        };
        let count_of = |head: &Item| {
            head.get("contact_count")
                .and_then(|value| value.as_n().ok())
                .and_then(|raw| raw.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let (total, ids, more, rows) = match (phone_filter, &page.start) {
            (Some((fragment, scan_most)), _) => {
                let head = self
                    .get_item(shards.home().to_owned(), HEAD.to_owned())
                    .await?
                    .ok_or_else(|| data_source_gone(id))?;
                if count_of(&head) > scan_most {
                    let ids = self.contact_by_phone(&shards, fragment, scan_most).await?;
                    let total = ids.len() as u64;
                    let (ids, more) = page.pick(ids);
                    (total, ids, more, None)
                } else {
                    let items = self
                        .merged(
                            &shards,
                            |query| {
                                query
                                    .key_condition_expression(
                                        "pk = :pk AND sk BETWEEN :first AND :last",
                                    )
                                    .expression_attribute_values(":first", s(keys::CONTACT_PREFIX))
                                    .expression_attribute_values(":last", s(keys::CONTACTS_END))
                                    .filter_expression("contains(#phone, :fragment)")
                                    .expression_attribute_names("#phone", "phone")
                                    .expression_attribute_values(":fragment", s(fragment))
                                    .projection_expression("sk")
                            },
                            NEWEST_FIRST,
                            None,
                            usize::MAX,
                        )
                        .await?;
                    let ids: Vec<Id> = items.iter().filter_map(contact_id).collect();
                    let total = ids.len() as u64;
                    let (ids, more) = page.pick(ids);
                    (total, ids, more, None)
                }
            }
            (None, Start::Offset(0)) => {
                let items = self
                    .merged(&shards, range, NEWEST_FIRST, None, page.size + 2)
                    .await?;
                let (head, mut contacts) = split_head(items)?;
                let more = contacts.len() > page.size;
                contacts.truncate(page.size);
                let ids = contacts.iter().filter_map(contact_id).collect();
                (count_of(&head), ids, more, Some(contacts))
            }
            (None, Start::After(after)) => {
                let head = self
                    .get_item(shards.home().to_owned(), HEAD.to_owned())
                    .await?
                    .ok_or_else(|| data_source_gone(id))?;
                let after = keys::contact(after);
                let mut contacts = self
                    .merged(&shards, range, NEWEST_FIRST, Some(&after), page.size + 1)
                    .await?;
                let more = contacts.len() > page.size;
                contacts.truncate(page.size);
                let ids = contacts.iter().filter_map(contact_id).collect();
                (count_of(&head), ids, more, Some(contacts))
            }
            (None, Start::Offset(offset)) => {
                let items = self
                    .merged(
                        &shards,
                        |query| range(query).projection_expression("sk, contact_count"),
                        NEWEST_FIRST,
                        None,
                        1 + offset + page.size + 1,
                    )
                    .await?;
                let (head, keys) = split_head(items)?;
                let ids = keys.iter().filter_map(contact_id).collect();
                let (ids, more) = page.pick(ids);
                (count_of(&head), ids, more, None)
            }
        };
        let rows = match rows {
            Some(rows) => rows,
            None => {
                self.records_in_order(ids.iter().map(|id| shards.contact_key(id)).collect())
                    .await?
            }
        };
        Ok(Page {
            total,
            rows: rows
                .into_iter()
                .map(from_item::<Contact>)
                .collect::<Result<_, _>>()?,
            next: more.then(|| ids.last().cloned()).flatten(),
        })
    }

    /// The contact holding the whole number `fragment`, found by its phone guard: the phone
    /// filter of a data source of more than `scan_most` contacts, where a partial number would
    /// read every contact and is refused (D5).
    async fn contact_by_phone(
        &self,
        shards: &ContactShards,
        fragment: &str,
        scan_most: u64,
    ) -> Result<Vec<Id>, Error> {
        let phone = Phone::parse(fragment).map_err(|_| {
            Error::invalid(format!(
                "phoneNumber must be a whole phone number on a dataSource of more than {scan_most} contacts"
            ))
        })?;
        let guard = self
            .get_item(shards.of_phone(&phone), keys::phone(&phone))
            .await?;
        Ok(guard
            .as_ref()
            .and_then(|guard| string_attr(guard, "contact_id"))
            .and_then(Id::parse)
            .into_iter()
            .collect())
    }

    /// Hands every contact of a data source to `each`, oldest first, one Query page at a time,
    /// and answers the data source (404 when it is gone).
    pub async fn for_each_contact(
        &self,
        tenant: &Tenant,
        id: &Id,
        mut each: impl FnMut(Contact) -> Result<(), Error>,
    ) -> Result<DataSource, Error> {
        let mut pages = self.contact_pages(tenant, id).await?;
        while let Some(page) = pages.next().await? {
            page.into_iter().try_for_each(&mut each)?;
        }
        pages.head().cloned().ok_or_else(|| data_source_gone(id))
    }

    /// The custom field names data source `source` holds (D6), read consistently (404 when it
    /// is gone).
    pub async fn field_names(
        &self,
        tenant: &Tenant,
        source: &Id,
    ) -> Result<std::collections::HashSet<String>, Error> {
        let head = self
            .get_attribute(
                keys::data_source(tenant, source),
                HEAD.to_owned(),
                FIELD_NAMES,
            )
            .await?
            .ok_or_else(|| data_source_gone(source))?;
        Ok(match head.get(FIELD_NAMES) {
            Some(AttributeValue::Ss(names)) => names.iter().cloned().collect(),
            _ => Default::default(),
        })
    }

    /// One contact of a data source, read consistently.
    pub async fn contact(&self, tenant: &Tenant, source: &Id, id: &Id) -> Result<Contact, Error> {
        let shards = match self.shards(tenant, source).await {
            Ok(shards) => shards,
            // As any contact that is not there (D3).
            Err(Error::NotFound(_)) => return Err(contact_not_found(id)),
            Err(error) => return Err(error),
        };
        let item = self
            .get_item(shards.of_contact(id), keys::contact(id))
            .await?
            .ok_or_else(|| contact_not_found(id))?;
        from_item(item)
    }

    /// Stores a new contact, claims its phone number and counts it, in one transaction.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), id = %contact.id))]
    pub async fn add_contact(&self, tenant: &Tenant, contact: &Contact) -> Result<(), Error> {
        #[derive(PartialEq)]
        enum Part {
            Contact,
            PhoneGuard,
            Head,
        }
        let shards = self.shards(tenant, &contact.data_source_id).await?;
        let absent = || Some(("attribute_not_exists(pk)", Expr::default()));
        let names: Vec<&str> = contact.fields.custom_names().collect();
        let (add_names, names_fit, head_expr) =
            field_names_update(&names, Expr::default().value(":one", n(1)), true);
        let actions = Actions::new(&self.table)
            .put(
                Part::Contact,
                Self::contact_item(&shards, contact)?,
                absent(),
            )?
            .put(
                Part::PhoneGuard,
                Self::phone_guard(&shards, contact, None),
                absent(),
            )?
            .update(
                Part::Head,
                shards.home().to_owned(),
                HEAD.to_owned(),
                &format!("ADD contact_count :one, contacts_added :one{add_names}"),
                Some(&format!("{HEAD_EXISTS}{names_fit}")),
                head_expr,
            )?;
        self.transact("add contact", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed(Part::Head) && condition.stored(Part::Head).is_some() {
                        too_many_field_names(&contact.data_source_id)
                    } else if condition.failed(Part::Head) {
                        data_source_gone(&contact.data_source_id)
                    } else if condition.failed(Part::PhoneGuard) {
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
        let shards = self.shards(tenant, &current.data_source_id).await?;
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
            let most = outbound_model::contact::MAX_CUSTOM_FIELDS
                + outbound_model::contact::KNOWN_FIELDS.len();
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
        #[derive(PartialEq)]
        enum Part {
            Head,
            Contact,
            OldPhoneGuard,
            NewPhoneGuard,
        }
        let mut update = format!("SET {}", sets.join(", "));
        if !removes.is_empty() {
            update.push_str(&format!(" REMOVE {}", removes.join(", ")));
        }
        let new_names: Vec<&str> = next
            .fields
            .custom_names()
            .filter(|name| current.fields.get(name).is_none())
            .collect();
        // A new number or time zone moves the contact's windows: contacts parked under the
        // data source's earlier rules are judged again (D24).
        let rules_changed = moved || sent.contains(&TIME_ZONE_FIELD);
        let actions = Actions::new(&self.table);
        let actions = if new_names.is_empty() && !rules_changed {
            actions.check(
                Part::Head,
                shards.home().to_owned(),
                HEAD.to_owned(),
                HEAD_EXISTS,
                Expr::default(),
            )?
        } else {
            let (add_names, names_fit, mut head_expr) =
                field_names_update(&new_names, Expr::default(), true);
            let mut head_update = String::new();
            if rules_changed {
                head_update.push_str("SET rules_at = :rules_at ");
                head_expr = head_expr.value(":rules_at", n(next.updated_at.0));
            }
            if !add_names.is_empty() {
                head_update.push_str(&format!("ADD{}", add_names.trim_start_matches(',')));
            }
            actions.update(
                Part::Head,
                shards.home().to_owned(),
                HEAD.to_owned(),
                head_update.trim_end(),
                Some(&format!("{HEAD_EXISTS}{names_fit}")),
                head_expr,
            )?
        };
        let mut actions = actions.update(
            Part::Contact,
            shards.of_contact(&current.id),
            keys::contact(&current.id),
            &update,
            Some(&conditions.join(" AND ")),
            expr,
        )?;
        if moved {
            actions = actions
                .delete(
                    Part::OldPhoneGuard,
                    shards.of_phone(&current.phone),
                    keys::phone(&current.phone),
                    None,
                )?
                .put(
                    Part::NewPhoneGuard,
                    Self::phone_guard(&shards, next, None),
                    Some(("attribute_not_exists(pk)", Expr::default())),
                )?;
        }
        self.transact("update contact", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed(Part::Head) && condition.stored(Part::Head).is_some() {
                        too_many_field_names(&current.data_source_id)
                    } else if condition.failed(Part::Head) {
                        data_source_gone(&current.data_source_id)
                    } else if condition.failed(Part::Contact)
                        && condition.stored(Part::Contact).is_none()
                    {
                        contact_not_found(&current.id)
                    } else if condition.failed(Part::Contact) {
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
        #[derive(PartialEq)]
        enum Part {
            Head,
            Contact,
            PhoneGuard,
        }
        let shards = self.shards(tenant, &current.data_source_id).await?;
        let actions = Actions::new(&self.table)
            .update(
                Part::Head,
                shards.home().to_owned(),
                HEAD.to_owned(),
                "ADD contact_count :minus_one",
                Some(HEAD_EXISTS),
                Expr::default().value(":minus_one", n(-1)),
            )?
            .delete(
                Part::Contact,
                shards.of_contact(&current.id),
                keys::contact(&current.id),
                // The phone guard deleted below must be the one of the stored contact.
                Some((
                    "attribute_exists(pk) AND #phone = :phone",
                    Expr::default()
                        .name("#phone", "phone")
                        .value(":phone", s(current.phone.as_str())),
                )),
            )?
            .delete(
                Part::PhoneGuard,
                shards.of_phone(&current.phone),
                keys::phone(&current.phone),
                None,
            )?;
        self.transact("delete contact", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    if condition.failed(Part::Head) {
                        data_source_gone(&current.data_source_id)
                    } else if condition.stored(Part::Contact).is_none() {
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

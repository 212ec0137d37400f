//! The do-not-call list's records (D16, D24), in the tenant partition: an entry per listed
//! number (`DNC#{id}`, counted on `COUNTS` like the tenant's other lists) and a guard under its
//! E.164 form (`DNCN#{number}`), written in one transaction, so a number is listed once and the
//! claim of a call checks its guard's absence in its own transaction. Entries stored before D24
//! may have a guard under their normal form as well, or only that one. An add or a delete puts
//! its audit event (D25) in its own transaction.

use super::keys::{self, GUARD_PREFIX, PK, SK};
use super::paging::{Counted, RowFilter, TenantList};
use super::{flag_attr, from_item, s, string_attr, to_item, Actions, Expr, Item, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::dnc::{listed_e164, DncEntry};
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::limits::Limited;
use outbound_model::page::PageQuery;
use outbound_model::{Id, Page, Phone, Tenant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Entry,
    Guard,
    DialGuard,
    Count,
    Event,
}

/// Guards copied in one transaction: each with the check that its guard still lists it.
const GUARDS_COPIED_IN_ONE: usize = 50;

/// Transactions of copied guards one guard job makes for one tenant
/// ([`Store::guard_numbers_apart`]): 1,000 guards, a bounded part of a dialer's time; the tick
/// queues the next job a minute later.
const GUARD_COPIES_A_TICK: usize = 20;

impl Store {
    /// Lists a number (D16): 409 when its E.164 form is listed already. `event`, the add's audit
    /// event (D25), is put in the same transaction; a file's rows are listed without one each,
    /// their import having one event of its own.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str()))]
    pub async fn add_dnc(
        &self,
        tenant: &Tenant,
        entry: &DncEntry,
        event: Option<&Event>,
    ) -> Result<(), Error> {
        let pk = keys::tenant(tenant);
        let item = to_item(entry, [(PK, pk.clone()), (SK, keys::dnc_entry(&entry.id))])?;
        let mut actions = Actions::new(&self.table)
            .put(Part::Entry, item, None)?
            .put(
                Part::Guard,
                guard_item(&pk, entry),
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?
            .put(
                Part::DialGuard,
                dial_guard_item(tenant, entry.guarded_number(), &entry.id),
                None,
            )?;
        if let Some(event) = event {
            actions = actions.event(Part::Event, event)?;
        }
        let limit = self.limits.dnc_entries;
        let actions = actions.count_one_more(Part::Count, tenant, Counted::DncEntries, limit)?;
        self.transact("add do-not-call entry", actions)
            .await
            .map_err(|failure| {
                failure.or_else(|condition| {
                    // A number listed already says so, at the limit or not.
                    if condition.failed(Part::Count) && !condition.failed(Part::Guard) {
                        Limited::DncEntries.reached(limit)
                    } else {
                        Error::Conflict(format!(
                            "phoneNumber {} is already on the do-not-call list",
                            entry.phone
                        ))
                    }
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

    /// Removes an entry and its guards, with the delete's audit event (D25) in the same
    /// transaction; 404 when another delete removed it first.
    pub async fn delete_dnc(
        &self,
        tenant: &Tenant,
        entry: &DncEntry,
        event: &Event,
    ) -> Result<(), Error> {
        let pk = keys::tenant(tenant);
        let mut actions = Actions::new(&self.table).delete(
            Part::Entry,
            pk.clone(),
            keys::dnc_entry(&entry.id),
            Some(("attribute_exists(pk)", Expr::default())),
        )?;
        // An entry stored before D24 may lack either of its guards.
        for number in entry.possible_guards() {
            let theirs = || {
                Some((
                    "attribute_not_exists(pk) OR entry = :id",
                    Expr::default().value(":id", s(entry.id.as_str())),
                ))
            };
            let (dial_pk, dial_sk) = keys::dial_guard(tenant, number);
            actions = actions
                .delete(Part::Guard, pk.clone(), keys::dnc_number(number), theirs())?
                .delete(Part::DialGuard, dial_pk, dial_sk, theirs())?;
        }
        let actions = actions
            .count_change(Part::Count, tenant, Counted::DncEntries, -1)?
            .event(Part::Event, event)?;
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

    /// The entries stored before D24 without an E.164 form (read once, when the tenant's default
    /// country is set: the whole list, filtered).
    pub async fn dnc_entries_without_e164(&self, tenant: &Tenant) -> Result<Vec<DncEntry>, Error> {
        let pk = keys::tenant(tenant);
        let items = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .filter_expression("attribute_not_exists(e164)")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":prefix", s(keys::DNC_PREFIX))
                },
                None,
            )
            .await?;
        items.into_iter().map(from_item).collect()
    }

    /// Gives an entry stored without an E.164 form the one `entry` now carries (D24): its
    /// guard under that form is added beside the old one. Answers false, changing nothing, when
    /// the entry is gone or has one already, or another entry lists that number.
    pub async fn complete_dnc_entry(
        &self,
        tenant: &Tenant,
        entry: &DncEntry,
    ) -> Result<bool, Error> {
        let pk = keys::tenant(tenant);
        let Some(e164) = &entry.e164 else {
            return Ok(false);
        };
        let mut values = Expr::default().value(":e164", s(e164));
        let mut set = "SET e164 = :e164".to_owned();
        if let Some(country) = entry.country {
            values = values.value(":country", s(country.as_str()));
            set.push_str(", country = :country");
        }
        let actions = Actions::new(&self.table)
            .update(
                Part::Entry,
                pk.clone(),
                keys::dnc_entry(&entry.id),
                &set,
                Some("attribute_exists(pk) AND attribute_not_exists(e164)"),
                values,
            )?
            .put(
                Part::Guard,
                guard_item(&pk, entry),
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?
            .put(
                Part::DialGuard,
                dial_guard_item(tenant, entry.guarded_number(), &entry.id),
                None,
            )?;
        match self.transact("complete do-not-call entry", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }

    /// A page of the tenant's entries, newest first (D5), filtered by a fragment of the number
    /// as D5 bounds the contacts' filter: on a list of at most `scan_most` entries (the count of
    /// `COUNTS`, one GetItem) the Query projected to the numbers reads every entry and matches
    /// any part of either form; on a longer one, where that read grows with the list, only a
    /// whole number is looked up, by its guards ([`Store::dnc_entries_listing`]), and a partial
    /// one is 400.
    pub async fn dnc_page(
        &self,
        tenant: &Tenant,
        page: &PageQuery,
        phone_filter: Option<(&str, u64)>,
    ) -> Result<Page<DncEntry>, Error> {
        if let Some((fragment, scan_most)) = phone_filter {
            if self.record_count(tenant, Counted::DncEntries).await? > scan_most {
                return self
                    .dnc_entries_listing(tenant, page, fragment, scan_most)
                    .await;
            }
        }
        let fragment = phone_filter.map(|(fragment, _)| fragment);
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

impl Store {
    /// Copies the tenant's guards stored before the claim's had keys of their own
    /// ([`keys::dial_guard`]), a bounded part a call, resuming after the last one copied; once
    /// all are, marks the settings so claims check the copies (D16). Each copy is conditioned
    /// on its guard still listing the number, so a delete meanwhile is never undone; adds and
    /// deletes write both guards all along. Answers whether the tenant's claims check the
    /// copies now.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str()))]
    pub async fn guard_numbers_apart(&self, tenant: &Tenant) -> Result<bool, Error> {
        let pk = keys::tenant(tenant);
        let settings = self
            .get_item(pk.clone(), keys::SETTINGS.to_owned())
            .await?
            .unwrap_or_default();
        if flag_attr(&settings, "dial_guards") {
            return Ok(true);
        }
        let mut after = string_attr(&settings, "dial_guards_after")
            .unwrap_or(GUARD_PREFIX)
            .to_owned();
        for _ in 0..GUARD_COPIES_A_TICK {
            let guards = self
                .query_all(
                    |query| {
                        query
                            .key_condition_expression("pk = :pk AND sk BETWEEN :after AND :end")
                            .expression_attribute_values(":pk", s(&pk))
                            .expression_attribute_values(":after", s(&after))
                            .expression_attribute_values(":end", s(format!("{GUARD_PREFIX}~")))
                            .limit(GUARDS_COPIED_IN_ONE as i32 + 1)
                    },
                    Some(GUARDS_COPIED_IN_ONE + 1),
                )
                .await?;
            let guards: Vec<(String, String)> = guards
                .iter()
                .filter_map(|guard| {
                    let sk = string_attr(guard, SK)?;
                    Some((sk.to_owned(), string_attr(guard, "entry")?.to_owned()))
                })
                .filter(|(sk, _)| *sk != after)
                .take(GUARDS_COPIED_IN_ONE)
                .collect();
            let Some((last, _)) = guards.last().cloned() else {
                self.mark_guards(
                    tenant,
                    "SET dial_guards = :true REMOVE dial_guards_after",
                    Expr::default().value(":true", AttributeValue::Bool(true)),
                )
                .await?;
                return Ok(true);
            };
            let mut actions = Actions::new(&self.table);
            for (sk, entry) in &guards {
                let number = sk.strip_prefix(GUARD_PREFIX).unwrap_or(sk);
                let entry = Id::parse(entry)
                    .ok_or_else(|| Error::internal("guard numbers", "a guard names no entry"))?;
                actions = actions
                    .check(
                        Part::Guard,
                        pk.clone(),
                        sk.clone(),
                        "entry = :id",
                        Expr::default().value(":id", s(entry.as_str())),
                    )?
                    .put(
                        Part::DialGuard,
                        dial_guard_item(tenant, number, &entry),
                        None,
                    )?;
            }
            match self.transact("copy do-not-call guards", actions).await {
                Ok(()) => {}
                // A guard was deleted since it was read: read the page again.
                Err(failure) => {
                    failure.condition()?;
                    continue;
                }
            }
            self.mark_guards(
                tenant,
                "SET dial_guards_after = :last",
                Expr::default().value(":last", s(&last)),
            )
            .await?;
            after = last;
        }
        Ok(false)
    }

    /// Records how far the copy of the tenant's guards has come on its settings, outside their
    /// `revision`: no change of the tenant's is refused for it.
    async fn mark_guards(&self, tenant: &Tenant, update: &str, expr: Expr) -> Result<(), Error> {
        let key = (keys::tenant(tenant), keys::SETTINGS.to_owned());
        self.update_one("guard numbers apart", key, update, None, expr)
            .await
            .map(drop)
            .map_err(|failure| {
                failure.or_else(|_| Error::internal("guard numbers apart", "no condition"))
            })
    }

    /// The filter of a do-not-call list longer than `scan_most` entries (D5): `fragment` must be
    /// a whole number, and the entries that list it are the answer, found as a delete finds
    /// one: by the guards of its E.164 form read in the tenant's default country (D24), of its
    /// normal form (entries stored before D24), and, for a number written without `+`, of the
    /// same digits with one. Reads: the settings, one BatchGetItem of those (at most three)
    /// guards and one of their entries, whatever the list's length.
    async fn dnc_entries_listing(
        &self,
        tenant: &Tenant,
        page: &PageQuery,
        fragment: &str,
        scan_most: u64,
    ) -> Result<Page<DncEntry>, Error> {
        let phone = Phone::parse(fragment).map_err(|_| {
            Error::invalid(format!(
                "phoneNumber must be a whole phone number on a do-not-call list of more than \
                 {scan_most} entries"
            ))
        })?;
        let default_country = self.settings(tenant).await?.default_country;
        let mut forms = Vec::new();
        if let Ok((e164, _)) = listed_e164(&phone, None, default_country) {
            forms.push(e164);
        }
        forms.push(phone.as_str().to_owned());
        if !phone.as_str().starts_with('+') {
            forms.push(format!("+{phone}"));
        }
        // Each key once: a BatchGetItem refuses a repeated one.
        let mut numbers: Vec<String> = Vec::new();
        for form in forms {
            if !numbers.contains(&form) {
                numbers.push(form);
            }
        }
        let pk = keys::tenant(tenant);
        let key = |sk: String| -> Item { [(PK.to_owned(), s(&pk)), (SK.to_owned(), s(sk))].into() };
        let guards = self
            .batch_get_with(
                numbers
                    .iter()
                    .map(|number| key(keys::dnc_number(number)))
                    .collect(),
                None,
            )
            .await?;
        let mut ids: Vec<Id> = guards
            .iter()
            .filter_map(|guard| string_attr(guard, "entry").and_then(Id::parse))
            .collect();
        // Newest first, as the list; an entry with two guards once.
        ids.sort_by(|a, b| b.cmp(a));
        ids.dedup();
        let entries = self
            .records_in_order(ids.iter().map(|id| key(keys::dnc_entry(id))).collect())
            .await?;
        let entries: Vec<DncEntry> = entries
            .into_iter()
            .map(from_item)
            .collect::<Result<_, _>>()?;
        let ids: Vec<Id> = entries.iter().map(|entry| entry.id.clone()).collect();
        let total = ids.len() as u64;
        let (ids, more) = page.pick(ids);
        let next = more.then(|| ids.last().cloned()).flatten();
        let rows = entries
            .into_iter()
            .filter(|entry| ids.contains(&entry.id))
            .collect();
        Ok(Page { total, rows, next })
    }
}

/// The claim's copy of the guard of `number`, listed by entry `id` ([`keys::dial_guard`]).
fn dial_guard_item(tenant: &Tenant, number: &str, id: &Id) -> Item {
    let (pk, sk) = keys::dial_guard(tenant, number);
    [
        (PK.to_owned(), s(pk)),
        (SK.to_owned(), s(sk)),
        ("entry".to_owned(), s(id.as_str())),
    ]
    .into()
}

/// The guard that lists `entry`'s number, under the key contacts are looked up by.
fn guard_item(pk: &str, entry: &DncEntry) -> Item {
    [
        (PK.to_owned(), s(pk)),
        (SK.to_owned(), s(keys::dnc_number(entry.guarded_number()))),
        ("entry".to_owned(), s(entry.id.as_str())),
    ]
    .into()
}

//! Import records and the bulk write of imported contacts: 49 contacts a transaction (contact,
//! phone guard, and one `contact_count` update for the lot: 99 actions), so a 1,000-row file is
//! about 21 write requests and `contactCount` stays exact. A phone guard remembers the import
//! that wrote it, so a retried or re-delivered import recognises its own rows and stores none twice.

use super::contact::{field_names_update, too_many_field_names, MAX_FIELD_NAMES};
use super::keys::{self, HEAD, PK, SK};
use super::write_cost;
use super::{from_item, n, s, string_attr, to_item, Actions, Expr, Item, Store, WriteFailure};
use crate::aws::Dependency;
use crate::store::SendTo;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::import::ParsedRow;
use outbound_model::import::{Import, ImportReport, ImportStatus};
use outbound_model::Tenant;
use outbound_model::{Contact, Id, Timestamp};
use std::collections::BTreeSet;

/// Contacts per transaction: two actions each, plus the data source's counter.
const CONTACTS_PER_TRANSACTION: usize = 49;

/// A data source's head item: name, description and counters, usually within 1 KB.
const HEAD_ITEM_BYTES: usize = 1024;

/// A processing claim older than this may be taken over (the worker that held it died).
pub const STALE_CLAIM_MILLIS: i64 = 15 * 60 * 1000;

fn import_not_found(id: &Id) -> Error {
    Error::NotFound(format!("import {id} not found"))
}

/// How an import ends ([`Store::finish_import`]).
#[derive(Clone, Copy, Debug)]
pub enum ImportEnd<'a> {
    /// Stored its rows; the report's counts go into its event.
    Succeeded(&'a ImportReport),
    /// Refused as a whole, with the message shown as its `error`.
    Failed(&'a str),
    /// Interrupted: WAITING_UPLOAD again, to be claimed by the redelivery.
    Retry,
}

/// What happened to one valid row of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOutcome {
    /// Stored by this import (now or by an earlier attempt of it).
    Stored,
    /// Another contact of the data source already has this number.
    AlreadyExists,
}

impl Store {
    fn import_keys(tenant: &Tenant, import: &Import) -> [(&'static str, String); 2] {
        [
            (PK, keys::data_source(tenant, &import.data_source_id)),
            (SK, keys::import(&import.id)),
        ]
    }

    /// Stores a new import record.
    pub async fn create_import(&self, tenant: &Tenant, import: &Import) -> Result<(), Error> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(to_item(import, Self::import_keys(tenant, import))?))
            .condition_expression("attribute_not_exists(pk)")
            .send_to(&self.backend)
            .await
            .map_err(|e| Error::dependency("create import", e))?;
        Ok(())
    }

    /// One import of a data source.
    pub async fn import(&self, tenant: &Tenant, source: &Id, id: &Id) -> Result<Import, Error> {
        let item = self
            .get_item(keys::data_source(tenant, source), keys::import(id))
            .await?
            .ok_or_else(|| import_not_found(id))?;
        from_item(item)
    }

    /// Takes an import for processing: only one worker gets it, however often its upload event
    /// is delivered, unless the claim has gone stale. `None` when there is nothing to do.
    pub async fn claim_import(
        &self,
        tenant: &Tenant,
        source: &Id,
        id: &Id,
        now: Timestamp,
    ) -> Result<Option<Import>, Error> {
        let written = self
            .update_one(
                "claim import",
                (keys::data_source(tenant, source), keys::import(id)),
                "SET #status = :processing, claimed_at = :now, updated_at = :now",
                Some(
                    "attribute_exists(pk) AND (#status = :waiting \
                     OR (#status = :processing AND claimed_at < :stale))",
                ),
                Expr::default()
                    .name("#status", "status")
                    .value(":processing", s("PROCESSING"))
                    .value(":waiting", s("WAITING_UPLOAD"))
                    .value(":now", n(now.0))
                    .value(":stale", n(now.0 - STALE_CLAIM_MILLIS)),
            )
            .await;
        WriteFailure::updated(written)
    }

    /// Records how an import ended: SUCCEEDED or FAILED once, with its event (D20), whatever
    /// the number of workers that finish it; or WAITING_UPLOAD again, for a retry.
    pub async fn finish_import(
        &self,
        tenant: &Tenant,
        import: &Import,
        end: ImportEnd<'_>,
        at: Timestamp,
    ) -> Result<(), Error> {
        let (status, report, error) = match end {
            ImportEnd::Retry => (ImportStatus::WaitingUpload, None, None),
            ImportEnd::Succeeded(report) => (ImportStatus::Succeeded, Some(report), None),
            ImportEnd::Failed(message) => (ImportStatus::Failed, None, Some(message)),
        };
        let expr = Expr::default()
            .name("#status", "status")
            .name("#error", "error")
            .value(
                ":status",
                serde_dynamo::to_attribute_value(status)
                    .map_err(|e| Error::internal("encode status", e))?,
            )
            .value(":at", n(at.0));
        let (update, expr) = match error {
            Some(message) => (
                "SET #status = :status, updated_at = :at, #error = :error",
                expr.value(":error", s(message)),
            ),
            None => (
                "SET #status = :status, updated_at = :at REMOVE #error",
                expr,
            ),
        };
        let (pk, sk) = (
            keys::data_source(tenant, &import.data_source_id),
            keys::import(&import.id),
        );
        // Its data source was deleted meanwhile: the report stays, the record is gone.
        let gone = || Error::internal("finish import", "import is gone");
        if let ImportEnd::Retry = end {
            return self
                .update_one(
                    "finish import",
                    (pk, sk),
                    update,
                    Some("attribute_exists(pk)"),
                    expr,
                )
                .await
                .map(|_| ())
                .map_err(|failure| failure.or_else(|_| gone()));
        }
        let event = Event::import_finished(tenant, at, import, status, report, error);
        #[derive(PartialEq)]
        enum Part {
            Import,
            Event,
        }
        let actions = Actions::new(&self.table)
            .update(
                Part::Import,
                pk,
                sk,
                update,
                Some("attribute_exists(pk) AND #status IN (:processing, :waiting)"),
                expr.value(":processing", s("PROCESSING"))
                    .value(":waiting", s("WAITING_UPLOAD")),
            )?
            .event(Part::Event, &event)?;
        match self.transact("finish import", actions).await {
            Ok(()) => Ok(()),
            Err(failure) => {
                let condition = failure.condition()?;
                match condition.stored(Part::Import) {
                    // Ended already, by this worker's earlier try or another's: its event is
                    // written, and not twice.
                    Some(_) => Ok(()),
                    None => Err(gone()),
                }
            }
        }
    }

    /// Stores the valid rows of an import as contacts of `source`, in file order, and answers
    /// each row's outcome. The data source gone midway is 404; what was stored stays counted.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), import = %import, rows = rows.len()))]
    pub async fn import_contacts(
        &self,
        tenant: &Tenant,
        source: &Id,
        import: &Id,
        rows: &[ParsedRow],
        at: Timestamp,
    ) -> Result<Vec<RowOutcome>, Error> {
        /// The actions of one transaction; a contact and its guard by the contact's place in it.
        #[derive(Clone, Copy, PartialEq)]
        enum Part {
            Head,
            Contact(usize),
            PhoneGuard(usize),
        }
        let mut outcomes = vec![RowOutcome::Stored; rows.len()];
        let shards = self.shards(tenant, source).await?;
        // The file's custom field names must fit the data source's, refused before any row.
        let mut known = self.field_names(tenant, source).await?;
        let brought: BTreeSet<&str> = rows
            .iter()
            .flat_map(|row| row.fields.custom_names())
            .collect();
        let new = brought
            .iter()
            .filter(|name| !known.contains(**name))
            .count();
        if known.len() + new > MAX_FIELD_NAMES {
            return Err(Error::invalid(format!(
                "the file would give dataSource {source} more than {MAX_FIELD_NAMES} custom field names ({} now, {new} new)",
                known.len()
            )));
        }
        let mut pace = write_cost::PartitionPace::new(self.import_units_per_second);
        for (chunk_index, chunk) in rows.chunks(CONTACTS_PER_TRANSACTION).enumerate() {
            let base = chunk_index * CONTACTS_PER_TRANSACTION;
            let mut pending: Vec<usize> = (0..chunk.len()).collect();
            while !pending.is_empty() {
                let contacts: Vec<Contact> = pending
                    .iter()
                    .map(|&i| Contact {
                        id: Id::new(),
                        data_source_id: source.clone(),
                        phone: chunk[i].phone.clone(),
                        fields: chunk[i].fields.clone(),
                        status: 0,
                        call_count: 0,
                        created_at: at,
                        updated_at: at,
                    })
                    .collect();
                let new_names: Vec<&str> = contacts
                    .iter()
                    .flat_map(|contact| contact.fields.custom_names())
                    .filter(|name| !known.contains(*name))
                    .collect::<BTreeSet<&str>>()
                    .into_iter()
                    .collect();
                let (add_names, names_fit, head_expr) = field_names_update(
                    &new_names,
                    Expr::default().value(":count", n(contacts.len())),
                    false,
                );
                let mut actions = Actions::new(&self.table).update(
                    Part::Head,
                    shards.home().to_owned(),
                    HEAD.to_owned(),
                    &format!("ADD contact_count :count, contacts_added :count{add_names}"),
                    Some(&format!("attribute_exists(pk){names_fit}")),
                    head_expr,
                )?;
                // The head's counter update, then each contact and its guard, by partition key.
                let mut units = vec![(
                    shards.home().to_owned(),
                    write_cost::write_units(HEAD_ITEM_BYTES, true),
                )];
                for (position, contact) in contacts.iter().enumerate() {
                    let absent = || Some(("attribute_not_exists(pk)", Expr::default()));
                    let item = Self::contact_item(&shards, contact)?;
                    let guard = Self::phone_guard(&shards, contact, Some(import));
                    for written in [&item, &guard] {
                        let key = string_attr(written, PK).unwrap_or_default().to_owned();
                        let cost = write_cost::write_units(write_cost::item_bytes(written), true);
                        match units.iter_mut().find(|(k, _)| *k == key) {
                            Some((_, total)) => *total += cost,
                            None => units.push((key, cost)),
                        }
                    }
                    actions = actions.put(Part::Contact(position), item, absent())?.put(
                        Part::PhoneGuard(position),
                        guard,
                        absent(),
                    )?;
                }
                // A cancelled transaction is billed too.
                pace.spend(&units).await;
                let busiest = units.iter().map(|(_, units)| *units).max().unwrap_or(0);
                self.reserve_import_units(shards.home(), busiest).await?;
                let condition = match self.transact("import contacts", actions).await {
                    Ok(()) => {
                        known.extend(new_names.iter().map(|name| (*name).to_owned()));
                        break;
                    }
                    Err(failure) => failure.condition()?,
                };
                if condition.failed(Part::Head) && condition.stored(Part::Head).is_some() {
                    // Filled by other writes since the file was checked.
                    return Err(too_many_field_names(source));
                }
                if condition.failed(Part::Head) {
                    return Err(Error::NotFound(format!("dataSource {source} not found")));
                }
                // Rows whose number is already guarded drop out; the rest are tried again.
                let mut still_pending = Vec::new();
                for (position, &i) in pending.iter().enumerate() {
                    let guard = Part::PhoneGuard(position);
                    if condition.failed(guard) {
                        outcomes[base + i] = match condition.stored(guard) {
                            Some(guard) if written_by(guard, import) => RowOutcome::Stored,
                            _ => RowOutcome::AlreadyExists,
                        };
                    } else {
                        still_pending.push(i);
                    }
                }
                if still_pending.len() == pending.len() {
                    return Err(Error::internal(
                        "import contacts",
                        "transaction refused without a cause",
                    ));
                }
                pending = still_pending;
            }
        }
        Ok(outcomes)
    }
}

impl Store {
    /// Takes `units` of this second's import budget of the data source whose partition is
    /// `home`, waiting for the next second while this one is spent (D8). Every import of one
    /// data source shares the budget, `IMPORT_WCU_PER_SECOND` on the busiest key a second: two
    /// imports at once ask no key for more than one would, wherever they run. One UpdateItem
    /// of a counter of the second (kept an hour) a transaction.
    async fn reserve_import_units(&self, home: &str, units: u64) -> Result<(), Error> {
        let pace = u64::from(self.import_units_per_second);
        loop {
            let now = Timestamp::now();
            let second = now.0.div_euclid(1000);
            let written = self
                .update_one(
                    "reserve import units",
                    (home.to_owned(), keys::import_pace(second)),
                    "ADD units :units SET expires_at = :expires",
                    // A second not yet used takes any one transaction, however large.
                    Some("attribute_not_exists(units) OR units <= :room"),
                    Expr::default()
                        .value(":units", n(units))
                        .value(":room", n(pace.saturating_sub(units)))
                        .value(":expires", n(second + 3_600)),
                )
                .await;
            if WriteFailure::took_effect(written)? {
                return Ok(());
            }
            let into_second = u64::try_from(now.0.rem_euclid(1000)).unwrap_or(0);
            tokio::time::sleep(std::time::Duration::from_millis(1000 - into_second + 1)).await;
        }
    }
}

fn written_by(guard: &Item, import: &Id) -> bool {
    string_attr(guard, "import_id") == Some(import.as_str())
}

//! The transactional outbox of domain events (D20). A transaction that commits a change worth an
//! event puts the event's item in the same transaction ([`Actions::event`]): a refused or failed
//! write leaves none, a committed one leaves exactly one, whatever happens to the function after
//! the commit. The table's stream carries each new outbox item to the publisher, which puts it on
//! the bus; the item itself lapses a day later (TTL). The one change that is many transactions, a
//! do-not-call file's import, puts its one event after them ([`super::Store::put_event`]).

use super::keys::{self, PK, SK};
use super::{n, s, Actions, Item};
use crate::aws::Dependency;
use crate::store::SendTo;
use outbound_model::error::Error;
use outbound_model::event::{Event, EventEntry};
use serde::Deserialize;

/// How long an outbox item is kept after its event: the stream keeps its record 24 hours too.
const KEEP_SECONDS: i64 = 24 * 3600;

/// The outbox item of `event`.
fn event_item(event: &Event) -> Item {
    let (pk, sk) = keys::event(&event.tenant, &event.id);
    Item::from([
        (PK.to_owned(), s(pk)),
        (SK.to_owned(), s(sk)),
        ("event_type".to_owned(), s(event.detail_type())),
        ("tenant".to_owned(), s(event.tenant.as_str())),
        ("detail".to_owned(), s(event.detail())),
        ("occurred_at".to_owned(), n(event.at.0)),
        ("expires_at".to_owned(), n(event.at.0 / 1000 + KEEP_SECONDS)),
    ])
}

impl<L> Actions<'_, L> {
    /// Puts `event` in the outbox as part of this transaction.
    pub(crate) fn event(self, label: L, event: &Event) -> Result<Self, Error> {
        self.put(label, event_item(event), None)
    }
}

impl super::Store {
    /// Puts `event` in the outbox on its own, after the writes it tells of: the one event of a
    /// change made by many transactions, which cannot ride on each of them (a do-not-call
    /// file's import, D25). A failure here leaves the change without its event.
    pub async fn put_event(&self, event: &Event) -> Result<(), Error> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(event_item(event)))
            .send_to(&self.backend)
            .await
            .map_err(|e| Error::dependency("put event", e))?;
        Ok(())
    }
}

/// Reads an item's image (from the Lambda event or the streams API, both through serde_dynamo);
/// `None` for an item that is not an outbox item.
pub fn outbox_entry(image: impl Into<serde_dynamo::Item>) -> Option<EventEntry> {
    #[derive(Deserialize)]
    struct Outbox {
        pk: String,
        sk: String,
        #[serde(flatten)]
        entry: EventEntry,
    }
    let Outbox { pk, sk, mut entry } = serde_dynamo::from_item(image).ok()?;
    if sk != keys::EVENT {
        return None;
    }
    entry.event_id = keys::event_id(&pk)?.to_owned();
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_model::event::{EventBody, ImportFinished};
    use outbound_model::import::ImportStatus;
    use outbound_model::{Id, Tenant, Timestamp};

    #[test]
    fn an_outbox_item_reads_back_as_its_entry_with_its_id() {
        let tenant = Tenant::parse("acme").unwrap();
        let event = Event::new(
            &tenant,
            Timestamp(1_700_000_000_000),
            EventBody::ImportFinished(ImportFinished {
                data_source_id: Id::new(),
                import_id: Id::new(),
                file_name: "leads.csv".into(),
                status: ImportStatus::Succeeded,
                import_count: 1,
                success_count: 1,
                fail_count: 0,
                error: None,
            }),
        );
        let entry = outbox_entry(event_item(&event)).unwrap();
        assert_eq!(entry.event_id, event.id.to_string());
        assert_eq!(entry.event_type, "ImportFinished");
        assert_eq!(entry.tenant, "acme");
        assert_eq!(entry.detail, event.detail());
        let mut other = event_item(&event);
        other.insert(SK.to_owned(), s("HEAD"));
        assert_eq!(outbox_entry(other), None, "not an outbox item");
    }
}

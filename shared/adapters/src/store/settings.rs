//! A tenant's settings record (D14, D22), in the tenant partition; each change with its audit
//! event (D25), each write conditioned on the record's revision as read.

use super::keys;
use super::{from_item, s, string_attr, Actions, Expr, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::numbers::Country;
use outbound_model::settings::{Change, SettingsChange, TenantSettings};
use outbound_model::{Tenant, Timestamp};
use serde::Serialize;

fn value<T: Serialize>(value: &T) -> Result<AttributeValue, Error> {
    serde_dynamo::to_attribute_value(value).map_err(|e| Error::internal("encode settings", e))
}

impl Store {
    /// The tenant's settings; every field unset when it never set any.
    pub async fn settings(&self, tenant: &Tenant) -> Result<TenantSettings, Error> {
        self.get_item(keys::tenant(tenant), keys::SETTINGS.to_owned())
            .await?
            .map(from_item)
            .transpose()
            .map(Option::unwrap_or_default)
    }

    /// The country a data source's numbers written without `+` are read in (D14): its own, else
    /// the tenant's. One BatchGetItem of the data source's head and the tenant's settings; 404
    /// when the data source does not exist.
    pub async fn numbering_country(
        &self,
        tenant: &Tenant,
        source: &outbound_model::Id,
    ) -> Result<Option<Country>, Error> {
        let head = keys::data_source(tenant, source);
        let key = |pk: String, sk: &str| -> crate::store::Item {
            [(keys::PK.to_owned(), s(pk)), (keys::SK.to_owned(), s(sk))].into()
        };
        let items = self
            .batch_get(
                vec![
                    key(head.clone(), keys::HEAD),
                    key(keys::tenant(tenant), keys::SETTINGS),
                ],
                "pk, default_country",
            )
            .await?;
        if !items
            .iter()
            .any(|item| string_attr(item, keys::PK) == Some(head.as_str()))
        {
            return Err(super::datasource::not_found(source));
        }
        let country = |own: bool| {
            items
                .iter()
                .find(|item| (string_attr(item, keys::PK) == Some(head.as_str())) == own)
                .and_then(|item| string_attr(item, "default_country"))
                .and_then(|code| Country::parse("defaultCountry", code).ok())
        };
        Ok(country(true).or_else(|| country(false)))
    }

    /// The tenant's settings and the revision they were read at, read consistently.
    pub(crate) async fn settings_revised(
        &self,
        tenant: &Tenant,
    ) -> Result<(TenantSettings, Revision), Error> {
        let stored = self
            .get_item(keys::tenant(tenant), keys::SETTINGS.to_owned())
            .await?;
        let revision = Revision(
            stored
                .as_ref()
                .and_then(|item| item.get(REVISION))
                .and_then(|value| value.as_n().ok())
                .and_then(|raw| raw.parse().ok()),
        );
        let settings = stored.map(from_item).transpose()?.unwrap_or_default();
        Ok((settings, revision))
    }

    /// Applies a change (fields not named keep their value) and puts its audit event (D25) in
    /// the same transaction, so the event exists exactly when the change does, and answers the
    /// settings it leaves. A transaction returns no item, so the settings are read first and the
    /// transaction is conditioned on their revision being as read: a default is set only while
    /// the operator's assignment still holds it (D22). A change that lost a race to another
    /// (the tenant's, or the operator's) reads again, a few times, then is 503 with nothing
    /// changed.
    pub async fn update_settings(
        &self,
        tenant: &Tenant,
        change: &SettingsChange,
        now: Timestamp,
        event: &Event,
    ) -> Result<TenantSettings, Error> {
        let mut set = vec!["updated_at = :now".to_owned()];
        if change.moves_windows() {
            // Contacts parked outside their window are judged again (D24); other changes leave
            // them be.
            set.push("rules_at = :now".to_owned());
        }
        let mut remove = Vec::new();
        let mut expr = Expr::default().value(":now", value(&now)?);
        let mut field = |name: &str, change: Result<Option<Option<AttributeValue>>, Error>| {
            match change? {
                None => {}
                Some(None) => remove.push(name.to_owned()),
                Some(Some(stored)) => {
                    set.push(format!("{name} = :{name}"));
                    expr = std::mem::take(&mut expr).value(&format!(":{name}"), stored);
                }
            }
            Ok::<(), Error>(())
        };
        fn encoded<T: Serialize>(
            change: &Change<T>,
        ) -> Result<Option<Option<AttributeValue>>, Error> {
            Ok(match change {
                Change::Keep => None,
                Change::Clear => Some(None),
                Change::Set(v) => Some(Some(value(v)?)),
            })
        }
        field("default_country", encoded(&change.default_country))?;
        field("calling_hours", encoded(&change.calling_hours))?;
        field("frequency_cap", encoded(&change.frequency_cap))?;
        field("default_caller_id", encoded(&change.default_caller_id))?;
        field(
            "default_contact_flow_id",
            encoded(&change.default_contact_flow_id),
        )?;
        #[derive(Clone, Copy, PartialEq)]
        enum Part {
            Settings,
            Event,
        }
        for attempt in 0..UPDATE_TRIES {
            let (before, revision) = self.settings_revised(tenant).await?;
            if let Some(refused) = change.refused(&before) {
                return Err(refused);
            }
            let actions = Actions::new(&self.table)
                .settings_at(
                    Part::Settings,
                    tenant,
                    revision,
                    &set,
                    &remove,
                    expr.clone(),
                )?
                .event(Part::Event, event)?;
            match self.transact("update settings", actions).await {
                Ok(()) => return Ok(before.changed_by(change, now)),
                // Another change came between the read and the write: read again.
                Err(failure) => {
                    failure.condition()?;
                    tokio::time::sleep(super::backoff(attempt)).await;
                }
            }
        }
        Err(Error::unavailable(
            "update settings",
            "the settings kept changing while they were updated",
        ))
    }
}

/// The attribute of the settings item that every write of it moves: the tenant's changes, the
/// operator's assignments and the release of a number (D22) are each conditioned on it being as
/// read, so none is made on settings another has changed meanwhile.
const REVISION: &str = "revision";

/// The revision of a tenant's settings as read; `None` for settings never written with one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Revision(Option<u64>);

impl<L> Actions<'_, L> {
    /// The update of the tenant's settings that `SET`s `set` and `REMOVE`s `remove` (each
    /// `name = :value`, with `expr`'s values) and moves the revision on, on condition that it is
    /// still `revision`.
    pub(crate) fn settings_at(
        self,
        label: L,
        tenant: &Tenant,
        revision: Revision,
        set: &[String],
        remove: &[String],
        expr: Expr,
    ) -> Result<Self, Error> {
        let (update, condition, expr) = revision.update(set, remove, expr);
        self.update(
            label,
            keys::tenant(tenant),
            keys::SETTINGS.to_owned(),
            &update,
            Some(condition),
            expr,
        )
    }
}

impl Revision {
    /// The update expression, condition and values of [`Actions::settings_at`].
    fn update(self, set: &[String], remove: &[String], expr: Expr) -> (String, &'static str, Expr) {
        let next = self.0.map_or(1, |seen| seen + 1);
        let mut update = format!("SET {REVISION} = :revision");
        for clause in set {
            update.push_str(", ");
            update.push_str(clause);
        }
        if !remove.is_empty() {
            update.push_str(&format!(" REMOVE {}", remove.join(", ")));
        }
        let expr = expr.value(":revision", super::n(next));
        match self.0 {
            Some(seen) => (
                update,
                "revision = :seen_revision",
                expr.value(":seen_revision", super::n(seen)),
            ),
            None => (update, "attribute_not_exists(revision)", expr),
        }
    }
}

/// Reads and tries of one settings change whose settings keep changing under it.
const UPDATE_TRIES: u32 = 5;

//! A task's history (D31) as stored: in a partition of its own, the snapshots of its counters the
//! tick keeps ([`Store::keep_snapshot`]), each expiring by its grain, and its changes of state,
//! each written in the transaction of the change ([`state_change_item`]).

use super::keys;
use super::{from_item, n, s, string_attr, to_item, Item, Store};
use crate::aws::Dependency;
use crate::store::SendTo;
use outbound_model::error::Error;
use outbound_model::history::{next_snapshot, Counts, Snapshot, StateChange};
use outbound_model::{Id, Task, Tenant, Timestamp};

/// The item of a change of `task`'s state, put in the transaction that makes it.
pub(crate) fn state_change_item(
    tenant: &Tenant,
    task: &Id,
    change: &StateChange,
) -> Result<Item, Error> {
    to_item(
        change,
        [
            (keys::PK, keys::task_history(tenant, task)),
            (keys::SK, keys::history_state(change.at)),
        ],
    )
}

/// A task's history as stored: its snapshots and its changes of state, each oldest first.
pub struct StoredHistory {
    pub snapshots: Vec<Snapshot>,
    pub states: Vec<StateChange>,
}

impl Store {
    /// Keeps a snapshot of `task`'s counters as read at `now`, unless they are what its newest
    /// snapshot holds: one Query of at most two items, and one PutItem of about 150 bytes (1 WCU)
    /// when they moved. Idempotent: a snapshot sent again in the same minute replaces it.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), task = %task.id))]
    pub async fn keep_snapshot(
        &self,
        tenant: &Tenant,
        task: &Task,
        now: Timestamp,
    ) -> Result<Option<Snapshot>, Error> {
        let pk = keys::task_history(tenant, &task.id);
        let newest = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":prefix", s(keys::HISTORY_SNAPSHOT_PREFIX))
                        .scan_index_forward(false)
                },
                Some(2),
            )
            .await?
            .into_iter()
            .map(from_item::<Snapshot>)
            .collect::<Result<Vec<_>, _>>()?;
        let Some(next) = next_snapshot(&newest, Counts::from(&task.counters), now) else {
            return Ok(None);
        };
        let mut item = to_item(
            &next,
            [
                (keys::PK, pk),
                (keys::SK, keys::history_snapshot(next.minute())),
            ],
        )?;
        if let Some(expires) = next.grain.expires(next.at) {
            item.insert("expires_at".to_owned(), n(expires.0 / 1000));
        }
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send_to(&self.backend)
            .await
            .map_err(|e| Error::dependency("keep a task's snapshot", e))?;
        Ok(Some(next))
    }

    /// Everything task `id`'s history holds (a few thousand small items at most, D31).
    pub async fn history(&self, tenant: &Tenant, id: &Id) -> Result<StoredHistory, Error> {
        let pk = keys::task_history(tenant, id);
        let items = self
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk")
                        .expression_attribute_values(":pk", s(&pk))
                },
                None,
            )
            .await?;
        let mut history = StoredHistory {
            snapshots: Vec::new(),
            states: Vec::new(),
        };
        for item in items {
            let sk = string_attr(&item, keys::SK).unwrap_or_default();
            if sk.starts_with(keys::HISTORY_SNAPSHOT_PREFIX) {
                history.snapshots.push(from_item(item)?);
            } else if sk.starts_with(keys::HISTORY_STATE_PREFIX) {
                history.states.push(from_item(item)?);
            }
        }
        Ok(history)
    }
}

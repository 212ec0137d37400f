//! Reclaim jobs (D11): a partition whose owner record (a data source or a task) was deleted,
//! to be emptied in the background.

use super::{Id, Tenant};
use serde::{Deserialize, Serialize};

/// A partition whose owner record is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ReclaimJob {
    DataSource {
        tenant: Tenant,
        id: Id,
        /// The partitions its contacts were spread over (its head, which said so, is gone);
        /// jobs queued before sharding name none: one.
        #[serde(default = "one", rename = "contactShards")]
        contact_shards: u32,
    },
    Task {
        tenant: Tenant,
        id: Id,
    },
}

fn one() -> u32 {
    1
}

impl ReclaimJob {
    /// The kind of owner, its tenant and its id.
    pub fn parts(&self) -> (&'static str, &Tenant, &Id) {
        match self {
            ReclaimJob::DataSource { tenant, id, .. } => ("dataSource", tenant, id),
            ReclaimJob::Task { tenant, id } => ("task", tenant, id),
        }
    }
}

//! The dial queue's messages: a task's dial run, a recall to apply, a call to reconcile (D12,
//! D13), a pace of the agent-paced tasks (D30), a tenant's do-not-call guards to copy (D16);
//! and the list of contacts a large recall keeps in S3 while its job applies it.

use crate::{Id, Tenant, Timestamp};
use serde::{Deserialize, Serialize};

/// How long after a large recall's last sign of progress its job counts as lost and is sent
/// again (D12): by the tick for a running task, by the next recall for any (D28).
pub const RECALL_JOB_LOST_AFTER_MILLIS: i64 = 60_000;

/// A message on the dial queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum DialJob {
    /// Call due contacts of a task until it has `budget` calls in flight, its share of the
    /// service's (0: only see whether it is complete).
    #[serde(rename_all = "camelCase")]
    Dial {
        tenant: Tenant,
        task_id: Id,
        budget: u32,
        /// An agent-paced task's run (D30): when its budget was paced against its queue's
        /// agents. Delivered after the next pace slot (its handler died and SQS sent it again),
        /// the budget is from a reading that has passed, and the run places nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        paced_at: Option<Timestamp>,
    },
    /// Apply a committed recall to every contact it names (D12).
    #[serde(rename_all = "camelCase")]
    Recall {
        tenant: Tenant,
        task_id: Id,
        recall_id: Id,
    },
    /// Find out what became of a call whose outcome never came.
    #[serde(rename_all = "camelCase")]
    Reconcile {
        tenant: Tenant,
        task_id: Id,
        contact_id: Id,
        attempt: u32,
    },
    /// Pace the agent-paced tasks again between ticks (D30): their queues read anew, a dial
    /// run each at once. The tick queues one at each later slot of its minute.
    Pace,
    /// Copy a tenant's do-not-call guards stored in its partition to the claim's own keys
    /// (D16), a bounded part; the tick queues one each minute until they all are.
    #[serde(rename_all = "camelCase")]
    GuardNumbers { tenant: Tenant },
}

/// A large recall's contacts, stored while its job applies them (D12).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallManifest {
    pub ids: Vec<Id>,
    pub priority: u8,
    pub at: Timestamp,
}

//! Background reclaim of storage (D11): once a data source or task is deleted, its partition
//! (contacts, phone guards, imports, per-task contact state) is unreachable; a job on the
//! reclaim queue deletes those items, whatever their number, without holding up the request.

use crate::error::Error;
use crate::model::reclaim::ReclaimJob;
use crate::model::Timestamp;
use crate::queue::Queue;
use crate::store::{keys, Store};

/// How long a reclaim intent may wait for its job before the sweep queues it again.
pub const RECLAIM_GRACE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Queues a job. A failure here is logged rather than failing a delete that has already
/// happened: the job's intent, stored with the delete, is queued again by [`sweep`].
pub async fn enqueue(queue: &Queue<ReclaimJob>, job: &ReclaimJob) {
    if let Err(error) = queue.send(job, 0).await {
        tracing::error!(?job, %error, "reclaim job could not be queued; items stay unreachable");
    }
}

/// Deletes every item of the job's partition, after checking that its owner is really gone.
/// Answers how many items were deleted. Safe to run twice.
#[tracing::instrument(skip(store))]
pub async fn run(store: &Store, job: &ReclaimJob) -> Result<usize, Error> {
    if store.reclaim_owner_exists(job).await? {
        tracing::warn!("owner still exists; nothing reclaimed");
        return Ok(0);
    }
    let mut deleted = 0;
    loop {
        let leftovers = store.reclaim_leftovers(job).await?;
        if leftovers.is_empty() {
            store.finish_reclaim(job).await?;
            tracing::info!(deleted, "partition reclaimed");
            return Ok(deleted);
        }
        if let ReclaimJob::Task { tenant, id } = job {
            // A call of a stopped task may still be in flight: its place among the service's
            // calls in flight is given back here or by its outcome, whichever comes first (D13).
            for (contact, attempt) in leftovers.iter().filter_map(|l| l.call.as_ref()) {
                store
                    .drop_orphan_call(tenant, id, contact, *attempt)
                    .await?;
            }
        }
        store.delete_leftovers(&leftovers).await?;
        deleted += leftovers.len();
    }
}

/// Queues again every reclaim whose intent is older than `before`: its job was never queued
/// (the queue was unreachable after the delete) or it failed its retries. Answers how many.
pub async fn sweep(
    store: &Store,
    queue: &Queue<ReclaimJob>,
    before: Timestamp,
) -> Result<usize, Error> {
    let mut queued = 0;
    for shard in 0..keys::SHARDS {
        for job in store.stale_reclaims(shard, before).await? {
            enqueue(queue, &job).await;
            queued += 1;
        }
    }
    if queued > 0 {
        tracing::warn!(queued, "reclaims queued again");
    }
    Ok(queued)
}

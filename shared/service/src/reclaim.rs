//! Background reclaim of storage (D11): once a data source or task is deleted, its partition
//! (contacts, phone guards, imports, per-task contact state) is unreachable; a job on the
//! reclaim queue deletes those items, whatever their number, without holding up the request.

use outbound_adapters::queue::Queue;
use outbound_adapters::store::{keys, Store};
use outbound_model::error::Error;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::Timestamp;

/// How long a reclaim intent may wait for its job before the sweep queues it again.
pub const RECLAIM_GRACE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Queues a job. A failure here is logged rather than failing a delete that has already
/// happened: the job's intent, stored with the delete, is queued again by [`sweep`].
pub async fn enqueue(queue: &Queue<ReclaimJob>, job: &ReclaimJob) {
    if let Err(error) = queue.send(job, 0).await {
        tracing::error!(?job, %error, "reclaim job could not be queued; items stay unreachable");
    }
}

/// Deletes every item of the job's partition, after checking that its owner is really gone,
/// except the per-contact states of calls still in flight. Answers how many items were deleted.
/// Safe to run twice; run again (by the sweep) until the partition is empty.
#[tracing::instrument(skip(store))]
pub async fn run(store: &Store, job: &ReclaimJob) -> Result<usize, Error> {
    if store.reclaim_owner_exists(job).await? {
        tracing::warn!("owner still exists; nothing reclaimed");
        return Ok(0);
    }
    let mut deleted = 0;
    loop {
        let leftovers = store.reclaim_leftovers(job).await?;
        // A call of a stopped task may still be connected: its item, and its place among the
        // service's calls in flight, stay until its outcome or its reconcile ends it (D13), so
        // the service's cap holds. The intent stays too, and the sweep runs this job again.
        let (calls, done): (Vec<_>, Vec<_>) = leftovers.into_iter().partition(|l| l.call.is_some());
        if done.is_empty() {
            if calls.is_empty() {
                store.finish_reclaim(job).await?;
                tracing::info!(deleted, "partition reclaimed");
            } else {
                tracing::info!(
                    deleted,
                    in_flight = calls.len(),
                    "calls still in flight; reclaimed again later"
                );
            }
            return Ok(deleted);
        }
        store.delete_leftovers(&done).await?;
        deleted += done.len();
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
    for shard in 0..keys::INDEX_PARTITIONS {
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

//! Background reclaim of storage (D11): once a data source or task is deleted, its partition
//! (contacts, phone guards, imports, per-task contact state) is unreachable; a job on the
//! reclaim queue deletes those items, whatever their number, without holding up the request.

use crate::auth::Tenant;
use crate::error::Error;
use crate::model::Id;
use crate::model::Timestamp;
use crate::store::{keys, n, s, Item, Store};
use aws_sdk_dynamodb::types::{DeleteRequest, WriteRequest};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A partition whose owner record is gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ReclaimJob {
    DataSource { tenant: String, id: Id },
    Task { tenant: String, id: Id },
}

impl ReclaimJob {
    fn parts(&self) -> (&'static str, &str, &Id) {
        match self {
            ReclaimJob::DataSource { tenant, id } => ("dataSource", tenant, id),
            ReclaimJob::Task { tenant, id } => ("task", tenant, id),
        }
    }

    /// The key of this job's intent: sharded by the partition it reclaims.
    fn intent_key(&self) -> (String, String) {
        let (kind, tenant, id) = self.parts();
        let sk = format!("{kind}#{tenant}#{id}");
        (keys::reclaim_shard(keys::shard_of(&sk)), sk)
    }

    /// The intent item written in the same transaction as the delete (D11).
    pub(crate) fn intent_item(&self, at: Timestamp) -> Result<Item, Error> {
        let (pk, sk) = self.intent_key();
        let mut item: Item =
            serde_dynamo::to_item(self).map_err(|e| Error::internal("encode reclaim intent", e))?;
        item.insert(keys::PK.to_owned(), s(pk));
        item.insert(keys::SK.to_owned(), s(sk));
        item.insert("created_at".to_owned(), n(at.0));
        Ok(item)
    }
}

/// Sends reclaim jobs to their queue.
#[derive(Clone, Debug)]
pub struct ReclaimQueue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

impl ReclaimQueue {
    pub fn new(sqs: aws_sdk_sqs::Client, url: impl Into<String>) -> Self {
        ReclaimQueue {
            sqs,
            url: url.into(),
        }
    }

    /// Queues a job. A failure here is logged rather than failing a delete that has already
    /// happened: the job's intent, stored with the delete, is queued again by [`sweep`].
    pub async fn enqueue(&self, job: ReclaimJob) {
        let body = match serde_json::to_string(&job) {
            Ok(body) => body,
            Err(error) => {
                tracing::error!(?job, %error, "reclaim job could not be encoded");
                return;
            }
        };
        if let Err(error) = self
            .sqs
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .send()
            .await
        {
            let error = aws_sdk_sqs::Error::from(error);
            tracing::error!(?job, error = %error, "reclaim job could not be queued; items stay unreachable");
        }
    }
}

/// Deletes every item of the job's partition, after checking that its owner is really gone.
/// Answers how many items were deleted. Safe to run twice.
#[tracing::instrument(skip(store))]
pub async fn run(store: &Store, job: &ReclaimJob) -> Result<usize, Error> {
    let (partition, owner) = match job {
        ReclaimJob::DataSource { tenant, id } => {
            let pk = keys::data_source(&Tenant::parse(tenant)?, id);
            (pk.clone(), (pk, keys::HEAD.to_owned()))
        }
        ReclaimJob::Task { tenant, id } => {
            let tenant = Tenant::parse(tenant)?;
            let owner = (keys::tenant(&tenant), keys::task(id));
            (keys::task_contacts(&tenant, id), owner)
        }
    };
    if store.get_item(owner.0, owner.1).await?.is_some() {
        tracing::warn!("owner still exists; nothing reclaimed");
        return Ok(0);
    }
    let mut deleted = 0;
    loop {
        let mut keys = store
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk")
                        .expression_attribute_values(":pk", s(&partition))
                        .projection_expression("pk, sk, in_call")
                },
                Some(1000),
            )
            .await?;
        if keys.is_empty() {
            let (pk, sk) = job.intent_key();
            store.delete_item(pk, sk).await?;
            tracing::info!(deleted, "partition reclaimed");
            return Ok(deleted);
        }
        if let ReclaimJob::Task { tenant, id } = job {
            // A call of a stopped task may still be in flight: its place among the service's
            // calls in flight is given back here or by its outcome, whichever comes first (D13).
            let tenant = Tenant::parse(tenant)?;
            for key in keys.iter_mut() {
                let Some(attempt) = key
                    .remove("in_call")
                    .and_then(|a| a.as_n().ok()?.parse().ok())
                else {
                    continue;
                };
                let contact = crate::store::string_attr(key, keys::SK)
                    .and_then(|sk| sk.strip_prefix(keys::CONTACT_PREFIX))
                    .and_then(Id::parse);
                if let Some(contact) = contact {
                    store
                        .drop_orphan_call(&tenant, id, &contact, attempt)
                        .await?;
                }
            }
        }
        for chunk in keys.chunks(25) {
            let requests = chunk
                .iter()
                .map(|key| {
                    let delete = DeleteRequest::builder()
                        .set_key(Some(key.clone()))
                        .build()
                        .map_err(|e| Error::internal("build delete request", e))?;
                    Ok(WriteRequest::builder().delete_request(delete).build())
                })
                .collect::<Result<Vec<_>, Error>>()?;
            store.batch_write(requests).await?;
            deleted += chunk.len();
        }
    }
}

/// Queues again every reclaim whose intent is older than `before`: its job was never queued
/// (the queue was unreachable after the delete) or it failed its retries. Answers how many.
pub async fn sweep(store: &Store, queue: &ReclaimQueue, before: Timestamp) -> Result<usize, Error> {
    let mut queued = 0;
    for shard in 0..keys::SHARDS {
        let pk = keys::reclaim_shard(shard);
        let items = store
            .query_all(
                |query| {
                    query
                        .key_condition_expression("pk = :pk")
                        .filter_expression("created_at < :before")
                        .expression_attribute_values(":pk", s(&pk))
                        .expression_attribute_values(":before", n(before.0))
                },
                None,
            )
            .await?;
        for item in items {
            let job: ReclaimJob = crate::store::from_item(item)?;
            queue.enqueue(job).await;
            queued += 1;
        }
    }
    if queued > 0 {
        tracing::warn!(queued, "reclaims queued again");
    }
    Ok(queued)
}

impl Store {
    /// Deletes one item, unconditionally.
    pub(crate) async fn delete_item(&self, pk: String, sk: String) -> Result<(), Error> {
        self.client
            .delete_item()
            .table_name(&self.table)
            .key(keys::PK, s(pk))
            .key(keys::SK, s(sk))
            .send()
            .await
            .map_err(|e| Error::dependency("delete item", e))?;
        Ok(())
    }

    /// BatchWriteItem of at most 25 requests, resending unprocessed ones with backoff.
    pub(crate) async fn batch_write(&self, mut requests: Vec<WriteRequest>) -> Result<(), Error> {
        for attempt in 0..8u32 {
            let output = self
                .client
                .batch_write_item()
                .request_items(&self.table, requests)
                .send()
                .await
                .map_err(|e| Error::dependency("batch write", e))?;
            requests = output
                .unprocessed_items
                .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                .unwrap_or_default();
            if requests.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(25 << attempt)).await;
        }
        Err(Error::internal(
            "batch write",
            "unprocessed items after 8 attempts",
        ))
    }
}

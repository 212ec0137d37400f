//! The reclaim's reads and writes (D11): the intent stored with a delete, the items of an
//! orphaned partition, and deleting them in batches.

use super::keys::{self, PK, SK};
use super::shards::ContactShards;
use super::{n, s, Item, Store};
use crate::aws::Dependency;
use crate::store::SendTo;
use aws_sdk_dynamodb::types::{DeleteRequest, WriteRequest};
use outbound_model::error::Error;
use outbound_model::reclaim::ReclaimJob;
use outbound_model::{Id, Timestamp};

/// The key of a job's intent: sharded by the partition it reclaims.
fn intent_key(job: &ReclaimJob) -> (String, String) {
    let (kind, tenant, id) = job.parts();
    let sk = format!("{kind}#{tenant}#{id}");
    (
        keys::reclaim_partition(keys::index_partition_of(&sk, keys::INDEX_PARTITIONS)),
        sk,
    )
}

/// The intent item written in the same transaction as the delete.
pub(crate) fn intent_item(job: &ReclaimJob, at: Timestamp) -> Result<Item, Error> {
    let (pk, sk) = intent_key(job);
    let mut item: Item =
        serde_dynamo::to_item(job).map_err(|e| Error::internal("encode reclaim intent", e))?;
    item.insert(PK.to_owned(), s(pk));
    item.insert(SK.to_owned(), s(sk));
    item.insert("created_at".to_owned(), n(at.0));
    Ok(item)
}

/// The partitions a job empties, and the key of the owner that must be gone first.
fn partitions_of(job: &ReclaimJob) -> (Vec<String>, (String, String)) {
    match job {
        ReclaimJob::DataSource {
            tenant,
            id,
            contact_shards,
        } => {
            let shards = ContactShards::new(tenant, id, *contact_shards);
            let owner = (shards.home().to_owned(), keys::HEAD.to_owned());
            (shards.partitions().collect(), owner)
        }
        ReclaimJob::Task { tenant, id } => {
            let owner = (keys::tenant(tenant), keys::task(id));
            (
                vec![
                    keys::task_contacts(tenant, id),
                    keys::task_history(tenant, id),
                ],
                owner,
            )
        }
    }
}

/// One item left in an orphaned partition: its key, and the attempt of a call still in flight
/// from it (per-task contact state only).
pub struct Leftover {
    pub key: Item,
    pub call: Option<(Id, u32)>,
}

impl Store {
    /// Whether the record owning the job's partition still exists.
    pub async fn reclaim_owner_exists(&self, job: &ReclaimJob) -> Result<bool, Error> {
        let (_, (pk, sk)) = partitions_of(job);
        Ok(self.get_item(pk, sk).await?.is_some())
    }

    /// Up to 1,000 items still in the job's partitions.
    pub async fn reclaim_leftovers(&self, job: &ReclaimJob) -> Result<Vec<Leftover>, Error> {
        const MOST: usize = 1000;
        let (partitions, _) = partitions_of(job);
        let mut keys = Vec::new();
        for partition in partitions {
            if keys.len() >= MOST {
                break;
            }
            keys.extend(
                self.query_all(
                    |query| {
                        query
                            .key_condition_expression("pk = :pk")
                            .expression_attribute_values(":pk", s(&partition))
                            .projection_expression("pk, sk, in_call")
                    },
                    Some(MOST - keys.len()),
                )
                .await?,
            );
        }
        Ok(keys
            .into_iter()
            .map(|mut key| {
                let attempt = key
                    .remove("in_call")
                    .and_then(|a| a.as_n().ok()?.parse().ok());
                let contact = super::string_attr(&key, SK)
                    .and_then(|sk| sk.strip_prefix(keys::CONTACT_PREFIX))
                    .and_then(Id::parse);
                let call = contact.zip(attempt);
                Leftover { key, call }
            })
            .collect())
    }

    /// Deletes the given items, 25 a request.
    pub async fn delete_leftovers(&self, leftovers: &[Leftover]) -> Result<(), Error> {
        for chunk in leftovers.chunks(25) {
            let requests = chunk
                .iter()
                .map(|leftover| {
                    let delete = DeleteRequest::builder()
                        .set_key(Some(leftover.key.clone()))
                        .build()
                        .map_err(|e| Error::internal("build delete request", e))?;
                    Ok(WriteRequest::builder().delete_request(delete).build())
                })
                .collect::<Result<Vec<_>, Error>>()?;
            self.batch_write(requests).await?;
        }
        Ok(())
    }

    /// Deletes the job's intent: its partition is empty.
    pub async fn finish_reclaim(&self, job: &ReclaimJob) -> Result<(), Error> {
        let (pk, sk) = intent_key(job);
        self.delete_item(pk, sk).await
    }

    /// The reclaims of intent shard `shard` stored before `before`.
    pub async fn stale_reclaims(
        &self,
        shard: u32,
        before: Timestamp,
    ) -> Result<Vec<ReclaimJob>, Error> {
        let pk = keys::reclaim_partition(shard);
        let items = self
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
        items.into_iter().map(super::from_item).collect()
    }

    /// Deletes one item, unconditionally.
    pub(crate) async fn delete_item(&self, pk: String, sk: String) -> Result<(), Error> {
        self.client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .send_to(&self.backend)
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
                .send_to(&self.backend)
                .await
                .map_err(|e| Error::dependency("batch write", e))?;
            requests = output
                .unprocessed_items
                .and_then(|mut unprocessed| unprocessed.remove(&self.table))
                .unwrap_or_default();
            if requests.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(super::backoff(attempt)).await;
        }
        Err(Error::internal(
            "batch write",
            "unprocessed items after 8 attempts",
        ))
    }
}

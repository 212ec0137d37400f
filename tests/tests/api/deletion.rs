//! Data source deletion (D11): the data source and its contacts disappear at once for every
//! endpoint, the name is free again at once, and a job on the reclaim queue deletes every stored
//! item of the partition, but never one whose data source still exists. The reclaim's jobs and
//! sweep run here as the reclaim function runs them (`Function::Reclaim`): what they ask of AWS
//! is that function's.

use crate::support::{contact_op, TestApi};
use outbound_adapters::aws::actions::Function;
use outbound_model::reclaim::ReclaimJob;
use outbound_service::reclaim;
use serde_json::json;

/// More contacts than one batch write (25) holds.
const CONTACTS: usize = 30;

/// A data source of acme with `CONTACTS` contacts; answers its id and one contact id.
async fn filled(api: &TestApi, name: &str) -> (String, String) {
    let source = api.data_source("acme", name).await;
    let mut contact = String::new();
    for i in 0..CONTACTS {
        contact = api
            .contact("acme", &source, &format!("1390000{i:04}"))
            .await;
    }
    (source, contact)
}

#[tokio::test]
async fn deleted_data_source_is_gone_at_once_everywhere() {
    let api = TestApi::start().await;
    let (source, contact) = filled(&api, "Doomed").await;
    let deleted = api
        .post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await;
    assert_eq!(deleted.ok(), &serde_json::Value::Null);

    let missing = format!("dataSource {source} not found");
    api.detail("acme", &source).await.err(404, &missing);
    api.contacts("acme", &source, "").await.err(404, &missing);
    api.contacts("acme", &source, "phoneNumber=139")
        .await
        .err(404, &missing);
    let refused = [
        ("/api/dataSource/delete".to_owned(), json!({"id": source})),
        (
            "/api/dataSource/update".to_owned(),
            json!({"id": source, "dataSourceDesc": "x"}),
        ),
        (
            contact_op(&source, "add"),
            json!({"phoneNumber": "13800138000"}),
        ),
        // A number the deleted data source held: its phone guard is not yet reclaimed.
        (
            contact_op(&source, "add"),
            json!({"phoneNumber": "13900000000"}),
        ),
        (
            contact_op(&source, "update"),
            json!({"contactId": contact, "customerName": "x"}),
        ),
        (contact_op(&source, "delete"), json!({"contactId": contact})),
    ];
    for (path, body) in refused {
        api.post("acme", &path, body).await.err(404, &missing);
    }
    assert_eq!(api.sources("acme", "").await.ok()["total"], 0);

    // The name is free at once, and the new data source starts empty.
    let again = api.data_source("acme", "Doomed").await;
    assert_ne!(again, source);
    assert_eq!(api.detail("acme", &again).await.ok()["contactCount"], 0);
    api.contact("acme", &again, "13900000000").await;
}

#[tokio::test]
async fn the_reclaim_job_deletes_every_item_of_the_partition() {
    let api = TestApi::start().await;
    let (source, _) = filled(&api, "Reclaimed").await;
    let (kept, _) = filled(&api, "Kept").await;
    // The head, then each contact and its phone guard.
    let stored = 1 + 2 * CONTACTS;
    assert_eq!(api.partition_len("acme", &source).await, stored);

    api.post("acme", "/api/dataSource/delete", json!({"id": source}))
        .await
        .ok();
    assert_eq!(api.partition_len("acme", &source).await, stored - 1);
    let jobs = api.reclaim_jobs().await;
    let expected = ReclaimJob::DataSource {
        tenant: crate::support::tenant("acme"),
        id: outbound_model::Id::parse(&source).unwrap(),
        contact_shards: outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS,
    };
    assert_eq!(jobs, vec![expected.clone()]);

    let deleted = Function::Reclaim
        .scope(reclaim::run(&api.store, &expected))
        .await
        .unwrap();
    assert_eq!(deleted, stored - 1);
    assert_eq!(api.partition_len("acme", &source).await, 0);
    // Running the same job again (a redelivered message) finds nothing to do.
    assert_eq!(
        Function::Reclaim
            .scope(reclaim::run(&api.store, &expected))
            .await
            .unwrap(),
        0
    );

    assert_eq!(api.partition_len("acme", &kept).await, stored);
    assert_eq!(
        api.contacts("acme", &kept, "").await.ok()["total"],
        CONTACTS
    );
}

#[tokio::test]
async fn reclaim_refuses_a_partition_whose_data_source_exists() {
    let api = TestApi::start().await;
    let (source, _) = filled(&api, "Alive").await;
    let before = api.snapshot().await;
    let job = ReclaimJob::DataSource {
        tenant: crate::support::tenant("acme"),
        id: outbound_model::Id::parse(&source).unwrap(),
        contact_shards: outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS,
    };
    assert_eq!(
        Function::Reclaim
            .scope(reclaim::run(&api.store, &job))
            .await
            .unwrap(),
        0
    );
    assert_eq!(api.snapshot().await, before);
    assert_eq!(
        api.contacts("acme", &source, "").await.ok()["total"],
        CONTACTS
    );
    assert!(
        api.reclaim_jobs().await.is_empty(),
        "nothing was deleted, nothing queued"
    );
}

/// D11: a reclaim is never lost. The reclaim intent is stored in the delete's own transaction;
/// when its job cannot be queued, the sweep queues it again, and the job removes the intent once
/// the partition is empty.
#[tokio::test]
async fn a_reclaim_whose_job_was_lost_is_queued_again_by_the_sweep() {
    use outbound_model::Timestamp;
    let api = TestApi::start().await;
    let (source, _) = filled(&api, "Lost job").await;
    let sdk = api.sdk.clone();
    let unreachable = outbound_adapters::queue::Queue::new(
        outbound_adapters::aws::Lazy::new(move || aws_sdk_sqs::Client::new(&sdk)),
        Some(format!(
            "{}/000000000000/no-such-queue",
            outbound_local::moto_endpoint()
        )),
    );
    let (tenant, id) = (crate::support::tenant("acme"), crate::support::id(&source));
    outbound_service::datasource::delete(&api.store, &unreachable, &tenant, &id)
        .await
        .unwrap();
    assert!(api.reclaim_jobs().await.is_empty(), "the job was lost");
    assert_eq!(api.partition_len("acme", &source).await, 2 * CONTACTS);

    // An intent younger than the grace time is left to its job.
    let past = Timestamp(Timestamp::now().0 - 60_000);
    assert_eq!(
        Function::Reclaim
            .scope(reclaim::sweep(&api.store, &api.app.reclaim, past))
            .await
            .unwrap(),
        0
    );
    let soon = Timestamp(Timestamp::now().0 + 1);
    assert_eq!(
        Function::Reclaim
            .scope(reclaim::sweep(&api.store, &api.app.reclaim, soon))
            .await
            .unwrap(),
        1
    );
    let jobs = api.reclaim_jobs().await;
    assert_eq!(
        jobs,
        vec![ReclaimJob::DataSource {
            tenant: crate::support::tenant("acme"),
            id: id.clone(),
            contact_shards: outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS,
        }]
    );
    Function::Reclaim
        .scope(reclaim::run(&api.store, &jobs[0]))
        .await
        .unwrap();
    assert_eq!(api.partition_len("acme", &source).await, 0);
    // Done: the intent is gone, so the sweep has nothing more to queue.
    assert_eq!(
        Function::Reclaim
            .scope(reclaim::sweep(&api.store, &api.app.reclaim, soon))
            .await
            .unwrap(),
        0
    );
}

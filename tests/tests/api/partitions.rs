//! What a tenant's calls write, by partition (docs/scaling.md §5.2g): a task's counters on an
//! item of its own, and the claim's do-not-call guards under keys of their own, so the tenant's
//! partition `T#{tenant}`, which its tasks, settings and lists share, takes none of the writes
//! of each call. And the copy of the guards stored before the claim's had keys of their own.

use crate::rig::rig;
use crate::support::{id, tenant};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::dialing::{ClaimRefused, Gate};
use outbound_adapters::store::keys;
use outbound_model::plan::Clock;
use outbound_model::task::Due;
use serde_json::json;

const OWNER: &str = "acme";

/// Claims, placings and outcomes of a tenant's calls write the task's counters item, the
/// contacts' states, the service's items and the guards' shards: nothing with the tenant's
/// own partition key, whose item limits every task of the tenant shares.
#[tokio::test]
async fn a_tenants_calls_write_nothing_in_its_partition() {
    let rig = rig().await;
    // Listed numbers, so the claims check guards: none of these contacts is one of them.
    for number in ["+12125550190", "+12125550191"] {
        rig.api
            .post(OWNER, "/api/dnc/add", json!({"phoneNumber": number}))
            .await
            .ok();
    }
    let contacts: Vec<(String, serde_json::Value)> = (0..6)
        .map(|n| (format!("+1212555010{n}"), json!({})))
        .collect();
    let contacts: Vec<(&str, serde_json::Value)> = contacts
        .iter()
        .map(|(phone, extra)| (phone.as_str(), extra.clone()))
        .collect();
    // The tenant's claims check the copies of its guards (the tick's job, run here at once).
    let owner = tenant(OWNER);
    assert!(rig.engine.store.guard_numbers_apart(&owner).await.unwrap());
    let (task, _) = rig.running(&contacts, json!({})).await;
    rig.api.calls.writes().take();

    rig.complete(&task).await;

    let writes = rig.api.calls.writes().take();
    let (tenant_pk, states_pk) = (
        keys::tenant(&owner),
        keys::task_contacts(&owner, &id(&task)),
    );
    let counters_pk = keys::task_counters(&owner, &id(&task)).0;
    let of_calls: Vec<_> = writes
        .iter()
        .filter(|write| {
            // A contact's state moves: claims, placings, outcomes.
            write.transactional() && write.items.iter().any(|item| item.key.0 == states_pk)
        })
        .collect();
    let claims = of_calls
        .iter()
        .filter(|write| write.writes_sort_key("RATE#"))
        .count();
    assert_eq!(claims, 6, "one claim a contact");
    for write in &of_calls {
        assert!(
            write.items.iter().all(|item| item.key.0 != tenant_pk),
            "a call's write in the tenant's partition: {write:?}"
        );
    }
    // The claims moved the counters item, and checked the guards' shards.
    let claim = of_calls
        .iter()
        .find(|write| write.writes_sort_key("RATE#"))
        .unwrap();
    let partitions: Vec<&str> = claim.items.iter().map(|item| item.key.0.as_str()).collect();
    assert!(partitions.contains(&counters_pk.as_str()), "{partitions:?}");
    assert!(
        partitions
            .iter()
            .any(|pk| pk.starts_with(&format!("{tenant_pk}#DNCN#"))),
        "{partitions:?}"
    );
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert!(stored.counters_apart);
    assert_eq!((stored.in_flight, stored.counters.calls), (0, 6));
}

/// Guards stored before the claim's had keys of their own (here: their copies removed, the
/// settings unmarked) are copied by the tick before claims check the copies, in transactions of
/// 50 each conditioned on the guard still listing its number; a delete removes both.
#[tokio::test]
async fn guards_stored_before_are_copied_before_claims_check_the_copies() {
    let rig = rig().await;
    let owner = tenant(OWNER);
    let numbers: Vec<String> = (0..120).map(|n| format!("+1212555{n:04}")).collect();
    for number in &numbers {
        rig.api
            .post(OWNER, "/api/dnc/add", json!({"phoneNumber": number}))
            .await
            .ok();
    }
    let copies = || async {
        let stored = rig.api.snapshot().await;
        stored
            .into_iter()
            .filter(|((pk, _), _)| pk.starts_with(&format!("{}#DNCN#", keys::tenant(&owner))))
            .map(|(key, item)| (key, item["entry"].as_s().unwrap().clone()))
            .collect::<Vec<_>>()
    };
    let guards = copies().await;
    assert_eq!(guards.len(), 120, "each add wrote the claim's copy");
    for ((pk, sk), _) in &guards {
        rig.api
            .dynamodb()
            .delete_item()
            .table_name(&rig.api.resources.table)
            .key(keys::PK, AttributeValue::S(pk.clone()))
            .key(keys::SK, AttributeValue::S(sk.clone()))
            .send()
            .await
            .unwrap();
    }
    assert!(copies().await.is_empty());
    assert!(!rig.engine.store.settings(&owner).await.unwrap().dial_guards);

    // A task over the first listed number and one that is not listed.
    let (task, contacts) = rig
        .running(
            &[
                (numbers[0].as_str(), json!({})),
                ("+13125550100", json!({})),
            ],
            json!({}),
        )
        .await;
    let gate = |guards_apart| Gate {
        listed_as: Some(numbers[0].clone()),
        guards_apart,
        frequency: None,
        calling_from: None,
    };
    let caps = outbound_adapters::store::dialing::Caps {
        per_task: 10,
        total: 10,
        rate_per_second: 10,
    };
    // The first call of `contact` in `task`, claimed with the guards checked where
    // `guards_apart` says: refused, the number being listed.
    let refused_as_listed = |task: String, contact: String, guards_apart: bool| {
        let (owner, gate, rig) = (owner.clone(), gate(guards_apart), &rig);
        async move {
            let stored = rig.api.stored_task(OWNER, &task).await;
            let due = Due {
                contact_id: id(&contact),
                attempt: 1,
                state: None,
            };
            let now = rig.clock.now();
            let refused = (rig.engine.store)
                .claim_call(&owner, &stored, &due, &gate, caps, now)
                .await;
            assert!(
                matches!(refused, Err(ClaimRefused::DoNotCall)),
                "guards apart {guards_apart}: {refused:?}"
            );
        }
    };
    // A claim that checked the copies now would miss the listing.
    refused_as_listed(task.clone(), contacts[0].clone(), false).await;

    // The tick copies them (120: three transactions) and marks the settings.
    rig.complete(&task).await;
    let after = copies().await;
    assert_eq!(after, guards, "every guard copied, naming its entry");
    assert!(rig.engine.store.settings(&owner).await.unwrap().dial_guards);
    assert_eq!(
        rig.placed().len(),
        1,
        "the listed number was never called: {:?}",
        rig.placed()
    );
    // A claim of the number in another task checks the copy, and is refused.
    let (other, contacts) = rig
        .running(&[(numbers[0].as_str(), json!({}))], json!({}))
        .await;
    refused_as_listed(other, contacts[0].clone(), true).await;

    // A delete removes the copy with the guard.
    rig.api
        .post(OWNER, "/api/dnc/delete", json!({"phoneNumber": numbers[0]}))
        .await
        .ok();
    assert_eq!(copies().await.len(), 119);
    let again = rig.engine.store.guard_numbers_apart(&owner).await.unwrap();
    assert!(again, "marked already: nothing read again");
}

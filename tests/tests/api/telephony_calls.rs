//! What each call carries (D22), seen at `GET /local/calls`: the number it goes out from (the
//! task's, local presence's nearest, the tenant's default, the deployment's), the flow it runs,
//! and the attributes its flow receives; a contact whose attributes the provider cannot take is
//! skipped, final, not an attempt. Tenants' numbers and flows are written onto their settings
//! as the operator's assignment leaves them.

use crate::rig::{rig, Rig};
use crate::support::{id, tenant};
use outbound_model::call::Skip;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const OWNER: &str = "acme";

impl Rig {
    /// `GET /local/calls`: the calls of `task`, by contact id.
    async fn calls(&self, task: &str) -> BTreeMap<String, Value> {
        self.local_calls(task)
            .await
            .into_iter()
            .map(|call| (call["contactId"].as_str().unwrap().to_owned(), call))
            .collect()
    }

    /// The number the call record of `contact`'s first attempt in `task` names.
    async fn recorded_caller_id(&self, task: &str, contact: &str) -> Option<String> {
        let call_id = format!("sim-{task}-{contact}-1");
        let call = self.api.store.call_by_provider_id(&call_id).await.unwrap();
        call.expect("the call record").caller_id
    }
}

const NEW_YORK: &str = "+12125550100";
const CHICAGO: &str = "+13125550100";
const SAN_FRANCISCO: &str = "+14155550100";

#[tokio::test]
async fn a_call_goes_out_from_the_tasks_number_with_its_flow_and_fields() {
    let rig = rig().await;
    rig.api
        .seed_telephony(
            OWNER,
            (&[NEW_YORK, CHICAGO, SAN_FRANCISCO], Some(SAN_FRANCISCO)),
            (&["reminder", "survey"], Some("reminder")),
        )
        .await;
    let contacts = [
        (
            "+12125550199",
            json!({"customerName": "Ada Lovelace", "plan": "gold"}),
        ),
        // No `plan` of its own: left out of its call's attributes.
        ("+13125550111", json!({"customerName": "Bob"})),
    ];
    let (task, ids) = rig
        .running(
            &contacts,
            json!({"callerId": CHICAGO, "contactFlowId": "survey",
                "callAttributes": ["customerName", "plan", "e164"]}),
        )
        .await;
    rig.complete(&task).await;
    let calls = rig.calls(&task).await;
    // The service's own four, and their signature (D29).
    let own = |task: &str, contact: &str| {
        let attempt = outbound_model::call::CallAttempt {
            tenant: tenant(OWNER),
            task_id: id(task),
            contact_id: id(contact),
            attempt: 1,
        };
        json!({"tenant": OWNER, "taskId": task, "contactId": contact, "attempt": "1",
            "signature": rig.engine.signer.sign(&attempt)})
    };
    let mut first = own(&task, &ids[0]);
    first["customerName"] = json!("Ada Lovelace");
    first["plan"] = json!("gold");
    first["e164"] = json!("+12125550199");
    let mut second = own(&task, &ids[1]);
    second["customerName"] = json!("Bob");
    second["e164"] = json!("+13125550111");
    let call = |contact: &str, to: &str, attributes: Value| {
        json!({"tenant": OWNER, "taskId": task, "contactId": contact, "attempt": 1, "to": to,
            "callerId": CHICAGO, "contactFlowId": "survey", "attributes": attributes})
    };
    assert_eq!(
        calls,
        BTreeMap::from([
            (ids[0].clone(), call(&ids[0], "+12125550199", first)),
            (ids[1].clone(), call(&ids[1], "+13125550111", second)),
        ])
    );
    // The number is on the call record, for the outcome to write on the contact.
    assert_eq!(
        rig.recorded_caller_id(&task, &ids[0]).await.as_deref(),
        Some(CHICAGO)
    );

    // Unset: the tenant's defaults, and only the service's own attributes.
    let (plain, plain_ids) = rig.running(&contacts[..1], json!({})).await;
    rig.complete(&plain).await;
    let call = &rig.calls(&plain).await[&plain_ids[0]];
    assert_eq!(
        (
            &call["callerId"],
            &call["contactFlowId"],
            &call["attributes"]
        ),
        (
            &json!(SAN_FRANCISCO),
            &json!("reminder"),
            &own(&plain, &plain_ids[0])
        )
    );

    // A number and flow the tenant no longer holds: no call at all (D28), never the
    // deployment's own in their place; the task fails saying so.
    let (stale, _) = rig
        .running(
            &contacts[..1],
            json!({"callerId": CHICAGO, "contactFlowId": "survey"}),
        )
        .await;
    rig.api
        .seed_telephony(OWNER, (&[NEW_YORK], None), (&[], None))
        .await;
    rig.api.dial_round(&rig.engine).await;
    assert!(rig.calls(&stale).await.is_empty());
    let stored = rig.api.stored_task(OWNER, &stale).await;
    assert_eq!(stored.status, outbound_model::TaskStatus::Failed);
}

#[tokio::test]
async fn local_presence_calls_from_the_nearest_number() {
    let rig = rig().await;
    rig.api
        .seed_telephony(OWNER, (&[NEW_YORK, CHICAGO], Some(CHICAGO)), (&[], None))
        .await;
    let (task, ids) = rig
        .running(
            &[
                ("+12125550199", json!({})), // New York: its area code
                ("+16175550199", json!({})), // Boston: the first US number
                ("+33612345678", json!({})), // France: the tenant's default
            ],
            json!({"callerId": "LOCAL_PRESENCE"}),
        )
        .await;
    rig.complete(&task).await;
    let calls = rig.calls(&task).await;
    let from: Vec<&Value> = ids.iter().map(|id| &calls[id]["callerId"]).collect();
    assert_eq!(from, [&json!(NEW_YORK), &json!(NEW_YORK), &json!(CHICAGO)]);
    assert_eq!(
        rig.recorded_caller_id(&task, &ids[2]).await.as_deref(),
        Some(CHICAGO)
    );
}

#[tokio::test]
async fn attributes_too_large_for_the_provider_are_a_final_skip() {
    let rig = rig().await;
    // Nine fields of 1,000 four-byte characters: 36,000 bytes, past Amazon Connect's 32,768
    // (the simulated provider takes what Connect takes). Each field is within D7's limits.
    let big: serde_json::Map<String, Value> = (0..9)
        .map(|n| (format!("note{n}"), json!("😀".repeat(1_000))))
        .collect();
    let names: Vec<String> = big.keys().cloned().collect();
    let (task, ids) = rig
        .running(
            &[
                ("+12125550199", Value::Object(big)),
                ("+12125550198", json!({})),
            ],
            json!({"callAttributes": names}),
        )
        .await;
    rig.complete(&task).await;
    let calls = rig.calls(&task).await;
    assert_eq!(
        calls.keys().collect::<Vec<_>>(),
        [&ids[1]],
        "only the contact whose attributes fit is called"
    );
    let states = rig.api.stored_task_contacts(OWNER, &task).await;
    let skipped = &states[&ids[0]];
    assert_eq!(
        (skipped.attempts, skipped.skip, skipped.done),
        (0, Some(Skip::AttributesTooLarge), true)
    );
    let diagnostics = rig
        .api
        .get(OWNER, &format!("/api/task/{task}/diagnostics"))
        .await;
    let diagnostics = diagnostics.ok();
    assert_eq!(diagnostics["skips"]["ATTRIBUTES_TOO_LARGE"], 1);
    assert_eq!(
        diagnostics["contacts"],
        json!({"total": 2, "notDialled": 0, "waiting": 0, "inFlight": 0, "final": 2})
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["callCount"], 1, "a skip is not an attempt");
}

#[tokio::test]
async fn the_chosen_number_flow_and_fields_cost_no_more_requests() {
    // The fields come with the contact items a run reads anyway, and the tenant's numbers with
    // the settings it reads anyway: a run of a task that sends fields and picks numbers asks
    // DynamoDB for exactly what a run of one that does neither asks.
    let rig = rig().await;
    rig.api
        .seed_telephony(
            OWNER,
            (&[NEW_YORK, CHICAGO], Some(CHICAGO)),
            (&["survey"], None),
        )
        .await;
    // Numbers of their own, each task's: a number's count of attempts (D17) written by one run
    // would be read back by the other.
    let contacts = |new_york: &'static str, boston: &'static str| {
        [
            (new_york, json!({"customerName": "Ada", "plan": "gold"})),
            (boston, json!({"customerName": "Bob"})),
        ]
    };
    let (plain, _) = rig
        .running(&contacts("+12125550199", "+16175550199"), json!({}))
        .await;
    let (chosen, _) = rig
        .running(
            &contacts("+12125550198", "+16175550198"),
            json!({"callerId": "LOCAL_PRESENCE", "contactFlowId": "survey",
                "callAttributes": ["customerName", "plan", "e164"]}),
        )
        .await;
    let mut costs = Vec::new();
    for task in [&plain, &chosen] {
        rig.api.calls.take();
        rig.api.calls.items().take();
        let report = rig
            .engine
            .dial(&tenant(OWNER), &id(task), 10)
            .await
            .unwrap();
        assert_eq!(report.placed, 2);
        costs.push((rig.api.calls.take(), rig.api.calls.items().take()));
    }
    assert_eq!(costs[0], costs[1]);
    assert_eq!(rig.calls(&chosen).await.len(), 2);
}

/// D28: publish fixes the caller ID and flow a task leaves to its tenant's defaults; clearing
/// the defaults later changes nothing for it (it used to fall back to the deployment's own).
#[tokio::test]
async fn a_running_task_keeps_the_defaults_it_was_published_with() {
    let rig = rig().await;
    rig.api
        .seed_telephony(
            OWNER,
            (&[NEW_YORK, CHICAGO], Some(CHICAGO)),
            (&["reminder"], Some("reminder")),
        )
        .await;
    let (task, ids) = rig
        .running(
            &[("+12125550199", json!({})), ("+13125550111", json!({}))],
            json!({}),
        )
        .await;
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["callerId"], CHICAGO, "fixed at publish");
    assert_eq!(detail.ok()["contactFlowId"], "reminder");
    rig.api
        .post(
            OWNER,
            "/api/settings/update",
            json!({"defaultCallerId": null, "defaultContactFlowId": null}),
        )
        .await
        .ok();
    rig.complete(&task).await;
    let calls = rig.calls(&task).await;
    for contact in &ids {
        assert_eq!(calls[contact]["callerId"], CHICAGO, "{calls:?}");
        assert_eq!(calls[contact]["contactFlowId"], "reminder", "{calls:?}");
    }
}

/// D28: a call presents a number only while the tenant holds it, checked by the claim's
/// transaction: a number taken back after the run read the settings places no call, and the
/// task fails saying why, naming no number.
#[tokio::test]
async fn a_call_presents_a_number_only_while_its_tenant_holds_it() {
    let rig = rig().await;
    rig.api
        .seed_telephony(OWNER, (&[NEW_YORK], None), (&[], None))
        .await;
    let (task, _) = rig
        .running(
            &[("+12125550199", json!({}))],
            json!({"callerId": NEW_YORK}),
        )
        .await;
    // The guard now names another tenant, as if the operator moved the number between the
    // run's read of the settings and its claim.
    let (pk, sk) = outbound_adapters::store::keys::caller_id(NEW_YORK);
    rig.api
        .dynamodb()
        .put_item()
        .table_name(rig.api.store.table())
        .item("pk", aws_sdk_dynamodb::types::AttributeValue::S(pk))
        .item("sk", aws_sdk_dynamodb::types::AttributeValue::S(sk))
        .item(
            "tenant",
            aws_sdk_dynamodb::types::AttributeValue::S("globex".into()),
        )
        .send()
        .await
        .unwrap();
    rig.api.dial_round(&rig.engine).await;
    assert!(
        rig.calls(&task).await.is_empty(),
        "no call from a number not the tenant's"
    );
    let detail = rig
        .api
        .get(OWNER, &format!("/api/task/detail/{task}"))
        .await;
    assert_eq!(detail.ok()["status"], 5, "FAILED: {:?}", detail.body);
    let reason = detail.ok()["failReason"].as_str().unwrap();
    assert!(
        reason.contains("caller ID") && !reason.contains(NEW_YORK),
        "{reason}"
    );
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(stored.in_flight, 0);
}

/// D28: a finished task whose number the operator took back is not dialled again: its recall is
/// 409 naming the field, and nothing changes.
#[tokio::test]
async fn a_finished_task_whose_number_was_taken_back_is_not_recalled() {
    let rig = rig().await;
    rig.api
        .seed_telephony(OWNER, (&[NEW_YORK, CHICAGO], None), (&[], None))
        .await;
    let (task, ids) = rig
        .running(
            &[("+12125550199", json!({}))],
            json!({"callerId": NEW_YORK}),
        )
        .await;
    rig.complete(&task).await;
    rig.api
        .seed_telephony(OWNER, (&[CHICAGO], None), (&[], None))
        .await;
    let recall = rig
        .api
        .post(
            OWNER,
            &format!("/api/task/{task}/recall"),
            json!({"contactIds": [ids[0]]}),
        )
        .await;
    recall.err(
        409,
        &format!(
            "callerId {NEW_YORK} is no longer assigned to this tenant: the task cannot be dialled again"
        ),
    );
    let stored = rig.api.stored_task(OWNER, &task).await;
    assert_eq!(stored.status, outbound_model::TaskStatus::Completed);
}

//! A task's caller ID, flow, attributes and voicemail (D22) over HTTP: checked when the task is
//! added or updated (the number and flow must be its tenant's), shown in its detail, and at
//! publish held to what the deployment allows (`TELEPHONY_FALLBACK=off`, Amazon Connect's queue
//! mode).

use crate::support::{unique, TestApi};
use serde_json::{json, Value};

const NEW_YORK: &str = "+12125550100";
const FLOW: &str = "8c2f1a9e-1b7d-4c3e-9f7a-2d4e6b8c0a1f";

/// Gives `tenant` the caller ID and flow above, with them as its defaults or not.
async fn assign(api: &TestApi, tenant: &str, defaults: bool) {
    let chosen = |value| defaults.then_some(value);
    api.seed_telephony(
        tenant,
        (&[NEW_YORK], chosen(NEW_YORK)),
        (&[FLOW], chosen(FLOW)),
    )
    .await;
}

async fn add(api: &TestApi, tenant: &str, source: &str, extra: Value) -> crate::support::Answer {
    let mut body = json!({"taskName": unique("Task"), "dataSourceId": source});
    for (field, value) in extra.as_object().cloned().unwrap_or_default() {
        body[field] = value;
    }
    api.post(tenant, "/api/task/add", body).await
}

#[tokio::test]
async fn a_tasks_number_and_flow_must_be_its_tenants() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let before = api.snapshot().await;
    add(&api, "acme", &source, json!({"callerId": NEW_YORK}))
        .await
        .err(
            400,
            "callerId +12125550100 is not one of the tenant's caller IDs",
        );
    add(&api, "acme", &source, json!({"contactFlowId": FLOW}))
        .await
        .err(
            400,
            "contactFlowId 8c2f1a9e-1b7d-4c3e-9f7a-2d4e6b8c0a1f is not one of the tenant's contact flows",
        );
    assert_eq!(api.snapshot().await, before, "nothing added");

    assign(&api, "acme", false).await;
    // Another tenant's assignment is not this one's.
    let (theirs, _) = api.source_with_contacts("globex", 1).await;
    add(&api, "globex", &theirs, json!({"callerId": NEW_YORK}))
        .await
        .err(
            400,
            "callerId +12125550100 is not one of the tenant's caller IDs",
        );

    let added = add(
        &api,
        "acme",
        &source,
        json!({
            "callerId": NEW_YORK,
            "contactFlowId": FLOW,
            "callAttributes": ["customerName", "orderId", "e164"],
            "resultAttributes": ["outcome", "callback_at"],
            "voicemail": "LEAVE_MESSAGE",
        }),
    )
    .await;
    let task = added.ok().clone();
    for (field, want) in [
        ("callerId", json!(NEW_YORK)),
        ("contactFlowId", json!(FLOW)),
        ("callAttributes", json!(["customerName", "orderId", "e164"])),
        ("resultAttributes", json!(["outcome", "callback_at"])),
        ("voicemail", json!("LEAVE_MESSAGE")),
    ] {
        assert_eq!(task[field], want, "{field}");
    }
    let id = task["id"].as_str().unwrap();
    let detail = api.get("acme", &format!("/api/task/detail/{id}")).await;
    assert_eq!(detail.ok()["callerId"], NEW_YORK);

    // Update: local presence, no flow of its own, attributes cleared.
    let updated = api
        .post(
            "acme",
            "/api/task/update",
            json!({"id": id, "callerId": "LOCAL_PRESENCE", "contactFlowId": "",
                   "callAttributes": [], "voicemail": "HANG_UP"}),
        )
        .await;
    let shown = updated.ok();
    assert_eq!(shown["callerId"], "LOCAL_PRESENCE");
    assert_eq!(shown["contactFlowId"], Value::Null);
    assert_eq!(shown["callAttributes"], json!([]));
    assert_eq!(shown["resultAttributes"], json!(["outcome", "callback_at"]));
    assert_eq!(shown["voicemail"], "HANG_UP");
    let stored = api.stored_task("acme", id).await;
    assert_eq!(
        stored.settings.result_attributes,
        ["outcome", "callback_at"]
    );

    // DRAFT only (D10): a published task keeps its telephony.
    api.post("acme", "/api/task/publish", json!({"id": id}))
        .await
        .ok();
    api.post(
        "acme",
        "/api/task/update",
        json!({"id": id, "callerId": NEW_YORK}),
    )
    .await
    .err(405, "cannot update a task in state RUNNING");

    // A task without any of them shows the defaults.
    let plain = add(&api, "acme", &source, json!({})).await;
    let plain = plain.ok();
    assert_eq!(plain["callerId"], Value::Null);
    assert_eq!(plain["contactFlowId"], Value::Null);
    assert_eq!(plain["callAttributes"], json!([]));
    assert_eq!(plain["resultAttributes"], json!([]));
    assert_eq!(plain["voicemail"], "HANG_UP");
}

#[tokio::test]
async fn attribute_lists_and_voicemail_are_checked() {
    let api = TestApi::start().await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let before = api.snapshot().await;
    let many = |n: usize| json!((0..n).map(|i| format!("f{i}")).collect::<Vec<_>>());
    for (extra, message) in [
        (
            json!({"resultAttributes": many(11)}),
            "resultAttributes must have at most 10 names",
        ),
        (
            json!({"callAttributes": many(21)}),
            "callAttributes must have at most 20 names",
        ),
        (
            json!({"resultAttributes": ["has space"]}),
            "resultAttributes[0] must be 1-32 letters, digits or '_'",
        ),
        (
            json!({"resultAttributes": ["ok", &"x".repeat(33)]}),
            "resultAttributes[1] must be 1-32 letters, digits or '_'",
        ),
        (
            json!({"resultAttributes": ["outcome", "outcome"]}),
            "resultAttributes[1] 'outcome' is listed twice",
        ),
        (
            json!({"resultAttributes": ["taskId"]}),
            "resultAttributes[0] 'taskId' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)",
        ),
        (
            json!({"resultAttributes": ["signature"]}),
            "resultAttributes[0] 'signature' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)",
        ),
        // D29: a result is only what the flow sets, never what the task sends.
        (
            json!({"callAttributes": ["e164", "customerName"], "resultAttributes": ["outcome", "customerName"]}),
            "resultAttributes[1] 'customerName' is one of the task's callAttributes: a result is only what the flow sets",
        ),
        (
            json!({"callAttributes": ["e164"], "resultAttributes": ["e164", "outcome"]}),
            "resultAttributes[0] 'e164' is one of the task's callAttributes: a result is only what the flow sets",
        ),
        (
            json!({"resultAttributes": ["phoneNumber"]}),
            "resultAttributes[0] 'phoneNumber' is the called number: a result is only what the flow sets",
        ),
        (
            json!({"callAttributes": ["customerName", "tenant"]}),
            "callAttributes[1] 'tenant' is one of the service's own attributes (tenant, taskId, contactId, attempt, signature)",
        ),
        (
            json!({"callAttributes": ["not a field"]}),
            "callAttributes[0] must be a contact field: customerName, address, orderAmount, e164, phoneNumber, or a custom field name (letters, digits and _, starting with a letter, at most 64)",
        ),
        (
            json!({"voicemail": "BEEP"}),
            "voicemail must be HANG_UP or LEAVE_MESSAGE",
        ),
        (json!({"voicemail": 3}), "voicemail must be a string"),
        (
            json!({"callAttributes": "name"}),
            "callAttributes must be an array of strings",
        ),
    ] {
        add(&api, "acme", &source, extra.clone())
            .await
            .err(400, message);
    }
    assert_eq!(api.snapshot().await, before, "nothing added");
}

/// With `TELEPHONY_FALLBACK=off` a task needs a number and a flow of its own or its tenant's;
/// publish names what is missing and changes nothing.
#[tokio::test]
async fn without_the_deployments_fallback_a_task_needs_a_number_and_a_flow() {
    let api = TestApi::start_with(|config| config.dialing.telephony.fallback = false).await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let bare = add(&api, "acme", &source, json!({})).await.ok()["id"].clone();
    let local = add(&api, "acme", &source, json!({"callerId": "LOCAL_PRESENCE"}))
        .await
        .ok()["id"]
        .clone();
    let publish = |id: &Value| api.post("acme", "/api/task/publish", json!({"id": id}));
    publish(&bare).await.err(
        400,
        "the task cannot be published without callerId (neither the task's nor the tenant's \
         defaultCallerId) and contactFlowId (neither the task's nor the tenant's \
         defaultContactFlowId): this deployment does not call with its own number and flow \
         (TELEPHONY_FALLBACK=off)",
    );
    assign(&api, "acme", false).await;
    let numbered = add(
        &api,
        "acme",
        &source,
        json!({"callerId": NEW_YORK, "contactFlowId": FLOW}),
    )
    .await
    .ok()["id"]
        .clone();
    publish(&local).await.err(
        400,
        "the task cannot be published without callerId (LOCAL_PRESENCE needs the tenant's \
         defaultCallerId for the numbers no caller ID of the tenant is local to) and \
         contactFlowId (neither the task's nor the tenant's defaultContactFlowId): this \
         deployment does not call with its own number and flow (TELEPHONY_FALLBACK=off)",
    );
    assert_eq!(
        api.stored_task("acme", local.as_str().unwrap())
            .await
            .status,
        outbound_model::TaskStatus::Draft
    );
    publish(&numbered).await.ok();
    // The tenant's defaults serve the tasks that name nothing.
    assign(&api, "acme", true).await;
    publish(&bare).await.ok();
    publish(&local).await.ok();
}

/// Amazon Connect placing calls through a queue (`CONNECT_QUEUE_ID`) calls from the queue's
/// number: a task that would set its own is refused at publish.
#[tokio::test]
async fn a_queue_deployment_refuses_tasks_that_need_their_own_number() {
    let api = TestApi::start_with(|config| {
        config.dialing.telephony.per_call_caller_id = false;
    })
    .await;
    let (source, _) = api.source_with_contacts("acme", 1).await;
    assign(&api, "acme", false).await;
    let own = add(&api, "acme", &source, json!({"callerId": NEW_YORK}))
        .await
        .ok()["id"]
        .clone();
    let flow_only = add(&api, "acme", &source, json!({"contactFlowId": FLOW}))
        .await
        .ok()["id"]
        .clone();
    let refusal = |shown: &str| {
        format!(
            "callerId {shown} cannot be used: this deployment places its calls through an Amazon \
             Connect queue (CONNECT_QUEUE_ID), which calls from the queue's own number"
        )
    };
    api.post("acme", "/api/task/publish", json!({"id": own}))
        .await
        .err(400, &refusal(NEW_YORK));
    api.post("acme", "/api/task/publish", json!({"id": flow_only}))
        .await
        .ok();
    // A tenant default number would be set on every call: refused too.
    assign(&api, "acme", true).await;
    let plain = add(&api, "acme", &source, json!({})).await.ok()["id"].clone();
    api.post("acme", "/api/task/publish", json!({"id": plain}))
        .await
        .err(400, &refusal(NEW_YORK));
}

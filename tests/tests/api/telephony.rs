//! The operator's assignment of caller IDs and contact flows (D22, D25, D29): only a token with
//! the `outbound/operator` scope of a member of the `operators` group reaches it, whatever
//! `REQUIRE_SCOPES` says and whatever tenant the token names; an assignment is checked whole, a number belongs to one tenant at a time, a
//! number or flow a live task names stays, the tenant's defaults are among its own, and every
//! assignment is one audit event with counts and no number.

use crate::audit::{outbox, signed, what_happened};
use crate::support::{Answer, TestApi};
use outbound_model::TaskStatus;
use reqwest::Method;
use serde_json::{json, Value};

const SUB: &str = "operator-7f3a";
const A: &str = "+12125550100";
const B: &str = "+12125550101";
const C: &str = "+13125550100";
const D: &str = "+442071234567";
const GET_ACME: &str = "/api/operator/telephony/acme";
const UPDATE: &str = "/api/operator/telephony/update";

/// An operator's token: the operator's scope and group, the `sub` [`SUB`], and the tenant `ops`
/// (any would do).
fn operator(api: &TestApi) -> String {
    signed(
        api,
        json!({"tenant_id": "ops", "sub": SUB, "scope": "outbound/operator",
               "cognito:groups": ["operators"]}),
    )
}

async fn send_as(
    api: &TestApi,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Answer {
    let request = api.anonymous(method, path).bearer_auth(token);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    api.send(request).await
}

/// The operator assigns `tenant` `numbers` and the flows `flows` (ids, each named after itself).
async fn assign(api: &TestApi, tenant: &str, numbers: &[&str], flows: &[&str]) -> Answer {
    let flows: Vec<Value> = flows
        .iter()
        .map(|id| json!({"id": id, "name": format!("Flow {id}")}))
        .collect();
    let body = json!({"tenant": tenant, "callerIds": numbers, "contactFlows": flows});
    send_as(api, &operator(api), Method::POST, UPDATE, Some(body)).await
}

/// What the operator's route shows of `tenant`.
async fn assigned(api: &TestApi, tenant: &str) -> Value {
    let path = format!("/api/operator/telephony/{tenant}");
    send_as(api, &operator(api), Method::GET, &path, None)
        .await
        .ok()
        .clone()
}

fn view(tenant: &str, numbers: &[&str], flows: &[&str]) -> Value {
    let flows: Vec<Value> = flows
        .iter()
        .map(|id| json!({"id": id, "name": format!("Flow {id}")}))
        .collect();
    json!({"tenant": tenant, "callerIds": numbers, "contactFlows": flows, "queues": []})
}

/// The caller ID guards in the table: number -> the tenant holding it.
async fn guards(api: &TestApi) -> Vec<(String, String)> {
    api.snapshot()
        .await
        .into_iter()
        .filter(|((pk, sk), _)| pk.starts_with("CID#") && sk == "CID")
        .map(|((pk, _), item)| {
            let tenant = item["tenant"].as_s().unwrap().to_owned();
            (pk.trim_start_matches("CID#").to_owned(), tenant)
        })
        .collect()
}

fn held(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(number, tenant)| ((*number).to_owned(), (*tenant).to_owned()))
        .collect()
}

/// D22, D25: the operator's routes need `outbound/operator` with `REQUIRE_SCOPES` off (this
/// API) and on, whatever tenant the token names or none; no token is 401, any other scope 403,
/// an operator token without a `sub` 403; refused requests change nothing. An unknown tenant
/// has empty lists, and reading it stores nothing.
#[tokio::test]
async fn only_the_operator_scope_reaches_the_operator_routes() {
    let api = TestApi::start().await;
    let body = json!({"tenant": "acme", "callerIds": [A], "contactFlows": []});
    for (method, path, body) in [
        (Method::GET, GET_ACME, None),
        (Method::POST, UPDATE, Some(body.clone())),
    ] {
        let request = api.anonymous(method.clone(), path);
        let request = match &body {
            Some(body) => request.json(body),
            None => request,
        };
        api.send(request)
            .await
            .err(401, "missing Authorization header");
        let everything = signed(
            &api,
            json!({"tenant_id": "acme", "sub": SUB,
                   "scope": "outbound/read outbound/write outbound/admin outbound/operators"}),
        );
        for token in [api.token("acme"), everything] {
            send_as(&api, &token, method.clone(), path, body.clone())
                .await
                .err(403, "this token lacks the scope outbound/operator");
        }
        // D29: the scope alone, of any tenant, is not an operator: Cognito grants scopes per
        // app client, and only the group says a person is one.
        for groups in [json!(null), json!(["admins"]), json!("[admins]")] {
            let scope_only = signed(
                &api,
                json!({"tenant_id": "acme", "sub": SUB, "scope": "outbound/operator",
                       "cognito:groups": groups}),
            );
            send_as(&api, &scope_only, method.clone(), path, body.clone())
                .await
                .err(
                    403,
                    "only members of the group operators may make this request",
                );
        }
        let no_sub = signed(
            &api,
            json!({"tenant_id": "ops", "scope": "outbound/operator",
                   "cognito:groups": ["operators"]}),
        );
        send_as(&api, &no_sub, method.clone(), path, body.clone())
            .await
            .err(
                403,
                "token has no valid sub claim, which names who made an audited change",
            );
    }
    assert_eq!(assigned(&api, "acme").await, view("acme", &[], &[]));
    assert!(
        api.snapshot().await.is_empty(),
        "neither the refusals nor the read stored anything"
    );

    // A token naming no tenant at all, or another tenant, assigns any tenant.
    let tenantless = signed(
        &api,
        json!({"sub": SUB, "scope": "outbound/operator", "cognito:groups": ["operators"]}),
    );
    let answer = send_as(&api, &tenantless, Method::POST, UPDATE, Some(body)).await;
    assert_eq!(answer.ok(), &view("acme", &[A], &[]));
    assert_eq!(assigned(&api, "acme").await, view("acme", &[A], &[]));
    // The tenant's own read of its settings shows them.
    assert_eq!(
        api.get("acme", "/api/settings").await.ok()["callerIds"],
        json!([A])
    );

    // With scopes required the operator's scope is still what these routes need.
    let scoped = TestApi::start_with(|config| {
        config.scopes = outbound_auth::RequiredScopes::from_lookup(&|name: &str| {
            (name == "REQUIRE_SCOPES").then(|| "true".to_owned())
        })
        .unwrap();
    })
    .await;
    let reader = signed(
        &scoped,
        json!({"tenant_id": "acme", "sub": SUB, "scope": "outbound/read outbound/admin"}),
    );
    send_as(&scoped, &reader, Method::GET, GET_ACME, None)
        .await
        .err(403, "this token lacks the scope outbound/operator");
    assert_eq!(assigned(&scoped, "acme").await, view("acme", &[], &[]));
    assert_eq!(
        assign(&scoped, "acme", &[B], &[]).await.ok(),
        &view("acme", &[B], &[])
    );
}

/// D22: an assignment is checked whole, each refusal naming its entry, and a refused one changes
/// nothing and has no event.
#[tokio::test]
async fn an_assignment_is_checked_whole_and_a_refused_one_changes_nothing() {
    let api = TestApi::start().await;
    assign(&api, "acme", &[A], &["reminder"]).await.ok();
    let before = api.snapshot().await;
    let hundred_and_one: Vec<String> = (0..101).map(|n| format!("+1212555{n:04}")).collect();
    let fifty_one: Vec<Value> = (0..51)
        .map(|n| json!({"id": format!("flow-{n}"), "name": "F"}))
        .collect();
    let flow = |id: &str, name: &str| json!({"id": id, "name": name});
    for (body, message) in [
        (
            json!({"tenant": "acme", "callerIds": [B, "2125550102"], "contactFlows": []}),
            "callerIds[1] must be a valid phone number in E.164, e.g. +12125550100",
        ),
        (
            json!({"tenant": "acme", "callerIds": ["+1 212 555 0102"], "contactFlows": []}),
            "callerIds[0] must be a valid phone number in E.164, e.g. +12125550100",
        ),
        (
            json!({"tenant": "acme", "callerIds": ["+1212555010"], "contactFlows": []}),
            "callerIds[0] must be a valid phone number in E.164, e.g. +12125550100",
        ),
        (
            json!({"tenant": "acme", "callerIds": hundred_and_one, "contactFlows": []}),
            "callerIds may hold at most 100 numbers",
        ),
        (
            json!({"tenant": "acme", "callerIds": [], "contactFlows": fifty_one}),
            "contactFlows may hold at most 50 flows",
        ),
        (
            json!({"tenant": "acme", "callerIds": [A, B, A], "contactFlows": []}),
            "callerIds[2] +12125550100 is listed twice",
        ),
        (
            json!({"tenant": "acme", "callerIds": [],
                   "contactFlows": [flow("a", "A"), flow("a", "Again")]}),
            "contactFlows[1].id a is listed twice",
        ),
        (
            json!({"tenant": "acme", "callerIds": [], "contactFlows": [flow("bad id", "B")]}),
            "contactFlows[0].id must be 1-128 letters, digits, '-' or '_'",
        ),
        (
            json!({"tenant": "acme", "callerIds": [], "contactFlows": [{"id": "x"}]}),
            "contactFlows[0].name must be 1-100 characters",
        ),
        (
            json!({"tenant": "a#b", "callerIds": [], "contactFlows": []}),
            "tenant must be a tenant id: 1-128 letters, digits, '-', '_', '.', '@' or ':'",
        ),
        (
            json!({"tenant": "acme", "contactFlows": []}),
            "callerIds is required",
        ),
        (
            json!({"tenant": "acme", "callerIds": [1], "contactFlows": []}),
            "callerIds must be an array of strings",
        ),
    ] {
        send_as(&api, &operator(&api), Method::POST, UPDATE, Some(body))
            .await
            .err(400, message);
    }
    send_as(
        &api,
        &operator(&api),
        Method::GET,
        "/api/operator/telephony/a%23b",
        None,
    )
    .await
    .err(
        400,
        "tenant must be a tenant id: 1-128 letters, digits, '-', '_', '.', '@' or ':'",
    );
    assert_eq!(api.snapshot().await, before, "nothing changed");
    assert_eq!(
        outbox(&api).await.len(),
        1,
        "the first assignment's event only"
    );
}

/// D22, D29: a number belongs to one tenant at a time. Another tenant's number is 409 naming the
/// number and never the tenant, and
/// nothing changes: the guards the refused request took are given back. Once its tenant lets it
/// go, it can be assigned. A guard left by an assignment that never committed gives way.
#[tokio::test]
async fn a_number_belongs_to_one_tenant_at_a_time() {
    let api = TestApi::start().await;
    assert_eq!(
        assign(&api, "acme", &[A, B], &[]).await.ok(),
        &view("acme", &[A, B], &[])
    );
    assign(&api, "globex", &[C, B], &["f"])
        .await
        .err(409, "callerIds +12125550101 is assigned to another tenant");
    assert_eq!(assigned(&api, "globex").await, view("globex", &[], &[]));
    assert_eq!(assigned(&api, "acme").await, view("acme", &[A, B], &[]));
    assert_eq!(
        guards(&api).await,
        held(&[(A, "acme"), (B, "acme")]),
        "C given back"
    );

    // The same assignment again is the same assignment.
    assert_eq!(
        assign(&api, "acme", &[A], &[]).await.ok(),
        &view("acme", &[A], &[])
    );
    assert_eq!(
        assign(&api, "acme", &[A], &[]).await.ok(),
        &view("acme", &[A], &[])
    );
    assert_eq!(guards(&api).await, held(&[(A, "acme")]), "B released");

    // A guard whose tenant never listed the number (its assignment died before committing).
    let (pk, sk) = outbound_adapters::store::keys::caller_id(D);
    api.put_directly(vec![[
        (
            "pk".to_owned(),
            aws_sdk_dynamodb::types::AttributeValue::S(pk),
        ),
        (
            "sk".to_owned(),
            aws_sdk_dynamodb::types::AttributeValue::S(sk),
        ),
        (
            "tenant".to_owned(),
            aws_sdk_dynamodb::types::AttributeValue::S("initech".into()),
        ),
    ]
    .into()])
        .await;
    assert_eq!(
        assign(&api, "globex", &[C, B, D], &["f"]).await.ok(),
        &view("globex", &[C, B, D], &["f"])
    );
    assert_eq!(
        guards(&api).await,
        held(&[(A, "acme"), (B, "globex"), (C, "globex"), (D, "globex")])
    );
    assign(&api, "acme", &[A, D], &[])
        .await
        .err(409, "callerIds +442071234567 is assigned to another tenant");
    assert_eq!(assigned(&api, "acme").await, view("acme", &[A], &[]));
}

/// D22: concurrent assignments of one number to two tenants: never both; whatever each answers,
/// the number's guard is held by the tenant that lists it, and by no other.
#[tokio::test]
async fn concurrent_assignments_of_one_number_never_both_win() {
    let api = TestApi::start().await;
    for round in 0..4 {
        let number = format!("+1415555{:04}", 100 + round);
        let numbers = [number.as_str()];
        let (acme, globex) = tokio::join!(
            assign(&api, "acme", &numbers, &[]),
            assign(&api, "globex", &numbers, &[]),
        );
        let codes = [acme.status.as_u16(), globex.status.as_u16()];
        assert!(
            codes.iter().filter(|code| **code == 200).count() <= 1,
            "round {round}: {codes:?}"
        );
        assert!(
            codes.iter().all(|code| [200, 409, 503].contains(code)),
            "{codes:?}"
        );
        let listing: Vec<&str> = ["acme", "globex"]
            .into_iter()
            .zip([&acme, &globex])
            .filter(|(_, answer)| answer.status == 200)
            .map(|(tenant, _)| tenant)
            .collect();
        let mut stored = Vec::new();
        for tenant in ["acme", "globex"] {
            if assigned(&api, tenant).await["callerIds"] == json!([number]) {
                stored.push(tenant);
            }
        }
        assert_eq!(stored, listing, "round {round}");
        let holder: Vec<String> = guards(&api)
            .await
            .into_iter()
            .filter(|(held, _)| held == &number)
            .map(|(_, tenant)| tenant)
            .collect();
        if let [winner] = listing.as_slice() {
            assert_eq!(holder, [*winner], "round {round}");
        }
        // Both let it go for the next round.
        for tenant in ["acme", "globex"] {
            assign(&api, tenant, &[], &[]).await.ok();
        }
    }
}

/// D22: a number or flow that a DRAFT, RUNNING or PAUSED task names cannot be removed (409
/// naming the task, nothing changed) until the task is deleted or stopped.
#[tokio::test]
async fn what_a_live_task_names_stays_until_the_task_ends() {
    let api = TestApi::start().await;
    assign(&api, "acme", &[A, B], &["first", "second"])
        .await
        .ok();
    let (source, _) = api.source_with_contacts("acme", 1).await;
    let calling = api
        .task("acme", "Calls from A", &source, json!({"callerId": A}))
        .await;
    let playing = api
        .task(
            "acme",
            "Plays second",
            &source,
            json!({"contactFlowId": "second"}),
        )
        .await;
    // Another tenant's task naming a flow of the same id is no reason.
    assign(&api, "globex", &[C], &["second"]).await.ok();
    let (theirs, _) = api.source_with_contacts("globex", 1).await;
    api.task(
        "globex",
        "Theirs",
        &theirs,
        json!({"contactFlowId": "second"}),
    )
    .await;
    let before = api.snapshot().await;

    assign(&api, "acme", &[B], &["first", "second"]).await.err(
        409,
        &format!("callerId {A} is named by task {calling}, which is DRAFT"),
    );
    assign(&api, "acme", &[A, B], &["first"]).await.err(
        409,
        &format!("contactFlowId second is named by task {playing}, which is DRAFT"),
    );
    assert_eq!(api.snapshot().await, before, "nothing changed");

    api.post("acme", "/api/task/delete", json!({"id": calling}))
        .await
        .ok();
    assert_eq!(
        assign(&api, "acme", &[B], &["first", "second"]).await.ok(),
        &view("acme", &[B], &["first", "second"])
    );

    api.drive("acme", &playing, TaskStatus::Paused).await;
    assign(&api, "acme", &[B], &["first"]).await.err(
        409,
        &format!("contactFlowId second is named by task {playing}, which is PAUSED"),
    );
    api.post("acme", "/api/task/stop", json!({"id": playing}))
        .await
        .ok();
    assert_eq!(
        assign(&api, "acme", &[], &["first"]).await.ok(),
        &view("acme", &[], &["first"])
    );
}

/// D22, D25: the tenant's defaults are among its own numbers and flows (400 naming them
/// otherwise; `null` clears), its settings show the operator's lists but never set them, and a
/// default whose number or flow the operator removes is cleared by that assignment, whose event
/// says so; the settings' events show each default's change, never the number.
#[tokio::test]
async fn defaults_are_the_tenants_own_and_go_with_them() {
    let api = TestApi::start().await;
    let admin = signed(
        &api,
        json!({"tenant_id": "acme", "sub": "admin-1", "cognito:groups": ["admins"]}),
    );
    let update = |body: Value| {
        let token = admin.clone();
        let api = &api;
        async move {
            send_as(
                api,
                &token,
                Method::POST,
                "/api/settings/update",
                Some(body),
            )
            .await
        }
    };
    update(json!({"defaultCallerId": A})).await.err(
        400,
        "defaultCallerId +12125550100 is not one of the tenant's callerIds",
    );
    assign(&api, "acme", &[A, B], &["first"]).await.ok();
    let settings = update(json!({"defaultCallerId": A, "defaultContactFlowId": "first"})).await;
    let settings = settings.ok();
    assert_eq!(
        (
            &settings["callerIds"],
            &settings["contactFlows"],
            &settings["defaultCallerId"],
            &settings["defaultContactFlowId"]
        ),
        (
            &json!([A, B]),
            &json!([{"id": "first", "name": "Flow first"}]),
            &json!(A),
            &json!("first")
        )
    );
    let shown = api.get("acme", "/api/settings").await;
    assert_eq!(shown.ok(), settings);
    for (body, message) in [
        (
            json!({"defaultContactFlowId": "second"}),
            "defaultContactFlowId second is not one of the tenant's contactFlows",
        ),
        (
            json!({"callerIds": [C]}),
            "callerIds are assigned by the operator (POST /api/operator/telephony/update), not set here",
        ),
        (
            json!({"contactFlows": null, "defaultCallerId": B}),
            "contactFlows are assigned by the operator (POST /api/operator/telephony/update), not set here",
        ),
    ] {
        update(body).await.err(400, message);
    }
    assert_eq!(
        api.get("acme", "/api/settings").await.ok(),
        settings,
        "unchanged"
    );

    let cleared = update(json!({"defaultContactFlowId": null})).await;
    assert_eq!(cleared.ok()["defaultContactFlowId"], Value::Null);
    update(json!({"defaultContactFlowId": "first"})).await.ok();

    // The operator takes A away: the default that named it goes with it; the flow's stays.
    assign(&api, "acme", &[B], &["first"]).await.ok();
    let after = api.get("acme", "/api/settings").await;
    assert_eq!(
        (
            &after.ok()["defaultCallerId"],
            &after.ok()["defaultContactFlowId"]
        ),
        (&Value::Null, &json!("first"))
    );
    assert_eq!(after.ok()["callerIds"], json!([B]));

    let events: Vec<(String, Value)> = outbox(&api)
        .await
        .into_iter()
        .map(|(kind, detail)| (kind, what_happened(&detail)))
        .collect();
    let settings_changed = |changes: Value| json!({"sub": "admin-1", "changes": changes});
    assert_eq!(
        events,
        [
            (
                "TelephonyChanged".to_owned(),
                json!({"sub": SUB, "callerIdCount": 2, "contactFlowCount": 1,
                       "numbersAdded": 2, "numbersRemoved": 0, "flowsAdded": 1,
                       "flowsRemoved": 0, "clearedDefaults": []})
            ),
            (
                "SettingsChanged".to_owned(),
                settings_changed(json!({"defaultCallerId": true, "defaultContactFlowId": "first"}))
            ),
            (
                "SettingsChanged".to_owned(),
                settings_changed(json!({"defaultContactFlowId": null}))
            ),
            (
                "SettingsChanged".to_owned(),
                settings_changed(json!({"defaultContactFlowId": "first"}))
            ),
            (
                "TelephonyChanged".to_owned(),
                json!({"sub": SUB, "callerIdCount": 1, "contactFlowCount": 1,
                       "numbersAdded": 0, "numbersRemoved": 1, "flowsAdded": 0,
                       "flowsRemoved": 0, "clearedDefaults": ["defaultCallerId"]})
            ),
        ]
    );
}

/// D25: each assignment is one `TelephonyChanged` event of the assigned tenant with the
/// operator's `sub` and its counts, never a number; a refused one has none.
#[tokio::test]
async fn each_assignment_is_one_event_with_counts_and_no_number() {
    let api = TestApi::start().await;
    assign(&api, "acme", &[A, B], &["first"]).await.ok();
    assign(&api, "acme", &[B, C, D], &["second", "third"])
        .await
        .ok();
    assign(&api, "globex", &[A, B], &[])
        .await
        .err(409, "callerIds +12125550101 is assigned to another tenant");
    assign(&api, "acme", &[B, "+1"], &[]).await.code(400);
    assign(&api, "acme", &[B, C, D], &["second", "third"])
        .await
        .ok();

    let stored = outbox(&api).await;
    let happened: Vec<Value> = stored
        .iter()
        .map(|(kind, detail)| {
            assert_eq!(kind, "TelephonyChanged");
            what_happened(detail)
        })
        .collect();
    let counts = |total: (u64, u64), numbers: (u64, u64), flows: (u64, u64)| {
        json!({"sub": SUB, "callerIdCount": total.0, "contactFlowCount": total.1,
               "numbersAdded": numbers.0, "numbersRemoved": numbers.1,
               "flowsAdded": flows.0, "flowsRemoved": flows.1, "clearedDefaults": []})
    };
    assert_eq!(
        happened,
        [
            counts((2, 1), (2, 0), (1, 0)),
            counts((3, 2), (2, 1), (2, 1)),
            counts((3, 2), (0, 0), (0, 0)),
        ]
    );
    for (_, detail) in &stored {
        let text = detail.to_string();
        for digits in ["2125550", "3125550", "2071234", "555"] {
            assert!(!text.contains(digits), "{digits} in {text}");
        }
    }
}

/// D22: the tenant sets a default that names a number, reading the settings before the
/// operator removes it and writing after (its transaction held back): its write is conditioned
/// on the settings it read, so it reads again and is refused; the operator's is too, so it
/// clears a default set meanwhile. A default never names a number the tenant no longer holds.
#[tokio::test]
async fn a_default_never_outlives_its_number() {
    use outbound_tests::faults::FaultPlan;
    let (api, proxy) = TestApi::start_with_faults().await;
    assign(&api, "acme", &[A, B], &[]).await.ok();
    proxy.set_plan(FaultPlan::DelayTransactionsHolding {
        text: "SettingsChanged",
        millis: 500,
    });
    let removal = async {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        assign(&api, "acme", &[B], &[]).await
    };
    let (set, removed) = tokio::join!(
        api.post(
            "acme",
            "/api/settings/update",
            json!({"defaultCallerId": A})
        ),
        removal,
    );
    removed.ok();
    set.err(
        400,
        "defaultCallerId +12125550100 is not one of the tenant's callerIds",
    );
    assert!(proxy.injected() >= 1, "the update's write was held back");
    assert_eq!(default_of(&api).await, (json!([B]), Value::Null));

    // The other way round: the operator reads before the tenant sets its default and writes
    // after; its write reads again and clears the default with the number.
    assign(&api, "acme", &[A, B], &[]).await.ok();
    proxy.set_plan(FaultPlan::DelayTransactionsHolding {
        text: "TelephonyChanged",
        millis: 500,
    });
    let default = async {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        api.post(
            "acme",
            "/api/settings/update",
            json!({"defaultCallerId": A}),
        )
        .await
    };
    let (removed, set) = tokio::join!(assign(&api, "acme", &[B], &[]), default);
    assert_eq!(
        set.ok()["defaultCallerId"],
        A,
        "set while A was the tenant's"
    );
    removed.ok();
    assert_eq!(default_of(&api).await, (json!([B]), Value::Null));
    let (_, last) = outbox(&api).await.pop().unwrap();
    assert_eq!(last["clearedDefaults"], json!(["defaultCallerId"]));
}

/// The tenant's caller IDs and default caller ID, as its settings show them.
async fn default_of(api: &TestApi) -> (Value, Value) {
    let settings = api.get("acme", "/api/settings").await;
    let data = settings.ok();
    (data["callerIds"].clone(), data["defaultCallerId"].clone())
}

/// D30: the operator assigns agent queues beside numbers and flows: each checked (400 naming the
/// entry, nothing changed), shown by the operator's route and read-only in the tenant's
/// settings; an assignment without `queues` keeps them; a queue a live task names stays until
/// the task ends (409 naming the task).
#[tokio::test]
async fn queues_are_assigned_checked_and_kept_while_a_task_names_one() {
    let api = TestApi::start().await;
    let queue = |id: &str, name: &str| json!({"id": id, "name": name});
    let with_queues = |queues: Value| json!({"tenant": "acme", "callerIds": [A], "contactFlows": [], "queues": queues});
    let operator = operator(&api);
    let send = |body: Value| send_as(&api, &operator, Method::POST, UPDATE, Some(body));
    let before = api.snapshot().await;
    for (queues, message) in [
        (
            json!([queue("sales", "Sales"), queue("sales", "Again")]),
            "queues[1].id sales is listed twice",
        ),
        (
            json!([queue("no spaces", "Sales")]),
            "queues[0].id must be 1-128 letters, digits, '-' or '_'",
        ),
        (
            json!([queue("sales", "")]),
            "queues[0].name must be 1-100 characters",
        ),
        (
            json!((0..51)
                .map(|n| queue(&format!("q{n}"), "Q"))
                .collect::<Vec<_>>()),
            "queues may hold at most 50 queues",
        ),
    ] {
        send(with_queues(queues)).await.err(400, message);
    }
    assert_eq!(api.snapshot().await, before, "nothing changed");

    let assigned_view = send(with_queues(json!([
        queue("sales", "Sales team"),
        queue("renewals", "Renewals")
    ])))
    .await
    .ok()
    .clone();
    let queues =
        json!([{"id": "sales", "name": "Sales team"}, {"id": "renewals", "name": "Renewals"}]);
    assert_eq!(assigned_view["queues"], queues);
    assert_eq!(assigned(&api, "acme").await["queues"], queues);
    let settings = api.get("acme", "/api/settings").await.ok().clone();
    assert_eq!(settings["queues"], queues);
    // The tenant cannot set them.
    api.post("acme", "/api/settings/update", json!({"queues": []}))
        .await
        .ok();
    assert_eq!(
        api.get("acme", "/api/settings").await.ok()["queues"],
        queues
    );
    // Numbers and flows alone keep the queues.
    assert_eq!(
        assign(&api, "acme", &[A, B], &[]).await.ok()["queues"],
        queues
    );

    let (source, _) = api.source_with_contacts("acme", 1).await;
    let task = api
        .task(
            "acme",
            "Paced",
            &source,
            json!({"dialingMode": "PROGRESSIVE", "queueId": "renewals"}),
        )
        .await;
    let before = api.snapshot().await;
    send(with_queues(json!([queue("sales", "Sales team")])))
        .await
        .err(
            409,
            &format!("queueId renewals is named by task {task}, which is DRAFT"),
        );
    assert_eq!(api.snapshot().await, before, "nothing changed");
    api.post("acme", "/api/task/delete", json!({"id": task}))
        .await
        .ok();
    assert_eq!(send(with_queues(json!([]))).await.ok()["queues"], json!([]));
}

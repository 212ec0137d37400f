//! The Amazon Connect provider through the real SDK against answers in the API's documented
//! shapes (`events/connect-api-samples.json`), served by a stand-in on loopback: every
//! answering-machine detection status DescribeContact can report maps to its D13 outcome, a
//! live contact stays in progress, and GetContactAttributes names our calls' attempts and no
//! other contact's; StartOutboundVoiceContact is sent each call's caller ID, flow, attributes
//! and voicemail choice as the wire carries them (D22). The instance's catalog (D22) takes only numbers claimed to the instance
//! (ListPhoneNumbersV2 by its ARN, every page) and its published, active contact flows
//! (DescribeContactFlow), and an outage of Connect is 503.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::Router;
use outbound_adapters::aws::actions::{self, Function};
use outbound_adapters::aws::Lazy;
use outbound_adapters::telephony::catalog::Catalog;
use outbound_adapters::telephony::connect::{ConnectCatalog, ConnectProvider, ConnectSettings};
use outbound_adapters::telephony::{CallRequest, CallStatus, Provider};
use outbound_model::call::{CallAttempt, CallReport, Outcome, Reason};
use outbound_model::settings::TenantSettings;
use outbound_model::telephony::{Assignment, Voicemail};
use outbound_model::{Id, Tenant};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

const INSTANCE: &str = "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915";
const FLOW: &str = "9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34";
const QUEUE: &str = "2a7c9e14-5b3d-4f8a-b6e2-0c9d1f3a7e58";
const INSTANCE_ARN: &str =
    "arn:aws:connect:eu-west-1:482915736204:instance/5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915";

fn samples() -> Value {
    serde_json::from_str(include_str!("../events/connect-api-samples.json")).unwrap()
}

/// Connect's error answer: `kind` in `x-amzn-ErrorType`.
fn refusal(status: StatusCode, kind: &'static str) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        status,
        [("x-amzn-ErrorType", kind)],
        axum::Json(serde_json::json!({"Message": kind})),
    )
        .into_response()
}

/// What the stand-in answers, and the StartOutboundVoiceContact bodies it was sent.
struct StandIn {
    answers: Value,
    started: Mutex<Vec<Value>>,
    /// The GetCurrentMetricData bodies it was sent.
    metrics: Mutex<Vec<Value>>,
}

/// Answers from `answers`: `GET /contacts/{instance}/{contact}` (DescribeContact),
/// `GET /contact/attributes/{instance}/{contact}` (GetContactAttributes) and
/// `GET /contact-flows/{instance}/{flow}` (DescribeContactFlow) by id, anything else Connect's
/// 404; `POST /phone-number/list` (ListPhoneNumbersV2) the page its `NextToken` names, only for
/// the instance's ARN; `PUT /contact/outbound-voice` (StartOutboundVoiceContact) the sample's
/// answer, keeping the request's body. With `"down": "<error type>"` every request is that error (a 500 or a
/// 429).
async fn answer(
    State(stand_in): State<Arc<StandIn>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let answers = &stand_in.answers;
    match answers["down"].as_str() {
        Some("ThrottlingException") => {
            return refusal(StatusCode::TOO_MANY_REQUESTS, "ThrottlingException")
        }
        Some(_) => {
            return refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalServiceException",
            )
        }
        None => {}
    }
    let path = uri.path();
    if method == Method::PUT && path == "/contact/outbound-voice" {
        let request = serde_json::from_slice(&body).unwrap();
        stand_in.started.lock().unwrap().push(request);
        return axum::Json(samples()["startOutboundVoiceContact"]["response"].clone())
            .into_response();
    }
    if method == Method::POST && path == format!("/metrics/current/{INSTANCE}") {
        let request = serde_json::from_slice(&body).unwrap();
        stand_in.metrics.lock().unwrap().push(request);
        return axum::Json(samples()["getCurrentMetricData"]["response"].clone()).into_response();
    }
    if method == Method::POST && path == "/phone-number/list" {
        let request: Value = serde_json::from_slice(&body).unwrap_or_default();
        if request["TargetArn"] != INSTANCE_ARN {
            return refusal(StatusCode::BAD_REQUEST, "InvalidParameterException");
        }
        let page = match request["NextToken"].as_str() {
            None => 0,
            Some("page-2") => 1,
            Some(_) => return refusal(StatusCode::BAD_REQUEST, "InvalidParameterException"),
        };
        return axum::Json(answers["numbers"][page].clone()).into_response();
    }
    let (kind, rest) = if let Some(rest) = path.strip_prefix(&format!("/contacts/{INSTANCE}/")) {
        ("describe", rest)
    } else if let Some(rest) = path.strip_prefix(&format!("/contact/attributes/{INSTANCE}/")) {
        ("attributes", rest)
    } else if let Some(rest) = path.strip_prefix(&format!("/contact-flows/{INSTANCE}/")) {
        ("flows", rest)
    } else if let Some(rest) = path.strip_prefix(&format!("/queues/{INSTANCE}/")) {
        ("queues", rest)
    } else {
        ("", "")
    };
    match answers.get(kind).and_then(|by_id| by_id.get(rest)) {
        Some(body) => axum::Json(body.clone()).into_response(),
        None if rest == "unpublished" => {
            refusal(StatusCode::NOT_FOUND, "ContactFlowNotPublishedException")
        }
        None => refusal(StatusCode::NOT_FOUND, "ResourceNotFoundException"),
    }
}

/// A Connect client that talks to a stand-in answering `answers`, and the stand-in.
async fn client(answers: Value) -> (Lazy<aws_sdk_connect::Client>, Arc<StandIn>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let stand_in = Arc::new(StandIn {
        answers,
        started: Mutex::new(Vec::new()),
        metrics: Mutex::new(Vec::new()),
    });
    let app = Router::new().fallback(answer).with_state(stand_in.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let sdk = aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(aws_sdk_connect::config::Region::new("eu-west-1"))
        .credentials_provider(aws_sdk_connect::config::SharedCredentialsProvider::new(
            aws_sdk_connect::config::Credentials::for_tests(),
        ))
        .endpoint_url(endpoint)
        .build();
    // The service's own client: its requests are recorded for the least-privilege check.
    let client = Lazy::new(move || outbound_adapters::telephony::connect::client(&sdk));
    (client, stand_in)
}

/// The deployment's Connect settings, its caller ID from `source` (`CONNECT_SOURCE_PHONE_NUMBER`
/// or `CONNECT_QUEUE_ID`, and its value).
fn settings_with(source: (&'static str, &'static str)) -> ConnectSettings {
    ConnectSettings::from_lookup(|name| match name {
        "CONNECT_INSTANCE_ID" => Some(INSTANCE.into()),
        "CONNECT_INSTANCE_ARN" => Some(INSTANCE_ARN.into()),
        "CONNECT_CONTACT_FLOW_ID" => Some(FLOW.into()),
        name if name == source.0 => Some(source.1.into()),
        _ => None,
    })
    .unwrap()
}

fn settings() -> ConnectSettings {
    settings_with(("CONNECT_QUEUE_ID", QUEUE))
}

/// A Connect provider in queue mode whose SDK client talks to a stand-in answering `answers`.
async fn provider(answers: Value) -> ConnectProvider {
    ConnectProvider::new(client(answers).await.0, settings())
}

/// A Connect provider whose caller ID is `source`, and the stand-in it talks to.
async fn provider_with(
    answers: Value,
    source: (&'static str, &'static str),
) -> (ConnectProvider, Arc<StandIn>) {
    let (client, stand_in) = client(answers).await;
    (
        ConnectProvider::new(client, settings_with(source)),
        stand_in,
    )
}

/// Runs `run` as the function that makes its Connect requests in AWS, so that the
/// least-privilege check sees them (reconcile's DescribeContact is the dialer's, which runs the
/// tick's reconcile jobs; the outcome's
/// GetContactAttributes call-events', the operator's catalog the data source function's, a
/// start the dialer's), naming the instance as the functions' `CONNECT_INSTANCE_ID` does.
async fn as_function(function: Function, run: impl std::future::Future<Output = ()>) {
    actions::name_resources(&[("CONNECT_INSTANCE_ID", INSTANCE)]);
    function.scope(run).await
}

#[tokio::test]
async fn every_detection_status_of_describe_contact_has_its_outcome() {
    as_function(
        Function::Dialer,
        every_detection_status_of_describe_contact_has_its_outcome_as_run(),
    )
    .await
}

async fn every_detection_status_of_describe_contact_has_its_outcome_as_run() {
    let samples = samples();
    let cases = samples["describeContact"].as_array().unwrap();
    let mut describe = serde_json::Map::new();
    for case in cases {
        let id = case["response"]["Contact"]["Id"].as_str().unwrap();
        describe.insert(id.to_owned(), case["response"].clone());
    }
    let live = samples["live"]["Contact"]["Id"]
        .as_str()
        .unwrap()
        .to_owned();
    describe.insert(live.clone(), samples["live"].clone());
    let connect = provider(serde_json::json!({ "describe": describe })).await;

    let statuses: Vec<&str> = cases
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    for documented in [
        "AMD_ERROR",
        "AMD_NOT_APPLICABLE",
        "AMD_UNANSWERED",
        "AMD_UNRESOLVED",
        "AMD_UNRESOLVED_SILENCE",
        "ANSWERED",
        "ERROR",
        "FAX_MACHINE_DETECTED",
        "HUMAN_ANSWERED",
        "SIT_TONE_BUSY",
        "SIT_TONE_DETECTED",
        "SIT_TONE_INVALID_NUMBER",
        "UNDETECTED",
        "VOICEMAIL_BEEP",
        "VOICEMAIL_NO_BEEP",
    ] {
        assert!(statuses.contains(&documented), "no sample of {documented}");
    }
    for case in cases {
        let id = case["response"]["Contact"]["Id"].as_str().unwrap();
        let reason = case["serviceReason"]
            .as_str()
            .and_then(Reason::parse)
            .unwrap();
        let outcome = match case["outcome"].as_u64().unwrap() {
            1 => Outcome::Success,
            2 => Outcome::Failed,
            _ => Outcome::NoAnswer,
        };
        assert_eq!(reason.outcome(), outcome, "{}", case["status"]);
        assert_eq!(
            reason == Reason::InvalidNumber,
            case["invalidNumber"].as_bool().unwrap()
        );
        let want = CallReport {
            results: Default::default(),
            reason,
            duration: case["duration"].as_u64().unwrap(),
            detail: case["reason"].as_str().unwrap().to_owned(),
        };
        assert_eq!(
            connect.describe(id).await.unwrap(),
            CallStatus::Ended(want),
            "{}",
            case["status"]
        );
    }
    assert_eq!(
        connect.describe(&live).await.unwrap(),
        CallStatus::InProgress
    );
    assert_eq!(
        connect
            .describe("00000000-0000-4000-8000-000000000000")
            .await
            .unwrap(),
        CallStatus::Unknown
    );
}

#[tokio::test]
async fn contact_attributes_name_our_attempts_and_no_other_contact() {
    as_function(
        Function::CallEvents,
        contact_attributes_name_our_attempts_and_no_other_contact_as_run(),
    )
    .await
}

async fn contact_attributes_name_our_attempts_and_no_other_contact_as_run() {
    let samples = samples();
    let attributes = &samples["getContactAttributes"];
    let connect = provider(serde_json::json!({ "attributes": {
        "ours": attributes["ours"],
        "inbound": attributes["inbound"],
    }}))
    .await;
    let ours = connect.attempt_of("ours").await.unwrap().unwrap();
    assert_eq!(
        ours.signature.as_deref(),
        attributes["ours"]["Attributes"]["signature"].as_str(),
        "the signature beside them, which the engine checks (D29)"
    );
    assert_eq!(
        Some(ours.attempt),
        Some(CallAttempt {
            tenant: Tenant::parse("acme").unwrap(),
            task_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G7").unwrap(),
            contact_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G8").unwrap(),
            attempt: 2,
        })
    );
    assert_eq!(connect.attempt_of("inbound").await.unwrap(), None);
    assert_eq!(connect.attempt_of("gone").await.unwrap(), None);
}

/// The instance's catalog over the recorded numbers (two pages) and flows.
async fn catalog(down: Option<&str>) -> ConnectCatalog {
    let samples = samples();
    let answers = serde_json::json!({
        "numbers": samples["listPhoneNumbersV2"],
        "flows": samples["describeContactFlow"],
        "queues": samples["describeQueue"],
        "down": down,
    });
    ConnectCatalog::new(client(answers).await.0, settings())
}

const ACTIVE: &str = "9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34";
const ARCHIVED: &str = "b71d3e58-2c9a-4f06-8e1b-5a3c7d9f2e41";
const QUEUE_FLOW: &str = "c4e8a2f6-7d1b-4a93-b5c0-3e9f1d7a6b28";

fn assignment(numbers: &[&str], flows: &[&str]) -> Assignment {
    let numbers: Vec<String> = numbers.iter().map(|n| (*n).to_owned()).collect();
    let flows: Vec<(String, String)> = flows
        .iter()
        .map(|id| ((*id).to_owned(), "Flow".to_owned()))
        .collect();
    Assignment::new(&numbers, &flows).unwrap()
}

/// D22: a caller ID must be a number claimed to the instance (found on any page of the list
/// by the instance's ARN), a flow one of its published, active contact flows; the refusal names
/// the entry. What the tenant holds already is not asked about again.
#[tokio::test]
async fn the_catalog_takes_claimed_numbers_and_the_instances_contact_flows() {
    as_function(
        Function::DataSourceApi,
        the_catalog_takes_claimed_numbers_and_the_instances_contact_flows_as_run(),
    )
    .await
}

async fn the_catalog_takes_claimed_numbers_and_the_instances_contact_flows_as_run() {
    let connect = catalog(None).await;
    let none = TenantSettings::default();
    let refusal = |result: Result<(), outbound_model::Error>| {
        let error = result.unwrap_err();
        assert_eq!(error.status_code(), 400, "{error}");
        error.to_string()
    };
    connect
        .check(
            &assignment(&["+12125550100", "+442071234567"], &[ACTIVE]),
            &none,
        )
        .await
        .unwrap();
    assert_eq!(
        refusal(
            connect
                .check(&assignment(&["+12125550101", "+13125550100"], &[]), &none)
                .await
        ),
        "callerIds[1] +13125550100 is not a number the Amazon Connect instance has claimed"
    );
    for (flow, why) in [
        (
            "f0e1d2c3-0000-4000-8000-000000000000",
            "is not a flow of the Amazon Connect instance",
        ),
        (
            "unpublished",
            "is not published in the Amazon Connect instance",
        ),
        (ARCHIVED, "is archived in the Amazon Connect instance"),
        (
            QUEUE_FLOW,
            "is not a contact flow (its type is not CONTACT_FLOW)",
        ),
    ] {
        assert_eq!(
            refusal(
                connect
                    .check(&assignment(&[], &[ACTIVE, flow]), &none)
                    .await
            ),
            format!("contactFlows[1].id {flow} {why}")
        );
    }
    let held = TenantSettings {
        caller_ids: vec!["+13125550100".into()],
        contact_flows: assignment(&[], &[ARCHIVED]).contact_flows,
        ..TenantSettings::default()
    };
    connect
        .check(
            &assignment(&["+13125550100", "+12125550100"], &[ARCHIVED, ACTIVE]),
            &held,
        )
        .await
        .unwrap();
}

/// D22: when Connect cannot answer (failing or throttling past the SDK's retries) the check is
/// 503, never a refusal of the entry; an assignment that adds nothing asks Connect nothing.
#[tokio::test]
async fn a_connect_outage_is_503() {
    as_function(Function::DataSourceApi, a_connect_outage_is_503_as_run()).await
}

async fn a_connect_outage_is_503_as_run() {
    for down in ["InternalServiceException", "ThrottlingException"] {
        let connect = catalog(Some(down)).await;
        let none = TenantSettings::default();
        for new in [
            assignment(&["+12125550100"], &[]),
            assignment(&[], &[ACTIVE]),
        ] {
            let error = connect.check(&new, &none).await.unwrap_err();
            assert_eq!(error.status_code(), 503, "{down}: {error}");
        }
        let held = TenantSettings {
            caller_ids: vec!["+12125550100".into()],
            contact_flows: assignment(&[], &[ACTIVE]).contact_flows,
            ..TenantSettings::default()
        };
        connect
            .check(&assignment(&["+12125550100"], &[ACTIVE]), &held)
            .await
            .unwrap();
    }
}

/// A call to `+12125550199`, attempt 2, with `fields` sent to the flow beside the service's own.
fn call(fields: &[(&str, &str)]) -> CallRequest {
    let attempt = CallAttempt {
        tenant: Tenant::parse("acme").unwrap(),
        task_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G7").unwrap(),
        contact_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G8").unwrap(),
        attempt: 2,
    };
    let sent = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
    CallRequest {
        simulated_results: None,
        queue_id: None,
        attributes: sent.chain(attempt.attributes()).collect(),
        tenant: attempt.tenant,
        task_id: attempt.task_id,
        contact_id: attempt.contact_id,
        attempt: attempt.attempt,
        to: "+12125550199".into(),
        script: None,
        caller_id: None,
        contact_flow_id: None,
        voicemail: Voicemail::HangUp,
    }
}

/// D22 on the wire: a call's own caller ID and flow replace the deployment's, its attributes
/// are the service's four and the task's fields, `LEAVE_MESSAGE` waits for the machine's
/// prompt; without them, the deployment's number and flow. In queue mode the queue is sent and
/// no number, whatever the call names.
#[tokio::test]
async fn start_outbound_voice_contact_carries_each_calls_choices() {
    as_function(
        Function::Dialer,
        start_outbound_voice_contact_carries_each_calls_choices_as_run(),
    )
    .await
}

async fn start_outbound_voice_contact_carries_each_calls_choices_as_run() {
    let (connect, stand_in) =
        provider_with(json!({}), ("CONNECT_SOURCE_PHONE_NUMBER", "+442038089410")).await;
    assert!(connect.per_call_caller_id());
    let mut chosen = call(&[("customerName", "Ada Lovelace"), ("e164", "+12125550199")]);
    chosen.caller_id = Some("+12125550100".into());
    chosen.contact_flow_id = Some("3f6e1a2b-7c4d-4e8f-9a0b-1c2d3e4f5a6b".into());
    chosen.voicemail = Voicemail::LeaveMessage;
    let started = samples()["startOutboundVoiceContact"]["response"]["ContactId"].clone();
    assert_eq!(json!(connect.place(&chosen).await.unwrap()), started);
    connect.place(&call(&[])).await.unwrap();
    let sent = stand_in.started.lock().unwrap().clone();
    let own = json!({
        "tenant": "acme",
        "taskId": "01J9Z3K8Q4W6N2V5B7C1D3F5G7",
        "contactId": "01J9Z3K8Q4W6N2V5B7C1D3F5G8",
        "attempt": "2",
    });
    let mut with_fields = own.clone();
    with_fields["customerName"] = json!("Ada Lovelace");
    with_fields["e164"] = json!("+12125550199");
    assert_eq!(
        sent,
        [
            json!({
                "InstanceId": INSTANCE,
                "ContactFlowId": "3f6e1a2b-7c4d-4e8f-9a0b-1c2d3e4f5a6b",
                "DestinationPhoneNumber": "+12125550199",
                "SourcePhoneNumber": "+12125550100",
                "ClientToken": "01J9Z3K8Q4W6N2V5B7C1D3F5G7-01J9Z3K8Q4W6N2V5B7C1D3F5G8-2",
                "Attributes": with_fields,
                "AnswerMachineDetectionConfig": {
                    "EnableAnswerMachineDetection": true,
                    "AwaitAnswerMachinePrompt": true,
                },
                "TrafficType": "CAMPAIGN",
            }),
            json!({
                "InstanceId": INSTANCE,
                "ContactFlowId": FLOW,
                "DestinationPhoneNumber": "+12125550199",
                "SourcePhoneNumber": "+442038089410",
                "ClientToken": "01J9Z3K8Q4W6N2V5B7C1D3F5G7-01J9Z3K8Q4W6N2V5B7C1D3F5G8-2",
                "Attributes": own,
                // The SDK leaves a false flag off the wire: Connect's default, no waiting.
                "AnswerMachineDetectionConfig": {"EnableAnswerMachineDetection": true},
                "TrafficType": "CAMPAIGN",
            }),
        ]
    );

    let (queued, stand_in) = provider_with(json!({}), ("CONNECT_QUEUE_ID", QUEUE)).await;
    assert!(!queued.per_call_caller_id());
    queued.place(&chosen).await.unwrap();
    let sent = stand_in.started.lock().unwrap()[0].clone();
    assert_eq!(sent["QueueId"], QUEUE);
    assert_eq!(sent.get("SourcePhoneNumber"), None);
    assert_eq!(
        sent["ContactFlowId"],
        "3f6e1a2b-7c4d-4e8f-9a0b-1c2d3e4f5a6b"
    );
}

const SALES: &str = "7d3f1a2b-6c4e-4b8a-9f0d-1e2a3b4c5d6e";
const RENEWALS: &str = "8e4a2b3c-7d5f-4c9b-a01e-2f3b4c5d6e7f";
const DISABLED: &str = "9f5b3c4d-8e6a-4dac-b12f-3a4c5d6e7f80";

/// D30: the tick reads every queue in use in one GetCurrentMetricData (filtered by the queues
/// and the voice channel, grouped by queue), whatever the number of tasks on them: agents
/// available, on contact, and in after-contact work (soon free); a queue Connect reports
/// nothing for has no agent.
#[tokio::test]
async fn the_queues_agents_come_from_one_get_current_metric_data() {
    // The tick reads them, and so does a pace job on the dialer between ticks.
    for function in [Function::DialerTick, Function::Dialer] {
        as_function(
            function,
            the_queues_agents_come_from_one_get_current_metric_data_as_run(),
        )
        .await
    }
}

async fn the_queues_agents_come_from_one_get_current_metric_data_as_run() {
    use outbound_model::pacing::QueueAgents;
    let (connect, stand_in) = provider_with(json!({}), ("CONNECT_QUEUE_ID", QUEUE)).await;
    let quiet = "0a6c4d5e-9f7b-4ebd-823a-4b5d6e7f8091";
    let queues = [SALES.to_owned(), RENEWALS.to_owned(), quiet.to_owned()];
    let agents = connect.queue_agents(&queues).await.unwrap();
    let state = |available, on_contact, soon_free| QueueAgents {
        available,
        on_contact,
        soon_free,
    };
    assert_eq!(
        agents,
        std::collections::BTreeMap::from([
            (SALES.to_owned(), state(3, 2, 1)),
            (RENEWALS.to_owned(), state(0, 4, 0)),
            (quiet.to_owned(), QueueAgents::default()),
        ])
    );
    let sent = stand_in.metrics.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "one request for every queue");
    assert_eq!(sent[0]["Filters"]["Queues"], json!(queues));
    assert_eq!(sent[0]["Filters"]["Channels"], json!(["VOICE"]));
    assert_eq!(sent[0]["Groupings"], json!(["QUEUE"]));
    let names: Vec<&str> = sent[0]["CurrentMetrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|metric| metric["Name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "AGENTS_AVAILABLE",
            "AGENTS_ON_CONTACT",
            "AGENTS_AFTER_CONTACT_WORK"
        ]
    );
}

/// D30: a queue the operator assigns must be an enabled queue of the instance
/// (DescribeQueue); the refusal names the entry, and a queue the tenant holds is not asked
/// about again.
#[tokio::test]
async fn the_catalog_takes_the_instances_enabled_queues() {
    as_function(
        Function::DataSourceApi,
        the_catalog_takes_the_instances_enabled_queues_as_run(),
    )
    .await
}

async fn the_catalog_takes_the_instances_enabled_queues_as_run() {
    let connect = catalog(None).await;
    let with = |queues: &[&str]| {
        let queues: Vec<(String, String)> = queues
            .iter()
            .map(|id| ((*id).to_owned(), "Queue".to_owned()))
            .collect();
        Assignment::with_queues(&[], &[], &queues).unwrap()
    };
    let none = TenantSettings::default();
    connect
        .check(&with(&[SALES, RENEWALS]), &none)
        .await
        .unwrap();
    for (queue, why) in [
        (DISABLED, "is disabled in the Amazon Connect instance"),
        (
            "1b7d5e6f-0a8c-4fce-934b-5c6e7f8091a2",
            "is not a queue of the Amazon Connect instance",
        ),
    ] {
        let error = connect
            .check(&with(&[SALES, queue]), &none)
            .await
            .unwrap_err();
        assert_eq!(error.status_code(), 400);
        assert_eq!(error.to_string(), format!("queues[1].id {queue} {why}"));
    }
    let held = TenantSettings {
        queues: with(&[DISABLED]).queues.unwrap(),
        ..TenantSettings::default()
    };
    connect
        .check(&with(&[DISABLED, SALES]), &held)
        .await
        .unwrap();
    let down = catalog(Some("InternalServiceException")).await;
    let error = down.check(&with(&[SALES]), &none).await.unwrap_err();
    assert_eq!(error.status_code(), 503);
}

//! The Amazon Connect provider through the real SDK against answers in the API's documented
//! shapes (`events/connect-api-samples.json`), served by a stand-in on loopback: every
//! answering-machine detection status DescribeContact can report maps to its D13 outcome, a
//! live contact stays in progress, and GetContactAttributes names our calls' attempts and no
//! other contact's.

use axum::extract::State;
use axum::http::Uri;
use axum::Router;
use outbound_adapters::aws::Lazy;
use outbound_dialing::connect::{ConnectProvider, ConnectSettings};
use outbound_dialing::{CallStatus, Provider};
use outbound_model::call::{CallAttempt, CallReport, Outcome};
use outbound_model::{Id, Tenant};
use serde_json::Value;
use std::sync::Arc;

const INSTANCE: &str = "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915";

fn samples() -> Value {
    serde_json::from_str(include_str!("../events/connect-api-samples.json")).unwrap()
}

/// Answers `GET /contacts/{instance}/{contact}` (DescribeContact) and
/// `GET /contact/attributes/{instance}/{contact}` (GetContactAttributes) from `answers`, keyed
/// by contact id; anything else is Connect's 404.
async fn answer(State(answers): State<Arc<Value>>, uri: Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = uri.path();
    let (kind, rest) = if let Some(rest) = path.strip_prefix(&format!("/contacts/{INSTANCE}/")) {
        ("describe", rest)
    } else if let Some(rest) = path.strip_prefix(&format!("/contact/attributes/{INSTANCE}/")) {
        ("attributes", rest)
    } else {
        ("", "")
    };
    match answers.get(kind).and_then(|by_id| by_id.get(rest)) {
        Some(body) => axum::Json(body.clone()).into_response(),
        None => (
            axum::http::StatusCode::NOT_FOUND,
            [("x-amzn-ErrorType", "ResourceNotFoundException")],
            axum::Json(serde_json::json!({"Message": "Contact not found"})),
        )
            .into_response(),
    }
}

/// A Connect provider whose SDK client talks to a stand-in answering `answers`.
async fn provider(answers: Value) -> ConnectProvider {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new().fallback(answer).with_state(Arc::new(answers));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = aws_sdk_connect::Config::builder()
        .behavior_version(aws_sdk_connect::config::BehaviorVersion::latest())
        .region(aws_sdk_connect::config::Region::new("eu-west-1"))
        .credentials_provider(aws_sdk_connect::config::Credentials::for_tests())
        .endpoint_url(endpoint)
        .build();
    let settings = ConnectSettings::from_lookup(|name| match name {
        "CONNECT_INSTANCE_ID" => Some(INSTANCE.into()),
        "CONNECT_CONTACT_FLOW_ID" => Some("9e4a7c12-3b8d-4f60-a1e5-d27f0b6c8a34".into()),
        "CONNECT_QUEUE_ID" => Some("2a7c9e14-5b3d-4f8a-b6e2-0c9d1f3a7e58".into()),
        _ => None,
    })
    .unwrap();
    ConnectProvider::new(
        Lazy::new(move || aws_sdk_connect::Client::from_conf(config.clone())),
        settings,
    )
}

#[tokio::test]
async fn every_detection_status_of_describe_contact_has_its_outcome() {
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
        let outcome = match case["outcome"].as_u64().unwrap() {
            1 => Outcome::Success,
            2 => Outcome::Failed,
            _ => Outcome::NoAnswer,
        };
        let want = CallReport {
            results: Default::default(),
            outcome,
            duration: case["duration"].as_u64().unwrap(),
            invalid_number: case["invalidNumber"].as_bool().unwrap(),
            reason: case["reason"].as_str().unwrap().to_owned(),
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
    let samples = samples();
    let attributes = &samples["getContactAttributes"];
    let connect = provider(serde_json::json!({ "attributes": {
        "ours": attributes["ours"],
        "inbound": attributes["inbound"],
    }}))
    .await;
    assert_eq!(
        connect.attempt_of("ours").await.unwrap(),
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

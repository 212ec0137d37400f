//! `template.yaml` checked as data: what cfn-lint cannot know about our intent. The EventBridge
//! rule that feeds the call-events queue is matched, with EventBridge's matching rules for the
//! parts of a pattern it uses (exact values listed in arrays, nested objects), against recorded
//! Amazon Connect contact events (D13): our own API-started calls match, the instance's other
//! calls (inbound, agent-dialled outbound) do not. The page-token secret reaches only the
//! functions that sign list tokens, and every queue-fed background function has a concurrency
//! limit, so it can never take the account's Lambda concurrency from the API and the dialer.

use serde_json::Value as Json;
use yaml_serde::Value as Yaml;

fn template() -> Yaml {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml");
    yaml_serde::from_str(&std::fs::read_to_string(path).expect("template.yaml is readable"))
        .expect("template.yaml is YAML")
}

/// A resource of the template by its logical id.
fn resource<'a>(template: &'a Yaml, id: &str) -> &'a Yaml {
    &template["Resources"][id]
}

/// `!Sub` strings resolved with the values a deployment would give them.
fn resolve(value: &Yaml, parameters: &[(&str, &str)]) -> Option<String> {
    match value {
        Yaml::String(text) => Some(text.clone()),
        Yaml::Tagged(tagged) if tagged.tag == "Sub" => {
            let mut text = tagged.value.as_str()?.to_owned();
            for (name, value) in parameters {
                text = text.replace(&format!("${{{name}}}"), value);
            }
            Some(text)
        }
        _ => None,
    }
}

/// EventBridge's matching, for patterns of arrays of exact values and nested objects: every
/// field of the pattern must be in the event, and its value one of the listed ones.
fn matches(pattern: &Yaml, event: &Json, parameters: &[(&str, &str)]) -> bool {
    let Yaml::Mapping(fields) = pattern else {
        panic!("a pattern is an object of fields: {pattern:?}");
    };
    fields.iter().all(|(name, wanted)| {
        let name = name.as_str().expect("field names are strings");
        let Some(value) = event.get(name) else {
            return false;
        };
        match wanted {
            Yaml::Sequence(values) => {
                let value = value.as_str();
                values.iter().any(|listed| {
                    resolve(listed, parameters).as_deref() == value && value.is_some()
                })
            }
            Yaml::Mapping(_) => matches(wanted, value, parameters),
            other => panic!("{name}: only arrays and objects are used in patterns: {other:?}"),
        }
    })
}

fn recorded(name: &str) -> Json {
    let path = format!("{}/events/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).expect("a recorded event")).unwrap()
}

/// The deployment the recorded events come from.
const DEPLOYED: [(&str, &str); 4] = [
    ("AWS::Partition", "aws"),
    ("AWS::Region", "eu-west-1"),
    ("AWS::AccountId", "482915736204"),
    ("ConnectInstanceId", "5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915"),
];

#[test]
fn the_contact_event_rule_takes_only_calls_the_service_started() {
    let template = template();
    let rule = resource(&template, "ConnectContactEventsRule");
    assert_eq!(rule["Type"].as_str(), Some("AWS::Events::Rule"));
    assert_eq!(
        rule["Properties"]["Targets"][0]["Id"].as_str(),
        Some("CallEventsQueue")
    );
    let pattern = &rule["Properties"]["EventPattern"];
    for ours in [
        "connect-disconnected-human",
        "connect-disconnected-busy",
        "connect-disconnected-voicemail",
        "connect-disconnected-unanswered",
        "connect-disconnected-invalid-number",
    ] {
        assert!(
            matches(pattern, &recorded(ours), &DEPLOYED),
            "{ours} must match"
        );
    }
    for theirs in [
        "connect-disconnected-inbound",
        "connect-disconnected-agent-outbound",
        "connect-connected-to-system",
    ] {
        assert!(
            !matches(pattern, &recorded(theirs), &DEPLOYED),
            "{theirs} must not match"
        );
    }
    let elsewhere = [
        ("ConnectInstanceId", "another-instance"),
        DEPLOYED[0],
        DEPLOYED[1],
        DEPLOYED[2],
    ];
    assert!(
        !matches(pattern, &recorded("connect-disconnected-human"), &elsewhere),
        "another instance's calls must not match"
    );
}

/// The functions of the template, by logical id.
fn functions(template: &Yaml) -> Vec<(&str, &Yaml)> {
    let Yaml::Mapping(resources) = &template["Resources"] else {
        panic!("Resources is a mapping");
    };
    resources
        .iter()
        .filter(|(_, resource)| resource["Type"].as_str() == Some("AWS::Serverless::Function"))
        .map(|(id, resource)| (id.as_str().expect("logical ids are strings"), resource))
        .collect()
}

#[test]
fn the_page_token_secret_reaches_only_the_api_functions() {
    let template = template();
    let globals = &template["Globals"]["Function"]["Environment"]["Variables"];
    assert!(
        globals.get("PAGE_TOKEN_SECRET").is_none(),
        "not in Globals, where every function's configuration would show it"
    );
    let mut holders: Vec<&str> = functions(&template)
        .into_iter()
        .filter(|(_, function)| {
            function["Properties"]["Environment"]["Variables"]
                .get("PAGE_TOKEN_SECRET")
                .is_some()
        })
        .map(|(id, _)| id)
        .collect();
    holders.sort();
    assert_eq!(holders, ["DataSourceApiFunction", "TaskApiFunction"]);
    let secret = resource(&template, "PageTokenSecret");
    assert_eq!(
        secret["Type"].as_str(),
        Some("AWS::SecretsManager::Secret"),
        "generated by Secrets Manager, never a parameter's default"
    );
}

#[test]
fn background_queue_functions_have_a_concurrency_limit() {
    let template = template();
    for id in [
        "ContactImportFunction",
        "ExporterFunction",
        "ReclaimFunction",
    ] {
        let function = resource(&template, id);
        let Yaml::Mapping(events) = &function["Properties"]["Events"] else {
            panic!("{id} has events");
        };
        let queues: Vec<&Yaml> = events
            .values()
            .filter(|event| event["Type"].as_str() == Some("SQS"))
            .collect();
        assert!(!queues.is_empty(), "{id} is fed by a queue");
        for event in queues {
            let limit = &event["Properties"]["ScalingConfig"]["MaximumConcurrency"];
            assert!(
                !limit.is_null(),
                "{id}: its queue's MaximumConcurrency is set"
            );
        }
    }
}

//! `template.yaml` checked as data: what cfn-lint cannot know about our intent. The EventBridge
//! rule that feeds the call-events queue is matched, with EventBridge's matching rules for the
//! parts of a pattern it uses (exact values listed in arrays, nested objects), against recorded
//! Amazon Connect contact events (D13): our own API-started calls match, the instance's other
//! calls (inbound, agent-dialled outbound) do not. The page-token secret reaches only the
//! functions that sign list tokens, and every queue-fed background function has a concurrency
//! limit, so it can never take the account's Lambda concurrency from the API and the dialer.
//! No function's environment holds a secret's value: each names its secret by ARN, and its role
//! reads that secret and no other (D32).
//!
//! The console (D21): its bucket is private and read only by its distribution; it speaks to its
//! own origin (D29): the distribution serves the API and Cognito's token endpoint, its CSP
//! connects to nothing else but the upload bucket, its config.json names no other host; the
//! API's CORS allows only the origins a parameter names, never "*", and no route takes the
//! browsers' preflights behind the authorizer. The domain events (D20): the publisher's stream
//! filter, matched against stream records keyed as the store keys them, lets through only new
//! outbox items; nothing holds its shard up for ever (bounded retries, then a dead-letter queue;
//! the entries the bus refuses for good to another), each dead-letter queue has an alarm; only
//! the publisher may put events, and only on the stack's bus; it may send to its two dead-letter
//! queues and nowhere else; the bus refuses the service's events from anyone else.
//!
//! Least privilege and bounds: every function has a role of its own, which SAM adds nothing to
//! (what the roles allow is checked against what the code does by `scripts/iam_check.py`);
//! every queue-fed function has a concurrency limit, the API functions keep capacity of their
//! own, and one tenant's jobs never take every worker; the alarms always notify a topic. The API
//! serves each route as the function the template routes it to. Only the stack's Amazon Connect
//! instance may invoke the flow-results function (D22), whose role updates call records only.

use outbound_adapters::store::keys;
use outbound_app::config::secrets::{
    CALL_SIGNING_SECRET_ARN, ORIGIN_VERIFY_SECRET_ARN, PAGE_TOKEN_SECRET_ARN, SECRETS,
};
use outbound_model::{Id, Tenant};
use serde_json::{json, Value as Json};
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

/// The functions whose own variables hold `variable` (sorted), after checking that the globals,
/// where every function's configuration would show it, do not.
fn holders_of<'a>(template: &'a Yaml, variable: &str) -> Vec<&'a str> {
    let globals = &template["Globals"]["Function"]["Environment"]["Variables"];
    assert!(
        globals.get(variable).is_none(),
        "{variable} is not in Globals, where every function's configuration would show it"
    );
    let mut holders: Vec<&str> = functions(template)
        .into_iter()
        .filter(|(_, function)| {
            function["Properties"]["Environment"]["Variables"]
                .get(variable)
                .is_some()
        })
        .map(|(id, _)| id)
        .collect();
    holders.sort();
    holders
}

/// `id` is a secret Secrets Manager generates, never a parameter's default.
fn assert_generated_secret(template: &Yaml, id: &str) {
    assert_eq!(
        resource(template, id)["Type"].as_str(),
        Some("AWS::SecretsManager::Secret"),
        "{id}"
    );
}

/// The page-token secret is named (by ARN, D32) to the API functions only.
#[test]
fn the_page_token_secret_reaches_only_the_api_functions() {
    let template = template();
    assert_eq!(
        holders_of(&template, PAGE_TOKEN_SECRET_ARN),
        ["DataSourceApiFunction", "TaskApiFunction"]
    );
    assert_generated_secret(&template, "PageTokenSecret");
}

/// D32: the distribution proves each request it passes to the API with the secret the API
/// functions (and only they) read: its /api/* origin adds X-Origin-Verify, the value a dynamic
/// reference to that same secret, so a request sent to the API's own domain directly is refused.
#[test]
fn the_distribution_proves_itself_with_the_secret_the_api_functions_read() {
    let template = template();
    assert_eq!(
        holders_of(&template, ORIGIN_VERIFY_SECRET_ARN),
        ["DataSourceApiFunction", "TaskApiFunction"]
    );
    assert_generated_secret(&template, "OriginVerifySecret");
    let config = &resource(&template, "ConsoleDistribution")["Properties"]["DistributionConfig"];
    let (_, origin) = proxied(config, "/api/*");
    let headers = added(origin)["OriginCustomHeaders"]
        .as_sequence()
        .expect("the origin's custom headers");
    let [header] = headers.as_slice() else {
        panic!("one header: {headers:?}")
    };
    assert_eq!(
        header["HeaderName"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some(outbound_model::origin::ORIGIN_HEADER)
    );
    assert_eq!(
        intrinsic_text(&header["HeaderValue"], "Sub"),
        Some("{{resolve:secretsmanager:${OriginVerifySecret}:SecretString}}")
    );
}

/// D29: the key that signs each call's own attributes reaches the functions that place calls
/// and read them back, and no other (named by ARN, D32); Secrets Manager generates it.
#[test]
fn the_call_signing_key_reaches_only_the_functions_that_sign_or_check_calls() {
    let template = template();
    assert_eq!(
        holders_of(&template, CALL_SIGNING_SECRET_ARN),
        [
            "CallEventsFunction",
            "DialerFunction",
            "DialerTickFunction",
            "FlowResultsFunction"
        ]
    );
    assert_generated_secret(&template, "CallSigningSecret");
}

/// Whether a literal looks like a key rather than a setting: long, unbroken, and of the
/// characters keys are written in (letters, digits, `+/=_-`), with a digit and a letter.
fn looks_like_a_key(text: &str) -> bool {
    text.len() >= 24
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=_-".contains(c))
        && text.chars().any(|c| c.is_ascii_digit())
        && text.chars().any(|c| c.is_ascii_alphabetic())
}

/// Every statement anywhere in `value` (a mapping with `Effect` and `Action`), a condition's
/// branches included.
fn all_statements(value: &Yaml) -> Vec<&Yaml> {
    match value {
        Yaml::Mapping(fields) => {
            let own =
                (value.get("Effect").is_some() && value.get("Action").is_some()).then_some(value);
            own.into_iter()
                .chain(fields.values().flat_map(all_statements))
                .collect()
        }
        Yaml::Sequence(items) => items.iter().flat_map(all_statements).collect(),
        Yaml::Tagged(tagged) => all_statements(&tagged.value),
        _ => Vec::new(),
    }
}

/// D32: no function's environment holds a secret's value. No variable of the globals or of a
/// function is a dynamic reference (`{{resolve:...}}`, which CloudFormation replaces with the
/// value before Lambda stores it), a key's plain variable, a NoEcho parameter or a literal that
/// looks like a key. Each `*_SECRET_ARN` names one of the stack's Secrets Manager secrets, and
/// the function's role may read that secret, by its ARN, and nothing else of Secrets Manager; no
/// other statement of the template grants a Secrets Manager action.
#[test]
fn no_environment_holds_a_secret_and_each_function_reads_only_its_own() {
    let template = template();
    let parameters = &template["Parameters"];
    let mut environments = vec![(
        "Globals",
        &template["Globals"]["Function"]["Environment"]["Variables"],
    )];
    for (id, function) in functions(&template) {
        environments.push((id, &function["Properties"]["Environment"]["Variables"]));
    }
    for (id, variables) in &environments {
        for (name, value) in variables.as_mapping().into_iter().flatten() {
            let name = name.as_str().expect("variable names are strings");
            for text in strings(value) {
                assert!(
                    !text.contains("{{resolve:"),
                    "{id}: {name} is resolved: {text}"
                );
            }
            if let Yaml::String(literal) = value {
                assert!(!looks_like_a_key(literal), "{id}: {name} looks like a key");
            }
            if let Some(parameter) = intrinsic_text(value, "Ref") {
                assert!(
                    parameters[parameter]["NoEcho"].as_bool() != Some(true),
                    "{id}: {name} is the secret parameter {parameter}"
                );
            }
            assert!(
                SECRETS.iter().all(|secret| secret.name != name),
                "{id}: {name} would hold the key's value; name its secret by ARN"
            );
        }
    }
    assert!(looks_like_a_key("0123456789abcdefGHIJKLMNOPqrstuv"));
    assert!(!looks_like_a_key(
        "arn:aws:sqs:eu-west-1:482915736204:outbound"
    ));

    let mut granted = 0;
    for (id, function) in functions(&template) {
        let variables = &function["Properties"]["Environment"]["Variables"];
        let mut named: Vec<&str> = variables
            .as_mapping()
            .into_iter()
            .flatten()
            .filter(|(name, _)| name.as_str().is_some_and(|n| n.ends_with("_SECRET_ARN")))
            .map(|(name, value)| {
                let secret = intrinsic_text(value, "Ref")
                    .unwrap_or_else(|| panic!("{id}: {name:?} is !Ref of a secret"));
                assert_eq!(
                    resource(&template, secret)["Type"].as_str(),
                    Some("AWS::SecretsManager::Secret"),
                    "{id}: {name:?}"
                );
                secret
            })
            .collect();
        let role = intrinsic_text(&function["Properties"]["Role"], "GetAtt")
            .and_then(|arn| arn.strip_suffix(".Arn"))
            .unwrap_or_else(|| panic!("{id}: a role of the stack"));
        let role = resource(&template, role);
        let mut policies = vec![role];
        for managed in role["Properties"]["ManagedPolicyArns"]
            .as_sequence()
            .into_iter()
            .flatten()
        {
            policies.extend(intrinsic_text(managed, "Ref").map(|id| resource(&template, id)));
        }
        let mut read: Vec<&str> = Vec::new();
        for statement in policies.into_iter().flat_map(all_statements) {
            let actions = actions(statement);
            if !actions.iter().any(|a| a.starts_with("secretsmanager:")) {
                continue;
            }
            granted += 1;
            assert_eq!(statement["Effect"].as_str(), Some("Allow"), "{id}");
            assert_eq!(
                actions,
                ["secretsmanager:GetSecretValue"],
                "{id}: reads only"
            );
            assert!(statement["Condition"].is_null(), "{id}");
            let secret = intrinsic_text(&statement["Resource"], "Ref")
                .unwrap_or_else(|| panic!("{id}: one secret, by its ARN (!Ref)"));
            read.push(secret);
        }
        named.sort_unstable();
        read.sort_unstable();
        assert_eq!(read, named, "{id}: reads exactly the secrets it names");
    }
    let everywhere = all_statements(&template["Resources"])
        .into_iter()
        .filter(|statement| {
            strings(&statement["Action"])
                .iter()
                .any(|a| a.starts_with("secretsmanager:") || *a == "*")
        })
        .count();
    assert_eq!(
        everywhere, granted,
        "Secrets Manager only in the functions' own reads"
    );
    assert_eq!(
        granted, 8,
        "the two API functions (two secrets each) and the four dialing functions"
    );
}

#[test]
fn every_queue_fed_function_has_a_concurrency_limit() {
    let template = template();
    let mut fed = Vec::new();
    for (id, function) in functions(&template) {
        let Yaml::Mapping(events) = &function["Properties"]["Events"] else {
            continue;
        };
        for event in events.values() {
            if event["Type"].as_str() != Some("SQS") {
                continue;
            }
            fed.push(id);
            let limit = &event["Properties"]["ScalingConfig"]["MaximumConcurrency"];
            let parameter = intrinsic_text(limit, "Ref")
                .unwrap_or_else(|| panic!("{id}: its queue's MaximumConcurrency is a parameter"));
            assert!(
                template["Parameters"][parameter]["MinValue"].as_i64() >= Some(2),
                "{id}: {parameter} is at least 2, SQS's least"
            );
        }
    }
    fed.sort_unstable();
    assert_eq!(
        fed,
        [
            "CallEventsFunction",
            "ContactImportFunction",
            "DialerFunction",
            "ExporterFunction",
            "ReclaimFunction"
        ]
    );
}

#[test]
fn the_api_functions_keep_capacity_background_work_cannot_take() {
    let template = template();
    for id in ["DataSourceApiFunction", "TaskApiFunction"] {
        let reserved = &resource(&template, id)["Properties"]["ReservedConcurrentExecutions"];
        let choice = intrinsic(reserved, "If")
            .and_then(Yaml::as_sequence)
            .unwrap_or_else(|| panic!("{id}: reserved unless the parameter is 0: {reserved:?}"));
        assert_eq!(choice[0].as_str(), Some("ReserveApiConcurrency"), "{id}");
        assert_eq!(
            intrinsic_text(&choice[1], "Ref"),
            Some("ApiReservedConcurrency"),
            "{id}"
        );
    }
    let default = template["Parameters"]["ApiReservedConcurrency"]["Default"].as_i64();
    assert!(default > Some(0), "reserved by default: {default:?}");
}

/// A tenant's share of the background work (D8, D32) is at most a third of the workers, so
/// no fewer than three tenants' jobs hold every worker while another tenant's wait: imports,
/// export jobs, and the recalls whose jobs share the dial queue's workers.
#[test]
fn one_tenants_jobs_never_take_every_worker() {
    let template = template();
    let globals = &template["Globals"]["Function"]["Environment"]["Variables"];
    for (variable, cap, workers) in [
        (
            "TENANT_RUNNING_EXPORTS",
            "TenantRunningExports",
            "ExportMaxConcurrency",
        ),
        (
            "TENANT_RUNNING_IMPORTS",
            "TenantRunningImports",
            "ImportMaxConcurrency",
        ),
        (
            "TENANT_RUNNING_RECALLS",
            "TenantRunningRecalls",
            "DialerMaxConcurrency",
        ),
    ] {
        assert_eq!(
            intrinsic_text(&globals[variable], "Ref"),
            Some(cap),
            "{variable}"
        );
        let default = |name: &str| {
            template["Parameters"][name]["Default"]
                .as_i64()
                .unwrap_or_else(|| panic!("{name} has a default"))
        };
        assert!(
            3 * default(cap) <= default(workers),
            "{cap} ({}) at most a third of {workers} ({})",
            default(cap),
            default(workers)
        );
    }
}

/// D29: one tenant cannot get the others refused at the edge: the stage's throttle sits above
/// twenty tenants at their full rate and burst, and the API functions' reserved executions
/// above several tenants' requests in flight; the dial jobs are bounded by the dial queue's
/// workers, which the tick is told.
#[test]
fn the_edge_holds_twenty_tenants_at_their_full_rate() {
    let template = template();
    let globals = &template["Globals"]["Function"]["Environment"]["Variables"];
    let variable = |name: &str| -> i64 {
        globals[name]
            .as_str()
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} is a number in Globals"))
    };
    let default = |name: &str| {
        template["Parameters"][name]["Default"]
            .as_i64()
            .unwrap_or_else(|| panic!("{name} has a default"))
    };
    assert!(default("ApiThrottlingRateLimit") > 20 * variable("TENANT_REQUESTS_PER_SECOND"));
    assert!(default("ApiThrottlingBurstLimit") > 20 * variable("TENANT_REQUEST_BURST"));
    // D32: room above five tenants at their cap, not just the five of them.
    let five_at_their_cap = 5 * variable("TENANT_REQUESTS_IN_FLIGHT");
    assert!(
        default("ApiReservedConcurrency")
            > five_at_their_cap + 2 * variable("TENANT_REQUESTS_IN_FLIGHT"),
        "ApiReservedConcurrency {} leaves no room above {five_at_their_cap}",
        default("ApiReservedConcurrency")
    );
    assert_eq!(
        intrinsic_text(&globals["DIAL_WORKERS"], "Ref"),
        Some("DialerMaxConcurrency")
    );
}

/// What a CloudFormation short form (`!Ref`, `!Sub`, `!GetAtt`, `!If`, ...) holds, if `value` is
/// that one.
fn intrinsic<'a>(value: &'a Yaml, name: &str) -> Option<&'a Yaml> {
    match value {
        Yaml::Tagged(tagged) if tagged.tag == name => Some(&tagged.value),
        _ => None,
    }
}

/// The text a short form holds, e.g. `ConsoleBucket` of `!Ref ConsoleBucket`.
fn intrinsic_text<'a>(value: &'a Yaml, name: &str) -> Option<&'a str> {
    intrinsic(value, name).and_then(|held| match held {
        Yaml::String(text) => Some(text.as_str()),
        _ => None,
    })
}

/// Every string anywhere in `value`, tags looked through.
fn strings(value: &Yaml) -> Vec<&str> {
    match value {
        Yaml::String(text) => vec![text.as_str()],
        Yaml::Sequence(items) => items.iter().flat_map(strings).collect(),
        Yaml::Mapping(fields) => fields
            .iter()
            .flat_map(|(name, value)| strings(name).into_iter().chain(strings(value)))
            .collect(),
        Yaml::Tagged(tagged) => strings(&tagged.value),
        _ => Vec::new(),
    }
}

/// The strings of a list.
fn texts(list: &Yaml) -> Vec<&str> {
    list.as_sequence()
        .unwrap_or_else(|| panic!("a list: {list:?}"))
        .iter()
        .filter_map(Yaml::as_str)
        .collect()
}

/// A statement's actions, whether one or a list.
fn actions(statement: &Yaml) -> Vec<&str> {
    match &statement["Action"] {
        Yaml::String(action) => vec![action.as_str()],
        Yaml::Sequence(list) => list.iter().filter_map(Yaml::as_str).collect(),
        other => panic!("an action or a list of them: {other:?}"),
    }
}

fn statements(policy: &Yaml) -> &[Yaml] {
    policy["PolicyDocument"]["Statement"]
        .as_sequence()
        .expect("a policy's statements are a list")
}

/// The statements of a role's inline policies; one that a condition adds (`!If [condition,
/// statement, !Ref AWS::NoValue]`) as the statement it adds.
fn role_statements(role: &Yaml) -> Vec<&Yaml> {
    role["Properties"]["Policies"]
        .as_sequence()
        .into_iter()
        .flatten()
        .flat_map(|policy| statements(policy).iter())
        .map(|statement| {
            intrinsic(statement, "If")
                .and_then(|branches| branches.get(1))
                .unwrap_or(statement)
        })
        .collect()
}

/// Each function runs with a role of its own that only Lambda may take, and that SAM adds
/// nothing to: no AWS managed policy (AWSLambdaSQSQueueExecutionRole receives and deletes on
/// every queue, AWSLambdaDynamoDBExecutionRole reads every stream), only the stack's own.
#[test]
fn every_function_has_a_role_of_its_own_with_only_the_stacks_policies() {
    let template = template();
    let mut roles = Vec::new();
    for (id, function) in functions(&template) {
        let properties = &function["Properties"];
        assert!(properties["Policies"].is_null(), "{id}: no SAM policies");
        let role = intrinsic_text(&properties["Role"], "GetAtt")
            .and_then(|arn| arn.strip_suffix(".Arn"))
            .unwrap_or_else(|| panic!("{id}: a role of the stack"));
        assert!(!roles.contains(&role), "{id}: {role} is another's too");
        roles.push(role);
        let role = resource(&template, role);
        assert_eq!(role["Type"].as_str(), Some("AWS::IAM::Role"), "{id}");
        let trust = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
            .as_sequence()
            .expect("a trust policy");
        assert_eq!(trust.len(), 1, "{id}");
        assert_eq!(
            trust[0]["Principal"]["Service"].as_str(),
            Some("lambda.amazonaws.com"),
            "{id}"
        );
        for managed in role["Properties"]["ManagedPolicyArns"]
            .as_sequence()
            .into_iter()
            .flatten()
        {
            let policy = intrinsic_text(managed, "Ref")
                .unwrap_or_else(|| panic!("{id}: only the stack's managed policies: {managed:?}"));
            assert_eq!(
                resource(&template, policy)["Type"].as_str(),
                Some("AWS::IAM::ManagedPolicy"),
                "{id}: {policy}"
            );
        }
        for statement in role_statements(role) {
            assert_eq!(statement["Effect"].as_str(), Some("Allow"), "{id}");
            for action in actions(statement) {
                assert!(
                    !action.ends_with(":*") && action != "*",
                    "{id}: every action by name: {action}"
                );
            }
        }
    }
    assert_eq!(roles.len(), 10);
}

/// Amazon Connect's flows reach the flow-results function (D22): only the stack's instance of
/// the stack's account may invoke it, the instance lists it for its flows, both only with Amazon
/// Connect, and its role writes call records and nothing else (it only checks, before it puts
/// a pending record, that the attempt is in flight).
#[test]
fn only_the_instance_invokes_the_flow_results_function_which_writes_call_records_only() {
    let template = template();
    let instance =
        "arn:aws:connect:eu-west-1:482915736204:instance/5c1b0f2e-8d4a-4e6b-9a37-2f61c0d8e915";
    let permission = resource(&template, "FlowResultsConnectPermission");
    assert_eq!(permission["Type"].as_str(), Some("AWS::Lambda::Permission"));
    assert_eq!(permission["Condition"].as_str(), Some("UseAmazonConnect"));
    let properties = &permission["Properties"];
    assert_eq!(
        intrinsic_text(&properties["FunctionName"], "GetAtt"),
        Some("FlowResultsFunction.Arn")
    );
    assert_eq!(properties["Action"].as_str(), Some("lambda:InvokeFunction"));
    assert_eq!(
        properties["Principal"].as_str(),
        Some("connect.amazonaws.com")
    );
    assert_eq!(
        intrinsic_text(&properties["SourceAccount"], "Ref"),
        Some("AWS::AccountId")
    );
    assert_eq!(
        resolve(&properties["SourceArn"], &DEPLOYED).as_deref(),
        Some(instance)
    );
    let integration = resource(&template, "FlowResultsIntegration");
    assert_eq!(
        integration["Type"].as_str(),
        Some("AWS::Connect::IntegrationAssociation")
    );
    assert_eq!(integration["Condition"].as_str(), Some("UseAmazonConnect"));
    let properties = &integration["Properties"];
    assert_eq!(
        properties["IntegrationType"].as_str(),
        Some("LAMBDA_FUNCTION")
    );
    assert_eq!(
        resolve(&properties["InstanceId"], &DEPLOYED).as_deref(),
        Some(instance)
    );
    assert_eq!(
        intrinsic_text(&properties["IntegrationArn"], "GetAtt"),
        Some("FlowResultsFunction.Arn")
    );
    let function = resource(&template, "FlowResultsFunction");
    let timeout = function["Properties"]["Timeout"].as_i64().unwrap();
    assert!(timeout <= 8, "inside Connect's longest wait: {timeout}");
    let role = resource(&template, "FlowResultsRole");
    let table: Vec<&Yaml> = role_statements(role)
        .into_iter()
        .filter(|statement| {
            actions(statement)
                .iter()
                .any(|a| a.starts_with("dynamodb:"))
        })
        .collect();
    // Writes to call records only (a report on the record, or a pending record holding it,
    // D28), and a check, never a write, of the attempt's state in its task.
    assert_eq!(table.len(), 2);
    assert_eq!(
        actions(table[0]),
        ["dynamodb:UpdateItem", "dynamodb:PutItem"]
    );
    let leading = &table[0]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"];
    assert_eq!(texts(leading), [format!("{}*", keys::call("")).as_str()]);
    assert_eq!(actions(table[1]), ["dynamodb:ConditionCheckItem"]);
    let leading = &table[1]["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"];
    assert_eq!(texts(leading), ["T#*"]);
}

/// Only the publisher's role may put the service's events (source `outbound`) on the bus: the
/// bus refuses them from any other principal, whatever its own policies allow.
#[test]
fn the_bus_takes_the_services_events_from_the_publishers_role_only() {
    let template = template();
    let policy = &resource(&template, "EventBusPolicy");
    assert_eq!(policy["Type"].as_str(), Some("AWS::Events::EventBusPolicy"));
    let properties = &policy["Properties"];
    assert_eq!(
        intrinsic_text(&properties["EventBusName"], "Ref"),
        Some("EventBus")
    );
    let statement = &properties["Statement"];
    assert_eq!(statement["Effect"].as_str(), Some("Deny"));
    assert_eq!(statement["Principal"].as_str(), Some("*"));
    assert_eq!(actions(statement), ["events:PutEvents"]);
    assert_eq!(
        intrinsic_text(&statement["Resource"], "GetAtt"),
        Some("EventBus.Arn")
    );
    let condition = &statement["Condition"];
    assert_eq!(
        texts(&condition["ForAnyValue:StringEquals"]["events:source"]),
        [outbound_model::event::SOURCE]
    );
    assert_eq!(
        intrinsic_text(&condition["ArnNotEquals"]["aws:PrincipalArn"], "GetAtt"),
        Some("EventPublisherRole.Arn")
    );
}

/// The local server runs each request as the function `template.yaml` routes its path to, so
/// that what the suite's requests ask of AWS is checked against that function's role.
#[test]
fn each_route_runs_as_the_function_the_api_routes_it_to() {
    let template = template();
    let mut checked = 0;
    for (id, function) in functions(&template) {
        let Yaml::Mapping(events) = &function["Properties"]["Events"] else {
            continue;
        };
        let binary = function["Metadata"]["BuildProperties"]["Binary"]
            .as_str()
            .expect("a binary");
        for event in events.values() {
            if event["Type"].as_str() != Some("HttpApi") {
                continue;
            }
            let route = event["Properties"]["Path"].as_str().expect("a path");
            let path = route
                .replace("{proxy+}", "01J9Z3K8Q4W6N2V5B7C1D3F5G7/list")
                .replace("{exportId}", "01J9Z3K8Q4W6N2V5B7C1D3F5G7");
            assert_eq!(
                outbound_api::function_of(&path).name(),
                binary,
                "{id}: {route}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} routes");
}

const CONSOLE_ORIGIN: &str = "https://${ConsoleDistribution.DomainName}";

#[test]
fn the_console_bucket_is_private_and_only_its_distribution_reads_it() {
    let template = template();
    let bucket = resource(&template, "ConsoleBucket");
    assert_eq!(bucket["Type"].as_str(), Some("AWS::S3::Bucket"));
    let properties = &bucket["Properties"];
    for setting in [
        "BlockPublicAcls",
        "BlockPublicPolicy",
        "IgnorePublicAcls",
        "RestrictPublicBuckets",
    ] {
        assert_eq!(
            properties["PublicAccessBlockConfiguration"][setting].as_bool(),
            Some(true),
            "{setting}"
        );
    }
    assert_eq!(
        properties["OwnershipControls"]["Rules"][0]["ObjectOwnership"].as_str(),
        Some("BucketOwnerEnforced"),
        "no ACLs"
    );
    assert!(
        !properties["BucketEncryption"].is_null(),
        "encrypted at rest"
    );
    assert!(
        properties.get("WebsiteConfiguration").is_none(),
        "no public website endpoint: CloudFront reads the bucket through S3's API"
    );

    let policy = resource(&template, "ConsoleBucketPolicy");
    assert_eq!(
        intrinsic_text(&policy["Properties"]["Bucket"], "Ref"),
        Some("ConsoleBucket")
    );
    let allows: Vec<&Yaml> = statements(&policy["Properties"])
        .iter()
        .filter(|statement| statement["Effect"].as_str() != Some("Deny"))
        .collect();
    assert_eq!(allows.len(), 1, "one statement allows anything: {allows:?}");
    let allow = allows[0];
    assert_eq!(
        allow["Principal"]
            .as_mapping()
            .map(|principal| principal.len()),
        Some(1),
        "one kind of principal: {:?}",
        allow["Principal"]
    );
    assert_eq!(
        allow["Principal"]["Service"].as_str(),
        Some("cloudfront.amazonaws.com")
    );
    assert_eq!(actions(allow), ["s3:GetObject"], "reads only");
    assert_eq!(
        intrinsic_text(&allow["Resource"], "Sub"),
        Some("${ConsoleBucket.Arn}/*")
    );
    let conditions = allow["Condition"]
        .as_mapping()
        .expect("CloudFront's reads are conditioned");
    assert_eq!(conditions.len(), 1, "{conditions:?}");
    assert_eq!(
        intrinsic_text(&allow["Condition"]["StringEquals"]["AWS:SourceArn"], "Sub"),
        Some("arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/${ConsoleDistribution}"),
        "this distribution only, not any distribution of any account"
    );

    let config = &resource(&template, "ConsoleDistribution")["Properties"]["DistributionConfig"];
    let origins = config["Origins"].as_sequence().expect("origins");
    // The bucket, the API and (with CognitoDomain) Cognito's token endpoint (D29).
    assert_eq!(origins.len(), 3);
    assert_eq!(origins[0]["Id"].as_str(), Some("ConsoleBucket"));
    assert_eq!(
        intrinsic_text(&origins[0]["DomainName"], "GetAtt"),
        Some("ConsoleBucket.RegionalDomainName"),
        "the bucket's REST endpoint (a website endpoint cannot be signed for)"
    );
    assert_eq!(
        intrinsic_text(&origins[0]["OriginAccessControlId"], "GetAtt"),
        Some("ConsoleOriginAccessControl.Id")
    );
    let access = &resource(&template, "ConsoleOriginAccessControl")["Properties"]
        ["OriginAccessControlConfig"];
    assert_eq!(access["OriginAccessControlOriginType"].as_str(), Some("s3"));
    assert_eq!(access["SigningBehavior"].as_str(), Some("always"));
    assert_eq!(access["SigningProtocol"].as_str(), Some("sigv4"));
    let mut behaviours = vec![&config["DefaultCacheBehavior"]];
    behaviours.extend(cache_behaviours(config));
    for behaviour in behaviours {
        // The page's files redirect to HTTPS; what is passed on to the API or Cognito is
        // refused without it (a redirect would turn a POST into a GET).
        let expected = if behaviour["TargetOriginId"].as_str() == Some("ConsoleBucket") {
            "redirect-to-https"
        } else {
            "https-only"
        };
        assert_eq!(
            behaviour["ViewerProtocolPolicy"].as_str(),
            Some(expected),
            "{behaviour:?}"
        );
    }
}

/// What an item a condition adds (`!If [condition, item, !Ref AWS::NoValue]`) adds, or the item.
fn added(item: &Yaml) -> &Yaml {
    intrinsic(item, "If")
        .and_then(|branches| branches.get(1))
        .unwrap_or(item)
}

/// The distribution's cache behaviours, one a condition adds as the behaviour it adds.
fn cache_behaviours(config: &Yaml) -> Vec<&Yaml> {
    config["CacheBehaviors"]
        .as_sequence()
        .expect("behaviours")
        .iter()
        .map(added)
        .collect()
}

/// The behaviour of `pattern` and the origin it goes to, as the template writes them (an item a
/// condition adds still in its `!If`).
fn proxied<'a>(config: &'a Yaml, pattern: &str) -> (&'a Yaml, &'a Yaml) {
    let behaviour = config["CacheBehaviors"]
        .as_sequence()
        .expect("behaviours")
        .iter()
        .find(|item| added(item)["PathPattern"].as_str() == Some(pattern))
        .unwrap_or_else(|| panic!("a {pattern} behaviour"));
    let target = added(behaviour)["TargetOriginId"]
        .as_str()
        .expect("a target origin");
    let origin = config["Origins"]
        .as_sequence()
        .expect("origins")
        .iter()
        .find(|item| added(item)["Id"].as_str() == Some(target))
        .unwrap_or_else(|| panic!("the origin {target}"));
    (behaviour, origin)
}

/// The text of a `!Sub [text, {variables}]`.
fn sub_text(value: &Yaml) -> Option<&str> {
    intrinsic(value, "Sub")
        .and_then(|held| held.get(0))
        .and_then(Yaml::as_str)
}

/// The console speaks to its own origin (D29): the distribution passes `/api/*` to the HttpApi
/// and `/oauth2/token` to Cognito (nothing cached, every viewer header but Host), so the CSP's
/// `connect-src` is the page's own origin and the upload bucket only (no API id or Cognito domain
/// of any other stack), and the deployed config.json names no API host.
#[test]
fn the_console_speaks_to_its_own_origin() {
    let template = template();
    let config = &resource(&template, "ConsoleDistribution")["Properties"]["DistributionConfig"];
    assert_eq!(
        template["Mappings"]["ManagedOriginRequestPolicy"]["Ids"]["AllViewerExceptHostHeader"]
            .as_str(),
        Some("b689b0a8-53d0-40ab-baf2-68738e2966ac")
    );
    for (pattern, condition, origin_id, domain) in [
        ("/api/*", None, "HttpApi", "!Ref ApiOriginDomainName"),
        (
            "/oauth2/token",
            Some("HasCognitoDomain"),
            "CognitoDomain",
            "",
        ),
    ] {
        let (behaviour, origin) = proxied(config, pattern);
        for item in [behaviour, origin] {
            assert_eq!(
                intrinsic(item, "If").and_then(|branches| branches[0].as_str()),
                condition,
                "{pattern}: {item:?}"
            );
        }
        let (behaviour, origin) = (added(behaviour), added(origin));
        assert_eq!(origin["Id"].as_str(), Some(origin_id), "{pattern}");
        if domain.is_empty() {
            // CognitoDomain's host: the third part of https://{host} split on "/".
            let select = intrinsic(&origin["DomainName"], "Select").expect("!Select of a part");
            assert_eq!(select[0].as_u64(), Some(2), "{pattern}");
            let split = intrinsic(&select[1], "Split").expect("!Split of the URL");
            assert_eq!(intrinsic_text(&split[1], "Ref"), Some("CognitoDomain"));
        } else if let Some(parameter) = domain.strip_prefix("!Ref ") {
            assert_eq!(
                intrinsic_text(&origin["DomainName"], "Ref"),
                Some(parameter),
                "{pattern}"
            );
        } else {
            assert_eq!(
                intrinsic_text(&origin["DomainName"], "Sub"),
                Some(domain),
                "{pattern}"
            );
        }
        let custom = &origin["CustomOriginConfig"];
        assert_eq!(custom["OriginProtocolPolicy"].as_str(), Some("https-only"));
        assert_eq!(texts(&custom["OriginSSLProtocols"]), ["TLSv1.2"]);
        assert_eq!(
            texts(&behaviour["AllowedMethods"]),
            ["GET", "HEAD", "OPTIONS", "PUT", "POST", "PATCH", "DELETE"],
            "{pattern}"
        );
        let cache = intrinsic(&behaviour["CachePolicyId"], "FindInMap").expect("a managed policy");
        assert_eq!(
            texts(cache),
            ["ManagedCachePolicy", "Ids", "CachingDisabled"],
            "{pattern}: nothing cached"
        );
        let request =
            intrinsic(&behaviour["OriginRequestPolicyId"], "FindInMap").expect("a managed policy");
        assert_eq!(
            texts(request),
            [
                "ManagedOriginRequestPolicy",
                "Ids",
                "AllViewerExceptHostHeader"
            ],
            "{pattern}: the Authorization header, query string and body passed on"
        );
    }
    // Only the token endpoint of Cognito: its sign-in pages stay on its own domain.
    let behaviours = cache_behaviours(config);
    let oauth: Vec<&str> = behaviours
        .iter()
        .filter_map(|behaviour| behaviour["PathPattern"].as_str())
        .filter(|pattern| pattern.starts_with("/oauth2"))
        .collect();
    assert_eq!(oauth, ["/oauth2/token"]);

    let policy = &resource(&template, "ConsoleResponseHeadersPolicy")["Properties"]
        ["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]["ContentSecurityPolicy"]
        ["ContentSecurityPolicy"];
    let csp = sub_text(policy).expect("the policy's text, a !Sub");
    let connect: Vec<&str> = csp
        .split(';')
        .map(str::trim)
        .find(|directive| directive.starts_with("connect-src "))
        .expect("a connect-src")
        .split_whitespace()
        .skip(1)
        .collect();
    assert_eq!(
        connect,
        [
            "'self'",
            "https://outbound-${AWS::AccountId}-${AWS::Region}-${Suffix}.s3.${AWS::Region}.${AWS::URLSuffix}",
        ],
        "the page's own origin, and the bucket the presigned uploads go to"
    );

    let output =
        sub_text(&template["Outputs"]["ConsoleConfig"]["Value"]).expect("config.json, a !Sub");
    assert!(output.contains(r#""apiBase":"""#), "{output}");
    assert!(
        output.contains(r#""tokenEndpoint":"/oauth2/token""#),
        "{output}"
    );
    assert!(!output.contains("execute-api"), "{output}");
}

#[test]
fn the_api_answers_cors_only_to_the_origins_a_parameter_names() {
    let template = template();
    let api = resource(&template, "HttpApi");
    let cors = &api["Properties"]["CorsConfiguration"];
    assert!(
        !strings(cors).contains(&"*"),
        "no wildcard anywhere in the API's CORS: {cors:?}"
    );
    assert!(
        !strings(cors)
            .iter()
            .any(|text| text.contains("ConsoleDistribution")),
        "the console calls the API on its own origin, and the distribution names the API (D29): {cors:?}"
    );
    let choice = intrinsic(cors, "If").expect("chosen on whether ApiAllowedOrigins is set");
    assert_eq!(choice[0].as_str(), Some("HasApiOrigins"));
    let (with_others, without) = (&choice[1], &choice[2]);

    // Without ApiAllowedOrigins: no CORS at all.
    assert_eq!(intrinsic_text(without, "Ref"), Some("AWS::NoValue"));

    // With it: exactly the parameter's origins, and the parameter refuses "*".
    assert_eq!(
        intrinsic_text(&with_others["AllowOrigins"], "Ref"),
        Some("ApiAllowedOrigins")
    );
    let rule = &template["Rules"]["ApiOriginsAreNamed"]["Assertions"][0]["Assert"];
    let contains = intrinsic(&intrinsic(rule, "Not").expect("!Not")[0], "Contains")
        .expect("!Not [!Contains [...]]");
    assert_eq!(
        intrinsic_text(&contains[0], "Ref"),
        Some("ApiAllowedOrigins")
    );
    assert_eq!(
        contains[1].as_str(),
        Some("*"),
        "the parameter refuses \"*\""
    );
    assert_eq!(
        texts(&with_others["AllowMethods"]),
        ["GET", "POST", "OPTIONS"]
    );
    assert_eq!(
        texts(&with_others["AllowHeaders"]),
        ["Authorization", "Content-Type"]
    );
    let exposed = texts(&with_others["ExposeHeaders"]);
    for header in ["Retry-After", "Content-Disposition"] {
        assert!(
            exposed.contains(&header),
            "{header} is exposed: {exposed:?}"
        );
    }
    assert!(
        with_others.get("AllowCredentials").is_none(),
        "the token is a header, never a cookie"
    );

    // The uploads bucket takes PUTs from the console too, and never from "*": its CORS is
    // applied once the distribution exists (the API's functions name the bucket).
    assert!(
        resource(&template, "Bucket")["Properties"]
            .get("CorsConfiguration")
            .is_none(),
        "the bucket names no distribution"
    );
    let uploads = resource(&template, "UploadsCors");
    assert_eq!(uploads["Type"].as_str(), Some("Custom::BucketCors"));
    assert_eq!(
        intrinsic_text(&uploads["Properties"]["Bucket"], "Ref"),
        Some("Bucket")
    );
    let rule = &uploads["Properties"]["CORSRules"][0];
    assert_eq!(texts(&rule["AllowedMethods"]), ["PUT"]);
    let origins = strings(&rule["AllowedOrigins"]);
    assert!(
        origins.contains(&CONSOLE_ORIGIN),
        "the console's origin: {origins:?}"
    );
    assert!(
        origins.contains(&"UploadAllowedOrigins"),
        "and the parameter's: {origins:?}"
    );
    assert!(!origins.contains(&"*"), "{origins:?}");
}

#[test]
fn no_route_takes_the_browsers_preflights() {
    // API Gateway answers a CORS preflight (OPTIONS, no token) itself only when no route takes
    // it; an ANY or OPTIONS route would put it behind the JWT authorizer, which refuses it.
    let template = template();
    let mut routes = 0;
    for (id, function) in functions(&template) {
        let Yaml::Mapping(events) = &function["Properties"]["Events"] else {
            continue;
        };
        for (name, event) in events {
            if event["Type"].as_str() != Some("HttpApi") {
                continue;
            }
            routes += 1;
            let method = event["Properties"]["Method"]
                .as_str()
                .unwrap_or_else(|| panic!("{id} {name:?}: a method named"))
                .to_ascii_uppercase();
            assert!(
                method != "ANY" && method != "OPTIONS",
                "{id} {name:?}: {method} would send preflights to the authorizer"
            );
            let auth = &event["Properties"]["Auth"];
            assert!(
                auth.is_null(),
                "{id} {name:?}: every route keeps the default JWT authorizer: {auth:?}"
            );
        }
    }
    assert!(routes > 0, "the API has routes");
}

/// Lambda's event filtering, for the parts of a pattern the publisher's filter may use: arrays of
/// exact values or `{"prefix": ...}` rules, and nested objects.
fn filter_matches(pattern: &Json, record: &Json) -> bool {
    let Json::Object(fields) = pattern else {
        panic!("a pattern is an object of fields: {pattern}");
    };
    fields.iter().all(|(name, wanted)| {
        let Some(value) = record.get(name) else {
            return false;
        };
        match wanted {
            Json::Array(options) => options.iter().any(|option| match option {
                Json::String(_) => option == value,
                Json::Object(rule) => match (rule.get("prefix"), value.as_str()) {
                    (Some(Json::String(prefix)), Some(text)) => text.starts_with(prefix.as_str()),
                    (Some(_), None) => false,
                    _ => panic!("{name}: only prefix rules are expected: {option}"),
                },
                other => panic!("{name}: only strings and prefix rules are expected: {other}"),
            }),
            Json::Object(_) => filter_matches(wanted, value),
            other => panic!("{name}: only arrays and objects are used in patterns: {other}"),
        }
    })
}

/// A DynamoDB stream record as the event source mapping filters it.
fn stream_record(event_name: &str, (pk, sk): (String, String)) -> Json {
    json!({
        "eventID": "1",
        "eventName": event_name,
        "eventSource": "aws:dynamodb",
        "awsRegion": "eu-west-1",
        "dynamodb": {
            "Keys": { (keys::PK): { "S": pk }, (keys::SK): { "S": sk } },
            "SequenceNumber": "100000000000000000001",
            "StreamViewType": "NEW_IMAGE",
        },
    })
}

/// The publisher's one DynamoDB stream event.
fn publisher_stream(template: &Yaml) -> &Yaml {
    let function = resource(template, "EventPublisherFunction");
    let Yaml::Mapping(events) = &function["Properties"]["Events"] else {
        panic!("the publisher has events");
    };
    let streams: Vec<&Yaml> = events
        .values()
        .filter(|event| event["Type"].as_str() == Some("DynamoDB"))
        .collect();
    assert_eq!(streams.len(), 1, "one stream feeds the publisher");
    assert_eq!(events.len(), 1, "and nothing else does");
    let stream: &Yaml = streams[0];
    &stream["Properties"]
}

#[test]
fn the_table_streams_its_new_images() {
    let template = template();
    let table = resource(&template, "Table");
    assert_eq!(
        table["Properties"]["StreamSpecification"]["StreamViewType"].as_str(),
        Some("NEW_IMAGE"),
        "an outbox item's event is all in the item written"
    );
    assert_eq!(
        intrinsic_text(&publisher_stream(&template)["Stream"], "GetAtt"),
        Some("Table.StreamArn")
    );
}

#[test]
fn the_event_publisher_reads_only_new_outbox_items_in_order() {
    let template = template();
    let stream = publisher_stream(&template);
    assert_eq!(
        texts(&stream["FunctionResponseTypes"]),
        ["ReportBatchItemFailures"],
        "the function names the first record it could not publish"
    );
    assert_eq!(
        stream["MaximumRecordAgeInSeconds"].as_i64(),
        Some(-1),
        "never dropped for its age"
    );
    assert_eq!(
        stream["ParallelizationFactor"].as_i64(),
        Some(1),
        "a shard's events in order"
    );
    let batch = stream["BatchSize"].as_i64().expect("a batch size");
    assert!(
        (1..=10).contains(&batch),
        "PutEvents takes 10 entries at most: {batch}"
    );
    assert_eq!(stream["StartingPosition"].as_str(), Some("TRIM_HORIZON"));

    let filters = stream["FilterCriteria"]["Filters"]
        .as_sequence()
        .expect("filtered");
    assert_eq!(filters.len(), 1, "one filter (filters are OR-ed)");
    let pattern: Json = serde_json::from_str(
        filters[0]["Pattern"]
            .as_str()
            .expect("a pattern is a JSON string"),
    )
    .expect("the pattern is JSON");

    let tenant = Tenant::parse("acme").unwrap();
    let outbox = || keys::event(&tenant, &Id::new());
    assert!(
        filter_matches(&pattern, &stream_record("INSERT", outbox())),
        "a new outbox item is published: {pattern}"
    );
    for (what, record) in [
        ("an outbox item's expiry", stream_record("REMOVE", outbox())),
        ("an outbox item changed", stream_record("MODIFY", outbox())),
        (
            "a new contact",
            stream_record(
                "INSERT",
                (
                    keys::data_source(&tenant, &Id::new()),
                    keys::contact(&Id::new()),
                ),
            ),
        ),
        (
            "the tenant's settings",
            stream_record("INSERT", (keys::tenant(&tenant), keys::SETTINGS.to_owned())),
        ),
        (
            "a do-not-call entry",
            stream_record(
                "INSERT",
                (keys::tenant(&tenant), keys::dnc_entry(&Id::new())),
            ),
        ),
    ] {
        assert!(
            !filter_matches(&pattern, &record),
            "{what} must not invoke the publisher: {record}"
        );
    }
}

#[test]
fn only_the_event_publisher_puts_events_and_only_on_the_bus() {
    let template = template();
    let function = &resource(&template, "EventPublisherFunction")["Properties"];
    assert_eq!(
        intrinsic_text(
            &function["Environment"]["Variables"]["EVENT_BUS_NAME"],
            "Ref"
        ),
        Some("EventBus")
    );
    assert_eq!(
        intrinsic_text(&function["Role"], "GetAtt"),
        Some("EventPublisherRole.Arn")
    );
    let role = &resource(&template, "EventPublisherRole")["Properties"];
    let managed = role["ManagedPolicyArns"].as_sequence().expect("policies");
    assert_eq!(managed.len(), 1, "its own managed policy only: {managed:?}");
    assert_eq!(
        intrinsic_text(&managed[0], "Ref"),
        Some("EventPublisherPolicy")
    );

    let policy = &resource(&template, "EventPublisherPolicy")["Properties"];
    let mut puts = 0;
    for statement in statements(policy) {
        assert_eq!(statement["Effect"].as_str(), Some("Allow"));
        let actions = actions(statement);
        assert!(
            !strings(&statement["Resource"]).contains(&"*"),
            "no statement on every resource: {statement:?}"
        );
        if actions.iter().any(|action| action.starts_with("events:")) {
            puts += 1;
            assert_eq!(actions, ["events:PutEvents"], "{statement:?}");
            assert_eq!(
                intrinsic_text(&statement["Resource"], "GetAtt"),
                Some("EventBus.Arn"),
                "the stack's bus only"
            );
        } else if actions.iter().any(|action| action.starts_with("sqs:")) {
            // Its dead-letter queues: the_event_publisher_sends_only_to_its_dead_letter_queues.
            assert_eq!(actions, ["sqs:SendMessage"], "{statement:?}");
        } else {
            assert!(
                actions.iter().all(|action| action.starts_with("dynamodb:")),
                "{statement:?}"
            );
            assert_eq!(
                intrinsic_text(&statement["Resource"], "Sub"),
                Some("${Table.Arn}/stream/*"),
                "the table's stream, not its items"
            );
        }
    }
    assert_eq!(puts, 1, "one statement puts events");

    // No other policy of the template puts events anywhere.
    let Yaml::Mapping(resources) = &template["Resources"] else {
        panic!("Resources is a mapping");
    };
    for (id, resource) in resources {
        let id = id.as_str().unwrap_or_default();
        if id == "EventPublisherPolicy" {
            continue;
        }
        let granted: Vec<&Yaml> = match resource["Type"].as_str() {
            Some("AWS::IAM::ManagedPolicy") => statements(&resource["Properties"]).iter().collect(),
            Some("AWS::IAM::Role") => role_statements(resource),
            Some("AWS::Serverless::Function") => {
                assert!(
                    resource["Properties"]["Policies"].is_null(),
                    "{id}: a role of its own, no SAM policies"
                );
                continue;
            }
            _ => continue,
        };
        for statement in granted {
            for value in strings(statement) {
                assert!(
                    !value.starts_with("events:"),
                    "{id} may not put events: {statement:?}"
                );
            }
        }
    }
}

/// The publisher's two dead-letter queues (D20): the entries the bus refused for good, which
/// the function sends itself, and the stream batches its mapping gave up on.
const EVENT_DEAD_LETTER_QUEUES: [&str; 2] = ["EventDeadLetterQueue", "EventStreamDeadLetterQueue"];

#[test]
fn the_event_publishers_stream_is_retried_a_bounded_number_of_times_then_dead_lettered() {
    let template = template();
    let stream = publisher_stream(&template);
    let retries = stream["MaximumRetryAttempts"]
        .as_i64()
        .expect("MaximumRetryAttempts is set: its default, -1, retries a batch for ever");
    assert!(
        (1..=100).contains(&retries),
        "a batch that keeps failing is given up after a few retries, not held for ever: {retries}"
    );
    assert_eq!(
        stream["BisectBatchOnFunctionError"].as_bool(),
        Some(true),
        "a failing batch is halved down to the record at fault, so the others go on"
    );
    let destination = &stream["DestinationConfig"]["OnFailure"]["Destination"];
    assert_eq!(
        intrinsic_text(destination, "GetAtt"),
        Some("EventStreamDeadLetterQueue.Arn"),
        "a batch given up on is named in a queue: {destination:?}"
    );
    for id in EVENT_DEAD_LETTER_QUEUES {
        let queue = resource(&template, id);
        assert_eq!(queue["Type"].as_str(), Some("AWS::SQS::Queue"), "{id}");
        assert_eq!(
            queue["Properties"]["SqsManagedSseEnabled"].as_bool(),
            Some(true),
            "{id} is encrypted"
        );
        let retention = queue["Properties"]["MessageRetentionPeriod"].as_i64();
        assert_eq!(
            retention,
            Some(1_209_600),
            "{id} keeps its messages 14 days"
        );
    }
}

#[test]
fn the_event_publisher_sends_only_to_its_dead_letter_queues() {
    let template = template();
    let function = &resource(&template, "EventPublisherFunction")["Properties"];
    assert_eq!(
        intrinsic_text(
            &function["Environment"]["Variables"]["EVENT_DEAD_LETTER_QUEUE_URL"],
            "Ref"
        ),
        Some("EventDeadLetterQueue"),
        "the function is told where the entries the bus refused for good go"
    );
    let policy = &resource(&template, "EventPublisherPolicy")["Properties"];
    let mut queues: Vec<&str> = Vec::new();
    for statement in statements(policy) {
        let actions = actions(statement);
        if !actions.iter().any(|action| action.starts_with("sqs:")) {
            continue;
        }
        assert_eq!(actions, ["sqs:SendMessage"], "{statement:?}");
        let queue = intrinsic_text(&statement["Resource"], "GetAtt")
            .and_then(|arn| arn.strip_suffix(".Arn"))
            .unwrap_or_else(|| panic!("one queue's ARN a statement: {statement:?}"));
        queues.push(queue);
    }
    queues.sort_unstable();
    assert_eq!(
        queues, EVENT_DEAD_LETTER_QUEUES,
        "its dead-letter queue, and its mapping's on-failure destination (sent with the \
         function's role), nothing else"
    );
}

#[test]
fn each_event_dead_letter_queue_has_an_alarm() {
    let template = template();
    let Yaml::Mapping(resources) = &template["Resources"] else {
        panic!("Resources is a mapping");
    };
    for queue in EVENT_DEAD_LETTER_QUEUES {
        let watching: Vec<(&str, &Yaml)> = resources
            .iter()
            .filter(|(_, resource)| resource["Type"].as_str() == Some("AWS::CloudWatch::Alarm"))
            .filter(|(_, alarm)| {
                alarm["Properties"]["Dimensions"]
                    .as_sequence()
                    .into_iter()
                    .flatten()
                    .any(|dimension| {
                        dimension["Name"].as_str() == Some("QueueName")
                            && intrinsic_text(&dimension["Value"], "GetAtt")
                                == Some(format!("{queue}.QueueName").as_str())
                    })
            })
            .map(|(id, alarm)| (id.as_str().unwrap_or_default(), alarm))
            .collect();
        assert_eq!(watching.len(), 1, "one alarm watches {queue}");
        let (id, alarm) = watching[0];
        let properties = &alarm["Properties"];
        assert!(alarm["Condition"].is_null(), "{id}: always created");
        assert_eq!(properties["Namespace"].as_str(), Some("AWS/SQS"), "{id}");
        assert_eq!(
            properties["MetricName"].as_str(),
            Some("ApproximateNumberOfMessagesVisible"),
            "{id}"
        );
        assert_eq!(properties["Threshold"].as_i64(), Some(0), "{id}");
        assert_eq!(
            properties["ComparisonOperator"].as_str(),
            Some("GreaterThanThreshold"),
            "{id}: any message at all"
        );
        assert_notifies_the_alarm_topic(id, properties);
    }
}

/// The topic given (AlarmTopicArn), or else the stack's own.
fn assert_notifies_the_alarm_topic(id: &str, properties: &Yaml) {
    for actions in ["AlarmActions", "OKActions"] {
        let topics = properties[actions].as_sequence().expect("a list");
        assert_eq!(topics.len(), 1, "{id}");
        let choice = intrinsic(&topics[0], "If")
            .and_then(Yaml::as_sequence)
            .unwrap_or_else(|| panic!("{id}: {actions} is the given topic or the stack's"));
        assert_eq!(choice[0].as_str(), Some("HasAlarmTopic"), "{id}");
        assert_eq!(
            intrinsic_text(&choice[1], "Ref"),
            Some("AlarmTopicArn"),
            "{id}"
        );
        assert_eq!(
            intrinsic_text(&choice[2], "Ref"),
            Some("AlarmTopic"),
            "{id}"
        );
    }
}

/// Every mapping of type `kind` anywhere in `value`: the resources of the template, those
/// written once for many by `Fn::ForEach` included.
fn of_type<'a>(value: &'a Yaml, kind: &str) -> Vec<&'a Yaml> {
    match value {
        Yaml::Mapping(_) if value["Type"].as_str() == Some(kind) => vec![value],
        Yaml::Mapping(fields) => fields.values().flat_map(|v| of_type(v, kind)).collect(),
        Yaml::Sequence(items) => items.iter().flat_map(|v| of_type(v, kind)).collect(),
        Yaml::Tagged(tagged) => of_type(&tagged.value, kind),
        _ => Vec::new(),
    }
}

/// Without AlarmTopicArn the stack makes its own topic, and every alarm notifies a topic.
#[test]
fn every_alarm_notifies_a_topic_the_stacks_own_by_default() {
    let template = template();
    let topic = resource(&template, "AlarmTopic");
    assert_eq!(topic["Type"].as_str(), Some("AWS::SNS::Topic"));
    assert_eq!(topic["Condition"].as_str(), Some("CreateAlarmTopic"));
    let alarms = of_type(&template["Resources"], "AWS::CloudWatch::Alarm");
    assert!(alarms.len() >= 7, "{} alarms", alarms.len());
    for alarm in alarms {
        let id = alarm["Properties"]["AlarmDescription"]
            .as_str()
            .unwrap_or("an alarm");
        assert!(alarm["Condition"].is_null(), "{id}: always created");
        assert_notifies_the_alarm_topic(id, &alarm["Properties"]);
    }
}

/// D32: the API is reached only through the distribution: the execute-api endpoint is disabled,
/// the distribution's /api/* origin is the API's own domain, mapped to the stage; an AWS WAF web
/// ACL (the stack's, in us-east-1, or one a parameter names) is in front of the distribution,
/// with a rate-based rule per token (the Authorization header) and one per source address, both
/// limits parameters, over /api/* and everything; the stage's own limits sit above the WAF's
/// (per second), and the API's URL output is the distribution's.
#[test]
fn the_api_is_reached_only_through_the_distribution_behind_a_web_acl() {
    let template = template();
    let api = &resource(&template, "HttpApi")["Properties"];
    assert_eq!(api["DisableExecuteApiEndpoint"].as_bool(), Some(true));
    let mapping = &resource(&template, "ApiOriginMapping")["Properties"];
    assert_eq!(intrinsic_text(&mapping["ApiId"], "Ref"), Some("HttpApi"));
    assert_eq!(
        intrinsic_text(&mapping["DomainName"], "Ref"),
        Some("ApiOriginDomain")
    );
    let domain = &resource(&template, "ApiOriginDomain")["Properties"];
    assert_eq!(
        intrinsic_text(&domain["DomainName"], "Ref"),
        Some("ApiOriginDomainName")
    );
    assert_eq!(
        domain["DomainNameConfigurations"][0]["SecurityPolicy"].as_str(),
        Some("TLS_1_2")
    );
    for required in ["ApiOriginDomainName", "ApiOriginCertificateArn"] {
        let parameter = &template["Parameters"][required];
        assert!(parameter.is_mapping(), "{required}");
        assert!(
            parameter.get("Default").is_none(),
            "{required} has no default"
        );
    }

    let config = &resource(&template, "ConsoleDistribution")["Properties"]["DistributionConfig"];
    let choice = intrinsic(&config["WebACLId"], "If").expect("the web ACL, or the one named");
    assert_eq!(choice[0].as_str(), Some("CreateEdgeWebAcl"));
    assert_eq!(intrinsic_text(&choice[1], "GetAtt"), Some("EdgeWebAcl.Arn"));
    assert_eq!(intrinsic_text(&choice[2], "Ref"), Some("EdgeWebAclArn"));
    let rule = &template["Rules"]["EdgeWebAclRegion"];
    assert!(
        format!("{:?}", rule["Assertions"]).contains("us-east-1"),
        "a stack's own web ACL only in us-east-1: {rule:?}"
    );

    let acl = &resource(&template, "EdgeWebAcl")["Properties"];
    assert_eq!(acl["Scope"].as_str(), Some("CLOUDFRONT"));
    let rules = acl["Rules"].as_sequence().expect("rules");
    let rate_of = |name: &str| {
        let rule = rules
            .iter()
            .find(|rule| rule["Name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("rule {name}"));
        assert_eq!(
            rule["Action"]["Block"]["CustomResponse"]["ResponseCode"].as_u64(),
            Some(429),
            "{name}"
        );
        rule["Statement"]["RateBasedStatement"].clone()
    };
    let per_token = rate_of("requests-per-token");
    assert_eq!(per_token["AggregateKeyType"].as_str(), Some("CUSTOM_KEYS"));
    assert_eq!(
        per_token["CustomKeys"][0]["Header"]["Name"]
            .as_str()
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("authorization")
    );
    assert_eq!(
        intrinsic_text(&per_token["Limit"], "Ref"),
        Some("EdgeRequestsPerToken")
    );
    let per_address = rate_of("requests-per-address");
    assert_eq!(per_address["AggregateKeyType"].as_str(), Some("IP"));
    assert_eq!(
        intrinsic_text(&per_address["Limit"], "Ref"),
        Some("EdgeRequestsPerAddress")
    );
    for statement in [&per_token, &per_address] {
        assert_eq!(
            intrinsic_text(&statement["EvaluationWindowSec"], "Ref"),
            Some("EdgeRateWindowSeconds")
        );
    }

    let default = |name: &str| {
        template["Parameters"][name]["Default"]
            .as_i64()
            .unwrap_or_else(|| panic!("{name} has a default"))
    };
    let window = default("EdgeRateWindowSeconds");
    let per_second = |name: &str| default(name) as f64 / window as f64;
    let stage = default("ApiThrottlingRateLimit") as f64;
    assert!(stage > per_second("EdgeRequestsPerToken"));
    assert!(stage > per_second("EdgeRequestsPerAddress"));
    let globals = &template["Globals"]["Function"]["Environment"]["Variables"];
    let tenant_rate: f64 = globals["TENANT_REQUESTS_PER_SECOND"]
        .as_str()
        .and_then(|rate| rate.parse().ok())
        .expect("a number");
    assert!(
        per_second("EdgeRequestsPerToken") > tenant_rate,
        "a tenant at its own rate is never refused at the edge"
    );
    assert_eq!(
        intrinsic_text(&globals["JWT_ISSUER"], "Ref"),
        Some("JwtIssuer"),
        "the functions know whether tokens are Cognito's"
    );

    let output = format!("{:?}", template["Outputs"]["ApiUrl"]["Value"]);
    assert!(!output.contains("execute-api"), "{output}");
    assert!(
        output.contains("ConsoleDistribution.DomainName"),
        "{output}"
    );
}

/// D32: `make run`'s edge stands in for the template's (`outbound_local::edge`): its defaults are
/// the parameters' defaults, and its refusal is the web ACL's body.
#[test]
fn the_local_edge_answers_and_limits_as_the_templates() {
    use outbound_local::edge::{EdgeLimits, WAF_REFUSAL_BODY};
    let template = template();
    let acl = &resource(&template, "EdgeWebAcl")["Properties"];
    let body = acl["CustomResponseBodies"]["too-many-requests"]["Content"]
        .as_str()
        .expect("the refusal's body");
    assert_eq!(body, WAF_REFUSAL_BODY);
    let default = |name: &str| {
        let value = template["Parameters"][name]["Default"].as_u64();
        u32::try_from(value.unwrap_or_else(|| panic!("{name} has a default"))).expect("a u32")
    };
    assert_eq!(
        EdgeLimits::default(),
        EdgeLimits {
            requests_per_token: default("EdgeRequestsPerToken"),
            requests_per_address: default("EdgeRequestsPerAddress"),
            window_seconds: default("EdgeRateWindowSeconds"),
            stage_rate: default("ApiThrottlingRateLimit"),
            stage_burst: default("ApiThrottlingBurstLimit"),
        }
    );
}

/// D32: only the stack's contact events rule (Amazon Connect) or the dialer (the simulated
/// provider) may send to the call-events queue: the queue's policy denies everyone else, in
/// both modes, and the dialer's own grant to send there is the simulated provider's only.
#[test]
fn only_the_event_rule_or_the_dialer_sends_call_events() {
    let template = template();
    let policy = &resource(&template, "CallEventsQueuePolicy");
    assert!(policy.get("Condition").is_none(), "in every deployment");
    let choice = intrinsic(&policy["Properties"]["PolicyDocument"]["Statement"], "If")
        .expect("one policy per provider");
    assert_eq!(choice[0].as_str(), Some("UseAmazonConnect"));
    let denies = |statements: &Yaml| -> Vec<(String, String)> {
        statements
            .as_sequence()
            .expect("statements")
            .iter()
            .filter(|statement| statement["Effect"].as_str() == Some("Deny"))
            .map(|statement| {
                assert_eq!(statement["Principal"].as_str(), Some("*"));
                assert_eq!(actions(statement), ["sqs:SendMessage"]);
                let condition = &statement["Condition"]["ArnNotEquals"];
                let (key, value) = condition
                    .as_mapping()
                    .and_then(|map| map.iter().next())
                    .expect("one condition");
                let value = intrinsic_text(value, "GetAtt").expect("a stack resource");
                (key.as_str().unwrap().to_owned(), value.to_owned())
            })
            .collect()
    };
    assert_eq!(
        denies(&choice[1]),
        [(
            "aws:SourceArn".to_owned(),
            "ConnectContactEventsRule.Arn".to_owned()
        )]
    );
    assert_eq!(
        denies(&choice[2]),
        [("aws:PrincipalArn".to_owned(), "DialerRole.Arn".to_owned())]
    );
    let dialer = statements(&resource(&template, "DialerPolicy")["Properties"]);
    let sends = dialer
        .iter()
        .find_map(|statement| {
            let choice = intrinsic(statement, "If")?;
            (choice[1]["Sid"].as_str() == Some("ReportSimulatedOutcomes")).then_some(choice)
        })
        .expect("the dialer sends outcomes with the simulated provider only");
    assert_eq!(sends[0].as_str(), Some("UseSimulatedProvider"));
    assert_eq!(intrinsic_text(&sends[2], "Ref"), Some("AWS::NoValue"));
}

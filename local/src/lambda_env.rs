//! `.local/lambda.env`: the environment a deployed function has (`template.yaml`'s globals and
//! each function's own variables) pointed at the local stack, so that
//! `cargo lambda watch --env-file .local/lambda.env` runs any of the ten functions against the
//! same stand-ins as `make run` (README, "Running a function under cargo lambda").
//!
//! It is written from the local API's own configuration ([`crate::read_local_config`]: the
//! variables `Config::from_lookup` read, the stack's and those of the process environment), with
//! what differs inside Lambda:
//!
//! - `AUTH_MODE=apigateway`: `cargo lambda` sets `AWS_LAMBDA_FUNCTION_NAME`, so the functions run
//!   as in Lambda, where in-process token checks are refused (D2). The tenant comes from the
//!   JWT authorizer's claims in the event (`TENANT_CLAIM`), as behind API Gateway; the JWT
//!   settings of the local API have no use there and are left out.
//! - the two keys named by their secrets' ARNs (`PAGE_TOKEN_SECRET_ARN`,
//!   `CALL_SIGNING_SECRET_ARN`), as in AWS (D32): inside Lambda a plain `PAGE_TOKEN_SECRET` or
//!   `CALL_SIGNING_KEY` is refused and there is no built-in key. The secrets hold the local
//!   API's keys, on moto ([`crate::provision::ensure_secrets`]).
//! - the AWS SDK's endpoints (moto's, and DynamoDB's own for the local API's database), region
//!   and dummy credentials for the stand-ins (inside Lambda the credentials come from the
//!   environment alone), and the event publisher's bus and dead-letter queue.

use crate::provision::{EventResources, Resources, SecretResources};
use outbound_app::config::secrets::{CALL_SIGNING_SECRET_ARN, PAGE_TOKEN_SECRET_ARN, SECRETS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where `make run` writes the file: `.local/lambda.env` in the repository.
pub fn default_path() -> PathBuf {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR"));
    tests.parent().unwrap_or(tests).join(".local/lambda.env")
}

/// Variables only local mode reads (D2): not written, the functions use API Gateway's claims.
const LOCAL_MODE_ONLY: [&str; 3] = ["JWT_SECRET", "JWT_ISSUER", "JWT_AUDIENCE"];

/// Every variable of a function on the local stack of `resources`, `events` and `secrets`, whose
/// DynamoDB answers at `dynamodb`, by name.
pub fn variables(
    resources: &Resources,
    events: &EventResources,
    secrets: &SecretResources,
    dynamodb: &str,
) -> BTreeMap<String, String> {
    let (config, mut variables) = crate::read_local_config(resources);
    for name in LOCAL_MODE_ONLY {
        variables.remove(name);
    }
    for secret in SECRETS {
        variables.remove(secret.name);
    }
    let mut set = |name: &str, value: &str| {
        variables.insert(name.to_owned(), value.to_owned());
    };
    set("AUTH_MODE", "apigateway");
    set(PAGE_TOKEN_SECRET_ARN, &secrets.page_token_arn);
    set(CALL_SIGNING_SECRET_ARN, &secrets.call_signing_arn);
    set("TENANT_CLAIM", &crate::local_jwt(&config).tenant_claim);
    // Read by no function (in AWS the queue triggers contact-import): where an upload's
    // notification goes, for whoever wants to look at it.
    set("IMPORT_QUEUE_URL", &resources.import_queue_url);
    // The event publisher's: the bus, and where it sends an entry the bus refuses for good.
    set("EVENT_BUS_NAME", &events.bus);
    set("EVENT_DEAD_LETTER_QUEUE_URL", &events.dead_letter_queue_url);
    set("AWS_ENDPOINT_URL", &crate::moto_endpoint());
    // The SDK's per-service endpoints: DynamoDB and its stream are the local API's own
    // (`crate::dynamodb`), served while it runs.
    set("AWS_ENDPOINT_URL_DYNAMODB", dynamodb);
    set("AWS_ENDPOINT_URL_DYNAMODB_STREAMS", dynamodb);
    set("AWS_REGION", crate::REGION);
    set("AWS_ACCESS_KEY_ID", crate::CREDENTIALS.0);
    set("AWS_SECRET_ACCESS_KEY", crate::CREDENTIALS.1);
    // template.yaml's, and what the local API runs unless told otherwise.
    set("RUST_LOG", "info");
    // The tenant limits (D26) the template sets, as the local API runs them.
    let limits = config.tenant_limits;
    set(
        "TENANT_MAX_RUNNING_TASKS",
        &limits.running_tasks.to_string(),
    );
    set(
        "TENANT_MAX_DIRECT_EXPORTS",
        &limits.direct_exports.to_string(),
    );
    set(
        "TENANT_REQUESTS_PER_SECOND",
        &limits.requests.per_second.to_string(),
    );
    set("TENANT_REQUEST_BURST", &limits.requests.burst.to_string());
    set(
        "TENANT_REQUESTS_IN_FLIGHT",
        &limits.requests.in_flight.to_string(),
    );
    variables
        .entry("DIAL_PROVIDER".into())
        .or_insert_with(|| "simulated".into());
    if variables["DIAL_PROVIDER"] == "amazon-connect" {
        // The Connect settings, read by the provider itself rather than the configuration.
        variables.extend(std::env::vars().filter(|(name, _)| name.starts_with("CONNECT_")));
    }
    variables
}

/// The file's text: a header, then one `NAME=value` line each. A value holding a blank, a
/// quote, `#` or `=` is written in double quotes, with `"` and a line break escaped as `\"` and
/// `\n`, as the env-file reader of cargo-lambda reads them.
pub fn render(variables: &BTreeMap<String, String>) -> String {
    let mut text = String::from(
        "# Written by the local API (make run, make lambda-env) from its configuration: the\n\
         # environment of a deployed function, pointed at the local stack, for\n\
         # cargo lambda watch --env-file (README, \"Running a function under cargo lambda\").\n\
         # Rewritten at every start.\n",
    );
    for (name, value) in variables {
        let plain = !value.is_empty()
            && !value
                .chars()
                .any(|c| c.is_whitespace() || "\"'`#=".contains(c));
        if plain {
            text.push_str(&format!("{name}={value}\n"));
        } else {
            let escaped = value.replace('"', "\\\"").replace('\n', "\\n");
            text.push_str(&format!("{name}=\"{escaped}\"\n"));
        }
    }
    text
}

/// Reads what [`render`] writes: comments, blank lines, `NAME=value` and `NAME="value"`.
pub fn parse(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut variables = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("not NAME=value: {line}"))?;
        let value = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\\\"", "\"").replace("\\n", "\n"),
            None => value.to_owned(),
        };
        variables.insert(name.to_owned(), value);
    }
    Ok(variables)
}

/// Writes [`render`]'s text to `path` at once (a reader never sees half of it), making its folder.
pub fn write(path: &Path, variables: &BTreeMap<String, String>) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let partial = path.with_extension("env.partial");
    std::fs::write(&partial, render(variables))?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_app::config::secrets::Secrets;
    use outbound_app::config::{ApiConfig, Config, PublisherConfig};
    use outbound_app::App;

    /// Where the stack's DynamoDB answers.
    const DYNAMODB: &str = "http://127.0.0.1:8000";

    /// The ARN of the local stack's secret `name` on moto.
    fn secret_arn(name: &str) -> String {
        format!("arn:aws:secretsmanager:us-east-1:123456789012:secret:outbound-{name}-AbCdEf")
    }

    fn stack() -> (Resources, EventResources, SecretResources) {
        let queue =
            |name: &str| format!("http://127.0.0.1:5000/123456789012/outbound-files-{name}");
        let resources = Resources {
            table: "outbound".into(),
            bucket: "outbound-files".into(),
            reclaim_queue_url: queue("reclaim"),
            import_queue_url: queue("imports"),
            dial_queue_url: queue("dial"),
            call_events_queue_url: queue("call-events"),
            export_queue_url: queue("exports"),
        };
        let events = EventResources {
            stream_arn: "arn:aws:dynamodb:us-east-1:123456789012:table/outbound/stream/x".into(),
            bus: "outbound-events".into(),
            log_queue_url: queue("events-log"),
            dead_letter_queue_url: queue("events-dead-letters"),
        };
        let secrets = SecretResources {
            page_token_arn: secret_arn("page-token-secret"),
            call_signing_arn: secret_arn("call-signing-secret"),
        };
        (resources, events, secrets)
    }

    /// moto's Secrets Manager as the stack's two secrets, holding the local API's keys.
    async fn stored(arn: String) -> Result<String, outbound_adapters::secrets::SecretError> {
        let name = [
            ("page-token-secret", "PAGE_TOKEN_SECRET"),
            ("call-signing-secret", "CALL_SIGNING_KEY"),
        ]
        .into_iter()
        .find(|(secret, _)| arn == secret_arn(secret))
        .map(|(_, name)| name);
        name.and_then(crate::local_secret)
            .ok_or(outbound_adapters::secrets::SecretError::Unread(arn))
    }

    /// Each of the ten functions starts with the file's variables as `cargo lambda` gives them:
    /// inside Lambda (`AWS_LAMBDA_FUNCTION_NAME` set), where no development default applies and
    /// the keys are read from their secrets by ARN (D32), the local API's keys.
    #[tokio::test]
    async fn every_function_starts_inside_lambda_with_the_file() {
        let (resources, events, secrets) = stack();
        let variables =
            parse(&render(&variables(&resources, &events, &secrets, DYNAMODB))).unwrap();
        assert_eq!(
            variables,
            super::variables(&resources, &events, &secrets, DYNAMODB),
            "round trip"
        );
        for secret in SECRETS {
            assert!(!variables.contains_key(secret.name), "{}", secret.name);
        }
        assert_eq!(variables[PAGE_TOKEN_SECRET_ARN], secrets.page_token_arn);
        assert_eq!(variables[CALL_SIGNING_SECRET_ARN], secrets.call_signing_arn);
        assert_eq!(variables["AWS_ENDPOINT_URL_DYNAMODB"], DYNAMODB);
        assert_eq!(variables["AWS_ENDPOINT_URL_DYNAMODB_STREAMS"], DYNAMODB);
        assert_eq!(variables["AUTH_MODE"], "apigateway");
        assert_eq!(variables["DIAL_QUEUE_URL"], resources.dial_queue_url);
        assert_eq!(variables["EVENT_BUS_NAME"], "outbound-events");
        assert!(!variables.contains_key("JWT_SECRET"));
        let sdk = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new(crate::REGION))
            .build();
        for function in crate::FUNCTIONS {
            let lookup = |name: &str| match name {
                "AWS_LAMBDA_FUNCTION_NAME" => Some(function.to_owned()),
                other => variables.get(other).cloned(),
            };
            let read = Secrets::resolve(&lookup, stored)
                .await
                .unwrap_or_else(|e| panic!("{function}: {e}"));
            let config = Config::from_lookup(read.overlay(&lookup))
                .unwrap_or_else(|e| panic!("{function}: {e}"));
            assert!(
                matches!(config.auth, outbound_auth::AuthConfig::ApiGateway { .. }),
                "{function}"
            );
            ApiConfig::from_config(&config).unwrap_or_else(|e| panic!("{function}: {e}"));
            PublisherConfig::from_lookup(lookup).unwrap_or_else(|e| panic!("{function}: {e}"));
            let app = App::with_sdk(config, &sdk);
            outbound_dialing::engine::Engine::from_app(&app)
                .unwrap_or_else(|e| panic!("{function}: {e}"));
        }
    }

    /// Every variable `template.yaml` gives a function (its globals and each function's own) is
    /// in the file, but those a stack parameter sets, which each have a default.
    #[test]
    fn every_variable_of_the_template_is_in_the_file_but_the_parameters() {
        use yaml_serde::Value as Yaml;
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml");
        let template: Yaml = yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let parameters = template["Parameters"].as_mapping().unwrap();
        let set_by_parameter = |value: &Yaml| match value {
            Yaml::Tagged(tagged) if tagged.tag == "Ref" => {
                parameters.contains_key(tagged.value.as_str().unwrap_or_default())
            }
            // `!If [condition, !Ref Parameter, !Ref AWS::NoValue]`
            Yaml::Tagged(tagged) if tagged.tag == "If" => true,
            // `!Sub "...${Parameter}..."`: built from a parameter.
            Yaml::Tagged(tagged) if tagged.tag == "Sub" => {
                let text = tagged.value.as_str().unwrap_or_default();
                parameters
                    .keys()
                    .filter_map(Yaml::as_str)
                    .any(|name| text.contains(&format!("${{{name}}}")))
            }
            _ => false,
        };
        let mut environments = vec![&template["Globals"]["Function"]["Environment"]["Variables"]];
        for (_, resource) in template["Resources"].as_mapping().unwrap() {
            if resource["Type"] == "AWS::Serverless::Function" {
                environments.push(&resource["Properties"]["Environment"]["Variables"]);
            }
        }
        let (resources, events, secrets) = stack();
        let variables = variables(&resources, &events, &secrets, DYNAMODB);
        let mut checked = 0;
        for environment in environments {
            let Some(environment) = environment.as_mapping() else {
                continue;
            };
            for (name, value) in environment {
                let name = name.as_str().unwrap();
                // Nothing stands in front of the local functions, as nothing stands in front of
                // the local API: no distribution proves itself to them (D32).
                if !set_by_parameter(value)
                    && name != outbound_app::config::secrets::ORIGIN_VERIFY_SECRET_ARN
                {
                    assert!(variables.contains_key(name), "{name} is not in the file");
                    checked += 1;
                }
            }
        }
        assert!(
            checked >= 10,
            "only {checked} variables found in template.yaml"
        );
    }

    #[test]
    fn values_that_need_quotes_are_quoted_and_read_back() {
        let variables: BTreeMap<String, String> = [
            ("PLAIN", "http://127.0.0.1:5000/1/q"),
            ("BLANK", "a b"),
            ("QUOTES", "say \"hi\" # not a comment = x"),
            ("WEIGHTS", "acme=3,globex=1"),
            ("EMPTY", ""),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let text = render(&variables);
        assert!(text.contains("PLAIN=http://127.0.0.1:5000/1/q\n"));
        assert!(text.contains("BLANK=\"a b\"\n"));
        assert_eq!(parse(&text).unwrap(), variables);
    }
}

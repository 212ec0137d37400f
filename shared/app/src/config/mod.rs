//! Configuration, read once at cold start. A missing or malformed variable fails the start,
//! never a request. [`dialing`] holds the dialing engine's part, [`secrets`] the keys read from
//! Secrets Manager by ARN before the rest (D32).

pub mod dialing;
pub mod secrets;

use chrono_tz::Tz;
use outbound_adapters::store::shards::{DEFAULT_CONTACT_SHARDS, MAX_CONTACT_SHARDS};
use outbound_adapters::store::write_cost::{
    DEFAULT_IMPORT_WCU_PER_SECOND, PARTITION_WCU_PER_SECOND,
};
use outbound_auth::AuthConfig;
use outbound_model::error::ConfigError;
use outbound_model::limits::{RequestRate, TenantLimits};
use outbound_model::origin::OriginSecret;
use outbound_model::page::PageTokens;
use outbound_model::signature::CallSigner;

/// Everything a function needs to know about its surroundings.
#[derive(Clone, Debug)]
pub struct Config {
    /// DynamoDB table holding every record (`TABLE_NAME`).
    pub table: String,
    /// S3 bucket for uploads and exports (`BUCKET_NAME`).
    pub bucket: String,
    /// SQS queue that receives storage-reclaim jobs (`RECLAIM_QUEUE_URL`).
    pub reclaim_queue_url: String,
    /// Zone in which timestamps are shown (`SERVICE_TIME_ZONE`, IANA name, default UTC; D4).
    pub time_zone: Tz,
    /// How requests are authenticated (D2).
    pub auth: AuthConfig,
    /// Path-style S3 addressing, needed by local S3 stand-ins (`S3_FORCE_PATH_STYLE`).
    pub s3_force_path_style: bool,
    /// Largest export answered as the response body (`EXPORT_INLINE_MAX_BYTES`, default 4 MiB:
    /// a Lambda response holds 6 MB, and binary bodies grow by a third in base64). Larger
    /// exports are answered with a redirect to a presigned download (D8).
    pub export_inline_max_bytes: u64,
    /// How the dialing engine paces and places calls (D13).
    pub dialing: dialing::DialerConfig,
    /// Signs and checks list `nextToken`s (D5), with the key `PAGE_TOKEN_SECRET`: only the API
    /// functions have it ([`ApiConfig`]), the others never see the key.
    pub page_tokens: Option<PageTokens>,
    /// Signs the service's own attributes of each call and checks them where a call's
    /// attributes name its attempt (D29), with the key `CALL_SIGNING_KEY`: only the dialing
    /// functions and flow-results have it (the engine requires it at cold start).
    pub call_signer: Option<CallSigner>,
    /// The value of the header the stack's distribution adds to every request it passes to the
    /// API (`ORIGIN_VERIFY_SECRET`, D32): when set, the API functions refuse a request without
    /// it. Unset locally, where nothing stands in front of the API.
    pub origin: Option<OriginSecret>,
    /// Most contacts a data source or task may have to be exported within the request
    /// (`EXPORT_JOB_THRESHOLD`, default 50,000); above it the direct exports answer 413 and an
    /// export job does the work (D8).
    pub export_job_threshold: u64,
    /// The SQS queue of export jobs (`EXPORT_QUEUE_URL`). Optional here; the functions that
    /// queue jobs require it at cold start ([`ApiConfig`]).
    pub export_queue_url: Option<String>,
    /// WCU per second an import may ask of its data source's partition
    /// (`IMPORT_WCU_PER_SECOND`, 1-1,000, default 800).
    pub import_wcu_per_second: u32,
    /// Partition keys the contacts and phone guards of a new data source are spread over
    /// (`CONTACT_SHARDS`, 1-64, default 8), so a bulk import's writes are not all one key's.
    pub contact_shards: u32,
    /// Most contacts a data source, or entries a tenant's do-not-call list, may have for a
    /// partial `phoneNumber` filter, which reads every one (`PHONE_FILTER_SCAN_MOST`, default
    /// 10,000); above it only a whole number is looked up, by its guards (D5).
    pub phone_filter_scan_most: u64,
    /// Most export jobs of one tenant running at once (`TENANT_RUNNING_EXPORTS`, default 4).
    pub tenant_running_exports: u32,
    /// Most imports of one tenant running at once, uploads waiting for their file included
    /// (`TENANT_RUNNING_IMPORTS`, default 4).
    pub tenant_running_imports: u32,
    /// What one tenant may hold and run, and how fast it may send requests (D26):
    /// `TENANT_MAX_DATA_SOURCES` (1,000), `TENANT_MAX_TASKS` (10,000), `TENANT_MAX_DNC_ENTRIES`
    /// (1,000,000), `TENANT_MAX_RUNNING_TASKS` (200), `TENANT_MAX_DIRECT_EXPORTS` (4),
    /// `TENANT_RUNNING_RECALLS` (2, D32),
    /// `TENANT_REQUESTS_PER_SECOND` (50), `TENANT_REQUEST_BURST` (100) and
    /// `TENANT_REQUESTS_IN_FLIGHT` (20, D29).
    pub tenant_limits: TenantLimits,
    /// The table of the request rate's buckets (D26): the service's own (`TABLE_NAME`). Not a
    /// setting of its own; the tests point it at a table that does not exist to show that the
    /// API answers when the limiter cannot.
    pub rate_table: String,
    /// How long one write of the request limiter may take before the request is refused, 503
    /// (`REQUEST_LIMITER_TIMEOUT_MS`, default 1,000, D32).
    pub limiter_timeout: std::time::Duration,
    /// OAuth scopes per route group, when required (`REQUIRE_SCOPES`, off by default).
    pub scopes: Option<outbound_auth::RequiredScopes>,
    /// The scopes as `SCOPE_PREFIX` spells them whether or not they are required: the operator's
    /// routes need `outbound/operator` always (D22, D25).
    pub operator_scopes: outbound_auth::RequiredScopes,
}

impl Config {
    /// Reads the process environment, the secrets it names by ARN read first from Secrets
    /// Manager through a client of `sdk` ([`secrets`], D32).
    pub async fn from_env(sdk: &aws_config::SdkConfig) -> Result<Self, ConfigError> {
        let environment = |name: &str| std::env::var(name).ok();
        let secrets = secrets::Secrets::read(&environment, sdk).await?;
        Self::from_lookup(secrets.overlay(environment))
    }

    /// Reads configuration through `lookup`, so tests need not touch the process environment.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let required = |name: &'static str| {
            lookup(name)
                .filter(|value| !value.trim().is_empty())
                .ok_or(ConfigError {
                    name,
                    problem: "is not set".into(),
                })
        };
        let time_zone = match lookup("SERVICE_TIME_ZONE") {
            None => Tz::UTC,
            Some(name) => name.parse().map_err(|_| ConfigError {
                name: "SERVICE_TIME_ZONE",
                problem: format!("{name:?} is not an IANA time zone"),
            })?,
        };
        let table = required("TABLE_NAME")?;
        Ok(Config {
            rate_table: table.clone(),
            limiter_timeout: std::time::Duration::from_millis(number(
                &lookup,
                "REQUEST_LIMITER_TIMEOUT_MS",
                outbound_adapters::store::rate::LIMITER_TIMEOUT.as_millis() as u64,
                "a number of milliseconds",
            )?),
            table,
            bucket: required("BUCKET_NAME")?,
            reclaim_queue_url: required("RECLAIM_QUEUE_URL")?,
            time_zone,
            auth: AuthConfig::from_lookup(&lookup)?,
            s3_force_path_style: lookup("S3_FORCE_PATH_STYLE").is_some_and(|v| v == "true"),
            export_inline_max_bytes: number(
                &lookup,
                "EXPORT_INLINE_MAX_BYTES",
                4 * 1024 * 1024,
                "a number of bytes",
            )?,
            dialing: dialing::DialerConfig::from_lookup(&lookup)?,
            page_tokens: secret(&lookup, PAGE_TOKEN_SECRET, DEV_PAGE_TOKEN_SECRET)?
                .map(|key| PageTokens::new(key.as_bytes())),
            call_signer: secret(&lookup, CALL_SIGNING_KEY, DEV_CALL_SIGNING_KEY)?
                .map(|key| CallSigner::new(key.as_bytes())),
            origin: secret(&lookup, ORIGIN_VERIFY_SECRET, "")?
                .filter(|value| !value.is_empty())
                .map(|value| OriginSecret::new(&value)),
            export_job_threshold: number(
                &lookup,
                "EXPORT_JOB_THRESHOLD",
                50_000,
                "a number of contacts",
            )?,
            import_wcu_per_second: match number(
                &lookup,
                "IMPORT_WCU_PER_SECOND",
                DEFAULT_IMPORT_WCU_PER_SECOND,
                "a number of write units",
            )? {
                pace @ 1..=PARTITION_WCU_PER_SECOND => pace,
                _ => {
                    return Err(ConfigError {
                        name: "IMPORT_WCU_PER_SECOND",
                        problem: format!(
                            "must be from 1 to {PARTITION_WCU_PER_SECOND}, a partition's limit"
                        ),
                    })
                }
            },
            export_queue_url: lookup("EXPORT_QUEUE_URL").filter(|url| !url.trim().is_empty()),
            scopes: outbound_auth::RequiredScopes::from_lookup(&lookup)?,
            operator_scopes: outbound_auth::RequiredScopes::always(&lookup),
            tenant_running_exports: at_least_one(&lookup, "TENANT_RUNNING_EXPORTS", 4)?,
            tenant_running_imports: at_least_one(&lookup, "TENANT_RUNNING_IMPORTS", 4)?,
            tenant_limits: {
                let defaults = TenantLimits::default();
                TenantLimits {
                    data_sources: limit(&lookup, "TENANT_MAX_DATA_SOURCES", defaults.data_sources)?,
                    tasks: limit(&lookup, "TENANT_MAX_TASKS", defaults.tasks)?,
                    dnc_entries: limit(&lookup, "TENANT_MAX_DNC_ENTRIES", defaults.dnc_entries)?,
                    running_tasks: limit(
                        &lookup,
                        "TENANT_MAX_RUNNING_TASKS",
                        defaults.running_tasks,
                    )?,
                    direct_exports: at_least_one(
                        &lookup,
                        "TENANT_MAX_DIRECT_EXPORTS",
                        defaults.direct_exports,
                    )?,
                    running_recalls: at_least_one(
                        &lookup,
                        "TENANT_RUNNING_RECALLS",
                        defaults.running_recalls,
                    )?,
                    requests: RequestRate {
                        per_second: per_second(
                            &lookup,
                            "TENANT_REQUESTS_PER_SECOND",
                            defaults.requests.per_second,
                        )?,
                        burst: per_second(
                            &lookup,
                            "TENANT_REQUEST_BURST",
                            defaults.requests.burst,
                        )?,
                        in_flight: per_second(
                            &lookup,
                            "TENANT_REQUESTS_IN_FLIGHT",
                            defaults.requests.in_flight,
                        )?,
                    },
                }
            },
            phone_filter_scan_most: number(
                &lookup,
                "PHONE_FILTER_SCAN_MOST",
                10_000,
                "a number of contacts",
            )?,
            contact_shards: match number(
                &lookup,
                "CONTACT_SHARDS",
                DEFAULT_CONTACT_SHARDS,
                "a number of shards",
            )? {
                shards @ 1..=MAX_CONTACT_SHARDS => shards,
                _ => {
                    return Err(ConfigError {
                        name: "CONTACT_SHARDS",
                        problem: format!("must be from 1 to {MAX_CONTACT_SHARDS}"),
                    })
                }
            },
        })
    }
}

/// What the event publisher reads, and nothing else (D20): the bus its events go on
/// (`EVENT_BUS_NAME`) and the queue of the entries the bus refuses for good
/// (`EVENT_DEAD_LETTER_QUEUE_URL`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublisherConfig {
    pub bus_name: String,
    pub dead_letter_queue_url: String,
}

impl PublisherConfig {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads both variables through `lookup`; neither has a default.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        Ok(PublisherConfig {
            bus_name: ConfigError::required(&lookup, "EVENT_BUS_NAME")?,
            dead_letter_queue_url: ConfigError::required(&lookup, "EVENT_DEAD_LETTER_QUEUE_URL")?,
        })
    }
}

/// What only the API functions hold, each value required: the key of list tokens (D5) and the
/// queue of export jobs (D8). Parsed from [`Config`] at cold start, so a handler never finds
/// either missing.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// Signs and checks list `nextToken`s (`PAGE_TOKEN_SECRET`).
    pub page_tokens: PageTokens,
    /// Where export jobs are queued (`EXPORT_QUEUE_URL`).
    pub export_queue_url: String,
    /// What proves a request came through the distribution, when the API is behind one (D32).
    pub origin: Option<OriginSecret>,
}

impl ApiConfig {
    /// The API's part of `config`, or the variable that is missing for it.
    pub fn from_config(config: &Config) -> Result<ApiConfig, ConfigError> {
        let page_tokens = config.page_tokens.clone().ok_or_else(|| ConfigError {
            name: PAGE_TOKEN_SECRET,
            problem: "is not set, nor PAGE_TOKEN_SECRET_ARN: the built-in development key is only for a development stack (OUTBOUND_DEV_STACK=true)"
                .into(),
        })?;
        let export_queue_url = config.export_queue_url.clone().ok_or_else(|| ConfigError {
            name: "EXPORT_QUEUE_URL",
            problem: "is not set (export jobs are queued there)".into(),
        })?;
        Ok(ApiConfig {
            page_tokens,
            export_queue_url,
            origin: config.origin.clone(),
        })
    }
}

/// An optional count of running jobs `name` (1-1,000), `default` when absent.
fn at_least_one(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    match number(lookup, name, default, "a number of jobs")? {
        count @ 1..=1_000 => Ok(count),
        _ => Err(ConfigError {
            name,
            problem: "must be from 1 to 1000".into(),
        }),
    }
}

/// An optional tenant limit `name` (at least 1), `default` when absent (D26).
fn limit(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u64,
) -> Result<u64, ConfigError> {
    match number(lookup, name, default, "a number of records")? {
        0 => Err(ConfigError {
            name,
            problem: "must be at least 1".into(),
        }),
        most => Ok(most),
    }
}

/// An optional number of requests `name` (1 to 1,000,000), `default` when absent (D26).
fn per_second(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u32,
) -> Result<u32, ConfigError> {
    match number(lookup, name, default, "a number of requests")? {
        count @ 1..=1_000_000 => Ok(count),
        _ => Err(ConfigError {
            name,
            problem: "must be from 1 to 1000000".into(),
        }),
    }
}

/// An optional number `name`, `default` when absent; `what` says what it should be.
fn number<T: std::str::FromStr>(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
    what: &str,
) -> Result<T, ConfigError> {
    match lookup(name) {
        None => Ok(default),
        Some(raw) => raw.trim().parse().map_err(|_| ConfigError {
            name,
            problem: format!("{raw:?} is not {what}"),
        }),
    }
}

/// The key of `nextToken`s when `PAGE_TOKEN_SECRET` is not set (development stacks only).
const DEV_PAGE_TOKEN_SECRET: &str = "outbound-development-page-token-key";

pub const PAGE_TOKEN_SECRET: &str = "PAGE_TOKEN_SECRET";

/// The key of the development stack's calls (D29) when `CALL_SIGNING_KEY` is not set.
pub const DEV_CALL_SIGNING_KEY: &str = "outbound-development-call-signing-key";
pub const CALL_SIGNING_KEY: &str = "CALL_SIGNING_KEY";
/// The header value that proves a request came through the distribution (D32); no development
/// value: the local API has nothing in front of it.
pub const ORIGIN_VERIFY_SECRET: &str = "ORIGIN_VERIFY_SECRET";

/// The secret `name` (at least 32 characters) when set: its plain variable outside Lambda, or
/// the value read from Secrets Manager by its `_ARN` variable ([`secrets`], D32), which is the
/// only way in inside Lambda. Unset, the built-in development key `dev` stands in where
/// `OUTBOUND_DEV_STACK=true` outside Lambda, and nothing elsewhere.
/// `PAGE_TOKEN_SECRET`: anyone knowing it can forge a token's position, though never reach
/// another tenant's rows with it (every read starts from the caller's tenant, D3).
/// `CALL_SIGNING_KEY`: anyone knowing it can make a call's attributes name another attempt.
fn secret(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    dev: &str,
) -> Result<Option<String>, ConfigError> {
    match lookup(name).filter(|secret| !secret.trim().is_empty()) {
        Some(secret) if secret.chars().count() >= 32 => Ok(Some(secret)),
        Some(_) => Err(ConfigError {
            name,
            problem: "must be at least 32 characters".into(),
        }),
        None if lookup("OUTBOUND_DEV_STACK").as_deref() == Some("true")
            && lookup("AWS_LAMBDA_FUNCTION_NAME").is_none() =>
        {
            Ok(Some(dev.to_owned()))
        }
        None => Ok(None),
    }
}

/// A lookup over fixed `(name, value)` pairs: the environment of a configuration test.
pub fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: std::collections::HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: [(&str, &str); 4] = [
        ("TABLE_NAME", "t"),
        ("BUCKET_NAME", "b"),
        ("RECLAIM_QUEUE_URL", "q"),
        ("PAGE_TOKEN_SECRET", "0123456789abcdef0123456789abcdef"),
    ];

    #[test]
    fn page_token_secret_is_required_by_the_api_outside_a_development_stack() {
        let with_queue = |pairs: &[(&'static str, &'static str)]| {
            let mut pairs = pairs.to_vec();
            pairs.push(("EXPORT_QUEUE_URL", "q2"));
            pairs
        };
        let without = with_queue(&BASE[..3]);
        let background = Config::from_lookup(lookup(&without)).unwrap();
        assert!(background.page_tokens.is_none(), "only the API has the key");
        assert_eq!(
            ApiConfig::from_config(&background).unwrap_err().name,
            "PAGE_TOKEN_SECRET"
        );
        let mut dev = without.clone();
        dev.push(("OUTBOUND_DEV_STACK", "true"));
        let config = Config::from_lookup(lookup(&dev)).unwrap();
        assert!(ApiConfig::from_config(&config).is_ok());
        dev.push(("AWS_LAMBDA_FUNCTION_NAME", "outbound-task-api"));
        let error =
            ApiConfig::from_config(&Config::from_lookup(lookup(&dev)).unwrap()).unwrap_err();
        assert_eq!(
            error.name, "PAGE_TOKEN_SECRET",
            "never the development key in Lambda"
        );
        let mut short = without.clone();
        short.push(("PAGE_TOKEN_SECRET", "too short"));
        let error = Config::from_lookup(lookup(&short)).unwrap_err();
        assert_eq!(error.name, "PAGE_TOKEN_SECRET");
        let config = Config::from_lookup(lookup(&with_queue(&BASE))).unwrap();
        assert!(ApiConfig::from_config(&config).is_ok());
    }

    #[test]
    fn missing_table_fails_start() {
        let error = Config::from_lookup(lookup(&BASE[1..])).unwrap_err();
        assert_eq!(error.name, "TABLE_NAME");
    }

    #[test]
    fn export_jobs_have_a_threshold_and_a_queue_the_api_requires() {
        let config = Config::from_lookup(lookup(&BASE)).unwrap();
        assert_eq!(config.export_job_threshold, 50_000);
        assert_eq!(
            ApiConfig::from_config(&config).unwrap_err().name,
            "EXPORT_QUEUE_URL"
        );
        let mut pairs = BASE.to_vec();
        pairs.extend([("EXPORT_JOB_THRESHOLD", "5"), ("EXPORT_QUEUE_URL", "q2")]);
        let config = Config::from_lookup(lookup(&pairs)).unwrap();
        assert_eq!(config.export_job_threshold, 5);
        assert_eq!(
            ApiConfig::from_config(&config).unwrap().export_queue_url,
            "q2"
        );
        pairs.push(("EXPORT_JOB_THRESHOLD", "many"));
        let error = Config::from_lookup(lookup(&pairs)).unwrap_err();
        assert_eq!(error.name, "EXPORT_JOB_THRESHOLD");
    }

    #[test]
    fn tenant_limits_have_their_defaults_and_refuse_zero() {
        let config = Config::from_lookup(lookup(&BASE)).unwrap();
        assert_eq!(config.tenant_limits, TenantLimits::default());
        assert_eq!(config.tenant_limits.running_tasks, 200);
        assert_eq!(config.tenant_limits.direct_exports, 4);
        assert_eq!(
            config.tenant_limits.requests,
            RequestRate {
                per_second: 50,
                burst: 100,
                in_flight: 20
            }
        );
        assert_eq!(
            config.rate_table, "t",
            "the rate lives in the service's table"
        );
        let mut pairs = BASE.to_vec();
        pairs.extend([
            ("TENANT_MAX_RUNNING_TASKS", "3"),
            ("TENANT_MAX_DIRECT_EXPORTS", "2"),
            ("TENANT_REQUESTS_PER_SECOND", "5"),
            ("TENANT_REQUEST_BURST", "7"),
            ("TENANT_REQUESTS_IN_FLIGHT", "4"),
        ]);
        let limits = Config::from_lookup(lookup(&pairs)).unwrap().tenant_limits;
        assert_eq!(
            (limits.running_tasks, limits.direct_exports, limits.requests),
            (
                3,
                2,
                RequestRate {
                    per_second: 5,
                    burst: 7,
                    in_flight: 4
                }
            )
        );
        for name in [
            "TENANT_MAX_RUNNING_TASKS",
            "TENANT_MAX_DIRECT_EXPORTS",
            "TENANT_REQUESTS_PER_SECOND",
            "TENANT_REQUEST_BURST",
            "TENANT_REQUESTS_IN_FLIGHT",
        ] {
            let mut pairs = BASE.to_vec();
            pairs.push((name, "0"));
            assert_eq!(Config::from_lookup(lookup(&pairs)).unwrap_err().name, name);
        }
    }

    #[test]
    fn time_zone_defaults_to_utc_and_rejects_unknown_names() {
        assert_eq!(
            Config::from_lookup(lookup(&BASE)).unwrap().time_zone,
            Tz::UTC
        );
        let mut pairs = BASE.to_vec();
        pairs.push(("SERVICE_TIME_ZONE", "Mars/Olympus"));
        let error = Config::from_lookup(lookup(&pairs)).unwrap_err();
        assert_eq!(error.name, "SERVICE_TIME_ZONE");
    }
}

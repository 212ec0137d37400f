//! The dialing engine's configuration (D13), read once at cold start with D13's defaults.

use outbound_adapters::telephony::settings::{
    ConnectSettings, FaultRates, OutcomeMix, ProviderConfig, SimulatedSettings, LATE_PAST_RECONCILE,
};
use outbound_model::error::ConfigError;
use outbound_model::plan::Fairness;
use outbound_model::Tenant;
use std::collections::BTreeMap;
use std::time::Duration;

/// Everything the tick, the dialer and the outcome recorder need to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialerConfig {
    pub provider: ProviderConfig,
    /// Calls placed per second for the whole service (`DIAL_RATE_PER_SECOND`, default 2:
    /// Connect's default for StartOutboundVoiceContact).
    pub rate_per_second: u32,
    /// Calls in flight per task (`DIAL_MAX_IN_FLIGHT_PER_TASK`, default 10).
    pub max_in_flight_per_task: u32,
    /// Calls in flight for the whole service (`DIAL_MAX_IN_FLIGHT`, default 10: Connect's
    /// default concurrent calls per instance).
    pub max_in_flight: u32,
    /// A call without an outcome this long after it was claimed is reconciled with the provider,
    /// then recorded as failed "no outcome" (`DIAL_RECONCILE_AFTER_SECONDS`, default 600).
    pub reconcile_after: Duration,
    /// The longest a call the provider still reports live keeps its places in flight
    /// (`DIAL_MAX_CALL_SECONDS`, default 43,200: 12 hours). Past it the call is recorded as
    /// failed "no outcome" and its places given back; before it, a live call stays in flight
    /// and is looked at again `reconcile_after` later.
    pub max_call: Duration,
    /// Contacts one dial run's completion check reads (`DIAL_SWEEP_PAGE`, default 2,000,
    /// 10-10,000): the check of a large data source resumes across runs.
    pub sweep_page: usize,
    /// Partitions the service's calls in flight and provider rate are spread over
    /// (`DIAL_CAPACITY_SHARDS`, default 1, 1-64), each holding its part of both caps: above a
    /// hundred or so calls a second one partition's write limit is the ceiling.
    pub capacity_shards: u32,
    /// Partitions the running-task and calls-in-flight indexes are spread over
    /// (`DIAL_INDEX_PARTITIONS`, default 16, 1-64), so that thousands of running tasks are not
    /// one hot key; a tick reads each. Fixed for a table's life: each entry's partition is a
    /// hash of its key modulo this number, and one written under another number is not found
    /// where the engine looks.
    pub index_partitions: u32,
    /// Contacts one recall job applies before it hands the rest to the next job through the
    /// dial queue (`DIAL_RECALL_CHUNK`, default 1,000, 10-10,000).
    pub recall_chunk: usize,
    /// Dial runs the tick queues per running task, spread evenly over a minute
    /// (`DIAL_RUNS_PER_TICK`, default 1, at most 15: SQS delays a message 900 s at most).
    pub runs_per_tick: u32,
    /// The dial workers that run the tick's jobs at once (`DIAL_WORKERS`, the dial queue's
    /// `MaximumConcurrency`, default 20): a tenant's jobs per tick stay within its share of them
    /// (D29).
    pub dial_workers: u32,
    /// Each tenant's weight in sharing the service's calls in flight (`DIAL_TENANT_WEIGHTS`,
    /// `tenant=weight` pairs, comma separated, weights 1-1,000; a tenant not named weighs 1).
    pub tenant_weights: BTreeMap<Tenant, u32>,
    /// One tenant's calls in flight at most (`DIAL_TENANT_MAX_IN_FLIGHT`; unset: its fair
    /// share of `max_in_flight` is its only bound).
    pub tenant_max_in_flight: Option<u32>,
    /// The queue of dial jobs (`DIAL_QUEUE_URL`): the tick sends, the dialer consumes.
    pub dial_queue_url: Option<String>,
    /// The queue of call outcomes (`CALL_EVENTS_QUEUE_URL`): the simulated provider sends.
    pub call_events_queue_url: Option<String>,
    pub simulated: SimulatedSettings,
    pub telephony: TelephonyRules,
}

/// What the deployment allows a task's calls (D22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TelephonyRules {
    /// A task with no caller ID or flow of its own or its tenant's calls with the deployment's
    /// (`TELEPHONY_FALLBACK`, `on` by default; `off` makes such a task unpublishable).
    pub fallback: bool,
    /// Each call may set its own caller ID: not so when Amazon Connect places calls through a
    /// queue (`CONNECT_QUEUE_ID`), whose outbound caller ID is the queue's.
    pub per_call_caller_id: bool,
}

impl Default for TelephonyRules {
    fn default() -> Self {
        TelephonyRules {
            fallback: true,
            per_call_caller_id: true,
        }
    }
}

impl Default for DialerConfig {
    fn default() -> Self {
        DialerConfig {
            provider: ProviderConfig::Simulated,
            rate_per_second: 2,
            max_in_flight_per_task: 10,
            max_in_flight: 10,
            reconcile_after: Duration::from_secs(600),
            max_call: Duration::from_secs(43_200),
            sweep_page: 2_000,
            capacity_shards: 1,
            index_partitions: outbound_adapters::store::keys::INDEX_PARTITIONS,
            recall_chunk: 1_000,
            runs_per_tick: 1,
            dial_workers: 20,
            tenant_weights: BTreeMap::new(),
            tenant_max_in_flight: None,
            dial_queue_url: None,
            call_events_queue_url: None,
            simulated: SimulatedSettings::default(),
            telephony: TelephonyRules::default(),
        }
    }
}

impl DialerConfig {
    /// How the tick shares the service's calls in flight between tenants and tasks, as
    /// configured (D13, D23).
    pub fn fairness(&self) -> Fairness {
        Fairness {
            capacity: self.max_in_flight,
            per_task: self.max_in_flight_per_task,
            weights: self.tenant_weights.clone(),
            per_tenant: self.tenant_max_in_flight,
        }
    }

    /// Reads the `DIAL_*` and `SIMULATED_*` variables; every one has a default.
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let defaults = DialerConfig::default();
        let number =
            |name: &'static str, default: u64, min: u64, max: u64| -> Result<u64, ConfigError> {
                match lookup(name) {
                    None => Ok(default),
                    Some(raw) => raw
                        .trim()
                        .parse::<u64>()
                        .ok()
                        .filter(|value| (min..=max).contains(value))
                        .ok_or(ConfigError {
                            name,
                            problem: format!("{raw:?} is not a whole number from {min} to {max}"),
                        }),
                }
            };
        let small = |name, default: u32, min, max| {
            number(name, u64::from(default), min, max).map(|v| v as u32)
        };
        let provider = match lookup("DIAL_PROVIDER").as_deref().map(str::trim) {
            None | Some("simulated") => ProviderConfig::Simulated,
            Some("amazon-connect") => {
                ProviderConfig::AmazonConnect(ConnectSettings::from_lookup(lookup)?)
            }
            Some(other) => {
                return Err(ConfigError {
                    name: "DIAL_PROVIDER",
                    problem: format!("{other:?} is neither simulated nor amazon-connect"),
                })
            }
        };
        let mix = match lookup("SIMULATED_OUTCOME_MIX") {
            None => defaults.simulated.mix,
            Some(raw) => parse_mix(&raw).ok_or(ConfigError {
                name: "SIMULATED_OUTCOME_MIX",
                problem: format!(
                    "{raw:?} is not three whole numbers with a positive sum, e.g. 60,20,20"
                ),
            })?,
        };
        let faults = match lookup("SIMULATED_FAULTS") {
            None => FaultRates::default(),
            Some(raw) => FaultRates::parse(&raw).ok_or(ConfigError {
                name: "SIMULATED_FAULTS",
                problem: format!(
                    "{raw:?} is not name=fraction pairs of {} adding up to at most 1, e.g. \
                     startFailed=0.05,throttled=0.1",
                    FaultRates::NAMES.join(", ")
                ),
            })?,
        };
        let reconcile_after = Duration::from_secs(number(
            "DIAL_RECONCILE_AFTER_SECONDS",
            defaults.reconcile_after.as_secs(),
            1,
            86_400,
        )?);
        let url = |name| lookup(name).filter(|value| !value.trim().is_empty());
        let fallback = match lookup("TELEPHONY_FALLBACK").as_deref().map(str::trim) {
            None | Some("on") => true,
            Some("off") => false,
            Some(other) => {
                return Err(ConfigError {
                    name: "TELEPHONY_FALLBACK",
                    problem: format!("{other:?} is neither on nor off"),
                })
            }
        };
        let queue_mode = matches!(&provider, ProviderConfig::AmazonConnect(connect) if !connect.per_call_caller_id());
        let config = DialerConfig {
            telephony: TelephonyRules {
                fallback,
                per_call_caller_id: !queue_mode,
            },
            provider,
            rate_per_second: small("DIAL_RATE_PER_SECOND", defaults.rate_per_second, 1, 1000)?,
            max_in_flight_per_task: small(
                "DIAL_MAX_IN_FLIGHT_PER_TASK",
                defaults.max_in_flight_per_task,
                1,
                10_000,
            )?,
            max_in_flight: small("DIAL_MAX_IN_FLIGHT", defaults.max_in_flight, 1, 100_000)?,
            reconcile_after,
            max_call: Duration::from_secs(number(
                "DIAL_MAX_CALL_SECONDS",
                defaults.max_call.as_secs(),
                60,
                7 * 86_400,
            )?),
            sweep_page: number("DIAL_SWEEP_PAGE", defaults.sweep_page as u64, 10, 10_000)? as usize,
            capacity_shards: small("DIAL_CAPACITY_SHARDS", defaults.capacity_shards, 1, 64)?,
            index_partitions: small("DIAL_INDEX_PARTITIONS", defaults.index_partitions, 1, 64)?,
            recall_chunk: number(
                "DIAL_RECALL_CHUNK",
                defaults.recall_chunk as u64,
                10,
                10_000,
            )? as usize,
            runs_per_tick: small("DIAL_RUNS_PER_TICK", defaults.runs_per_tick, 1, 15)?,
            dial_workers: small("DIAL_WORKERS", defaults.dial_workers, 1, 1_000)?,
            tenant_weights: match lookup("DIAL_TENANT_WEIGHTS") {
                None => BTreeMap::new(),
                Some(raw) => parse_weights(&raw).ok_or(ConfigError {
                    name: "DIAL_TENANT_WEIGHTS",
                    problem: format!(
                        "{raw:?} is not tenant=weight pairs, weights 1-1000, e.g. acme=3,globex=1"
                    ),
                })?,
            },
            tenant_max_in_flight: match lookup("DIAL_TENANT_MAX_IN_FLIGHT") {
                None => None,
                Some(_) => Some(small("DIAL_TENANT_MAX_IN_FLIGHT", 0, 1, 100_000)?),
            },
            dial_queue_url: url("DIAL_QUEUE_URL"),
            call_events_queue_url: url("CALL_EVENTS_QUEUE_URL"),
            simulated: SimulatedSettings {
                mix,
                delay: Duration::from_secs(number(
                    "SIMULATED_OUTCOME_DELAY_SECONDS",
                    defaults.simulated.delay.as_secs(),
                    0,
                    900,
                )?),
                max_talk_seconds: number(
                    "SIMULATED_MAX_TALK_SECONDS",
                    defaults.simulated.max_talk_seconds,
                    1,
                    86_400,
                )?,
                faults,
                seed: number("SIMULATED_SEED", 0, 0, u64::MAX)?,
                late_by: reconcile_after + LATE_PAST_RECONCILE,
            },
        };
        config.capacity_shards_hold_a_part()?;
        Ok(config)
    }
}

impl DialerConfig {
    /// Refuses capacity shards that would leave a shard with no part of the provider rate or
    /// of the service's calls in flight: such a shard breaks the caps (D13, D23).
    fn capacity_shards_hold_a_part(&self) -> Result<(), ConfigError> {
        for (name, total) in [
            ("DIAL_RATE_PER_SECOND", self.rate_per_second),
            ("DIAL_MAX_IN_FLIGHT", self.max_in_flight),
        ] {
            if self.capacity_shards > total {
                return Err(ConfigError {
                    name: "DIAL_CAPACITY_SHARDS",
                    problem: format!(
                        "{} shards leave some with none of {name} ({total}): at most {total}",
                        self.capacity_shards
                    ),
                });
            }
        }
        Ok(())
    }
}

/// `acme=3, globex=1`: each tenant once, weights 1-1,000; empty is no weights.
fn parse_weights(raw: &str) -> Option<BTreeMap<Tenant, u32>> {
    let mut weights = BTreeMap::new();
    for pair in raw
        .split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
    {
        let (tenant, weight) = pair.split_once('=')?;
        let tenant = Tenant::parse(tenant.trim()).ok()?;
        let weight: u32 = weight
            .trim()
            .parse()
            .ok()
            .filter(|w| (1..=1000).contains(w))?;
        if weights.insert(tenant, weight).is_some() {
            return None;
        }
    }
    Some(weights)
}

fn parse_mix(raw: &str) -> Option<OutcomeMix> {
    let parts: Vec<u32> = raw
        .split(',')
        .map(|part| part.trim().parse().ok())
        .collect::<Option<_>>()?;
    match parts[..] {
        [success, failed, no_answer] if success + failed + no_answer > 0 => Some(OutcomeMix {
            success,
            failed,
            no_answer,
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_adapters::telephony::settings::CONNECT_QUEUE_ID;

    fn read(pairs: &[(&str, &str)]) -> Result<DialerConfig, ConfigError> {
        DialerConfig::from_lookup(&crate::config::lookup(pairs))
    }

    /// A capacity shard holds its part of both caps; one with a part of 0 would let a claim of
    /// each second through (the rate) or admit one call ever (the calls in flight).
    #[test]
    fn capacity_shards_without_a_part_of_each_cap_are_refused() {
        let error =
            read(&[("DIAL_CAPACITY_SHARDS", "4"), ("DIAL_RATE_PER_SECOND", "2")]).unwrap_err();
        assert_eq!(error.name, "DIAL_CAPACITY_SHARDS");
        assert_eq!(
            error.problem,
            "4 shards leave some with none of DIAL_RATE_PER_SECOND (2): at most 2"
        );
        let error = read(&[
            ("DIAL_CAPACITY_SHARDS", "16"),
            ("DIAL_RATE_PER_SECOND", "100"),
            ("DIAL_MAX_IN_FLIGHT", "10"),
        ])
        .unwrap_err();
        assert_eq!(
            error.problem,
            "16 shards leave some with none of DIAL_MAX_IN_FLIGHT (10): at most 10"
        );
        let fits = read(&[
            ("DIAL_CAPACITY_SHARDS", "4"),
            ("DIAL_RATE_PER_SECOND", "4"),
            ("DIAL_MAX_IN_FLIGHT", "40"),
        ]);
        assert_eq!(fits.unwrap().capacity_shards, 4);
    }

    #[test]
    fn defaults_are_d13s() {
        let settings = read(&[]).unwrap();
        assert_eq!(settings, DialerConfig::default());
        assert_eq!(settings.rate_per_second, 2);
        assert_eq!(settings.max_in_flight, 10);
        assert_eq!(settings.max_in_flight_per_task, 10);
        assert_eq!(settings.reconcile_after, Duration::from_secs(600));
        assert_eq!(settings.provider, ProviderConfig::Simulated);
    }

    #[test]
    fn malformed_values_fail_the_start_naming_the_variable() {
        for (name, value) in [
            ("DIAL_PROVIDER", "twilio"),
            ("DIAL_RATE_PER_SECOND", "0"),
            ("DIAL_MAX_IN_FLIGHT", "-1"),
            ("DIAL_RUNS_PER_TICK", "16"),
            ("SIMULATED_OUTCOME_MIX", "60,40"),
            ("SIMULATED_OUTCOME_MIX", "0,0,0"),
            ("SIMULATED_OUTCOME_DELAY_SECONDS", "abc"),
        ] {
            let error = read(&[(name, value)]).unwrap_err();
            assert_eq!(error.name, name, "{value}");
        }
        let settings = read(&[
            ("DIAL_PROVIDER", "amazon-connect"),
            ("CONNECT_INSTANCE_ID", "i"),
            ("CONNECT_CONTACT_FLOW_ID", "f"),
            ("CONNECT_QUEUE_ID", "q"),
            ("SIMULATED_OUTCOME_MIX", "1, 0, 3"),
        ])
        .unwrap();
        assert!(matches!(
            settings.provider,
            ProviderConfig::AmazonConnect(_)
        ));
        assert_eq!(
            settings.simulated.mix,
            OutcomeMix {
                success: 1,
                failed: 0,
                no_answer: 3
            }
        );
    }

    #[test]
    fn telephony_rules_follow_the_fallback_switch_and_connects_queue_mode() {
        assert_eq!(read(&[]).unwrap().telephony, TelephonyRules::default());
        let off = read(&[("TELEPHONY_FALLBACK", "off")]).unwrap().telephony;
        assert!(!off.fallback && off.per_call_caller_id);
        assert_eq!(
            read(&[("TELEPHONY_FALLBACK", "no")]).unwrap_err().name,
            "TELEPHONY_FALLBACK"
        );
        let queue = [
            ("DIAL_PROVIDER", "amazon-connect"),
            ("CONNECT_INSTANCE_ID", "i"),
            ("CONNECT_CONTACT_FLOW_ID", "f"),
            (CONNECT_QUEUE_ID, "q-1"),
        ];
        assert!(!read(&queue).unwrap().telephony.per_call_caller_id);
        // Only Connect's queue mode: the simulated provider sets any number.
        assert!(
            read(&[(CONNECT_QUEUE_ID, "q-1")])
                .unwrap()
                .telephony
                .per_call_caller_id
        );
    }

    #[test]
    fn tenant_weights_and_caps_are_read_or_refused() {
        let config = read(&[
            ("DIAL_TENANT_WEIGHTS", " acme=3, globex=1 "),
            ("DIAL_TENANT_MAX_IN_FLIGHT", "25"),
        ])
        .unwrap();
        let acme = Tenant::parse("acme").unwrap();
        assert_eq!(config.tenant_weights.get(&acme), Some(&3));
        assert_eq!(config.tenant_weights.len(), 2);
        assert_eq!(config.tenant_max_in_flight, Some(25));
        let defaults = read(&[]).unwrap();
        assert!(defaults.tenant_weights.is_empty());
        assert_eq!(defaults.tenant_max_in_flight, None);
        assert_eq!(defaults.max_call, Duration::from_secs(43_200));
        for bad in [
            "acme",
            "acme=0",
            "acme=1001",
            "a#b=2",
            "acme=2,acme=3",
            "acme=x",
        ] {
            let error = read(&[("DIAL_TENANT_WEIGHTS", bad)]).unwrap_err();
            assert_eq!(error.name, "DIAL_TENANT_WEIGHTS", "{bad}");
        }
        let error = read(&[("DIAL_TENANT_MAX_IN_FLIGHT", "0")]).unwrap_err();
        assert_eq!(error.name, "DIAL_TENANT_MAX_IN_FLIGHT");
    }

    #[test]
    fn simulated_faults_are_fractions_that_add_up_to_at_most_one() {
        let config = read(&[
            (
                "SIMULATED_FAULTS",
                "startFailed=0.05, startLost=0.05,eventLate=0.05,eventTwice=0.05,throttled=0.1",
            ),
            ("SIMULATED_SEED", "7"),
            ("DIAL_RECONCILE_AFTER_SECONDS", "30"),
        ])
        .unwrap();
        let simulated = config.simulated;
        assert_eq!(
            simulated.faults,
            FaultRates {
                start_failed: 500,
                start_lost: 500,
                event_late: 500,
                event_twice: 500,
                throttled: 1000,
            }
        );
        assert_eq!(simulated.seed, 7);
        assert_eq!(
            simulated.late_by,
            Duration::from_secs(45),
            "past the reconcile check"
        );
        let defaults = read(&[]).unwrap().simulated;
        assert_eq!((defaults.faults, defaults.seed), (FaultRates::default(), 0));
        for bad in [
            "startFailed=2",
            "startFailed=-0.1",
            "lost=0.1",
            "startFailed",
            "startFailed=0.6,throttled=0.5",
        ] {
            let error = read(&[("SIMULATED_FAULTS", bad)]).unwrap_err();
            assert_eq!(error.name, "SIMULATED_FAULTS", "{bad}");
        }
    }
}

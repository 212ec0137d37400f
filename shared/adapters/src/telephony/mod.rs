//! Telephony: the providers that place the calls. [`provider`] is what the engine asks of one
//! (and what an operator's assignment asks of its catalog); [`connect`] is Amazon Connect (its
//! API, its contact events, and the one mapping of its codes to the service's reasons);
//! [`simulated`] the local stand-in (D13, D28); [`Telephony`] and [`catalog`] the one the
//! deployment configures (`DIAL_PROVIDER`, [`settings`]): one type over both, so the functions
//! and the local stack run one engine type whatever is configured.

pub mod agents;
pub mod catalog;
pub mod connect;
pub mod provider;
pub mod settings;
pub mod simulated;

pub use provider::{Busy, CallRequest, CallStatus, Catalog, PlaceError, Provider, ServiceRefusal};

use crate::aws::Lazy;
use crate::queue::Queue;
use connect::ConnectProvider;
use outbound_model::error::ConfigError;
use outbound_model::error::Error;
use outbound_model::signature::Carried;
use settings::{ProviderConfig, SimulatedSettings};
use simulated::SimulatedProvider;
use std::collections::BTreeMap;

/// The provider chosen by `DIAL_PROVIDER`.
pub enum Telephony {
    Simulated(SimulatedProvider),
    AmazonConnect(ConnectProvider),
}

impl Telephony {
    /// The configured provider (`DIAL_PROVIDER`): the simulated one reporting its outcomes on
    /// the call-events queue (`call_events_queue_url`, through `sqs`), or Amazon Connect, whose
    /// client is built from `sdk` on its first call. Without the queue the simulated provider
    /// does not start.
    pub fn new(
        provider: &ProviderConfig,
        simulated: &SimulatedSettings,
        call_events_queue_url: Option<String>,
        sqs: Lazy<aws_sdk_sqs::Client>,
        sdk: &aws_config::SdkConfig,
    ) -> Result<Self, ConfigError> {
        match provider {
            ProviderConfig::Simulated => {
                let url = call_events_queue_url.ok_or(ConfigError {
                    name: "CALL_EVENTS_QUEUE_URL",
                    problem: "is not set (the simulated provider reports outcomes there)".into(),
                })?;
                Ok(Telephony::Simulated(SimulatedProvider::new(
                    Queue::new(sqs, Some(url)),
                    simulated.clone(),
                )))
            }
            ProviderConfig::AmazonConnect(settings) => {
                let sdk = sdk.clone();
                Ok(Telephony::AmazonConnect(ConnectProvider::new(
                    Lazy::new(move || connect::client(&sdk)),
                    settings.clone(),
                )))
            }
        }
    }
}

impl Telephony {
    /// The same provider, telling `hook` of each call the simulated provider places, once (the
    /// local stack lists them); Amazon Connect keeps its own.
    pub fn on_placed(self, hook: simulated::OnPlaced) -> Self {
        match self {
            Telephony::Simulated(provider) => Telephony::Simulated(provider.on_placed(hook)),
            connect => connect,
        }
    }

    /// The same provider, its answered calls of agent-paced tasks going to `pool`'s agents (the
    /// local stack sets them); Amazon Connect has its own.
    pub fn with_agents(self, pool: agents::AgentPool) -> Self {
        match self {
            Telephony::Simulated(provider) => Telephony::Simulated(provider.with_agents(pool)),
            connect => connect,
        }
    }
}

impl Provider for Telephony {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        match self {
            Telephony::Simulated(provider) => provider.place(call).await,
            Telephony::AmazonConnect(provider) => provider.place(call).await,
        }
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, Error> {
        match self {
            Telephony::Simulated(provider) => provider.describe(call_id).await,
            Telephony::AmazonConnect(provider) => provider.describe(call_id).await,
        }
    }

    async fn queue_agents(
        &self,
        queues: &[String],
    ) -> Result<BTreeMap<String, outbound_model::pacing::QueueAgents>, Error> {
        match self {
            Telephony::Simulated(provider) => provider.queue_agents(queues).await,
            Telephony::AmazonConnect(provider) => provider.queue_agents(queues).await,
        }
    }

    fn fall_back(&self) -> bool {
        match self {
            Telephony::Simulated(provider) => provider.fall_back(),
            Telephony::AmazonConnect(provider) => provider.fall_back(),
        }
    }

    fn attributes_fit(&self, attributes: &BTreeMap<String, String>, reserved: usize) -> bool {
        match self {
            Telephony::Simulated(provider) => provider.attributes_fit(attributes, reserved),
            Telephony::AmazonConnect(provider) => provider.attributes_fit(attributes, reserved),
        }
    }

    fn per_call_caller_id(&self) -> bool {
        match self {
            Telephony::Simulated(provider) => provider.per_call_caller_id(),
            Telephony::AmazonConnect(provider) => provider.per_call_caller_id(),
        }
    }

    async fn attempt_of(&self, call_id: &str) -> Result<Option<Carried>, Error> {
        match self {
            Telephony::Simulated(provider) => provider.attempt_of(call_id).await,
            Telephony::AmazonConnect(provider) => provider.attempt_of(call_id).await,
        }
    }
}

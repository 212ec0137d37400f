//! The provider a deployment dials with (`DIAL_PROVIDER`): one type over both, so the functions
//! and the local stack run one engine type whatever is configured.

use super::connect::ConnectProvider;
use super::provider::{CallRequest, CallStatus, PlaceError, Provider};
use super::simulated::SimulatedProvider;
use outbound_adapters::aws::Lazy;
use outbound_adapters::queue::Queue;
use outbound_app::config::dialing::ProviderConfig;
use outbound_app::App;
use outbound_model::error::ConfigError;
use outbound_model::error::Error;
use outbound_model::signature::Carried;
use std::collections::BTreeMap;

/// The provider chosen by `DIAL_PROVIDER`.
pub enum Telephony {
    Simulated(SimulatedProvider),
    AmazonConnect(ConnectProvider),
}

impl Telephony {
    /// The configured provider (`DIAL_PROVIDER`) over `app`'s clients, or the variable that is
    /// missing for it. Amazon Connect's client is built on its first call.
    pub fn from_app(app: &App) -> Result<Self, ConfigError> {
        let dialing = &app.config.dialing;
        match &dialing.provider {
            ProviderConfig::Simulated => {
                let url = dialing.call_events_queue_url.clone().ok_or(ConfigError {
                    name: "CALL_EVENTS_QUEUE_URL",
                    problem: "is not set (the simulated provider reports outcomes there)".into(),
                })?;
                Ok(Telephony::Simulated(SimulatedProvider::new(
                    Queue::new(app.sqs.clone(), Some(url)),
                    dialing.simulated.clone(),
                )))
            }
            ProviderConfig::AmazonConnect(settings) => {
                let sdk = app.sdk.clone();
                Ok(Telephony::AmazonConnect(ConnectProvider::new(
                    Lazy::new(move || super::connect::client(&sdk)),
                    settings.clone(),
                )))
            }
        }
    }
}

impl Telephony {
    /// The same provider, telling `hook` of each call the simulated provider places, once (the
    /// local stack lists them); Amazon Connect keeps its own.
    pub fn on_placed(self, hook: super::simulated::OnPlaced) -> Self {
        match self {
            Telephony::Simulated(provider) => Telephony::Simulated(provider.on_placed(hook)),
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

    fn fall_back(&self) -> bool {
        match self {
            Telephony::Simulated(provider) => provider.fall_back(),
            Telephony::AmazonConnect(provider) => provider.fall_back(),
        }
    }

    fn needs_e164(&self) -> bool {
        matches!(self, Telephony::AmazonConnect(_))
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

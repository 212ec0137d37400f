//! The three dialing functions' lives: configuration, clients and the provider once per cold
//! start, then every event through the [`Engine`].

use super::connect::{ConnectProvider, ConnectSettings};
use super::engine::Engine;
use super::plan::SystemClock;
use super::provider::{CallRequest, CallStatus, PlaceError, Provider};
use super::settings::ProviderKind;
use super::simulated::SimulatedProvider;
use crate::config::{Config, ConfigError};
use crate::error::Error;
use crate::store::Store;
use crate::worker::each_message;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use std::sync::Arc;

/// The provider chosen by `DIAL_PROVIDER`.
pub enum Telephony {
    Simulated(SimulatedProvider),
    AmazonConnect(ConnectProvider),
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
}

impl Telephony {
    /// The configured provider, or the variable that is missing for it.
    pub fn from_config(
        config: &Config,
        sdk: &aws_config::SdkConfig,
        sqs: &aws_sdk_sqs::Client,
    ) -> Result<Self, ConfigError> {
        match config.dialing.provider {
            ProviderKind::Simulated => {
                let url = config
                    .dialing
                    .call_events_queue_url
                    .clone()
                    .ok_or(ConfigError {
                        name: "CALL_EVENTS_QUEUE_URL",
                        problem: "is not set (the simulated provider reports outcomes there)"
                            .into(),
                    })?;
                Ok(Telephony::Simulated(SimulatedProvider::new(
                    sqs.clone(),
                    url,
                    config.dialing.simulated.clone(),
                )))
            }
            ProviderKind::AmazonConnect => Ok(Telephony::AmazonConnect(ConnectProvider::new(
                aws_sdk_connect::Client::new(sdk),
                ConnectSettings::from_env()?,
            ))),
        }
    }
}

impl Engine<Telephony> {
    /// The engine of `config` on the clients of `sdk`.
    pub fn from_config(config: Config, sdk: &aws_config::SdkConfig) -> Result<Self, ConfigError> {
        let sqs = aws_sdk_sqs::Client::new(sdk);
        let provider = Telephony::from_config(&config, sdk, &sqs)?;
        Ok(Engine {
            store: Store::from_config(sdk, config.table.clone()),
            provider,
            zone: config.time_zone,
            blob: crate::blob::Blob::from_config(
                sdk,
                config.bucket.clone(),
                config.s3_force_path_style,
            ),
            config: config.dialing,
            sqs,
            clock: Arc::new(SystemClock),
        })
    }

    async fn from_env() -> Result<Self, lambda_runtime::Error> {
        crate::telemetry::init();
        let config = Config::from_env()?;
        let sdk = crate::aws::sdk_config().await;
        Ok(Self::from_config(config, &sdk)?)
    }
}

/// dialer-tick: every scheduled event runs one tick.
pub async fn serve_tick() -> Result<(), lambda_runtime::Error> {
    let engine = Engine::from_env().await?;
    let engine = &engine;
    lambda_runtime::run(service_fn(
        move |_: LambdaEvent<serde_json::Value>| async move {
            let report = engine
                .tick()
                .await
                .map_err(|error| lambda_runtime::Error::from(error.to_string()))?;
            Ok::<_, lambda_runtime::Error>(serde_json::json!({
                "running": report.running,
                "inWindow": report.in_window,
                "dialJobs": report.dial_jobs,
                "reconcileJobs": report.reconcile_jobs,
            }))
        },
    ))
    .await
}

/// The SQS-triggered dialing functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialQueue {
    /// Dial and reconcile jobs: the dialer function.
    Jobs,
    /// Call outcomes: the call-events function.
    CallEvents,
}

impl DialQueue {
    /// Handles one message body of this queue.
    pub async fn handle<P: Provider>(self, engine: &Engine<P>, body: String) -> Result<(), Error> {
        match self {
            DialQueue::Jobs => engine.run_job(&body).await,
            DialQueue::CallEvents => engine.call_event(&body).await,
        }
    }
}

/// dialer and call-events: every SQS batch, failed messages reported for redelivery.
pub async fn serve_queue(queue: DialQueue) -> Result<(), lambda_runtime::Error> {
    let engine = Engine::from_env().await?;
    let engine = &engine;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let batch = each_message(event.payload, |body| Box::pin(queue.handle(engine, body))).await;
        Ok::<_, lambda_runtime::Error>(batch)
    }))
    .await
}

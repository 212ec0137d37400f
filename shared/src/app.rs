//! The composition root: configuration, the SDK clients, the store, the bucket, the queues and
//! the dialing engine, each built once per cold start and shared by whatever a function runs
//! (the HTTP routers, the queue workers, the engine). Nothing below this module builds a client.
//!
//! Clients a function may never use are [`Lazy`]: DynamoDB is built at start (every event of
//! every function reads it), S3, SQS and Amazon Connect on their first call.

use crate::aws::{timing, Lazy};
use crate::blob::Blob;
use crate::config::dialing::ProviderKind;
use crate::config::Config;
use crate::dialing::connect::{ConnectProvider, ConnectSettings};
use crate::dialing::engine::Engine;
use crate::dialing::job::DialJob;
use crate::dialing::plan::{Clock, SystemClock};
use crate::dialing::simulated::SimulatedProvider;
use crate::dialing::telephony::Telephony;
use crate::error::ConfigError;
use crate::model::export::{ExportFormat, ExportMessage};
use crate::model::reclaim::ReclaimJob;
use crate::queue::Queue;
use crate::service::export::ExportTarget;
use crate::store::Store;
use chrono_tz::Tz;
use std::sync::Arc;

/// What every handler can reach: configuration and clients, built once per cold start; cheap
/// to clone.
#[derive(Clone, Debug)]
pub struct App(Arc<AppParts>);

#[derive(Debug)]
pub struct AppParts {
    pub config: Config,
    pub store: Store,
    pub blob: Blob,
    /// Reclaim jobs (D11): queued by the deletes, run by the reclaim function.
    pub reclaim: Queue<ReclaimJob>,
    /// Export jobs (D8): the API functions queue them, the exporter runs them.
    pub exports: Queue<ExportMessage>,
    /// The dial queue: the tick's jobs, and the jobs of large recalls (D12).
    pub dial_jobs: Queue<DialJob>,
    /// The SQS client of every queue above, and of the simulated provider's outcomes.
    pub sqs: Lazy<aws_sdk_sqs::Client>,
    /// The SDK configuration the lazy clients are built from.
    pub sdk: aws_config::SdkConfig,
}

impl std::ops::Deref for App {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0
    }
}

impl App {
    /// Reads the environment: configuration and the AWS SDK's.
    pub async fn from_env() -> Result<Self, ConfigError> {
        Ok(Self::from_config(Config::from_env()?).await)
    }

    /// Builds the clients from the environment's AWS configuration.
    pub async fn from_config(config: Config) -> Self {
        let sdk = crate::aws::sdk_config().await;
        Self::with_sdk(config, &sdk)
    }

    /// Builds everything from `sdk`.
    pub fn with_sdk(config: Config, sdk: &aws_config::SdkConfig) -> Self {
        let store = Store::from_config(sdk, config.table.clone())
            .with_import_pace(config.import_wcu_per_second)
            .with_capacity_shards(config.dialing.capacity_shards)
            .with_contact_shards(config.contact_shards);
        Self::with_store(config, sdk, store)
    }

    /// Builds everything from `sdk`, over a store built elsewhere (the tests count its calls
    /// and set its pace).
    pub fn with_store(config: Config, sdk: &aws_config::SdkConfig, store: Store) -> Self {
        let blob = Blob::from_config(sdk, config.bucket.clone(), config.s3_force_path_style);
        let sqs = {
            let sdk = sdk.clone();
            Lazy::new(move || timing::sqs(&sdk))
        };
        App(Arc::new(AppParts {
            reclaim: Queue::new(sqs.clone(), Some(config.reclaim_queue_url.clone())),
            exports: Queue::new(sqs.clone(), config.export_queue_url.clone()),
            dial_jobs: Queue::new(sqs.clone(), config.dialing.dial_queue_url.clone()),
            sqs,
            sdk: sdk.clone(),
            config,
            store,
            blob,
        }))
    }

    pub fn zone(&self) -> Tz {
        self.config.time_zone
    }

    /// Where exports in `format` go.
    pub fn export_target(&self, format: ExportFormat) -> ExportTarget<'_> {
        ExportTarget {
            blob: &self.blob,
            format,
            zone: self.zone(),
            inline_max_bytes: self.config.export_inline_max_bytes,
            direct_max_contacts: self.config.export_job_threshold,
        }
    }

    /// The configured provider (`DIAL_PROVIDER`), or the variable that is missing for it.
    pub fn telephony(&self) -> Result<Telephony, ConfigError> {
        let dialing = &self.config.dialing;
        match dialing.provider {
            ProviderKind::Simulated => {
                let url = dialing.call_events_queue_url.clone().ok_or(ConfigError {
                    name: "CALL_EVENTS_QUEUE_URL",
                    problem: "is not set (the simulated provider reports outcomes there)".into(),
                })?;
                Ok(Telephony::Simulated(SimulatedProvider::new(
                    Queue::new(self.sqs.clone(), Some(url)),
                    dialing.simulated.clone(),
                )))
            }
            ProviderKind::AmazonConnect => {
                let sdk = self.sdk.clone();
                Ok(Telephony::AmazonConnect(ConnectProvider::new(
                    Lazy::new(move || aws_sdk_connect::Client::new(&sdk)),
                    ConnectSettings::from_env()?,
                )))
            }
        }
    }

    /// The dialing engine over this app's store, bucket and dial queue, with `provider` and
    /// `clock`.
    pub fn engine_with<P>(&self, provider: P, clock: Arc<dyn Clock>) -> Engine<P> {
        Engine {
            store: self.store.clone(),
            provider,
            config: self.config.dialing.clone(),
            zone: self.config.time_zone,
            dial_jobs: self.dial_jobs.clone(),
            blob: self.blob.clone(),
            clock,
        }
    }

    /// The dialing engine as configured: the configured provider and the system clock.
    pub fn engine(&self) -> Result<Engine<Telephony>, ConfigError> {
        Ok(self.engine_with(self.telephony()?, Arc::new(SystemClock)))
    }
}

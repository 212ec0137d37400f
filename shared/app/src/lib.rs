//! What every handler can reach: configuration ([`config`], the only reader of the environment
//! with `auth`) and the SDK clients, the store, the bucket and the queues, each built once per
//! cold start. The layers above build their own parts from an [`App`] (the dialing engine, an
//! export's target); the edge (`outbound-edge`, the composition root) builds the [`App`] of each
//! function and nothing below this crate builds a client.
//!
//! Clients a function may never use are [`Lazy`]: DynamoDB is built at start (every event of
//! every function reads it), S3, SQS and the request limiter's own DynamoDB client on their
//! first call.

pub mod config;

use crate::config::Config;
use chrono_tz::Tz;
use outbound_adapters::aws::{timing, Lazy};
use outbound_adapters::blob::Blob;
use outbound_adapters::queue::Queue;
use outbound_adapters::store::rate::RequestLimiter;
use outbound_adapters::store::Store;
use outbound_adapters::telephony::catalog::ProviderCatalog;
use outbound_adapters::telephony::Telephony;
use outbound_model::error::ConfigError;
use outbound_model::export::ExportMessage;
use outbound_model::job::DialJob;
use outbound_model::reclaim::ReclaimJob;
use std::sync::Arc;

/// The allocator of every binary that links the composition root: the functions, the local API,
/// the tests and the benchmarks, so what `make bench` measures is what runs. glibc's allocator
/// hands freed memory back to the kernel and faults it in again on the next import; with
/// mimalloc a warm function reuses it, which halves the time to parse a 10,000-row CSV here.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Each tenant's request rate (D26), shared by every instance through the table; its own
    /// client, built on the first request.
    pub limiter: RequestLimiter,
}

impl std::ops::Deref for App {
    type Target = AppParts;
    fn deref(&self) -> &AppParts {
        &self.0
    }
}

impl App {
    /// Reads the environment: the AWS SDK's configuration, then the service's (the secrets it
    /// names read first, D32).
    pub async fn from_env() -> Result<Self, ConfigError> {
        let sdk = outbound_adapters::aws::sdk_config().await;
        Ok(Self::with_sdk(Config::from_env(&sdk).await?, &sdk))
    }

    /// Builds the clients from the environment's AWS configuration.
    pub async fn from_config(config: Config) -> Self {
        let sdk = outbound_adapters::aws::sdk_config().await;
        Self::with_sdk(config, &sdk)
    }

    /// Builds everything from `sdk`.
    pub fn with_sdk(config: Config, sdk: &aws_config::SdkConfig) -> Self {
        let store = Self::store(&config, sdk);
        Self::with_store(config, sdk, store)
    }

    /// The store `config` asks for, its client built from `sdk`.
    pub fn store(config: &Config, sdk: &aws_config::SdkConfig) -> Store {
        Store::from_config(sdk, config.table.clone())
            .with_import_pace(config.import_wcu_per_second)
            .with_capacity_shards(config.dialing.capacity_shards)
            .with_index_partitions(config.dialing.index_partitions)
            .with_contact_shards(config.contact_shards)
    }

    /// Builds everything from `sdk`, over a store built elsewhere (the tests count its calls
    /// and set its pace).
    pub fn with_store(config: Config, sdk: &aws_config::SdkConfig, store: Store) -> Self {
        let limiter = RequestLimiter::from_config(
            sdk,
            config.rate_table.clone(),
            config.tenant_limits.requests,
            config.limiter_timeout,
        );
        Self::with_store_and_limiter(config, sdk, store, limiter)
    }

    /// [`App::with_store`], with a request limiter built elsewhere too (the simulation's, over
    /// its database in the process).
    pub fn with_store_and_limiter(
        config: Config,
        sdk: &aws_config::SdkConfig,
        store: Store,
        limiter: RequestLimiter,
    ) -> Self {
        let store = store.with_tenant_limits(config.tenant_limits);
        let blob = Blob::from_config(sdk, config.bucket.clone(), config.s3_force_path_style);
        let sqs = {
            let sdk = sdk.clone();
            Lazy::new(move || timing::sqs(&sdk))
        };
        App(Arc::new(AppParts {
            limiter,
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

    /// The provider `DIAL_PROVIDER` names, over this app's clients.
    pub fn telephony(&self) -> Result<Telephony, ConfigError> {
        let dialing = &self.config.dialing;
        Telephony::new(
            &dialing.provider,
            &dialing.simulated,
            dialing.call_events_queue_url.clone(),
            self.sqs.clone(),
            &self.sdk,
        )
    }

    /// What the provider `DIAL_PROVIDER` names holds for an operator's assignment (D22).
    pub fn catalog(&self) -> ProviderCatalog {
        ProviderCatalog::new(&self.config.dialing.provider, &self.sdk)
    }
}

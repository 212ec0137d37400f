//! What one test or benchmark owns on the shared stand-in: its own table, bucket and queues, and
//! a store whose DynamoDB calls are counted.

use crate::{provision, sdk_config};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use outbound::blob::Blob;
use outbound::config::Config;
use outbound::dialing::engine::Engine;
use outbound::dialing::lambda::Telephony;
use outbound::dialing::plan::Clock;
use outbound::dialing::settings::DialerConfig;
use outbound::dialing::simulated::SimulatedProvider;
use outbound::http::{App, AppParts};
use outbound::reclaim::ReclaimQueue;
use outbound::store::Store;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A unique, short resource name.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// Counts DynamoDB operations (one per call, retries included in it).
#[derive(Clone, Debug, Default)]
pub struct CallCounter(Arc<AtomicUsize>);

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_execution(
        &self,
        _context: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<
            '_,
        >,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn read_after_execution(
        &self,
        _context: &aws_sdk_dynamodb::config::interceptors::FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        Ok(())
    }
}

impl CallCounter {
    pub fn take(&self) -> usize {
        self.0.swap(0, Ordering::SeqCst)
    }
}

/// What one test owns on the shared moto: its table and reclaim queue, and a store whose
/// DynamoDB calls are counted.
pub struct Stack {
    pub sdk: aws_config::SdkConfig,
    pub resources: provision::Resources,
    pub store: Store,
    pub calls: CallCounter,
}

impl Stack {
    pub async fn provision() -> Stack {
        let sdk = sdk_config().await;
        // Each test its own table, bucket and queues: upload notifications stay with their test.
        let resources = provision::ensure(&sdk, &unique("t"), &unique("b"))
            .await
            .expect("moto is running (make test starts it)");
        let calls = CallCounter::default();
        let dynamodb = aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&sdk)
                .interceptor(calls.clone())
                .build(),
        );
        let store = Store::new(dynamodb, resources.table.clone());
        Stack {
            sdk,
            resources,
            store,
            calls,
        }
    }

    /// The configuration of this stack's resources with `AUTH_MODE` = `auth_mode`.
    pub fn config(&self, auth_mode: &str) -> Config {
        let resources = &self.resources;
        Config::from_lookup(|name| match name {
            "TABLE_NAME" => Some(resources.table.clone()),
            "BUCKET_NAME" => Some(resources.bucket.clone()),
            "RECLAIM_QUEUE_URL" => Some(resources.reclaim_queue_url.clone()),
            "EXPORT_QUEUE_URL" => Some(resources.export_queue_url.clone()),
            "AUTH_MODE" => Some(auth_mode.to_owned()),
            "OUTBOUND_DEV_STACK" => Some("true".into()),
            "S3_FORCE_PATH_STYLE" => Some("true".into()),
            _ => None,
        })
        .expect("test configuration is complete")
    }

    /// Deletes this stack's table, for long runs that should not leave moto holding it.
    pub async fn remove_table(&self) -> Result<(), aws_sdk_dynamodb::Error> {
        aws_sdk_dynamodb::Client::new(&self.sdk)
            .delete_table()
            .table_name(&self.resources.table)
            .send()
            .await?;
        Ok(())
    }

    /// The app the handlers see, over this stack's counted store.
    pub fn app(&self, config: Config) -> App {
        App::new(AppParts {
            store: self.store.clone(),
            blob: Blob::from_config(&self.sdk, self.resources.bucket.clone(), true),
            reclaim: ReclaimQueue::new(
                aws_sdk_sqs::Client::new(&self.sdk),
                self.resources.reclaim_queue_url.clone(),
            ),
            exports: outbound::service::export_job::ExportQueue::new(
                aws_sdk_sqs::Client::new(&self.sdk),
                config.export_queue_url.clone(),
            ),
            config,
        })
    }

    /// The dialing engine over this stack's counted store and queues, with the simulated
    /// provider and `clock`.
    pub fn engine(&self, settings: DialerConfig, clock: Arc<dyn Clock>) -> Engine<Telephony> {
        let sqs = aws_sdk_sqs::Client::new(&self.sdk);
        let simulated = SimulatedProvider::new(
            sqs.clone(),
            self.resources.call_events_queue_url.clone(),
            settings.simulated.clone(),
        );
        Engine {
            store: self.store.clone(),
            provider: Telephony::Simulated(simulated),
            config: DialerConfig {
                dial_queue_url: Some(self.resources.dial_queue_url.clone()),
                call_events_queue_url: Some(self.resources.call_events_queue_url.clone()),
                ..settings
            },
            zone: chrono_tz::Tz::UTC,
            sqs,
            clock,
        }
    }
}

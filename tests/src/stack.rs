//! What one test or benchmark owns: its own DynamoDB database, its own bucket and queues on the
//! shared moto, and a store whose DynamoDB calls are counted.

use crate::capacity::WriteLog;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use outbound_adapters::aws::Lazy;
use outbound_adapters::blob::Blob;
use outbound_adapters::queue::Queue;
use outbound_adapters::store::Store;
use outbound_adapters::telephony::simulated::SimulatedProvider;
use outbound_adapters::telephony::Telephony;
use outbound_app::config::dialing::DialerConfig;
use outbound_app::config::Config;
use outbound_app::App;
use outbound_dialing::engine::Engine;
use outbound_local::dynamodb::StackDynamoDb;
use outbound_local::{provision, stack_sdk_config};
use outbound_model::plan::Clock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Puts `items` into `table` past the service (to seed large data sets fast): BatchWriteItem, 25
/// a request, resending what DynamoDB leaves unprocessed.
pub async fn put_items(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    items: Vec<outbound_adapters::store::Item>,
) -> Result<(), aws_sdk_dynamodb::Error> {
    use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
    for chunk in items.chunks(25) {
        let mut requests = Vec::with_capacity(chunk.len());
        for item in chunk {
            let put = PutRequest::builder()
                .set_item(Some(item.clone()))
                .build()
                .map_err(aws_sdk_dynamodb::Error::from)?;
            requests.push(WriteRequest::builder().put_request(put).build());
        }
        while !requests.is_empty() {
            let output = client
                .batch_write_item()
                .request_items(table, requests)
                .send()
                .await?;
            requests = output
                .unprocessed_items
                .and_then(|mut left| left.remove(table))
                .unwrap_or_default();
        }
    }
    Ok(())
}

/// A unique, short resource name.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", ulid::Ulid::new().to_string().to_lowercase())
}

/// Counts DynamoDB operations (one per call, retries included in it), with
/// [`CallCounter::items`] the items their reads returned, and with [`CallCounter::writes`] the
/// items their writes wrote.
#[derive(Clone, Debug, Default)]
pub struct CallCounter(Arc<AtomicUsize>, ItemCounter, WriteLog);

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_execution(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<
            '_,
        >,
        config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        self.2.read_before_execution(context, config)
    }

    fn read_after_deserialization(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef<
            '_,
        >,
        runtime_components: &RuntimeComponents,
        config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.1
            .read_after_deserialization(context, runtime_components, config)
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

    /// The items the counted calls read.
    pub fn items(&self) -> &ItemCounter {
        &self.1
    }

    /// The write requests of the counted calls.
    pub fn writes(&self) -> &WriteLog {
        &self.2
    }
}

/// Counts what DynamoDB answers to reads (GetItem, BatchGetItem, Query), read after each
/// response is deserialized: the items returned, told apart into whole records and keys or
/// projections, and the items a Query read (D5's cost of a list page).
#[derive(Clone, Debug, Default)]
pub struct ItemCounter(Arc<std::sync::Mutex<ItemsRead>>);

/// Items read by the counted client since the counter was last taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItemsRead {
    /// Read requests answered (each page of a Query is one).
    pub reads: usize,
    /// Items returned whole: every record (data source, contact, task) carries `created_at`,
    /// which no key or projection a list reads does.
    pub records: usize,
    /// Items returned without it: keys, projections, the tenant's counts.
    pub partial: usize,
    /// Items the Queries read (`ScannedCount`: before a filter, also those only counted).
    pub scanned: usize,
}

impl ItemsRead {
    /// Every item returned.
    pub fn returned(&self) -> usize {
        self.records + self.partial
    }
}

impl std::fmt::Display for ItemsRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} read request(s), {} whole record(s), {} key/projected item(s), {} item(s) scanned by Query",
            self.reads, self.records, self.partial, self.scanned
        )
    }
}

impl ItemCounter {
    /// What was read since the last take, and starts counting afresh.
    pub fn take(&self) -> ItemsRead {
        std::mem::take(&mut *self.0.lock().unwrap())
    }

    fn add(&self, items: &[outbound_adapters::store::Item], scanned: usize) {
        let mut read = self.0.lock().unwrap();
        read.reads += 1;
        read.scanned += scanned;
        for item in items {
            if item.contains_key("created_at") {
                read.records += 1;
            } else {
                read.partial += 1;
            }
        }
    }
}

impl Intercept for ItemCounter {
    fn name(&self) -> &'static str {
        "ItemCounter"
    }

    fn read_after_deserialization(
        &self,
        context: &aws_sdk_dynamodb::config::interceptors::AfterDeserializationInterceptorContextRef<
            '_,
        >,
        _runtime_components: &RuntimeComponents,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
        use aws_sdk_dynamodb::operation::get_item::GetItemOutput;
        use aws_sdk_dynamodb::operation::query::QueryOutput;
        let Ok(output) = context.output_or_error() else {
            return Ok(());
        };
        if let Some(query) = output.downcast_ref::<QueryOutput>() {
            self.add(query.items(), query.scanned_count().max(0) as usize);
        } else if let Some(batch) = output.downcast_ref::<BatchGetItemOutput>() {
            let items: Vec<_> = batch
                .responses()
                .into_iter()
                .flat_map(|tables| tables.values().flatten().cloned())
                .collect();
            self.add(&items, 0);
        } else if let Some(get) = output.downcast_ref::<GetItemOutput>() {
            self.add(get.item().cloned().as_slice(), 0);
        }
        Ok(())
    }
}

/// What one test owns: a DynamoDB database of its own (or its own table on the server at
/// `DYNAMODB_ENDPOINT`), its bucket and queues on the shared moto, and a store whose DynamoDB
/// calls are counted.
pub struct Stack {
    /// Served as long as the stack (or what was built from it) holds it.
    pub dynamodb: Arc<StackDynamoDb>,
    pub sdk: aws_config::SdkConfig,
    pub resources: provision::Resources,
    pub store: Store,
    pub calls: CallCounter,
}

impl Stack {
    pub async fn provision() -> Stack {
        let dynamodb = StackDynamoDb::for_test()
            .await
            .expect("the test's own DynamoDB starts");
        let sdk = stack_sdk_config(dynamodb.url()).await;
        // Each test its own table, bucket and queues: upload notifications stay with their test.
        let resources = provision::ensure(&sdk, &unique("t"), &unique("b"))
            .await
            .expect("moto is running (make test starts it)");
        let calls = CallCounter::default();
        let client = aws_sdk_dynamodb::Client::from_conf(
            outbound_adapters::aws::timing::dynamodb(&sdk)
                .interceptor(calls.clone())
                .build(),
        );
        let store = Store::new(client, resources.table.clone());
        Stack {
            dynamodb: Arc::new(dynamodb),
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
        App::with_store(config, &self.sdk, self.store.clone())
    }

    /// The dialing engine over this stack's counted store and queues, with the simulated
    /// provider and `clock`.
    pub fn engine(&self, settings: DialerConfig, clock: Arc<dyn Clock>) -> Engine<Telephony> {
        simulated_engine(
            &self.sdk,
            &self.resources,
            self.store.clone(),
            settings,
            clock,
        )
    }
}

/// The dialing engine over `store` and the queues and bucket of `resources`, with the
/// simulated provider and `clock`, in the UTC service zone.
pub fn simulated_engine(
    sdk: &aws_config::SdkConfig,
    resources: &provision::Resources,
    store: Store,
    settings: DialerConfig,
    clock: Arc<dyn Clock>,
) -> Engine<Telephony> {
    let sqs = {
        let sdk = sdk.clone();
        Lazy::new(move || outbound_adapters::aws::timing::sqs(&sdk))
    };
    let simulated = SimulatedProvider::new(
        Queue::new(sqs.clone(), Some(resources.call_events_queue_url.clone())),
        settings.simulated.clone(),
    );
    Engine {
        store: store.with_capacity_shards(settings.capacity_shards),
        provider: Telephony::Simulated(simulated),
        config: DialerConfig {
            dial_queue_url: Some(resources.dial_queue_url.clone()),
            call_events_queue_url: Some(resources.call_events_queue_url.clone()),
            ..settings
        },
        zone: chrono_tz::Tz::UTC,
        blob: Blob::from_config(sdk, resources.bucket.clone(), true),
        dial_jobs: Queue::new(sqs, Some(resources.dial_queue_url.clone())),
        clock,
        // The development stack's key, as its functions read it (OUTBOUND_DEV_STACK).
        signer: outbound_model::signature::CallSigner::new(
            outbound_app::config::DEV_CALL_SIGNING_KEY.as_bytes(),
        ),
    }
}

//! The local DynamoDB: dynoxide (a DynamoDB emulator on SQLite, built from the lockfile like
//! every other dependency) served in this process over DynamoDB's own JSON protocol, so the
//! store's SDK client reaches it exactly as it reaches DynamoDB: signed HTTP requests, the
//! service's error codes, its conditions, transactions, indexes and streams.
//!
//! Why not moto's DynamoDB: moto serves one request at a time, and stays correct only because of
//! it; dynoxide keeps each database's writes atomic under concurrent clients, so every test owns
//! a database of its own and the test binaries run side by side (the differences found between
//! the emulators are in `docs/emulators.md`).
//!
//! [`LocalDynamoDb::start`] serves one database on a loopback port until the handle is dropped;
//! [`with_dynamodb`] points the DynamoDB and DynamoDB Streams clients of an SDK configuration at
//! it, leaving every other service where it was (moto: S3, SQS, EventBridge).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Where a database keeps its items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Storage {
    /// In memory, gone with the handle: each test's own.
    Memory,
    /// In a SQLite file, kept across restarts (`make run`'s `.local/dynamodb/outbound.sqlite`).
    File(PathBuf),
}

/// Any free port on loopback, for [`LocalDynamoDb::start`].
pub const ANY_LOOPBACK_PORT: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

/// A dynoxide database served on a loopback port; dropping the handle stops the server, and with
/// [`Storage::Memory`] frees the database.
#[derive(Debug)]
pub struct LocalDynamoDb {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

/// The runtime every local database is served on: its own threads, so a database answers while
/// the test or server that owns it is busy or blocked, whatever runtime that one runs on.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("local-dynamodb")
            .enable_all()
            .build()
            .expect("the local DynamoDB's runtime starts")
    })
}

/// Why a local database could not be served.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the local DynamoDB's database could not be opened: {0}")]
    Open(#[from] dynoxide::DynoxideError),
    #[error("the local DynamoDB's stream records could not be indexed: {0}")]
    Index(#[from] rusqlite::Error),
    #[error("the local DynamoDB could not listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// dynoxide reads its stream records by a cast of their sequence number, unindexed: each write
/// finds the next number by reading every record the table's stream holds (and it keeps them
/// all, where DynamoDB keeps 24 hours), and each read of the stream sorts them. A write's cost
/// grew with everything written before it: 116 ms at 300,000 records, so loading 100,000
/// contacts did not end. Indexed on the same expressions, SQLite answers both from the index
/// (0.02 ms and 0.1 ms at 300,000); `docs/emulators.md`.
const STREAM_INDEXES: &str = "
    CREATE INDEX IF NOT EXISTS outbound_stream_next
        ON _stream_records (table_name, CAST(sequence_number AS INTEGER));
    CREATE INDEX IF NOT EXISTS outbound_stream_read
        ON _stream_records (table_name, shard_id, CAST(sequence_number AS INTEGER));";

/// A dynoxide database in `storage`, its stream records indexed ([`STREAM_INDEXES`]). A file is
/// indexed through a second connection once dynoxide has made its schema. A database in memory
/// has no second connection, so one is made in a shared in-memory database of this call's own,
/// indexed there, and copied into dynoxide's own in-memory database with its restore.
fn open(storage: &Storage) -> Result<dynoxide::Database, StartError> {
    match storage {
        Storage::File(path) => {
            let database = dynoxide::Database::new(&path.to_string_lossy())?;
            rusqlite::Connection::open(path)?.execute_batch(STREAM_INDEXES)?;
            Ok(database)
        }
        Storage::Memory => {
            static TEMPLATES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let name = format!(
                "file:outbound-dynamodb-{}-{}?mode=memory&cache=shared",
                std::process::id(),
                TEMPLATES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            let template = dynoxide::Database::new(&name)?;
            let indexer = rusqlite::Connection::open(&name)?;
            indexer.execute_batch(STREAM_INDEXES)?;
            let database = dynoxide::Database::memory()?;
            database.restore_from(&name)?;
            drop((indexer, template));
            Ok(database)
        }
    }
}

impl LocalDynamoDb {
    /// Serves a database kept in `storage` on `addr` (port 0: any free loopback port).
    pub async fn start(storage: Storage, addr: SocketAddr) -> Result<LocalDynamoDb, StartError> {
        let database = open(&storage)?;
        let listen = |source| StartError::Listen { addr, source };
        let std_listener = std::net::TcpListener::bind(addr).map_err(listen)?;
        std_listener.set_nonblocking(true).map_err(listen)?;
        let url = format!("http://{}", std_listener.local_addr().map_err(listen)?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let _guard = runtime().enter();
        let listener = tokio::net::TcpListener::from_std(std_listener).map_err(listen)?;
        runtime().spawn(async move {
            let shutdown = async move {
                let _ = stopped.await;
            };
            if let Err(error) =
                dynoxide::server::serve_with_shutdown(listener, database, shutdown).await
            {
                tracing::warn!(%error, "the local DynamoDB stopped");
            }
        });
        Ok(LocalDynamoDb {
            url,
            stop: Some(stop),
        })
    }

    /// An in-memory database of its own on a free loopback port.
    pub async fn memory() -> Result<LocalDynamoDb, StartError> {
        LocalDynamoDb::start(Storage::Memory, ANY_LOOPBACK_PORT).await
    }

    /// Where it answers: `http://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for LocalDynamoDb {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The variable naming a DynamoDB server that stacks share instead of each serving its own
/// (`make conformance` points it at AWS's DynamoDB Local).
pub const SHARED_ENDPOINT: &str = "DYNAMODB_ENDPOINT";

/// The DynamoDB one stack (a test's, `make run`'s) talks to.
#[derive(Debug)]
pub enum StackDynamoDb {
    /// The server at [`SHARED_ENDPOINT`], shared with other stacks: each keeps to its own table.
    Shared(String),
    /// A database of the stack's own, served as long as this value lives.
    Local(LocalDynamoDb),
}

impl StackDynamoDb {
    /// The server at [`SHARED_ENDPOINT`] when that is set, else a local database in `storage`
    /// served on `addr`.
    pub async fn start(storage: Storage, addr: SocketAddr) -> Result<StackDynamoDb, StartError> {
        match std::env::var(SHARED_ENDPOINT) {
            Ok(url) if !url.trim().is_empty() => Ok(StackDynamoDb::Shared(url.trim().to_owned())),
            _ => Ok(StackDynamoDb::Local(
                LocalDynamoDb::start(storage, addr).await?,
            )),
        }
    }

    /// A test's: shared when [`SHARED_ENDPOINT`] is set, else in memory on a free port.
    pub async fn for_test() -> Result<StackDynamoDb, StartError> {
        StackDynamoDb::start(Storage::Memory, ANY_LOOPBACK_PORT).await
    }

    /// Where it answers.
    pub fn url(&self) -> &str {
        match self {
            StackDynamoDb::Shared(url) => url,
            StackDynamoDb::Local(local) => local.url(),
        }
    }
}

/// `sdk` with its DynamoDB and DynamoDB Streams clients sent to `url`, every other client where
/// `sdk` sends it. The SDK reads a service's own endpoint from the configuration's service
/// settings (as it reads `AWS_ENDPOINT_URL_DYNAMODB` from the environment in a function) ahead
/// of the shared `endpoint_url`, unless that one was given to `aws_config`'s loader in code (so
/// [`crate::sdk_config`] sets it on the loaded configuration instead); a client built later
/// with an explicit endpoint still wins.
pub fn with_dynamodb(sdk: &aws_config::SdkConfig, url: &str) -> aws_config::SdkConfig {
    sdk.to_builder()
        .service_config(DynamoDbEndpoint(url.to_owned()))
        .build()
}

/// The endpoint of DynamoDB and its streams, as the SDK's service settings.
#[derive(Debug)]
struct DynamoDbEndpoint(String);

/// The service ids (as the SDK names them) that [`DynamoDbEndpoint`] answers for.
const DYNAMODB_SERVICES: [&str; 2] = ["DynamoDB", "DynamoDB Streams"];

impl aws_types::service_config::LoadServiceConfig for DynamoDbEndpoint {
    fn load_config(&self, key: aws_types::service_config::ServiceConfigKey<'_>) -> Option<String> {
        (DYNAMODB_SERVICES.contains(&key.service_id()) && key.profile() == "endpoint_url")
            .then(|| self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What dynoxide 3.2.0 asks of its stream records: the next sequence number on each write,
    /// the records after a position on each read of the stream (src/storage.rs).
    const STREAM_QUERIES: [&str; 2] = [
        "SELECT COALESCE(MAX(CAST(sequence_number AS INTEGER)), 0) + 1 FROM _stream_records \
         WHERE table_name = ?1",
        "SELECT event_name, keys_json, new_image, old_image, sequence_number, created_at, \
         user_identity, event_id FROM _stream_records WHERE table_name = ?1 AND shard_id = ?2 \
         AND CAST(sequence_number AS INTEGER) > ?3 ORDER BY CAST(sequence_number AS INTEGER) ASC \
         LIMIT ?4",
    ];

    /// Both storages open with the stream records indexed, and SQLite plans dynoxide's two
    /// queries through the indexes, not a scan (a database is read through a copy of it).
    #[test]
    fn stream_records_are_read_through_an_index_in_memory_and_in_a_file() {
        let dir = tempfile::tempdir().unwrap();
        for (n, storage) in [
            Storage::Memory,
            Storage::File(dir.path().join("kept.sqlite")),
        ]
        .into_iter()
        .enumerate()
        {
            let database = open(&storage).unwrap();
            let copy = dir.path().join(format!("copy-{n}.sqlite"));
            database.vacuum_into(&copy.to_string_lossy()).unwrap();
            let connection = rusqlite::Connection::open(&copy).unwrap();
            for query in STREAM_QUERIES {
                let mut explain = connection
                    .prepare(&format!("EXPLAIN QUERY PLAN {query}"))
                    .unwrap();
                let values: [&dyn rusqlite::ToSql; 4] = [&"table", &"shard", &0, &100];
                let plan: Vec<String> = explain
                    .query_map(&values[..explain.parameter_count()], |row| {
                        row.get::<_, String>(3)
                    })
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert!(
                    matches!(plan.as_slice(), [step] if step.starts_with("SEARCH _stream_records USING ")
                        && step.contains("INDEX outbound_stream_")),
                    "{storage:?}: {query}: {plan:?}"
                );
            }
        }
    }

    /// DynamoDB goes to the local database, even when the shared endpoint (moto's) was set on
    /// the configuration: nothing answers at that one here, so a call that went there fails.
    #[tokio::test]
    async fn dynamodb_clients_reach_the_local_database_and_others_keep_the_shared_endpoint() {
        let local = LocalDynamoDb::memory().await.unwrap();
        let shared = "http://127.0.0.1:9";
        let sdk = aws_config::SdkConfig::builder()
            .behavior_version(aws_config::BehaviorVersion::latest())
            .region(aws_config::Region::new(crate::REGION))
            .credentials_provider(aws_sdk_dynamodb::config::SharedCredentialsProvider::new(
                aws_sdk_dynamodb::config::Credentials::new("test", "test", None, None, "test"),
            ))
            .endpoint_url(shared)
            .build();
        let sdk = with_dynamodb(&sdk, local.url());
        let dynamodb = aws_sdk_dynamodb::Client::new(&sdk);
        let tables = dynamodb.list_tables().send().await.unwrap();
        assert_eq!(tables.table_names(), [] as [String; 0]);
        let streams = aws_sdk_dynamodbstreams::Client::new(&sdk);
        streams.list_streams().send().await.unwrap();
        assert_eq!(
            sdk.endpoint_url(),
            Some(shared),
            "the other services' endpoint"
        );
    }
}

//! The AWS SDK configuration every function builds its clients from, loaded once per cold start
//! by [`sdk_config`], and why it is not simply `aws_config::load_from_env()`.
//!
//! Profiled with callgrind on datasource-api (`make bench` measures the start as
//! `cold_start_ms`), 83 % of the instructions from `exec` to the first request for an event went
//! to TLS set-up, none of it needed to start:
//! - the default credentials chain builds its web-identity link, and with it an STS client, even
//!   when the credentials are in the environment, as Lambda always puts them;
//! - building an SDK client builds a TLS connector just to check its HTTP client, and each
//!   client has an HTTP client of its own: the first such check reads and decodes every native
//!   root certificate (the bundle, then the certificate folder), and every check parses the roots
//!   into a trust store again.
//!
//! So, with the same outcome in AWS:
//! - in Lambda (`AWS_LAMBDA_FUNCTION_NAME` set) credentials come from the environment alone, the
//!   link of the default chain that Lambda always satisfies; elsewhere (the local stack, a
//!   developer's machine) the whole default chain stays;
//! - every client shares one HTTP client, the SDK's own default one (same TLS, proxy and pool
//!   settings), which builds its connector once, on the first request, and hands it to every
//!   client; building a client no longer builds and drops one.
//!
//! The root certificates are therefore read once per process, by the first AWS request, instead
//! of once at start plus once per client.

pub mod failure;
pub mod timing;

pub use failure::Dependency;

use aws_config::{BehaviorVersion, SdkConfig};
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnectorSettings, SharedHttpClient, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::runtime_components::{
    RuntimeComponents, RuntimeComponentsBuilder,
};
use aws_smithy_runtime_api::client::runtime_plugin::RuntimePlugin;
use aws_smithy_runtime_api::shared::IntoShared;

/// The configuration of every function's SDK clients (see the module documentation).
pub async fn sdk_config() -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(client) = shared_http_client() {
        loader = loader.http_client(client);
    }
    if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
        loader = loader.credentials_provider(
            aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
        );
    }
    loader.load().await
}

/// The HTTP client the SDK would give each client, made one for all of them. `None` only in a
/// build without the SDK's default HTTPS client, where the SDK's own choice then applies.
fn shared_http_client() -> Option<SharedHttpClient> {
    let plugin = aws_smithy_runtime::client::defaults::default_http_client_plugin_v2(
        BehaviorVersion::latest(),
    )?;
    let components = plugin.runtime_components(&RuntimeComponentsBuilder::new("outbound"));
    let default = components.http_client()?;
    Some(ConnectOnFirstUse(default).into_shared())
}

/// The SDK's default client, without the check that builds a connector (and parses every root
/// certificate) each time an SDK client is built; its connectors, cached per timeout settings,
/// are built by the first request that needs them.
#[derive(Debug)]
struct ConnectOnFirstUse(SharedHttpClient);

impl HttpClient for ConnectOnFirstUse {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        self.0.http_connector(settings, components)
    }

    fn connector_metadata(
        &self,
    ) -> Option<aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata> {
        self.0.connector_metadata()
    }
}

/// An SDK client built on its first use, then shared by every clone: a function builds only
/// the clients its events reach (the API functions' S3 client waits for the first import or
/// export, their SQS client for the first queued job), and none of that is paid at start.
#[derive(Clone)]
pub struct Lazy<C> {
    cell: std::sync::Arc<std::sync::OnceLock<C>>,
    build: std::sync::Arc<dyn Fn() -> C + Send + Sync>,
}

impl<C> Lazy<C> {
    /// A client that `build` makes when it is first asked for.
    pub fn new(build: impl Fn() -> C + Send + Sync + 'static) -> Self {
        Lazy {
            cell: Default::default(),
            build: std::sync::Arc::new(build),
        }
    }

    /// The client, built now if this is its first use.
    pub fn get(&self) -> &C {
        self.cell.get_or_init(|| (self.build)())
    }
}

impl<C> std::fmt::Debug for Lazy<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lazy")
            .field("built", &self.cell.get().is_some())
            .finish()
    }
}

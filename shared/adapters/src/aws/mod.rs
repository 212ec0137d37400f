//! The AWS SDK configuration every function builds its clients from, loaded once per cold start
//! by [`sdk_config`], and why it is not simply `aws_config::load_from_env()`.
//!
//! In Lambda credentials and region come from the environment alone (the link of each default
//! chain Lambda always satisfies; elsewhere the whole chains stay), and every client shares one HTTP client
//! that builds its TLS connector on the first request: why, measured, is in `docs/scaling.md`
//! (section 7, cold start).

pub mod actions;
pub mod failure;
mod rows;
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
        // Lambda always sets both; the default chains would also build profile and instance
        // metadata (IMDS) providers at every cold start, to be asked never.
        loader = loader
            .credentials_provider(
                aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
            )
            .region(aws_config::environment::EnvironmentVariableRegionProvider::new());
    }
    loader.load().await
}

/// The EventBridge client of `sdk` (the event publisher's bus), its calls recorded
/// ([`actions`]).
pub fn eventbridge(sdk: &SdkConfig) -> aws_sdk_eventbridge::Client {
    let builder = aws_sdk_eventbridge::config::Builder::from(sdk);
    let builder = match actions::interceptor(actions::eventbridge) {
        Some(log) => builder.interceptor(log),
        None => builder,
    };
    aws_sdk_eventbridge::Client::from_conf(builder.build())
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

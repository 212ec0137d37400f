//! What the deployment's provider holds that an operator's assignment may name (D22): with
//! Amazon Connect, the numbers its instance has claimed and its contact flows
//! ([`ConnectCatalog`]); the simulated provider holds any number and any flow.

use super::connect::ConnectCatalog;
pub use super::provider::Catalog;
use super::settings::ProviderConfig;
use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::settings::TenantSettings;
use outbound_model::telephony::Assignment;

/// The catalog of the provider `DIAL_PROVIDER` chooses.
#[derive(Clone, Debug)]
pub enum ProviderCatalog {
    /// The simulated provider calls from any number with any flow: nothing to check.
    Simulated,
    AmazonConnect(ConnectCatalog),
}

impl ProviderCatalog {
    /// The configured provider's catalog; Amazon Connect's client is built from `sdk` on its
    /// first call.
    pub fn new(provider: &ProviderConfig, sdk: &aws_config::SdkConfig) -> Self {
        match provider {
            ProviderConfig::Simulated => ProviderCatalog::Simulated,
            ProviderConfig::AmazonConnect(settings) => {
                let sdk = sdk.clone();
                ProviderCatalog::AmazonConnect(ConnectCatalog::new(
                    Lazy::new(move || super::connect::client(&sdk)),
                    settings.clone(),
                ))
            }
        }
    }
}

impl Catalog for ProviderCatalog {
    async fn check(&self, assignment: &Assignment, held: &TenantSettings) -> Result<(), Error> {
        match self {
            ProviderCatalog::Simulated => Ok(()),
            ProviderCatalog::AmazonConnect(connect) => connect.check(assignment, held).await,
        }
    }
}

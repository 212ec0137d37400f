//! The provider a deployment dials with (`DIAL_PROVIDER`): one type over both, so the functions
//! and the local stack run one engine type whatever is configured.

use super::connect::ConnectProvider;
use super::provider::{CallRequest, CallStatus, PlaceError, Provider};
use super::simulated::SimulatedProvider;
use crate::error::Error;
use crate::model::call::CallAttempt;

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

    fn fall_back(&self) -> bool {
        match self {
            Telephony::Simulated(provider) => provider.fall_back(),
            Telephony::AmazonConnect(provider) => provider.fall_back(),
        }
    }

    fn needs_e164(&self) -> bool {
        matches!(self, Telephony::AmazonConnect(_))
    }

    async fn attempt_of(&self, call_id: &str) -> Result<Option<CallAttempt>, Error> {
        match self {
            Telephony::Simulated(provider) => provider.attempt_of(call_id).await,
            Telephony::AmazonConnect(provider) => provider.attempt_of(call_id).await,
        }
    }
}

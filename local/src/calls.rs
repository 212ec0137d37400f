//! The calls the local stack's dialer placed (D22, D28): every call the simulated provider
//! placed, once, as it was asked (number, caller ID, flow, attributes), the latest [`KEPT`] of
//! them, for tests and the console's developers (`GET /local/calls`). Only the local stack
//! hooks its provider to a [`CallLog`]; the functions never keep their calls.

use outbound_adapters::telephony::simulated::OnPlaced;
use outbound_adapters::telephony::CallRequest;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Calls kept by a [`CallLog`].
pub const KEPT: usize = 500;

/// One call as the provider was asked to place it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacedCall {
    pub tenant: String,
    pub task_id: String,
    pub contact_id: String,
    pub attempt: u32,
    /// The number called: in E.164 when it has that form, else as written.
    pub to: String,
    /// `null`: the provider's own number.
    pub caller_id: Option<String>,
    /// `null`: the provider's own flow.
    pub contact_flow_id: Option<String>,
    /// The service's own and the task's `callAttributes` the contact has.
    pub attributes: BTreeMap<String, String>,
}

impl From<&CallRequest> for PlacedCall {
    fn from(call: &CallRequest) -> Self {
        PlacedCall {
            tenant: call.tenant.as_str().to_owned(),
            task_id: call.task_id.as_str().to_owned(),
            contact_id: call.contact_id.as_str().to_owned(),
            attempt: call.attempt,
            to: call
                .e164
                .clone()
                .unwrap_or_else(|| call.phone.as_str().to_owned()),
            caller_id: call.caller_id.clone(),
            contact_flow_id: call.contact_flow_id.clone(),
            attributes: call.attributes.clone(),
        }
    }
}

/// The latest calls placed, oldest first (the newest last); cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct CallLog(Arc<Mutex<VecDeque<PlacedCall>>>);

impl CallLog {
    pub fn record(&self, call: PlacedCall) {
        let mut calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if calls.len() == KEPT {
            calls.pop_front();
        }
        calls.push_back(call);
    }

    /// The simulated provider's hook that keeps each call it places here.
    pub fn hook(&self) -> OnPlaced {
        let log = self.clone();
        Arc::new(move |call: &CallRequest, _: &_| log.record(PlacedCall::from(call)))
    }

    /// The calls kept, oldest first.
    pub fn recent(&self) -> Vec<PlacedCall> {
        let calls = self.0.lock().unwrap_or_else(|e| e.into_inner());
        calls.iter().cloned().collect()
    }

    /// `GET /local/calls`: the calls kept, oldest first, as a JSON array.
    pub fn route(&self) -> axum::Router {
        let log = self.clone();
        axum::Router::new().route(
            "/local/calls",
            axum::routing::get(move || {
                let log = log.clone();
                async move { axum::Json(log.recent()) }
            }),
        )
    }
}

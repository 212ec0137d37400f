//! The calls the local stack's dialer placed (D22, D28): every call the simulated provider
//! placed, once, as it was asked (number, caller ID, flow, attributes), the latest [`KEPT`] of
//! them, for tests and the console's developers (`GET /local/calls`); and the agents its
//! agent-paced calls go to (D30: `POST /local/agents` sets a queue's, `GET /local/agents` shows
//! each queue's). Only the local stack hooks its provider to a [`CallLog`]; the functions never
//! keep their calls.

use outbound_adapters::telephony::agents::{AgentPool, MOST_AGENTS};
use outbound_adapters::telephony::simulated::OnPlaced;
use outbound_adapters::telephony::CallRequest;
use serde::{Deserialize, Serialize};
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
    /// The number called, in E.164 (D14): no provider is given any other form.
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
            to: call.to.clone(),
            caller_id: call.caller_id.clone(),
            contact_flow_id: call.contact_flow_id.clone(),
            attributes: call.attributes.clone(),
        }
    }
}

/// The latest calls placed, oldest first (the newest last), and the simulated agents; cheap to
/// clone.
#[derive(Clone, Debug, Default)]
pub struct CallLog {
    calls: Arc<Mutex<VecDeque<PlacedCall>>>,
    agents: AgentPool,
}

/// `POST /local/agents`: a queue's agents (D30).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SetAgents {
    queue_id: serde_json::Value,
    agents: serde_json::Value,
    handle_seconds: serde_json::Value,
}

impl SetAgents {
    /// The queue, its agents and their handle time, each checked; the refusal names the field.
    fn checked(&self) -> Result<(String, u32, u64), String> {
        let queue = (self.queue_id.as_str())
            .map(str::trim)
            .filter(|id| (1..=128).contains(&id.len()))
            .ok_or("queueId must be a string of 1-128 characters")?;
        let agents = (self.agents.as_u64())
            .filter(|n| *n <= u64::from(MOST_AGENTS))
            .ok_or(format!("agents must be an integer from 0 to {MOST_AGENTS}"))?;
        let handle = (self.handle_seconds.as_u64())
            .filter(|n| (1..=3_600).contains(n))
            .ok_or("handleSeconds must be an integer from 1 to 3600")?;
        Ok((queue.to_owned(), agents as u32, handle))
    }
}

impl CallLog {
    /// The agents the simulated provider's agent-paced calls go to (D30).
    pub fn agents(&self) -> AgentPool {
        self.agents.clone()
    }

    pub fn record(&self, call: PlacedCall) {
        let mut calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
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
        let calls = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        calls.iter().cloned().collect()
    }

    /// `GET /local/calls`: the calls kept, oldest first, as a JSON array; `GET /local/agents`:
    /// each queue's agents; `POST /local/agents` sets one queue's (400 naming a bad field).
    pub fn route(&self) -> axum::Router {
        use axum::http::StatusCode;
        use axum::routing::get;
        let log = self.clone();
        let (shown, set) = (self.agents.clone(), self.agents.clone());
        axum::Router::new()
            .route(
                "/local/calls",
                get(move || {
                    let log = log.clone();
                    async move { axum::Json(log.recent()) }
                }),
            )
            .route(
                "/local/agents",
                get(move || {
                    let agents = shown.clone();
                    async move { axum::Json(agents.view(std::time::Instant::now())) }
                })
                .post(move |body: Result<axum::Json<SetAgents>, _>| {
                    let agents = set.clone();
                    async move {
                        let body: axum::Json<SetAgents> = match body {
                            Ok(body) => body,
                            Err(axum::extract::rejection::JsonRejection::JsonDataError(_)) => {
                                let message = "queueId, agents and handleSeconds are required";
                                return (StatusCode::BAD_REQUEST, refusal(message));
                            }
                            Err(_) => {
                                let message = "the body must be a JSON object";
                                return (StatusCode::BAD_REQUEST, refusal(message));
                            }
                        };
                        match body.checked() {
                            Ok((queue, count, handle)) => {
                                let handle = std::time::Duration::from_secs(handle);
                                agents.set(&queue, count, handle);
                                let now = std::time::Instant::now();
                                (
                                    StatusCode::OK,
                                    axum::Json(serde_json::json!(agents.view(now))),
                                )
                            }
                            Err(message) => (StatusCode::BAD_REQUEST, refusal(&message)),
                        }
                    }
                }),
            )
    }
}

fn refusal(message: &str) -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "message": message }))
}

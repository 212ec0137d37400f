//! What an Amazon Connect flow found during a call (D22): the flow's "Invoke AWS Lambda function"
//! block sends the flow-results function its `ContactFlowEvent`, and the values the flow set
//! (the block's parameters) go onto the call's record, where the outcome reads them when the call ends and keeps the task's
//! `resultAttributes` among them. Only the block's parameters are results (D29): the contact's
//! attributes hold what the service sent too. The event names its attempt by the call's own
//! attributes, which must carry their signature.
//!
//! Connect waits for a flow's Lambda as long as the block's timeout says (3 s by default, 8 s at
//! most) and expects a flat object of strings back (`STRING_MAP`). The record is written when the
//! call is marked placed, which a fast flow may overtake: the write is tried again for a short
//! while ([`PATIENCE`]) before the answer says nothing was recorded.
//!
//! Why a Lambda the flow calls rather than reading the contact's attributes when the call ends
//! (`GetContactAttributes`): Connect's API is throttled per account and Region, 2 requests a
//! second (burst 5) by default for that operation, for every caller in the account; one read per
//! answered call would cap the service's answered calls at that rate. A flow's Lambda
//! invocations count against the account's Lambda concurrency only, and the values arrive with
//! the call record before its outcome, so the outcome needs no other read.

use outbound_adapters::aws::actions::Function;
use outbound_adapters::store::dialing::{FlowWrite, MAX_FLOW_VALUES};
use outbound_adapters::store::Store;
use outbound_model::error::Error;
use outbound_model::signature::{CallSigner, Carried};
use outbound_model::telephony::{check_result_name, cut_result_value, Results};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;
// tokio's clock: std's in a Lambda, virtual under a paused runtime (the simulation).
use tokio::time::Instant;

/// How long the write waits for the call's record to be written: inside the block's default
/// timeout (3 s) with a cold start, well inside its longest (8 s).
pub const PATIENCE: Duration = Duration::from_millis(2_000);

/// Connect's `ContactFlowEvent`: what the flow block sends its Lambda.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContactFlowEvent {
    pub details: FlowDetails,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct FlowDetails {
    pub contact_data: ContactData,
    /// The block's own parameters.
    #[serde(default)]
    pub parameters: HashMap<String, serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ContactData {
    pub contact_id: String,
    /// The contact the service started, when a transfer made this one.
    #[serde(default)]
    pub initial_contact_id: Option<String>,
    /// The contact's attributes: the service's own (`tenant`, `taskId`, `contactId`,
    /// `attempt`), those the task sent, and those the flow set.
    #[serde(default)]
    pub attributes: HashMap<String, serde_json::Value>,
}

impl ContactFlowEvent {
    /// The provider's id of the call the service placed.
    pub fn call_id(&self) -> &str {
        let data = &self.details.contact_data;
        data.initial_contact_id
            .as_deref()
            .filter(|id| !id.is_empty())
            .unwrap_or(&data.contact_id)
    }

    /// What the call carries of its attempt, from its own attributes; `None`: not a call of
    /// this service.
    pub fn carried(&self) -> Option<Carried> {
        let attributes = &self.details.contact_data.attributes;
        Carried::read(|name| attributes.get(name)?.as_str().map(str::to_owned))
    }

    /// What the flow reported: the block's parameters (D29: never the contact's attributes,
    /// which hold what the service sent too), each name one a task may record and each value at
    /// most 256 characters; empty values left out; at most [`MAX_FLOW_VALUES`].
    pub fn reported(&self) -> Results {
        self.details
            .parameters
            .iter()
            .filter_map(|(name, value)| Some((name, value.as_str()?)))
            .filter(|(name, value)| {
                !value.is_empty() && check_result_name("attribute", name).is_ok()
            })
            .map(|(name, value)| (name.clone(), cut_result_value(value).to_owned()))
            .collect::<Results>()
            .into_iter()
            .take(MAX_FLOW_VALUES)
            .collect()
    }
}

/// What the function answers Connect: `{"recorded":"true"}` when the values are on the call's
/// record, `"false"` when there was nothing to record or no record of the call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlowAnswer {
    pub recorded: &'static str,
}

/// Records what the flow of `event` reported on its call's record, waiting at most `patience`
/// for the record to be written, as the flow-results function. An outage of the table is an
/// error (the flow takes its error branch); a call that is not the service's, whose attributes
/// do not carry their signature under `signer` (D29: logged and counted), or whose record
/// never came, is answered `false`.
pub async fn record(
    store: &Store,
    signer: &CallSigner,
    event: &ContactFlowEvent,
    patience: Duration,
) -> Result<FlowAnswer, Error> {
    Function::FlowResults
        .scope(write(store, signer, event, patience))
        .await
}

async fn write(
    store: &Store,
    signer: &CallSigner,
    event: &ContactFlowEvent,
    patience: Duration,
) -> Result<FlowAnswer, Error> {
    let answer = |recorded: bool| FlowAnswer {
        recorded: if recorded { "true" } else { "false" },
    };
    let Some(carried) = event.carried() else {
        tracing::info!(
            call_id = event.call_id(),
            "flow results of a call that is not ours"
        );
        return Ok(answer(false));
    };
    if !signer.verifies(&carried) {
        unsigned(event.call_id(), "flow results");
        return Ok(answer(false));
    }
    let attempt = carried.attempt;
    let results = event.reported();
    if results.is_empty() {
        return Ok(answer(false));
    }
    let started = Instant::now();
    let mut wait = Duration::from_millis(50);
    loop {
        match store
            .record_flow_results(event.call_id(), &attempt, &results)
            .await?
        {
            FlowWrite::Written => {
                tracing::info!(
                    call_id = event.call_id(),
                    values = results.len(),
                    "flow results recorded"
                );
                return Ok(answer(true));
            }
            FlowWrite::NoRecord if started.elapsed() + wait < patience => {
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_millis(500));
            }
            FlowWrite::AfterOutcome => {
                // Counted it could not be: the outcome and its counters are recorded (D29).
                tracing::warn!(call_id = event.call_id(), task = %attempt.task_id, contact = %attempt.contact_id, "the flow reported after the call's outcome was recorded; refused");
                outbound_telemetry::metrics(
                    &[],
                    &[("LateFlowResults", 1.0, outbound_telemetry::Unit::Count)],
                );
                return Ok(answer(false));
            }
            FlowWrite::NoRecord | FlowWrite::OtherAttempt => {
                tracing::warn!(call_id = event.call_id(), task = %attempt.task_id, contact = %attempt.contact_id, "no call record of this attempt for the flow's results");
                return Ok(answer(false));
            }
        }
    }
}

/// Logs and counts attributes naming an attempt whose signature does not verify (D29): a flow
/// that changed them, or an event someone else sent.
pub fn unsigned(call_id: &str, what: &str) {
    tracing::warn!(
        call_id,
        what,
        "attributes whose signature does not verify; ignored"
    );
    outbound_telemetry::metrics(
        &[],
        &[(
            "UnsignedCallAttributes",
            1.0,
            outbound_telemetry::Unit::Count,
        )],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flow's event as Connect sends it (tests/events/connect-flow-results.json).
    #[test]
    fn the_flows_values_are_read_from_connects_event() {
        let event: ContactFlowEvent = serde_json::from_str(include_str!(
            "../../../tests/events/connect-flow-results.json"
        ))
        .unwrap();
        assert_eq!(event.call_id(), "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83");
        let attempt = event.carried().unwrap().attempt;
        assert_eq!((attempt.tenant.as_str(), attempt.attempt), ("acme", 1));
        let reported = event.reported();
        assert_eq!(
            reported
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
            [("amount", "12.50"), ("outcome", "confirmed")],
            "the block's parameters only: never a contact attribute (D29)"
        );
    }
}

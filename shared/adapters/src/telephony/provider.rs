//! What the engine asks of a telephony provider, and what a provider answers: one trait, so the
//! engine runs the same against Amazon Connect, the simulated provider, and a test's recorder;
//! and what an operator's assignment asks of the provider's catalog ([`Catalog`]).

use outbound_model::call::CallReport;
use outbound_model::error::{Cause, Error};
use outbound_model::pacing::QueueAgents;
use outbound_model::settings::TenantSettings;
use outbound_model::signature::Carried;
use outbound_model::telephony::{Assignment, Voicemail};
use outbound_model::{Id, Tenant};
use std::collections::BTreeMap;
use std::future::Future;

/// One call to place: attempt `attempt` of contact `contact_id` in task `task_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallRequest {
    pub tenant: Tenant,
    pub task_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
    /// The number called, in E.164 (D14): the only form any provider is given. A contact whose
    /// number has none is skipped as `INVALID_NUMBER` before a request is made.
    pub to: String,
    /// The contact's `simulatedOutcomes` field (D18): read by the simulated provider only.
    pub script: Option<String>,
    /// The number the call goes out from (D22); `None`: the provider's own.
    pub caller_id: Option<String>,
    /// The flow the call runs (D22); `None`: the provider's own.
    pub contact_flow_id: Option<String>,
    /// What the call carries to its flow: the service's own `tenant`, `taskId`, `contactId` and
    /// `attempt` (what its outcome is matched by), and the contact's values of the task's
    /// `callAttributes` (D22).
    pub attributes: BTreeMap<String, String>,
    /// What the call does when voicemail answers (D22).
    pub voicemail: Voicemail,
    /// The contact's `simulatedResults` field (D22): read by the simulated provider only.
    pub simulated_results: Option<String>,
    /// The agent queue an agent-paced task's flow transfers an answered call to (D30); `None`
    /// for an agentless task.
    pub queue_id: Option<String>,
}

impl CallRequest {
    /// The idempotency token of this attempt, the same on every try (Connect's `ClientToken`,
    /// at most 500 characters): a retried placement of one attempt is one call at the provider
    /// for as long as the provider remembers the token.
    pub fn token(&self) -> String {
        use outbound_model::simulation::{planted, Bug};
        if planted(Bug::TokenDropped) {
            return Id::new().to_string();
        }
        format!("{}-{}-{}", self.task_id, self.contact_id, self.attempt)
    }
}

/// Why a call was not placed.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// Throttled (`Rate`) or over a concurrency quota (`Quota`): tried again later, and not
    /// counted as an attempt (D13).
    #[error("provider busy: {detail}")]
    Busy { kind: Busy, detail: String },
    /// The provider refuses every call of the service, whatever the task: its configuration
    /// (instance, contact flow, queue, caller id) or its permission. The task that met it
    /// becomes FAILED with the refusal's fixed reason (D10, D13); `detail`, the provider's own
    /// words (account ids, ARNs), goes to the log only.
    #[error("provider refuses the service's calls: {detail}")]
    ServiceRefused {
        refusal: ServiceRefusal,
        detail: String,
    },
    /// The provider refuses this number: recorded as a failed call, final (invalid number).
    #[error("provider refuses the number: {0}")]
    NumberRefused(String),
    /// Whether a call started is unknown (network, timeout): the attempt stays in flight and
    /// is reconciled later.
    #[error("placing the call failed")]
    Unknown(#[source] Cause),
}

impl PlaceError {
    /// The answer to a start sent again with the client token of a start in doubt (D28). A busy
    /// provider (throttled, over a quota) turns the request away before it looks at the token,
    /// so it says nothing of the first start, which may have placed the call: the start stays
    /// in doubt. Taken for a refusal, the attempt would leave flight and the outcome of the call
    /// the first start placed would find nothing to record, and the contact be called again.
    pub fn sent_again(answer: Result<String, PlaceError>) -> Result<String, PlaceError> {
        match answer {
            Err(PlaceError::Busy { kind, detail }) => Err(PlaceError::Unknown(Cause::from(
                format!("sent again and met a busy provider ({kind:?}): {detail}"),
            ))),
            answer => answer,
        }
    }
}

/// Why a provider turned a call away for now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// Too many requests a second: it passes.
    Rate,
    /// Over a concurrency quota. With calls of the service in flight it passes as they end;
    /// with none, the quota itself may be missing (Connect's campaign calls are off until their
    /// quota is raised), and repeated refusals say so.
    Quota,
}

/// Why a provider refuses every call of the service. It is never anything a tenant's task holds,
/// and the reason a task is given says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceRefusal {
    /// The instance, contact flow, queue or caller id is unknown to the provider, or the
    /// request built from them is invalid.
    Configuration,
    /// Outbound calls are not permitted on the instance, or the service may not place them.
    Permission,
    /// Campaign calls (answering-machine detection) are refused for quota even with nothing
    /// else in flight: the instance has no campaign call quota.
    CampaignQuota,
}

impl ServiceRefusal {
    /// The task's `failReason` (D13): fixed text, never the provider's.
    pub fn fail_reason(self) -> &'static str {
        match self {
            ServiceRefusal::Configuration => {
                "The telephony provider refused the service's calling configuration (instance, \
                 contact flow, queue or caller id). This is the service's configuration, not \
                 this task's: the service operator has to correct it."
            }
            ServiceRefusal::Permission => {
                "The telephony provider does not permit the service to place outbound calls. \
                 This is the service's configuration, not this task's: the service operator \
                 has to correct it."
            }
            ServiceRefusal::CampaignQuota => {
                "The telephony provider refuses the service's campaign calls (answering-machine \
                 detection) for quota, even with no other call in flight. This is the \
                 service's configuration, not this task's: the service operator has to raise \
                 the campaign call quota or allow general traffic."
            }
        }
    }

    /// The metric dimension of a refusal.
    pub fn name(self) -> &'static str {
        match self {
            ServiceRefusal::Configuration => "configuration",
            ServiceRefusal::Permission => "permission",
            ServiceRefusal::CampaignQuota => "campaign_quota",
        }
    }
}

/// What the provider knows of a call placed earlier (for reconciling lost outcome events).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallStatus {
    /// Still ringing or talking.
    InProgress,
    /// Over, with its outcome.
    Ended(CallReport),
    /// The provider says nothing of it.
    Unknown,
}

/// A telephony provider.
pub trait Provider: Send + Sync {
    /// Places a call and answers the provider's id for it.
    fn place(&self, call: &CallRequest) -> impl Future<Output = Result<String, PlaceError>> + Send;

    /// What the provider knows of call `call_id` now.
    fn describe(&self, call_id: &str) -> impl Future<Output = Result<CallStatus, Error>> + Send;

    /// The agents of each of `queues` now (D30), read in one request whatever their number; a
    /// queue the provider does not report has no agent (the default: a provider without agents).
    fn queue_agents(
        &self,
        queues: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, QueueAgents>, Error>> + Send {
        let agents = queues
            .iter()
            .map(|queue| (queue.clone(), QueueAgents::default()))
            .collect();
        async { Ok(agents) }
    }

    /// Switches to traffic that needs no separate quota (Connect: GENERAL, without
    /// answering-machine detection) when the deployment allows it: whether it did.
    fn fall_back(&self) -> bool {
        false
    }

    /// Whether a call of `attributes` fits what the provider takes, with room for `reserved`
    /// bytes more that its flow may set during the call (D22). A call that does not is skipped
    /// as `ATTRIBUTES_TOO_LARGE` before it takes a place in flight; a provider without a bound
    /// takes every call (the default).
    fn attributes_fit(&self, attributes: &BTreeMap<String, String>, reserved: usize) -> bool {
        let _ = (attributes, reserved);
        true
    }

    /// Whether a call can go out from a number of its own (D22). Amazon Connect in queue mode
    /// calls from the queue's number whatever the request names: there, every call is placed
    /// with the provider's own and records none.
    fn per_call_caller_id(&self) -> bool {
        true
    }

    /// Which attempt call `call_id` is, from what the call carries; `None` for a call that is
    /// not this service's, or a provider that keeps nothing (the default).
    fn attempt_of(
        &self,
        call_id: &str,
    ) -> impl Future<Output = Result<Option<Carried>, Error>> + Send {
        let _ = call_id;
        async { Ok(None) }
    }
}

/// The provider's side of an assignment.
pub trait Catalog {
    /// 400 naming the first caller ID or flow of `assignment` the provider does not hold; 503
    /// when the provider cannot tell now. Entries the tenant holds already (`held`) are not
    /// asked about again.
    fn check(
        &self,
        assignment: &Assignment,
        held: &TenantSettings,
    ) -> impl std::future::Future<Output = Result<(), Error>> + Send;
}

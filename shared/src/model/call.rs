//! One call's life in types (D13): what became of it ([`Outcome`], [`CallReport`]), which
//! contacts a run may claim ([`Fresh`], [`Due`]), what the claim remembers for the outcome
//! ([`CallRef`]), and what an outcome makes of the contact's state ([`after_outcome`]). The
//! engine, the providers and the store all speak them; none of them owns them.

use super::task::TaskContact;
use super::{Id, Tenant, Timestamp};
use serde::{Deserialize, Serialize};

/// The outcome classes of D13, stored and shown as the contact status codes of D7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum Outcome {
    /// The called party answered (a person).
    Success = 1,
    /// Busy, invalid or unreachable number, network or provider error, or no outcome at all.
    Failed = 2,
    /// Rang out or timed out, or reached voicemail or an answering machine.
    NoAnswer = 3,
}

impl Outcome {
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<Outcome> for u8 {
    fn from(outcome: Outcome) -> u8 {
        outcome.code()
    }
}

impl TryFrom<u8> for Outcome {
    type Error = String;
    fn try_from(code: u8) -> Result<Self, Self::Error> {
        match code {
            1 => Ok(Outcome::Success),
            2 => Ok(Outcome::Failed),
            3 => Ok(Outcome::NoAnswer),
            other => Err(format!("{other} is not a call outcome")),
        }
    }
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallReport {
    pub outcome: Outcome,
    /// Seconds from answer to hang-up; 0 for a call never answered (D13).
    pub duration: u64,
    /// The number can never be reached: the outcome is final at once, not retried (D13).
    #[serde(default)]
    pub invalid_number: bool,
    /// The provider's own words for it (`TELECOM_NUMBER_INVALID`, `no outcome`, ...), for the log.
    #[serde(default)]
    pub reason: String,
}

impl CallReport {
    /// A call whose outcome never arrived (D13: failed, "no outcome").
    pub fn no_outcome() -> Self {
        CallReport {
            outcome: Outcome::Failed,
            duration: 0,
            invalid_number: false,
            reason: "no outcome".into(),
        }
    }
}

/// A contact of the data source that the task has never dialled, in creation order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fresh {
    pub contact_id: Id,
}

/// One call the dialer should claim: attempt `attempt` of `contact_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Due {
    pub contact_id: Id,
    pub attempt: u32,
    /// The state the claim expects to find (`None`: never dialled, no state yet).
    pub state: Option<TaskContact>,
}

/// Which attempt a call is, as the call itself carries it (Amazon Connect's contact attributes,
/// the simulated provider's outcome): enough to find the call's claim when its provider id was
/// never saved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallAttempt {
    pub tenant: Tenant,
    pub task_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
}

impl CallAttempt {
    /// The attempt named by a call's attributes (`tenant`, `taskId`, `contactId`, `attempt`);
    /// `None` when any is missing or malformed: not a call of this service.
    pub fn from_attributes(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Some(CallAttempt {
            tenant: Tenant::parse(&get("tenant")?).ok()?,
            task_id: Id::parse(&get("taskId")?)?,
            contact_id: Id::parse(&get("contactId")?)?,
            attempt: get("attempt")?
                .parse()
                .ok()
                .filter(|attempt| *attempt > 0)?,
        })
    }
}

/// Everything the outcome of one call needs, written when the call is placed (the call record)
/// and read back through the provider's call id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRef {
    pub tenant: Tenant,
    pub task_id: Id,
    pub data_source_id: Id,
    pub contact_id: Id,
    pub attempt: u32,
    pub call_interval: u32,
    /// The contact's state as the claim left it, so the outcome needs no read of it; the
    /// outcome's condition on `updated_at` notices a recall in between.
    pub allowance: u32,
    pub recalled: bool,
    pub priority: u8,
    pub claimed_at: Timestamp,
    /// The capacity shard the claim took its place in, where the outcome gives it back.
    #[serde(default, skip_serializing_if = "super::task::is_zero")]
    pub shard: u32,
}

/// What an outcome makes of a contact's state in the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterOutcome {
    /// Attempts made, this one included.
    pub attempts: u32,
    /// Final (D13): success, an invalid number, or the attempts reached the allowance.
    pub done: bool,
    /// When the next attempt may start, if there is one.
    pub next_attempt_at: Option<Timestamp>,
}

/// The state after attempt `attempt` ended with `report` at `ended_at`.
pub fn after_outcome(
    attempt: u32,
    allowance: u32,
    report: &CallReport,
    call_interval_secs: u32,
    ended_at: Timestamp,
) -> AfterOutcome {
    let done = report.outcome == Outcome::Success || report.invalid_number || attempt >= allowance;
    AfterOutcome {
        attempts: attempt,
        done,
        next_attempt_at: (!done)
            .then(|| Timestamp(ended_at.0 + i64::from(call_interval_secs) * 1000)),
    }
}

//! Callbacks (D31): a contact of a task promised a call at a time, by the API or by the flow
//! during a call. A pending callback lives on the contact's state in the task, which waits in
//! the task's waiting index at rank 0, ahead of recalls and retries, so a run reads only the
//! callbacks due; each callback also has a record of its own, listed by the API with its status.

use crate::error::Error;
use crate::task::TaskStatus;
use crate::{Id, Timestamp};
use serde::{Deserialize, Serialize};

/// The most callbacks one contact may be promised in one task; a fourth is 409.
pub const MAX_CALLBACKS: u8 = 3;
/// The waiting index's rank of a contact with a callback pending: before the recall priorities
/// (1-5) and the plain retries (6). Stored as the state's recall priority, with `recalled`.
pub const CALLBACK_RANK: u8 = 0;
/// A callback by the API is at least this far ahead.
pub const MIN_AHEAD_MILLIS: i64 = 60_000;
/// And at most this far (30 days).
pub const MAX_AHEAD_MILLIS: i64 = 30 * 24 * 3_600_000;
/// The most minutes ahead a flow's `callbackInMinutes` may say (30 days).
pub const MAX_FLOW_MINUTES: i64 = 43_200;
/// The result attributes a flow asks for a callback with.
pub const CALLBACK_AT_RESULT: &str = "callbackAt";
pub const CALLBACK_IN_MINUTES_RESULT: &str = "callbackInMinutes";

/// Who set a callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CallbackSource {
    Api,
    Flow,
}

/// Where a callback stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CallbackStatus {
    /// Waiting for its time, or tried once and waiting for its second try.
    Pending,
    /// Its call was answered.
    Done,
    /// It will not be made: not answered twice, the number listed, the task ended.
    Missed,
    Cancelled,
}

impl CallbackStatus {
    pub const ALL: [CallbackStatus; 4] = [
        CallbackStatus::Pending,
        CallbackStatus::Done,
        CallbackStatus::Missed,
        CallbackStatus::Cancelled,
    ];

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// This stored status as shown while its task is in `task`: a callback still pending on a
    /// task that will dial no more (stopped, failed, closed) is missed (D31).
    pub fn shown(self, task: TaskStatus) -> Self {
        let live = matches!(
            task,
            TaskStatus::Running | TaskStatus::Paused | TaskStatus::Completed
        );
        match self {
            CallbackStatus::Pending if !live => CallbackStatus::Missed,
            status => status,
        }
    }

    pub fn parse(raw: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|status| status.name() == raw.trim())
            .ok_or_else(|| Error::invalid("status must be one of PENDING, DONE, MISSED, CANCELLED"))
    }
}

/// The contact's standing before its callback was set, put back when it is cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Before {
    pub allowance: u32,
    pub done: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<Timestamp>,
    pub recalled: bool,
    pub priority: u8,
    /// Its latest callback's time before this one (the export's `callbackAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_at: Option<Timestamp>,
}

/// The callback pending on a contact's state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCallback {
    /// Its record's id.
    pub id: Id,
    pub at: Timestamp,
    pub source: CallbackSource,
    pub before: Before,
}

/// A callback's own record: what the list shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackRecord {
    pub id: Id,
    pub contact_id: Id,
    pub phone: String,
    pub at: Timestamp,
    pub source: CallbackSource,
    pub status: CallbackStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub created_at: Timestamp,
}

impl CallbackRecord {
    /// Its status as shown while its task is in `task`: a callback still pending on a task
    /// that will dial no more (stopped, failed, closed) is missed (D31), with the task's
    /// state as its reason.
    pub fn shown_status(&self, task: TaskStatus) -> (CallbackStatus, Option<String>) {
        match (self.status, self.status.shown(task)) {
            (CallbackStatus::Pending, CallbackStatus::Missed) => {
                (CallbackStatus::Missed, Some(ended_reason(task).to_owned()))
            }
            (status, _) => (status, self.reason.clone()),
        }
    }

    pub fn view(&self, task: TaskStatus, stop_reason: Option<&str>) -> CallbackView {
        let (status, reason) = self.shown_status(task);
        let reason = match (status, self.status, stop_reason) {
            (CallbackStatus::Missed, CallbackStatus::Pending, Some(stopped)) => {
                Some(stopped.to_owned())
            }
            _ => reason,
        };
        CallbackView {
            contact_id: self.contact_id.clone(),
            phone_number: self.phone.clone(),
            at: self.at.rfc3339(),
            source: self.source,
            status,
            reason,
        }
    }
}

fn ended_reason(task: TaskStatus) -> &'static str {
    match task {
        TaskStatus::Failed => "task failed",
        TaskStatus::Closed => "task closed",
        _ => "task stopped",
    }
}

/// A row of `GET /api/task/{id}/callbacks`.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CallbackView {
    pub contact_id: Id,
    pub phone_number: String,
    /// RFC 3339 in UTC.
    pub at: String,
    pub source: CallbackSource,
    pub status: CallbackStatus,
    /// Why it was missed (`NO_ANSWER`, `DNC`, `schedule ended`, ...); `null` otherwise.
    pub reason: Option<String>,
}

/// An API callback's time must be 60 s to 30 days after `now` (D31).
pub fn check_ahead(at: Timestamp, now: Timestamp) -> Result<(), Error> {
    if at.0 < now.0 + MIN_AHEAD_MILLIS || at.0 > now.0 + MAX_AHEAD_MILLIS {
        return Err(Error::invalid(
            "at must be at least 60 seconds and at most 30 days ahead",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(status: CallbackStatus) -> CallbackRecord {
        CallbackRecord {
            id: Id::new(),
            contact_id: Id::new(),
            phone: "2125550100".to_owned(),
            at: Timestamp(0),
            source: CallbackSource::Api,
            status,
            reason: None,
            created_at: Timestamp(0),
        }
    }

    #[test]
    fn a_pending_callback_of_an_ended_task_is_missed() {
        let pending = record(CallbackStatus::Pending);
        assert_eq!(
            pending.shown_status(TaskStatus::Running),
            (CallbackStatus::Pending, None)
        );
        assert_eq!(
            pending.shown_status(TaskStatus::Stopped),
            (CallbackStatus::Missed, Some("task stopped".to_owned()))
        );
        let view = pending.view(TaskStatus::Stopped, Some("schedule ended"));
        assert_eq!(
            (view.status, view.reason.as_deref()),
            (CallbackStatus::Missed, Some("schedule ended"))
        );
        let done = record(CallbackStatus::Done);
        assert_eq!(
            done.shown_status(TaskStatus::Stopped),
            (CallbackStatus::Done, None)
        );
    }

    #[test]
    fn an_api_callback_is_a_minute_to_thirty_days_ahead() {
        let now = Timestamp(1_000_000);
        assert!(check_ahead(Timestamp(now.0 + 59_999), now).is_err());
        assert!(check_ahead(Timestamp(now.0 + 60_000), now).is_ok());
        assert!(check_ahead(Timestamp(now.0 + MAX_AHEAD_MILLIS), now).is_ok());
        assert!(check_ahead(Timestamp(now.0 + MAX_AHEAD_MILLIS + 1), now).is_err());
        assert_eq!(
            CallbackStatus::parse("MISSED").unwrap(),
            CallbackStatus::Missed
        );
        assert!(CallbackStatus::parse("LATE").is_err());
    }
}

//! Why a task is or is not dialling (D19): counters kept exact by the transactions that move
//! its contacts, read in a bounded number of reads, and the one rule that names what blocks it.

use super::call::{Reason, Skip};
use super::{Id, TaskStatus, Timestamp};
use serde::Serialize;

/// A task's counters as stored on its item (D19).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskCounters {
    pub waiting: u64,
    pub final_: u64,
    pub skips: Vec<(Skip, u64)>,
    pub reasons: Vec<(Reason, u64)>,
    pub last_call_at: Option<Timestamp>,
    pub last_outcome_at: Option<Timestamp>,
    /// Until when the provider last refused a call for rate or capacity.
    pub busy_until: Option<Timestamp>,
    /// Contacts with an answered attempt (D22).
    pub answered: u64,
}

impl TaskCounters {
    pub fn skip(&self, skip: Skip) -> u64 {
        self.skips
            .iter()
            .find(|(s, _)| *s == skip)
            .map_or(0, |(_, n)| *n)
    }

    pub fn reason(&self, reason: Reason) -> u64 {
        self.reasons
            .iter()
            .find(|(r, _)| *r == reason)
            .map_or(0, |(_, n)| *n)
    }
}

/// What blocks a task from dialling (D19), the first that holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Blocked {
    NotRunning,
    /// Its schedule's `startAt` has not come (D31).
    NotStarted,
    OutsideWindow,
    AllWaiting,
    /// The task's queue has no agent available (D30).
    NoAgents,
    Capacity,
    ProviderBusy,
    NothingLeft,
}

/// How long a held-back mark (a task's `held_back_at`, `no_agents_at`) stands in its
/// diagnostics: two ticks, so a task still held back shows it between the tick's looks.
pub const HELD_BACK_SHOWN_MILLIS: i64 = 120_000;

/// Whether a held-back mark made at `marked` still stands at `now`.
pub fn held_back_recent(marked: Option<Timestamp>, now: Timestamp) -> bool {
    marked.is_some_and(|at| at.0 > now.0 - HELD_BACK_SHOWN_MILLIS)
}

/// Whether an agent-paced task's `NO_AGENTS` mark, made at `marked`, is shown at `now` beside
/// `available`, the agents free in its queue's latest reading shown in the same answer (D30).
/// A mark is never shown against a fact newer than it: the tick reads a queue before it marks
/// its tasks, so a reading with agents available is at least as new as the mark and says the
/// task is no longer held back by them (it keeps the mark for up to two ticks, and a claim clears
/// it, which a task given no room never makes). Without a reading the mark stands alone.
pub fn no_agents_shown(marked: Option<Timestamp>, available: Option<u32>, now: Timestamp) -> bool {
    held_back_recent(marked, now) && available.is_none_or(|free| free == 0)
}

/// Everything [`blocked_by`] weighs.
#[derive(Clone, Debug)]
pub struct Situation {
    pub status: TaskStatus,
    pub now: Timestamp,
    pub not_dialled: u64,
    pub waiting: u64,
    pub in_flight: u64,
    /// Waiting contacts whose skip is a closed window (OUTSIDE_WINDOW or CALLING_HOURS).
    pub waiting_for_window: u64,
    /// When the earliest waiting contact is due.
    pub earliest_waiting: Option<Timestamp>,
    /// A window read in the task's zone that is closed now, and when it opens.
    pub task_window_closed: Option<Option<Timestamp>>,
    pub at_capacity: bool,
    pub provider_busy: bool,
    /// An agent-paced task whose queue had no agent for it at the last tick, and still has
    /// none available as last read ([`no_agents_shown`], D30).
    pub no_agents: bool,
    /// Its schedule's start, while it has not come (D31).
    pub starts_at: Option<Timestamp>,
}

/// `blockedBy` and `nextDialTime` (D19). Something is due now when a contact was never dialled
/// or a waiting one's time has come; then only the caps or the provider can block. Nothing due
/// and calls in flight: calls are being made (not blocked). Otherwise the remaining contacts
/// wait: for a window (every waiting one for its window), for their interval or cap, or none
/// is left.
pub fn blocked_by(s: &Situation) -> (Option<Blocked>, Option<Timestamp>) {
    if s.status != TaskStatus::Running {
        return (Some(Blocked::NotRunning), None);
    }
    if let Some(start) = s.starts_at.filter(|start| *start > s.now) {
        return (Some(Blocked::NotStarted), Some(start));
    }
    if let Some(opens) = s.task_window_closed {
        return (Some(Blocked::OutsideWindow), opens);
    }
    let due_now = s.not_dialled > 0 || s.earliest_waiting.is_some_and(|at| at <= s.now);
    if due_now {
        return match (s.no_agents, s.at_capacity, s.provider_busy) {
            (true, _, _) => (Some(Blocked::NoAgents), None),
            (false, true, _) => (Some(Blocked::Capacity), None),
            (false, false, true) => (Some(Blocked::ProviderBusy), None),
            (false, false, false) => (None, None),
        };
    }
    if s.in_flight > 0 {
        return (None, None);
    }
    match s.earliest_waiting {
        Some(at) if s.waiting > 0 && s.waiting_for_window == s.waiting => {
            (Some(Blocked::OutsideWindow), Some(at))
        }
        Some(at) if s.waiting > 0 => (Some(Blocked::AllWaiting), Some(at)),
        _ => (Some(Blocked::NothingLeft), None),
    }
}

/// `contacts` of the diagnostics: each contact of the data source in exactly one (D19).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContactCounts {
    pub total: u64,
    pub not_dialled: u64,
    pub waiting: u64,
    pub in_flight: u64,
    #[serde(rename = "final")]
    pub final_: u64,
}

/// Contacts whose current state is each skip (D18).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkipCounts {
    #[serde(rename = "DNC")]
    pub dnc: u64,
    #[serde(rename = "INVALID_NUMBER")]
    pub invalid_number: u64,
    #[serde(rename = "OUTSIDE_WINDOW")]
    pub outside_window: u64,
    #[serde(rename = "CALLING_HOURS")]
    pub calling_hours: u64,
    #[serde(rename = "FREQUENCY_CAP")]
    pub frequency_cap: u64,
    #[serde(rename = "NO_COMMON_WINDOW")]
    pub no_common_window: u64,
    #[serde(rename = "ATTRIBUTES_TOO_LARGE")]
    pub attributes_too_large: u64,
    /// Contacts the task's filter leaves out (D31).
    #[serde(rename = "FILTERED")]
    pub filtered: u64,
}

/// Attempts by the reason they ended (D18).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReasonCounts {
    #[serde(rename = "ANSWERED")]
    pub answered: u64,
    #[serde(rename = "NO_ANSWER")]
    pub no_answer: u64,
    #[serde(rename = "VOICEMAIL")]
    pub voicemail: u64,
    #[serde(rename = "ABANDONED")]
    pub abandoned: u64,
    #[serde(rename = "BUSY")]
    pub busy: u64,
    #[serde(rename = "INVALID_NUMBER")]
    pub invalid_number: u64,
    #[serde(rename = "ERROR")]
    pub error: u64,
    #[serde(rename = "NO_OUTCOME")]
    pub no_outcome: u64,
}

impl SkipCounts {
    pub fn of(counters: &TaskCounters) -> Self {
        SkipCounts {
            dnc: counters.skip(Skip::Dnc),
            invalid_number: counters.skip(Skip::InvalidNumber),
            outside_window: counters.skip(Skip::OutsideWindow),
            calling_hours: counters.skip(Skip::CallingHours),
            frequency_cap: counters.skip(Skip::FrequencyCap),
            no_common_window: counters.skip(Skip::NoCommonWindow),
            attributes_too_large: counters.skip(Skip::AttributesTooLarge),
            filtered: counters.skip(Skip::Filtered),
        }
    }
}

impl ReasonCounts {
    pub fn of(counters: &TaskCounters) -> Self {
        ReasonCounts {
            answered: counters.reason(Reason::Answered),
            no_answer: counters.reason(Reason::NoAnswer),
            voicemail: counters.reason(Reason::Voicemail),
            abandoned: counters.reason(Reason::Abandoned),
            busy: counters.reason(Reason::Busy),
            invalid_number: counters.reason(Reason::InvalidNumber),
            error: counters.reason(Reason::Error),
            no_outcome: counters.reason(Reason::NoOutcome),
        }
    }
}

/// The agents of an agent-paced task's queue (D30), as the tick last read them from the provider.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentsView {
    pub queue_id: String,
    /// Agents free to take a call.
    pub available: u32,
    /// Agents on a call.
    pub busy: u32,
    /// Of the busy agents, those about to be free (Amazon Connect: in after-contact work).
    pub soon_free: u32,
    /// When the tick read them, in the service's zone.
    pub read_time: String,
}

/// `GET /api/task/{id}/diagnostics` (D19).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsView {
    pub task_id: Id,
    pub status: TaskStatus,
    /// Whether it is placing calls now or will at its next run: RUNNING and not blocked.
    pub dialing: bool,
    /// What keeps it from dialling, the first that holds; `null` while calls are being placed.
    pub blocked_by: Option<Blocked>,
    /// When the next contact becomes due, when it is waiting for one.
    pub next_dial_time: Option<String>,
    pub in_flight: u64,
    pub contacts: ContactCounts,
    pub skips: SkipCounts,
    pub reasons: ReasonCounts,
    pub last_call_time: Option<String>,
    pub last_outcome_time: Option<String>,
    /// An agent-paced task's queue as the tick last read it (D30); `null` for an agentless
    /// task, or before the tick read its queue.
    pub agents: Option<AgentsView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Situation {
        Situation {
            status: TaskStatus::Running,
            now: Timestamp(1_000_000),
            not_dialled: 0,
            waiting: 0,
            in_flight: 0,
            waiting_for_window: 0,
            earliest_waiting: None,
            task_window_closed: None,
            at_capacity: false,
            provider_busy: false,
            no_agents: false,
            starts_at: None,
        }
    }

    #[test]
    fn each_block_in_its_order() {
        let later = Timestamp(2_000_000);
        let paused = Situation {
            status: TaskStatus::Paused,
            not_dialled: 5,
            ..running()
        };
        assert_eq!(blocked_by(&paused), (Some(Blocked::NotRunning), None));
        // D31: before its start a running task is NOT_STARTED, whatever else holds, with its
        // start as the next dial time; from its start on, the rest decides.
        let later_start = Situation {
            starts_at: Some(later),
            task_window_closed: Some(None),
            not_dialled: 5,
            ..running()
        };
        assert_eq!(
            blocked_by(&later_start),
            (Some(Blocked::NotStarted), Some(later))
        );
        let started = Situation {
            starts_at: Some(Timestamp(1_000_000)),
            not_dialled: 5,
            ..running()
        };
        assert_eq!(blocked_by(&started), (None, None));
        let closed = Situation {
            task_window_closed: Some(Some(later)),
            not_dialled: 5,
            ..running()
        };
        assert_eq!(
            blocked_by(&closed),
            (Some(Blocked::OutsideWindow), Some(later))
        );
        let dialling = Situation {
            not_dialled: 5,
            ..running()
        };
        assert_eq!(blocked_by(&dialling), (None, None));
        let full = Situation {
            at_capacity: true,
            provider_busy: true,
            ..dialling.clone()
        };
        assert_eq!(blocked_by(&full), (Some(Blocked::Capacity), None));
        // D30: a queue with no agent available comes before the service's capacity, but never
        // before a closed window or a task that is not running.
        let no_agents = Situation {
            no_agents: true,
            ..full.clone()
        };
        assert_eq!(blocked_by(&no_agents), (Some(Blocked::NoAgents), None));
        let closed_without_agents = Situation {
            no_agents: true,
            ..closed.clone()
        };
        assert_eq!(
            blocked_by(&closed_without_agents),
            (Some(Blocked::OutsideWindow), Some(later))
        );
        let busy = Situation {
            provider_busy: true,
            ..dialling
        };
        assert_eq!(blocked_by(&busy), (Some(Blocked::ProviderBusy), None));
        let windows = Situation {
            waiting: 3,
            waiting_for_window: 3,
            earliest_waiting: Some(later),
            ..running()
        };
        assert_eq!(
            blocked_by(&windows),
            (Some(Blocked::OutsideWindow), Some(later))
        );
        let mixed = Situation {
            waiting_for_window: 2,
            ..windows.clone()
        };
        assert_eq!(blocked_by(&mixed), (Some(Blocked::AllWaiting), Some(later)));
        let calls_on = Situation {
            in_flight: 2,
            ..windows
        };
        assert_eq!(blocked_by(&calls_on), (None, None));
        assert_eq!(blocked_by(&running()), (Some(Blocked::NothingLeft), None));
    }

    /// D30: a `NO_AGENTS` mark stands two ticks, and only while the queue's reading shown
    /// beside it has no agent available; without a reading, the mark alone.
    #[test]
    fn no_agents_is_shown_only_while_no_agent_is_available() {
        let now = Timestamp(1_000_000);
        let marked = Some(Timestamp(now.0 - 60_000));
        assert!(no_agents_shown(marked, Some(0), now));
        assert!(no_agents_shown(marked, None, now));
        assert!(!no_agents_shown(marked, Some(2), now), "agents free now");
        assert!(!no_agents_shown(None, Some(0), now), "never marked");
        let stale = Some(Timestamp(now.0 - HELD_BACK_SHOWN_MILLIS));
        assert!(!no_agents_shown(stale, Some(0), now), "two ticks old");
        assert!(held_back_recent(marked, now));
        assert!(!held_back_recent(stale, now));
    }
}

//! A task's own history (goes with D31): its call counters as they stood each minute the tick
//! found new outcomes ([`Snapshot`]), thinned as they age ([`Grain`]), and its changes of state
//! ([`StateChange`]); read back as the counts of each interval between two kept snapshots
//! ([`TaskHistory`]).
//!
//! A snapshot holds the counters as totals, never a minute's own counts, so the history is
//! exact whatever the tick missed: an interval whose snapshots were dropped, or have aged out,
//! is one longer interval with the same sum, and the last interval always ends at the counters
//! as they are.

use crate::task::{CallCounters, Task, TaskStatus};
use crate::Timestamp;
use serde::{Deserialize, Serialize};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// How long a minute's snapshot is kept: the last day at a minute's resolution.
pub const MINUTES_KEPT_MILLIS: i64 = DAY;
/// How long the first snapshot of an hour is kept: the last 30 days at an hour's resolution.
pub const HOURS_KEPT_MILLIS: i64 = 30 * DAY;

/// The counters a history keeps: of the task's call counters, all but the talk time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub calls: u64,
    pub success: u64,
    pub failed: u64,
    pub no_answer: u64,
    pub abandoned: u64,
    pub callbacks: u64,
}

impl From<&CallCounters> for Counts {
    fn from(counters: &CallCounters) -> Self {
        Counts {
            calls: counters.calls,
            success: counters.success,
            failed: counters.failed,
            no_answer: counters.no_answer,
            abandoned: counters.abandoned,
            callbacks: counters.callbacks,
        }
    }
}

impl Counts {
    /// What moved between `earlier` and these totals.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts {
            calls: self.calls.saturating_sub(earlier.calls),
            success: self.success.saturating_sub(earlier.success),
            failed: self.failed.saturating_sub(earlier.failed),
            no_answer: self.no_answer.saturating_sub(earlier.no_answer),
            abandoned: self.abandoned.saturating_sub(earlier.abandoned),
            callbacks: self.callbacks.saturating_sub(earlier.callbacks),
        }
    }
}

/// How long a snapshot is kept, by what it was the first of: a day's first is kept as long as
/// the task, an hour's first 30 days, any other a day. A task's history therefore holds at most
/// 1,440 minutes, 720 hours and one snapshot per day it had calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grain {
    Minute,
    Hour,
    Day,
}

impl Grain {
    /// The grain of a snapshot at `at` whose kept predecessor was taken at `previous` (UTC days
    /// and hours).
    pub fn after(previous: Option<Timestamp>, at: Timestamp) -> Grain {
        match previous {
            None => Grain::Day,
            Some(previous) if previous.0.div_euclid(DAY) != at.0.div_euclid(DAY) => Grain::Day,
            Some(previous) if previous.0.div_euclid(HOUR) != at.0.div_euclid(HOUR) => Grain::Hour,
            Some(_) => Grain::Minute,
        }
    }

    /// When a snapshot of this grain taken at `at` is gone; never for a day's.
    pub fn expires(self, at: Timestamp) -> Option<Timestamp> {
        match self {
            Grain::Minute => Some(Timestamp(at.0 + MINUTES_KEPT_MILLIS)),
            Grain::Hour => Some(Timestamp(at.0 + HOURS_KEPT_MILLIS)),
            Grain::Day => None,
        }
    }
}

/// A task's call counters as they stood at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub at: Timestamp,
    pub counts: Counts,
    pub grain: Grain,
}

impl Snapshot {
    /// The minute it is kept under: a later snapshot in the same minute takes its place.
    pub fn minute(&self) -> i64 {
        minute_of(self.at)
    }

    /// Whether it is gone at `now` (DynamoDB deletes an expired item up to days later: reads
    /// leave it out themselves).
    pub fn expired(&self, now: Timestamp) -> bool {
        self.grain.expires(self.at).is_some_and(|end| end <= now)
    }
}

/// The minute of an instant, as snapshots are keyed.
pub fn minute_of(at: Timestamp) -> i64 {
    at.0.div_euclid(MINUTE)
}

/// The snapshot the tick writes for a task whose counters read `counts` at `now`, given its
/// newest snapshots, newest first (at most two are looked at): none when nothing moved since the
/// newest. One in the newest's minute replaces it, so its grain is judged against the one
/// before.
pub fn next_snapshot(newest: &[Snapshot], counts: Counts, now: Timestamp) -> Option<Snapshot> {
    if newest.first().is_some_and(|last| last.counts == counts) {
        return None;
    }
    let kept_before = newest
        .iter()
        .find(|snapshot| snapshot.minute() != minute_of(now));
    Some(Snapshot {
        at: now,
        counts,
        grain: Grain::after(kept_before.map(|snapshot| snapshot.at), now),
    })
}

/// A change of a task's state, as its history keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    pub at: Timestamp,
    pub status: TaskStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `GET /api/task/{id}/history`: what the task's calls did over its whole campaign. Times are
/// RFC 3339 in UTC.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TaskHistory {
    pub task_id: crate::Id,
    pub status: TaskStatus,
    /// When it was first published; absent for a DRAFT task.
    pub start_time: Option<String>,
    /// When it ended; absent while it may still dial.
    pub end_time: Option<String>,
    /// The outcomes recorded in each interval, oldest first: a minute for the last day, an hour
    /// for the last 30 days, a day before; each interval's counts are exact, and together they
    /// sum to the task's counters (`GET /api/task/{id}/stat`). Intervals without calls are left
    /// out.
    pub intervals: Vec<HistoryInterval>,
    /// Every change of its state, oldest first: its pauses are the spans from a `PAUSED` to the
    /// next change.
    pub states: Vec<HistoryState>,
}

/// The outcomes recorded from `from` to `to`.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HistoryInterval {
    pub from: String,
    pub to: String,
    pub call_count: u64,
    pub success_count: u64,
    pub fail_count: u64,
    pub no_answer_count: u64,
    /// Of `noAnswerCount`, answered by a person no agent took (D30).
    pub abandon_count: u64,
    /// Of `callCount`, calls placed for callbacks (D31).
    pub callback_count: u64,
}

/// One change of the task's state.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HistoryState {
    pub time: String,
    pub status: TaskStatus,
    /// The stop or failure reason, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl TaskHistory {
    /// The history of `task` as read now: its kept snapshots (any order, expired ones left out
    /// here), its changes of state, and its counters as they are, which close the last interval
    /// at its latest outcome.
    pub fn of(
        task: &Task,
        mut snapshots: Vec<Snapshot>,
        mut states: Vec<StateChange>,
        now: Timestamp,
    ) -> TaskHistory {
        snapshots.retain(|snapshot| !snapshot.expired(now));
        snapshots.sort_by_key(|snapshot| snapshot.at);
        states.sort_by_key(|change| change.at);
        let counts = Counts::from(&task.counters);
        let start = task
            .started_at
            .or_else(|| snapshots.first().map(|first| first.at))
            .unwrap_or(now);
        let mut intervals = Vec::new();
        let mut before = (start, Counts::default());
        let latest = task.last_outcome_at.unwrap_or(now);
        let live = Snapshot {
            at: latest.max(snapshots.last().map_or(start, |last| last.at)),
            counts,
            grain: Grain::Minute,
        };
        for snapshot in snapshots.iter().chain(std::iter::once(&live)) {
            let moved = snapshot.counts.since(&before.1);
            if moved != Counts::default() {
                intervals.push(HistoryInterval {
                    from: before.0.rfc3339(),
                    to: snapshot.at.rfc3339(),
                    call_count: moved.calls,
                    success_count: moved.success,
                    fail_count: moved.failed,
                    no_answer_count: moved.no_answer,
                    abandon_count: moved.abandoned,
                    callback_count: moved.callbacks,
                });
            }
            before = (snapshot.at, snapshot.counts);
        }
        TaskHistory {
            task_id: task.id.clone(),
            status: task.status,
            start_time: task.started_at.map(Timestamp::rfc3339),
            end_time: task.ended_at.map(Timestamp::rfc3339),
            intervals,
            states: states
                .into_iter()
                .map(|change| HistoryState {
                    time: change.at.rfc3339(),
                    status: change.status,
                    reason: change.reason,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_780_000_000_000 - 1_780_000_000_000 % DAY; // a UTC midnight

    fn counts(calls: u64) -> Counts {
        Counts {
            calls,
            success: calls / 2,
            ..Counts::default()
        }
    }

    fn snapshot(at: i64, calls: u64, grain: Grain) -> Snapshot {
        Snapshot {
            at: Timestamp(at),
            counts: counts(calls),
            grain,
        }
    }

    #[test]
    fn nothing_is_written_when_nothing_moved() {
        let newest = [snapshot(T0, 3, Grain::Day)];
        assert_eq!(
            next_snapshot(&newest, counts(3), Timestamp(T0 + 5 * MINUTE)),
            None
        );
    }

    #[test]
    fn the_first_of_a_day_and_of_an_hour_outlive_the_minutes() {
        let first = next_snapshot(&[], counts(1), Timestamp(T0 + 90_000)).unwrap();
        assert_eq!(first.grain, Grain::Day);
        let second = next_snapshot(&[first], counts(2), Timestamp(T0 + 5 * MINUTE)).unwrap();
        assert_eq!(second.grain, Grain::Minute);
        let next_hour = next_snapshot(&[second, first], counts(3), Timestamp(T0 + HOUR)).unwrap();
        assert_eq!(next_hour.grain, Grain::Hour);
        let next_day = next_snapshot(&[next_hour], counts(4), Timestamp(T0 + DAY + 1)).unwrap();
        assert_eq!(next_day.grain, Grain::Day);
        assert_eq!(
            Grain::Minute.expires(Timestamp(T0)),
            Some(Timestamp(T0 + DAY))
        );
        assert_eq!(Grain::Day.expires(Timestamp(T0)), None);
    }

    #[test]
    fn a_second_snapshot_in_a_minute_is_judged_against_the_one_before() {
        let first = snapshot(T0 + 10 * MINUTE, 1, Grain::Day);
        let same_minute = snapshot(T0 + HOUR + 1_000, 2, Grain::Hour);
        let again = next_snapshot(
            &[same_minute, first],
            counts(3),
            Timestamp(T0 + HOUR + 30_000),
        )
        .unwrap();
        assert_eq!(again.minute(), same_minute.minute());
        assert_eq!(again.grain, Grain::Hour);
    }

    #[test]
    fn intervals_sum_to_the_counters_whatever_aged_out() {
        let mut task = Task::draft(
            crate::Name::parse("taskName", "calls").unwrap(),
            crate::Description::default(),
            (crate::Id::new(), 3),
            Default::default(),
            Timestamp(T0),
        );
        task.started_at = Some(Timestamp(T0));
        task.counters.calls = 10;
        task.counters.success = 5;
        task.last_outcome_at = Some(Timestamp(T0 + 3 * DAY));
        let snapshots = vec![
            snapshot(T0 + MINUTE, 2, Grain::Day),
            snapshot(T0 + 2 * MINUTE, 4, Grain::Minute), // aged out
            snapshot(T0 + 2 * DAY, 8, Grain::Day),
        ];
        let history = TaskHistory::of(&task, snapshots, Vec::new(), Timestamp(T0 + 3 * DAY));
        let calls: Vec<u64> = history.intervals.iter().map(|i| i.call_count).collect();
        assert_eq!(calls, [2, 6, 2]);
        assert_eq!(history.intervals[1].from, Timestamp(T0 + MINUTE).rfc3339());
        assert_eq!(history.intervals[2].to, Timestamp(T0 + 3 * DAY).rfc3339());
        let success: u64 = history.intervals.iter().map(|i| i.success_count).sum();
        assert_eq!(success, 5);
    }
}

//! A task's state change (D10-D13, D26) as data: what it moves from and to, what it does to
//! the task's hold on its data source (D11) and to its tenant's count of running tasks (D26),
//! what it records, and the task as it leaves it. The store turns one into a conditional
//! transaction; the rules of which change is which live here, unit-tested on their own.

use crate::task::{TaskOperation, TaskStatus};
use crate::telephony::CallerIdChoice;
use crate::{Id, Task, Timestamp};

/// What a state change does to the task's data source (D11: RUNNING and PAUSED tasks hold it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Nothing: the task held it before and after, or neither.
    Keep,
    /// Start holding it; it must still exist and have contacts.
    Acquire,
    /// Stop holding it.
    Release,
}

impl Hold {
    pub fn between(from: TaskStatus, to: TaskStatus) -> Hold {
        match (from.holds_data_source(), to.holds_data_source()) {
            (false, true) => Hold::Acquire,
            (true, false) => Hold::Release,
            _ => Hold::Keep,
        }
    }
}

/// What a state change does to the tenant's count of RUNNING tasks (D26): the count is moved
/// in the same transaction as the status, so each entry into RUNNING takes a place and each
/// exit gives it back exactly once, however often a change is sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunPlace {
    /// Neither state is RUNNING, or both are.
    Keep,
    /// Into RUNNING: one more, on condition that the tenant runs fewer than its limit. The task
    /// is marked as holding a place.
    Take,
    /// Out of RUNNING. `counted`: the task holds a place (it is marked) and gives it back;
    /// otherwise it entered RUNNING before places were counted and has none to give back.
    GiveBack { counted: bool },
}

impl RunPlace {
    pub fn between(from: TaskStatus, to: TaskStatus) -> RunPlace {
        match (from == TaskStatus::Running, to == TaskStatus::Running) {
            (false, true) => RunPlace::Take,
            (true, false) => RunPlace::GiveBack { counted: true },
            _ => RunPlace::Keep,
        }
    }
}

/// A state change: from any of `from` to `to`, with what it records.
#[derive(Clone, Debug)]
pub struct Transition {
    pub operation: TaskOperation,
    pub from: &'static [TaskStatus],
    pub to: TaskStatus,
    pub hold: Hold,
    pub at: Timestamp,
    pub set_started: bool,
    pub set_ended: bool,
    pub stop_reason: Option<String>,
    pub fail_reason: Option<String>,
    /// Refreshes the task's `contact_count` (publish).
    pub contact_count: Option<u64>,
    /// Fixes the caller ID and flow the task calls with (publish, D28): what was its own, or
    /// its tenant's defaults then.
    pub setup: Option<(Option<CallerIdChoice>, Option<String>)>,
    /// Only with no call in flight and no recall since the task was read at this revision (the
    /// dialing engine's completion, D13).
    pub idle_at_revision: Option<u64>,
    /// Only while the data source's `contacts_added` is this (the completion, D13): a contact
    /// added during the completion check stops it.
    pub contacts_added: Option<u64>,
    /// Commits a large recall (D12): the task records it as pending, once at a time.
    pub pending_recall: Option<(Id, Timestamp)>,
}

impl Transition {
    /// A state change without side data.
    pub fn of(operation: TaskOperation, at: Timestamp) -> Transition {
        let from = operation.allowed_from();
        let to = operation.target().unwrap_or(from[0]);
        Transition {
            operation,
            from,
            to,
            // Every operation's source states agree on holding the data source, so the first decides.
            hold: Hold::between(from[0], to),
            at,
            set_started: operation == TaskOperation::Publish,
            set_ended: matches!(
                operation,
                TaskOperation::Stop | TaskOperation::Complete | TaskOperation::Fail
            ),
            stop_reason: None,
            fail_reason: None,
            contact_count: None,
            setup: None,
            idle_at_revision: None,
            contacts_added: None,
            pending_recall: None,
        }
    }

    /// `task` as this change leaves it.
    pub fn applied_to(&self, mut task: Task) -> Task {
        task.status = self.to;
        task.updated_at = self.at;
        if self.set_started {
            task.started_at = Some(self.at);
        }
        if self.set_ended {
            task.ended_at = Some(self.at);
        }
        if self.to == TaskStatus::Running {
            task.ended_at = None;
            task.idle_until = None;
            task.held_back_at = None;
        }
        task.awake += 1;
        if self.stop_reason.is_some() {
            task.stop_reason.clone_from(&self.stop_reason);
        }
        if self.fail_reason.is_some() {
            task.fail_reason.clone_from(&self.fail_reason);
        }
        if let Some((caller, flow)) = &self.setup {
            task.settings.caller_id = caller.clone();
            task.settings.contact_flow_id = flow.clone();
        }
        if let Some(count) = self.contact_count {
            task.contact_count = count;
        }
        task
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TaskStatus::*;

    #[test]
    fn running_and_paused_hold_the_data_source() {
        assert_eq!(Hold::between(Draft, Running), Hold::Acquire);
        assert_eq!(Hold::between(Completed, Running), Hold::Acquire);
        assert_eq!(Hold::between(Running, Paused), Hold::Keep);
        assert_eq!(Hold::between(Paused, Stopped), Hold::Release);
        assert_eq!(Hold::between(Running, Completed), Hold::Release);
        assert_eq!(Hold::between(Stopped, Closed), Hold::Keep);
    }

    #[test]
    fn entering_running_takes_a_place_and_leaving_it_gives_one_back() {
        assert_eq!(RunPlace::between(Draft, Running), RunPlace::Take);
        assert_eq!(RunPlace::between(Paused, Running), RunPlace::Take);
        assert_eq!(
            RunPlace::between(Running, Paused),
            RunPlace::GiveBack { counted: true }
        );
        assert_eq!(RunPlace::between(Running, Running), RunPlace::Keep);
        assert_eq!(RunPlace::between(Paused, Stopped), RunPlace::Keep);
    }

    #[test]
    fn each_operation_moves_from_its_states_and_records_its_times() {
        let at = Timestamp(1_000);
        let publish = Transition::of(TaskOperation::Publish, at);
        assert_eq!(
            (publish.from, publish.to, publish.hold),
            (&[Draft][..], Running, Hold::Acquire)
        );
        assert!(publish.set_started && !publish.set_ended);
        let stop = Transition::of(TaskOperation::Stop, at);
        assert_eq!(
            (stop.from, stop.to, stop.hold),
            (&[Running, Paused][..], Stopped, Hold::Release)
        );
        assert!(stop.set_ended && !stop.set_started);
        let pause = Transition::of(TaskOperation::Pause, at);
        assert_eq!((pause.to, pause.hold), (Paused, Hold::Keep));
        assert!(!pause.set_ended && !pause.set_started);
        // Recall names no target: it stays where it is, from the first of its states.
        let recall = Transition::of(TaskOperation::Recall, at);
        assert_eq!((recall.to, recall.hold), (Running, Hold::Keep));
    }

    #[test]
    fn a_task_entering_running_is_awake_and_neither_ended_idle_nor_held_back() {
        let created = Timestamp(1_000);
        let mut task = Task::draft(
            crate::Name::parse("taskName", "calls").unwrap(),
            crate::Description::default(),
            (Id::new(), 3),
            Default::default(),
            created,
        );
        task.ended_at = Some(created);
        task.idle_until = Some(Timestamp(9_000));
        task.held_back_at = Some(created);
        let at = Timestamp(2_000);
        let published = Transition {
            contact_count: Some(5),
            ..Transition::of(TaskOperation::Publish, at)
        }
        .applied_to(task);
        assert_eq!(
            (published.status, published.started_at, published.updated_at),
            (Running, Some(at), at)
        );
        assert_eq!(
            (
                published.ended_at,
                published.idle_until,
                published.held_back_at
            ),
            (None, None, None)
        );
        assert_eq!((published.contact_count, published.awake), (5, 1));

        let stopped = Transition {
            stop_reason: Some("by the operator".into()),
            ..Transition::of(TaskOperation::Stop, Timestamp(3_000))
        }
        .applied_to(published);
        assert_eq!(
            (stopped.status, stopped.ended_at, stopped.started_at),
            (Stopped, Some(Timestamp(3_000)), Some(at))
        );
        assert_eq!(stopped.stop_reason.as_deref(), Some("by the operator"));
        assert_eq!(stopped.awake, 2);
    }
}

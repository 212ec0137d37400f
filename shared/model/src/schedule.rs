//! A task's schedule (D31): when its first call may be placed and when the engine stops it.
//! Set in DRAFT with the other settings; checked against the clock at publish.

use crate::error::Error;
use crate::Timestamp;
use serde::{Deserialize, Serialize};

/// The `stopReason` of a task the engine stopped at its `endAt` (D31).
pub const SCHEDULE_ENDED: &str = "schedule ended";

/// `startAt` and `endAt`, each optional; when both are set, the end is after the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end_at: Option<Timestamp>,
}

impl Schedule {
    /// A schedule from its two ends, or 400 when the end is not after the start.
    pub fn new(start_at: Option<Timestamp>, end_at: Option<Timestamp>) -> Result<Self, Error> {
        if let (Some(start), Some(end)) = (start_at, end_at) {
            if end <= start {
                return Err(Error::invalid("endAt must be after startAt"));
            }
        }
        Ok(Schedule { start_at, end_at })
    }

    pub fn start_at(&self) -> Option<Timestamp> {
        self.start_at
    }

    pub fn end_at(&self) -> Option<Timestamp> {
        self.end_at
    }

    pub fn is_empty(&self) -> bool {
        self.start_at.is_none() && self.end_at.is_none()
    }

    /// Whether `now` is before its start: the task runs and places no call (`NOT_STARTED`).
    pub fn not_started(&self, now: Timestamp) -> bool {
        self.start_at.is_some_and(|start| now < start)
    }

    /// Whether its end has come at `now`: the engine stops the task.
    pub fn ended(&self, now: Timestamp) -> bool {
        self.end_at.is_some_and(|end| end <= now)
    }

    /// Whether a call may be placed at `now`: started and not ended.
    pub fn open(&self, now: Timestamp) -> bool {
        !self.not_started(now) && !self.ended(now)
    }

    /// A task is published only with its end still ahead (D31).
    pub fn check_at_publish(&self, now: Timestamp) -> Result<(), Error> {
        if self.ended(now) {
            return Err(Error::invalid("endAt must be in the future at publish"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_between_its_ends() {
        let schedule = Schedule::new(Some(Timestamp(100)), Some(Timestamp(200))).unwrap();
        assert!(schedule.not_started(Timestamp(99)));
        assert!(!schedule.open(Timestamp(99)));
        assert!(schedule.open(Timestamp(100)));
        assert!(schedule.open(Timestamp(199)));
        assert!(schedule.ended(Timestamp(200)));
        assert!(!schedule.open(Timestamp(200)));
        assert!(Schedule::default().open(Timestamp(0)));
        assert!(Schedule::default().is_empty());
    }

    #[test]
    fn the_end_comes_after_the_start() {
        let error = Schedule::new(Some(Timestamp(200)), Some(Timestamp(200))).unwrap_err();
        assert_eq!(error.to_string(), "endAt must be after startAt");
        assert!(Schedule::new(None, Some(Timestamp(1))).is_ok());
        let past = Schedule::new(None, Some(Timestamp(1))).unwrap();
        assert_eq!(
            past.check_at_publish(Timestamp(1)).unwrap_err().to_string(),
            "endAt must be in the future at publish"
        );
        assert!(past.check_at_publish(Timestamp(0)).is_ok());
    }
}

//! The decisions of one dial run's slice (D23, D28) as pure functions: the room a run may take,
//! which never-dialled contacts its slice holds and where the task's cursor moves, whether the
//! run takes another slice, where the cursor goes back to when a slice ends with contacts left,
//! and until when a task with nothing due rests. The engine's run reads the store, asks these,
//! and writes what they answer.

use crate::call::Target;
use crate::task::{Due, Fresh, RunSlice, IDLE_AT_MOST};
use crate::{Id, Timestamp};
use std::collections::HashSet;
use std::time::Duration;

/// The most contacts one run takes (D23): about what it places before its deadline at the
/// provider's 200 ms a call; more calls in flight come from more runs, each its own slice.
pub const RUN_SLICE: usize = 100;

/// A never-dialled contact as a run reads it: the contact, its number and the sort key the
/// task's cursor is kept in.
pub type FreshContact = (Fresh, Target, String);

/// The room a run may take (D23): the task's share less its calls in flight and the room of
/// the runs still going, at most one slice.
pub fn room(share: u32, in_flight: u32, taken_by_runs: u32) -> usize {
    (share
        .saturating_sub(in_flight)
        .saturating_sub(taken_by_runs) as usize)
        .min(RUN_SLICE)
}

/// What a run takes before any call (D23): the never-dialled contacts of `due` (a retry is not
/// in the slice: its claim alone guards it) and the slice written on the task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlicePlan {
    /// The never-dialled contacts this run will try.
    pub in_slice: HashSet<Id>,
    /// What the task records of the run; its `to` is the sort key of the last contact of
    /// `in_slice`, where the cursor moves: past it, and past the contacts before it already
    /// called or deleted (`None`: the slice holds none, and the cursor stays).
    pub slice: RunSlice,
}

impl SlicePlan {
    /// The slice of a run that will try `due`, read after `cursor` as `fresh`, at `now`; it
    /// lapses `lifetime` later should the run die without ending it (D28).
    pub fn of(
        due: &[Due],
        fresh: &[FreshContact],
        cursor: Option<&str>,
        now: Timestamp,
        lifetime: Duration,
    ) -> SlicePlan {
        let in_slice: HashSet<Id> = due
            .iter()
            .filter(|one| one.state.is_none())
            .map(|one| one.contact_id.clone())
            .collect();
        let last = fresh
            .iter()
            .rev()
            .find(|(f, _, _)| in_slice.contains(&f.contact_id))
            .map(|(_, _, key)| key.clone());
        let lifetime = i64::try_from(lifetime.as_millis()).unwrap_or(i64::MAX);
        let slice = RunSlice {
            room: u32::try_from(due.len()).unwrap_or(u32::MAX),
            until: Timestamp(now.0.saturating_add(lifetime)),
            from: cursor.map(str::to_owned),
            to: last,
        };
        SlicePlan { in_slice, slice }
    }

    /// The sort key of the last contact of the slice, where the cursor moves (`None`: it
    /// holds none).
    pub fn last(&self) -> Option<&str> {
        self.slice.to.as_deref()
    }

    /// The contacts of the slice the run did not settle (its deadline, a busy provider, an
    /// error), in the order they were read, and where the cursor goes back to so they come next
    /// as if never taken: after the last contact read before the first of them (`None` when
    /// every contact was settled; `Some(None)` for the cursor's very start).
    pub fn left<'a>(
        &self,
        fresh: &'a [FreshContact],
        settled: &HashSet<Id>,
        cursor: Option<&'a str>,
    ) -> (Vec<Id>, Option<Option<&'a str>>) {
        let unsettled = |id: &Id| self.in_slice.contains(id) && !settled.contains(id);
        let left: Vec<Id> = fresh
            .iter()
            .map(|(f, _, _)| &f.contact_id)
            .filter(|id| unsettled(id))
            .cloned()
            .collect();
        if left.is_empty() {
            return (left, None);
        }
        let mut back = cursor;
        for (f, _, key) in fresh {
            if unsettled(&f.contact_id) {
                break;
            }
            back = Some(key.as_str());
        }
        (left, Some(back))
    }
}

/// Whether a run takes another slice: this one was full and every contact of it settled, so
/// the task may have more due and room for them.
pub fn takes_another(due: &[Due], settled: &HashSet<Id>) -> bool {
    due.len() == RUN_SLICE && due.iter().all(|one| settled.contains(&one.contact_id))
}

/// Until when a task a run found nothing to call in rests (D23), given the earliest time one
/// of its contacts waits for (`waiting`) and whether outcomes are still to come: `None` when
/// it should not rest (something is due by the next tick, or nothing will ever be due), never
/// more than [`IDLE_AT_MOST`] ahead.
pub fn rests_until(
    waiting: Option<Timestamp>,
    outcomes_pending: bool,
    now: Timestamp,
) -> Option<Timestamp> {
    let at_most = Timestamp(now.0 + IDLE_AT_MOST.as_millis() as i64);
    let due = match waiting {
        Some(due) => due,
        None if outcomes_pending => at_most,
        None => return None,
    };
    let next_tick = now.0 + 60_000;
    (due.0 > next_tick).then(|| Timestamp(due.0.min(at_most.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::TaskContact;
    use crate::Phone;

    const NOW: Timestamp = Timestamp(1_800_000_000_000);

    fn id(n: u32) -> Id {
        Id::parse(&format!("01J9Z3K8Q4W6N2V5B7C1D3F{n:03}")).unwrap()
    }

    fn fresh(ns: &[u32]) -> Vec<FreshContact> {
        ns.iter()
            .map(|&n| {
                let target = Target {
                    phone: Phone::parse("+12125550100").unwrap(),
                    time_zone: None,
                    script: None,
                    fields: Default::default(),
                    simulated_results: None,
                };
                (Fresh { contact_id: id(n) }, target, format!("key{n:03}"))
            })
            .collect()
    }

    fn never_dialled(n: u32) -> Due {
        Due {
            contact_id: id(n),
            attempt: 1,
            state: None,
        }
    }

    fn retry(n: u32) -> Due {
        Due {
            contact_id: id(n),
            attempt: 2,
            state: Some(TaskContact::undialled(id(n), 3, 3, NOW)),
        }
    }

    #[test]
    fn a_runs_room_is_its_share_less_calls_in_flight_and_other_runs_at_most_a_slice() {
        assert_eq!(room(10, 3, 2), 5);
        assert_eq!(room(10, 8, 5), 0);
        assert_eq!(room(10, 12, 0), 0);
        assert_eq!(room(500, 0, 0), RUN_SLICE);
    }

    #[test]
    fn a_slice_holds_the_never_dialled_contacts_it_tries_and_moves_the_cursor_past_the_last() {
        let read = fresh(&[1, 2, 3, 4]);
        // Contact 2 was called by another run already: not due, but the cursor moves past it.
        let due = [retry(9), never_dialled(1), never_dialled(3)];
        let plan = SlicePlan::of(&due, &read, Some("key000"), NOW, Duration::from_secs(30));
        assert_eq!(plan.in_slice, HashSet::from([id(1), id(3)]));
        assert_eq!(plan.last(), Some("key003"));
        assert_eq!(
            plan.slice,
            RunSlice {
                room: 3,
                until: Timestamp(NOW.0 + 30_000),
                from: Some("key000".into()),
                to: Some("key003".into()),
            }
        );
    }

    #[test]
    fn a_slice_of_retries_alone_leaves_the_cursor() {
        let plan = SlicePlan::of(&[retry(9)], &fresh(&[1]), None, NOW, Duration::ZERO);
        assert!(plan.in_slice.is_empty());
        assert_eq!((plan.last(), plan.slice.room), (None, 1));
    }

    #[test]
    fn a_slice_ended_with_contacts_left_moves_the_cursor_back_before_the_first_of_them() {
        let read = fresh(&[1, 2, 3, 4]);
        let due: Vec<Due> = [1, 2, 3, 4].map(never_dialled).into();
        let plan = SlicePlan::of(&due, &read, Some("key000"), NOW, Duration::ZERO);

        let all: HashSet<Id> = [1, 2, 3, 4].map(id).into();
        assert_eq!(plan.left(&read, &all, Some("key000")), (vec![], None));

        let first_two: HashSet<Id> = [1, 2].map(id).into();
        assert_eq!(
            plan.left(&read, &first_two, Some("key000")),
            (vec![id(3), id(4)], Some(Some("key002")))
        );
        // Contact 3 settled before 2 (the order claims answer in): 2 and 4 are left, in the
        // order read, and the cursor goes back to before 2.
        let out_of_order: HashSet<Id> = [1, 3].map(id).into();
        assert_eq!(
            plan.left(&read, &out_of_order, Some("key000")),
            (vec![id(2), id(4)], Some(Some("key001")))
        );
        let none = HashSet::new();
        assert_eq!(
            plan.left(&read, &none, None),
            (vec![id(1), id(2), id(3), id(4)], Some(None))
        );
    }

    #[test]
    fn a_run_takes_another_slice_only_after_a_full_one_all_settled() {
        let full: Vec<Due> = (0..RUN_SLICE as u32).map(never_dialled).collect();
        let all: HashSet<Id> = full.iter().map(|d| d.contact_id.clone()).collect();
        assert!(takes_another(&full, &all));
        let mut one_left = all.clone();
        one_left.remove(&id(7));
        assert!(!takes_another(&full, &one_left));
        assert!(!takes_another(&full[..10], &all));
    }

    #[test]
    fn a_task_rests_until_its_earliest_contact_is_due_past_the_next_tick_and_an_hour_at_most() {
        let at = |minutes: i64| Timestamp(NOW.0 + minutes * 60_000);
        assert_eq!(rests_until(Some(at(1)), false, NOW), None);
        assert_eq!(rests_until(Some(at(5)), false, NOW), Some(at(5)));
        assert_eq!(rests_until(Some(at(600)), true, NOW), Some(at(60)));
        assert_eq!(rests_until(None, true, NOW), Some(at(60)));
        assert_eq!(rests_until(None, false, NOW), None);
    }
}

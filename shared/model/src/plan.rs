//! The rules of D13 as pure functions of a task's settings, its per-contact states and the
//! clock: whether a task may dial now, which contacts are due and in which order, and what an
//! outcome makes of a contact. No I/O here, so every rule is unit-tested with a fixed clock.

use crate::task::{DialSettings, TaskContact};
use crate::task::{Due, Fresh};
use crate::{Id, Tenant, Timestamp};
use chrono::{TimeZone, Timelike};
use chrono_tz::Tz;
use std::collections::BTreeMap;
use std::collections::HashSet;

/// Where "now" comes from: the system clock in the functions, a fixed one in tests.
pub trait Clock: Send + Sync {
    fn now(&self) -> Timestamp;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that stands still until it is moved: for tests and benchmarks, where retries must
/// come due without waiting for their interval.
#[derive(Debug)]
pub struct ManualClock(std::sync::atomic::AtomicI64);

impl ManualClock {
    /// Starts at the system clock's now.
    pub fn starting_now() -> std::sync::Arc<ManualClock> {
        std::sync::Arc::new(ManualClock(std::sync::atomic::AtomicI64::new(
            Timestamp::now().0,
        )))
    }

    pub fn advance(&self, by: std::time::Duration) {
        let millis = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0
            .fetch_add(millis, std::sync::atomic::Ordering::SeqCst);
    }

    /// Moves the clock forward to the next `hour:minute:second` UTC (a day ahead when that is
    /// now): windows are set against a known time of day, so a run holds at any hour.
    pub fn advance_to_utc(&self, hour: i64, minute: i64, second: i64) {
        const DAY: i64 = 86_400_000;
        let now = self.now().0;
        let mut at = now.div_euclid(DAY) * DAY + ((hour * 60 + minute) * 60 + second) * 1000;
        if at <= now {
            at += DAY;
        }
        self.advance(std::time::Duration::from_millis((at - now).unsigned_abs()));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.0.load(std::sync::atomic::Ordering::SeqCst))
    }
}

/// Whether a task may place a call at `now` (D9, D13): inside its daily window, both minutes
/// included, read in the task's zone or else the service zone. No window: all day.
pub fn window_open(settings: &DialSettings, service_zone: Tz, now: Timestamp) -> bool {
    let Some(window) = settings.window else {
        return true;
    };
    let zone = settings
        .time_zone
        .as_ref()
        .and_then(|name| name.as_str().parse::<Tz>().ok())
        .unwrap_or(service_zone);
    let Some(local) = zone.timestamp_millis_opt(now.0).single() else {
        return false;
    };
    let minute = (local.hour() * 60 + local.minute()) as u16;
    (window.start.minutes()..=window.end.minutes()).contains(&minute)
}

/// Whether a contact's state makes it due at `now`: not final, nothing in flight, attempts left,
/// and its next attempt time reached (the call interval since its last attempt ended).
pub fn is_due(state: &TaskContact, now: Timestamp) -> bool {
    !state.done
        && state.in_call.is_none()
        && (state.attempts < state.allowance
            || crate::simulation::planted(crate::simulation::Bug::MaxDialIgnored))
        && state.next_attempt_at.is_none_or(|at| at <= now)
}

/// The contacts to call now, at most `budget`, in D13's order: recalled ones by their recall
/// priority (then longest waiting), then the other retries, longest waiting first, then the
/// never-dialled ones in creation order. A contact no longer in the data source (`existing`
/// does not hold it) is never due.
pub fn due_contacts(
    states: &[TaskContact],
    fresh: &[Fresh],
    existing: &HashSet<Id>,
    now: Timestamp,
    budget: usize,
) -> Vec<Due> {
    let mut retries: Vec<&TaskContact> = states
        .iter()
        .filter(|state| is_due(state, now) && existing.contains(&state.contact_id))
        .collect();
    retries.sort_by_key(|state| {
        (
            !state.recalled,
            if state.recalled { state.priority } else { 0 },
            state.next_attempt_at,
            state.contact_id.clone(),
        )
    });
    let known: HashSet<&Id> = states.iter().map(|state| &state.contact_id).collect();
    let retries = retries.into_iter().map(|state| Due {
        contact_id: state.contact_id.clone(),
        attempt: state.attempts + 1,
        state: Some(state.clone()),
    });
    let fresh = fresh
        .iter()
        .filter(|f| existing.contains(&f.contact_id) && !known.contains(&f.contact_id))
        .map(|f| Due {
            contact_id: f.contact_id.clone(),
            attempt: 1,
            state: None,
        });
    retries.chain(fresh).take(budget).collect()
}

/// What the tick knows of one running task when it shares the budget out.
#[derive(Clone, Copy, Debug)]
pub struct Claimant<'a> {
    pub tenant: &'a Tenant,
    pub priority: u8,
    pub id: &'a Id,
    /// The calls in flight the task can use now (D23): its calls in flight and its contacts left
    /// to call, at most the per-task cap. `None`: unknown, the per-task cap.
    pub demand: Option<u32>,
}

impl Claimant<'_> {
    /// Its place in D13's order within its tenant: priority 1 first, then the oldest task (ids
    /// sort by creation).
    pub fn rank(&self) -> (u8, &Id) {
        (self.priority, self.id)
    }
}

/// How the service's calls in flight are shared between tenants (D13).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fairness {
    /// The service's calls in flight at most (`DIAL_MAX_IN_FLIGHT`).
    pub capacity: u32,
    /// A task's calls in flight at most (`DIAL_MAX_IN_FLIGHT_PER_TASK`).
    pub per_task: u32,
    /// Each tenant's weight (`DIAL_TENANT_WEIGHTS`); a tenant not named weighs 1.
    pub weights: BTreeMap<Tenant, u32>,
    /// One tenant's calls in flight at most (`DIAL_TENANT_MAX_IN_FLIGHT`), if capped.
    pub per_tenant: Option<u32>,
}

impl Fairness {
    fn weight(&self, tenant: &Tenant) -> u64 {
        u64::from(self.weights.get(tenant).copied().unwrap_or(1).max(1))
    }

    /// Each tenant's share of the service's calls in flight: weighted max-min fair. Every
    /// tenant gets capacity in proportion to its weight, never more than it can use (its tasks'
    /// caps, its own cap); what one cannot use goes to the others, again by weight. Tenants are
    /// `(tenant, most it can use)`; the shares add up to at most `capacity`.
    pub fn tenant_shares<'a>(&self, wants: &[(&'a Tenant, u32)]) -> BTreeMap<&'a Tenant, u32> {
        let mut shares: BTreeMap<&Tenant, u32> = wants.iter().map(|(t, _)| (*t, 0)).collect();
        let mut open: Vec<(&Tenant, u32)> = wants
            .iter()
            .filter(|(_, want)| *want > 0)
            .copied()
            .collect();
        let mut left = self.capacity;
        while left > 0 && !open.is_empty() {
            let total: u64 = open.iter().map(|(t, _)| self.weight(t)).sum();
            let mut given = 0;
            for (tenant, want) in &open {
                let fair = (u64::from(left) * self.weight(tenant) / total) as u32;
                let share = shares.get_mut(tenant).expect("every tenant has a share");
                let more = fair.min(want - *share);
                *share += more;
                given += more;
            }
            if given == 0 {
                // Less left than tenants: one more call each, heaviest first, while it lasts.
                open.sort_by_key(|(t, _)| std::cmp::Reverse(self.weight(t)));
                for (tenant, want) in &open {
                    let share = shares.get_mut(tenant).expect("every tenant has a share");
                    if left > given && *share < *want {
                        *share += 1;
                        given += 1;
                    }
                }
            }
            left -= given;
            open.retain(|(t, want)| shares[t] < *want);
        }
        shares
    }

    /// Each running task's share of the service's calls in flight (D13): first between tenants
    /// ([`Fairness::tenant_shares`]), then, within a tenant, priority 1 first, then the oldest
    /// task (ids sort by creation), each up to the per-task cap. A share is how many calls the
    /// task may have in flight, not how many it may start: a dial run claims up to its share
    /// less the task's calls in flight when the run starts, so calls that end between the tick
    /// and a run are replaced at once, and a tenant above its share (it started first) starts
    /// nothing new until the others have theirs. A task asks for its demand (D23), so what it
    /// cannot use goes to the others. Every task gets an entry; those left without a share 0.
    pub fn share_out<'t, T>(
        &self,
        tasks: &'t [T],
        claimant: impl Fn(&T) -> Claimant<'_>,
    ) -> Vec<(&'t T, u32)> {
        let cap = self.per_tenant.unwrap_or(u32::MAX);
        let mut by_tenant: BTreeMap<&Tenant, Vec<&T>> = BTreeMap::new();
        for task in tasks {
            by_tenant
                .entry(claimant(task).tenant)
                .or_default()
                .push(task);
        }
        let demand = |task: &T| {
            claimant(task)
                .demand
                .map_or(self.per_task, |demand| demand.min(self.per_task))
        };
        let wants: Vec<(&Tenant, u32)> = by_tenant
            .iter()
            .map(|(tenant, tasks)| {
                let most = tasks
                    .iter()
                    .fold(0u32, |sum, task| sum.saturating_add(demand(task)));
                (*tenant, most.min(cap))
            })
            .collect();
        let shares = self.tenant_shares(&wants);
        let mut out = Vec::with_capacity(tasks.len());
        for (tenant, mut ordered) in by_tenant {
            ordered.sort_by(|a, b| claimant(a).rank().cmp(&claimant(b).rank()));
            let mut left = shares[tenant];
            for task in ordered {
                let share = demand(task).min(left);
                left -= share;
                out.push((task, share));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{after_outcome, AfterOutcome, CallReport, Outcome};
    use crate::task::ZoneName;
    use crate::time_of_day::{ClockTime, DailyWindow};

    /// Milliseconds of a UTC wall-clock time.
    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> Timestamp {
        Timestamp(
            chrono::Utc
                .with_ymd_and_hms(y, mo, d, h, mi, s)
                .unwrap()
                .timestamp_millis(),
        )
    }

    fn settings(window: Option<(&str, &str)>, zone: Option<&str>) -> DialSettings {
        DialSettings {
            window: window.map(|(start, end)| DailyWindow {
                start: ClockTime::parse("s", start).unwrap(),
                end: ClockTime::parse("e", end).unwrap(),
            }),
            time_zone: zone.map(|z| ZoneName::parse(z).unwrap()),
            ..DialSettings::default()
        }
    }

    #[test]
    fn the_window_includes_both_minutes() {
        let task = settings(Some(("09:00", "18:00")), None);
        let open = |h, m, s| window_open(&task, Tz::UTC, utc(2026, 3, 2, h, m, s));
        assert!(!open(8, 59, 59));
        assert!(open(9, 0, 0));
        assert!(open(18, 0, 59), "the end minute is inside the window");
        assert!(!open(18, 1, 0));
        assert!(window_open(
            &settings(None, None),
            Tz::UTC,
            utc(2026, 3, 2, 3, 0, 0)
        ));
    }

    #[test]
    fn the_window_is_read_in_the_task_zone_else_the_service_zone() {
        // 01:30 UTC is 09:30 in Shanghai (UTC+8, no DST).
        let at = utc(2026, 3, 2, 1, 30, 0);
        let task = settings(Some(("09:00", "10:00")), Some("Asia/Shanghai"));
        assert!(window_open(&task, Tz::UTC, at));
        let zoneless = settings(Some(("09:00", "10:00")), None);
        assert!(!window_open(&zoneless, Tz::UTC, at));
        assert!(window_open(&zoneless, chrono_tz::Asia::Shanghai, at));
    }

    #[test]
    fn the_window_follows_daylight_saving_changes() {
        // New York: EST (UTC-5) until 2026-03-08 02:00, then EDT (UTC-4).
        let task = settings(Some(("09:00", "09:30")), Some("America/New_York"));
        let before = utc(2026, 3, 7, 14, 0, 0); // 09:00 EST
        let after_same_utc = utc(2026, 3, 9, 14, 0, 0); // 10:00 EDT
        let after_local_nine = utc(2026, 3, 9, 13, 0, 0); // 09:00 EDT
        assert!(window_open(&task, Tz::UTC, before));
        assert!(!window_open(&task, Tz::UTC, after_same_utc));
        assert!(window_open(&task, Tz::UTC, after_local_nine));
        // The night of the change the clocks jump from 01:59:59 EST to 03:00 EDT (07:00 UTC):
        // a 02:00-03:00 window is open only during its end minute that night.
        let night = settings(Some(("02:00", "03:00")), Some("America/New_York"));
        assert!(!window_open(&night, Tz::UTC, utc(2026, 3, 8, 6, 59, 59))); // 01:59:59 EST
        assert!(window_open(&night, Tz::UTC, utc(2026, 3, 8, 7, 0, 30))); // 03:00:30 EDT
        assert!(!window_open(&night, Tz::UTC, utc(2026, 3, 8, 7, 1, 0))); // 03:01 EDT
    }

    fn id(n: u8) -> Id {
        Id::parse(&format!("01J0000000000000000000000{n}")).unwrap()
    }

    fn state(n: u8, attempts: u32, allowance: u32, next: Option<Timestamp>) -> TaskContact {
        TaskContact {
            attempts,
            last_outcome: if attempts > 0 { 2 } else { 0 },
            next_attempt_at: next,
            ..TaskContact::undialled(id(n), allowance, 3, Timestamp(0))
        }
    }

    fn all(ids: &[u8]) -> HashSet<Id> {
        ids.iter().map(|n| id(*n)).collect()
    }

    fn order(due: &[Due]) -> Vec<(Id, u32)> {
        due.iter()
            .map(|d| (d.contact_id.clone(), d.attempt))
            .collect()
    }

    #[test]
    fn retries_wait_the_call_interval_and_stop_at_the_allowance() {
        let now = Timestamp(1_000_000);
        let states = [
            state(1, 1, 3, Some(Timestamp(now.0 - 1))),    // due
            state(2, 1, 3, Some(Timestamp(now.0 + 1))),    // interval not over
            state(3, 3, 3, Some(Timestamp(now.0 - 1000))), // allowance used up
            state(4, 2, 3, Some(now)),                     // due exactly now
        ];
        let due = due_contacts(&states, &[], &all(&[1, 2, 3, 4]), now, 10);
        assert_eq!(order(&due), vec![(id(1), 2), (id(4), 3)]);
    }

    #[test]
    fn final_in_flight_and_deleted_contacts_are_never_due() {
        let now = Timestamp(1_000_000);
        let mut done = state(1, 1, 3, None);
        done.done = true;
        let mut flying = state(2, 1, 3, None);
        flying.in_call = Some(2);
        let deleted = state(3, 1, 3, None);
        let due = due_contacts(
            &[done, flying, deleted],
            &[Fresh { contact_id: id(4) }, Fresh { contact_id: id(5) }],
            &all(&[1, 2, 4]),
            now,
            10,
        );
        assert_eq!(order(&due), vec![(id(4), 1)], "5 and 3 were deleted");
    }

    #[test]
    fn recalled_first_by_priority_then_retries_then_never_dialled() {
        let now = Timestamp(1_000_000);
        let mut low = state(1, 2, 5, Some(Timestamp(10)));
        low.recalled = true;
        low.priority = 5;
        let mut high = state(2, 2, 5, Some(Timestamp(20)));
        high.recalled = true;
        high.priority = 1;
        let old_retry = state(3, 1, 3, Some(Timestamp(5)));
        let newer_retry = state(4, 1, 3, Some(Timestamp(6)));
        let fresh = [Fresh { contact_id: id(6) }, Fresh { contact_id: id(7) }];
        let states = [newer_retry, low, old_retry, high];
        let existing = all(&[1, 2, 3, 4, 6, 7]);
        let due = due_contacts(&states, &fresh, &existing, now, 10);
        assert_eq!(
            order(&due),
            vec![
                (id(2), 3),
                (id(1), 3),
                (id(3), 2),
                (id(4), 2),
                (id(6), 1),
                (id(7), 1)
            ]
        );
        let due = due_contacts(&states, &fresh, &existing, now, 3);
        assert_eq!(order(&due), vec![(id(2), 3), (id(1), 3), (id(3), 2)]);
    }

    #[test]
    fn a_contact_with_state_is_not_fresh_again() {
        // Added while the task ran, recalled by id before its first call: one call, not two.
        let now = Timestamp(1_000_000);
        let mut recalled = state(1, 0, 3, Some(now));
        recalled.recalled = true;
        let due = due_contacts(
            &[recalled],
            &[Fresh { contact_id: id(1) }, Fresh { contact_id: id(2) }],
            &all(&[1, 2]),
            now,
            10,
        );
        assert_eq!(order(&due), vec![(id(1), 1), (id(2), 1)]);
    }

    fn report(outcome: Outcome, invalid_number: bool) -> CallReport {
        let reason = match outcome {
            _ if invalid_number => crate::call::Reason::InvalidNumber,
            Outcome::Success => crate::call::Reason::Answered,
            Outcome::NoAnswer => crate::call::Reason::NoAnswer,
            Outcome::Failed => crate::call::Reason::Error,
        };
        reason.report(0)
    }

    #[test]
    fn outcomes_are_final_on_success_invalid_number_or_the_last_attempt() {
        let at = Timestamp(50_000);
        let next = |attempt, outcome, invalid| {
            after_outcome(attempt, 3, &report(outcome, invalid), 60, at)
        };
        assert_eq!(
            next(1, Outcome::NoAnswer, false),
            AfterOutcome {
                attempts: 1,
                done: false,
                next_attempt_at: Some(Timestamp(110_000)),
                callback: false,
            }
        );
        assert!(next(1, Outcome::Success, false).done);
        assert!(
            next(1, Outcome::Failed, true).done,
            "an invalid number is not retried"
        );
        assert!(!next(2, Outcome::Failed, false).done);
        let last = next(3, Outcome::Failed, false);
        assert!(last.done);
        assert_eq!(last.next_attempt_at, None);
    }

    fn fairness(capacity: u32, per_task: u32, weights: &[(&str, u32)]) -> Fairness {
        Fairness {
            capacity,
            per_task,
            weights: weights
                .iter()
                .map(|(t, w)| (Tenant::parse(t).unwrap(), *w))
                .collect(),
            per_tenant: None,
        }
    }

    /// (tenant, priority, task id)
    type Running = (Tenant, u8, Id);

    fn running(tenant: &str, priority: u8, n: u8) -> Running {
        (Tenant::parse(tenant).unwrap(), priority, id(n))
    }

    fn shares(fair: &Fairness, tasks: &[Running]) -> Vec<(Id, u32)> {
        fn claimant((tenant, priority, id): &Running) -> Claimant<'_> {
            Claimant {
                tenant,
                priority: *priority,
                id,
                demand: None,
            }
        }
        let mut got: Vec<(Id, u32)> = fair
            .share_out(tasks, claimant)
            .into_iter()
            .map(|((_, _, id), n)| (id.clone(), n))
            .collect();
        got.sort();
        got
    }

    #[test]
    fn within_a_tenant_the_budget_goes_to_priority_one_first() {
        let tasks = [
            running("a", 5, 1),
            running("a", 1, 2),
            running("a", 3, 3),
            running("a", 1, 4),
        ];
        assert_eq!(
            shares(&fairness(12, 5, &[]), &tasks),
            vec![(id(1), 0), (id(2), 5), (id(3), 2), (id(4), 5)]
        );
        let none = shares(&fairness(0, 5, &[]), &tasks);
        assert!(none.iter().all(|(_, n)| *n == 0));
        assert_eq!(none.len(), 4);
    }

    #[test]
    fn tenants_share_by_weight_whatever_their_priorities() {
        let tasks = [running("a", 1, 1), running("b", 5, 2)];
        assert_eq!(
            shares(&fairness(4, 10, &[]), &tasks),
            vec![(id(1), 2), (id(2), 2)]
        );
        assert_eq!(
            shares(&fairness(4, 10, &[("a", 3)]), &tasks),
            vec![(id(1), 3), (id(2), 1)]
        );
        // What one tenant cannot use goes to the other.
        let small = [running("a", 1, 1), running("b", 5, 2)];
        assert_eq!(
            shares(&fairness(10, 3, &[]), &small),
            vec![(id(1), 3), (id(2), 3)]
        );
        let one_task_b = [running("a", 1, 1), running("a", 1, 3), running("b", 5, 2)];
        assert_eq!(
            shares(&fairness(10, 4, &[]), &one_task_b),
            vec![(id(1), 4), (id(2), 4), (id(3), 2)]
        );
    }

    #[test]
    fn a_tenant_cap_bounds_its_share_and_frees_the_rest() {
        let mut fair = fairness(10, 10, &[]);
        fair.per_tenant = Some(3);
        let tasks = [running("a", 1, 1), running("b", 1, 2)];
        assert_eq!(shares(&fair, &tasks), vec![(id(1), 3), (id(2), 3)]);
    }

    #[test]
    fn shares_never_exceed_the_capacity_and_use_it_all_when_wanted() {
        for capacity in 0..40 {
            for weights in [vec![], vec![("a", 3)], vec![("b", 7), ("c", 2)]] {
                let fair = fairness(capacity, 6, &weights);
                let tenants = [
                    Tenant::parse("a").unwrap(),
                    Tenant::parse("b").unwrap(),
                    Tenant::parse("c").unwrap(),
                ];
                let wants = [(&tenants[0], 6), (&tenants[1], 12), (&tenants[2], 30)];
                let got = fair.tenant_shares(&wants);
                let total: u32 = got.values().sum();
                assert_eq!(total, capacity.min(48), "{capacity} {weights:?} {got:?}");
                for (tenant, want) in wants {
                    assert!(got[tenant] <= want);
                }
            }
        }
    }

    #[test]
    fn a_task_asks_only_for_what_it_can_use_and_the_rest_goes_to_others() {
        let fair = Fairness {
            capacity: 10,
            per_task: 10,
            weights: BTreeMap::new(),
            per_tenant: None,
        };
        let acme = Tenant::parse("acme").unwrap();
        // (tenant, task, demand): the oldest has one contact left, the next none at all.
        let tasks = [
            (acme.clone(), id(1), Some(1)),
            (acme.clone(), id(2), Some(0)),
            (acme, id(3), Some(40)),
        ];
        fn claimant((tenant, id, demand): &(Tenant, Id, Option<u32>)) -> Claimant<'_> {
            Claimant {
                tenant,
                priority: 1,
                id,
                demand: *demand,
            }
        }
        let shares: Vec<u32> = fair
            .share_out(&tasks, claimant)
            .into_iter()
            .map(|(_, share)| share)
            .collect();
        assert_eq!(shares, [1, 0, 9]);
    }
}

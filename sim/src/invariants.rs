//! The promises, read from the provider's own log of what it placed and from the store, after
//! every step ([`Checker::check_step`]) and once every task is over ([`at_end`]):
//! - no attempt placed twice (the provider's calls counted, not its tokens), and no contact
//!   called more often than its task's `maxDialCount` and two tries for each callback promised
//!   it (D31);
//! - D31: no contact its task's filter leaves out ever called; no call before its task's
//!   schedule starts or from its end on; no call to a contact between a callback's setting and
//!   its time, the API's or the flow's (`callbackInMinutes` on an answered call: none before
//!   that call's end and its minutes); a callback's call not held back by the frequency cap (it
//!   counts toward it); a task RUNNING two ticks past its schedule's end breaks the promise that
//!   the tick stops it; its history agrees with it at the end;
//! - no call to a number on its tenant's do-not-call list since before the call (the listing
//!   racing a claim already taken is allowed one second: the claim checked the list);
//! - no call outside its tenant's calling hours in the called party's zone, and no number called
//!   more often than its tenant's frequency cap, across tasks, by the settings in force when it
//!   was placed (or up to 30 s before: a run judges its calls by the settings it read);
//! - the service's calls in flight within its cap at every step, and none left at the end;
//! - an agent-paced task's calls ringing (placed, not yet taken by an agent, not ended) at each
//!   call it places within what its pacing allows against the last reading of its queue's
//!   agents ([`paced_ringing`], one tolerance);
//! - every call placed recorded exactly once, with the provider's reason and seconds, read from
//!   the outcomes the store committed (the outbox's `CallCompleted` events); no outcome recorded
//!   of an attempt that placed no call, but for an attempt in doubt never to be sent again (D28);
//!   each task's counters (calls, successes, failures, no answers, seconds) the sum of its
//!   recorded outcomes; each COMPLETED task's contacts, those added while it ran included, all
//!   done.

use crate::provider::{attempt_key, AttemptKey, Placed};
use crate::wire::Recorded;
use crate::world::World;
use chrono::{TimeZone, Timelike};
use outbound_model::call::{Outcome, Reason};
use outbound_model::pacing::QueueAgents;
use outbound_model::task::CallCounters;
use outbound_model::TaskStatus;
use std::collections::{BTreeMap, BTreeSet};

/// How long after a number is listed a call claimed before may still be placed.
const LISTING_RACE_MS: i64 = 1_000;
/// How long after the tenant's settings change a call judged by the old ones may still be
/// placed: a dial run reads the rules once a slice and lives at most 20 s (its deadline), so
/// 30 s covers its last call's start.
const SETTINGS_RACE_MS: i64 = 30_000;

/// The values of a setting (each from when it was set) in force at some moment of the
/// [`SETTINGS_RACE_MS`] before `at`: a call placed at `at` may follow any of them.
fn in_force<T>(history: &[(i64, T)], at: i64) -> impl Iterator<Item = &T> {
    let from = at - SETTINGS_RACE_MS;
    let first = history
        .iter()
        .rposition(|(since, _)| *since <= from)
        .unwrap_or(0);
    history[first..]
        .iter()
        .take_while(move |(since, _)| *since <= at)
        .map(|(_, value)| value)
}

/// What the step checks have seen so far.
#[derive(Debug, Default)]
pub struct Checker {
    seen: usize,
    attempts: BTreeSet<AttemptKey>,
    per_contact: BTreeMap<(String, String), u32>,
    /// Each tenant's calls to each number, by time.
    by_number: BTreeMap<(usize, String), Vec<i64>>,
    /// The database's writes when calls in flight were last read: with none since, the count
    /// read then still holds.
    in_flight_read_at: Option<u64>,
}

impl Checker {
    /// The promises a step may break: the calls placed since the last step, and capacity.
    pub async fn check_step(&mut self, world: &World) -> Result<(), String> {
        let placed = world.provider.placed();
        // The attempts answered whose outcome the store recorded: the flow's callback asks that
        // took effect (D31).
        let answered: BTreeSet<AttemptKey> = (world.recorded().into_iter())
            .filter(|outcome| outcome.reason == Reason::Answered)
            .map(|outcome| outcome.attempt())
            .collect();
        for call in &placed[self.seen..] {
            self.check_call(world, call, (&placed, &answered))?;
            check_pacing(world, call, &placed)?;
        }
        self.seen = placed.len();
        let writes = world.wire_writes();
        if self.in_flight_read_at == Some(writes) {
            return Ok(());
        }
        let in_flight = world
            .engine
            .store
            .calls_in_flight()
            .await
            .map_err(|error| format!("read calls in flight: {error}"));
        // A read the storm's faults refused says nothing; the next step reads again.
        if let Ok(in_flight) = in_flight {
            self.in_flight_read_at = Some(writes);
            let cap = world.engine.config.max_in_flight;
            if in_flight > cap {
                return Err(format!(
                    "{in_flight} calls in flight, over the service's {cap}"
                ));
            }
        }
        Ok(())
    }

    fn check_call(
        &mut self,
        world: &World,
        call: &Placed,
        (placed, answered): (&[Placed], &BTreeSet<AttemptKey>),
    ) -> Result<(), String> {
        let attempt = &call.attempt;
        let key = attempt_key(&attempt.task_id, &attempt.contact_id, attempt.attempt);
        if !self.attempts.insert(key.clone()) {
            return Err(format!("attempt {key:?} placed twice"));
        }
        let task = world
            .tasks
            .iter()
            .find(|task| task.id == key.0)
            .ok_or_else(|| format!("a call of no task of the world: {call:?}"))?;
        let count = self
            .per_contact
            .entry((key.0.clone(), key.1.clone()))
            .or_default();
        *count += 1;
        // Each callback promised the contact two more tries (D31), the API's and the flow's.
        let callbacks: Vec<(i64, i64)> = task.callbacks_of(&key.1).collect();
        let flow_asks: Vec<(&Placed, i64)> = (placed.iter())
            .filter(|earlier| {
                let a = &earlier.attempt;
                a.task_id == attempt.task_id
                    && a.contact_id == attempt.contact_id
                    && a.attempt < attempt.attempt
                    && answered.contains(&attempt_key(&a.task_id, &a.contact_id, a.attempt))
            })
            .filter_map(|earlier| Some((earlier, earlier.flow_callback_minutes()?)))
            .collect();
        let promised = callbacks.len() + flow_asks.len();
        let allowed = task.max_dial + 2 * promised as u32;
        if *count > allowed {
            return Err(format!(
                "contact {} of task {} called {count} times, over maxDialCount {} and its {} \
                 callbacks",
                key.1, key.0, task.max_dial, promised
            ));
        }
        // A flow's callback is due its minutes after the outcome is recorded, so no sooner than
        // after the call's end; only the API setting the contact's callback since moves it.
        for (asked, minutes) in &flow_asks {
            let due = asked.ends_at + minutes * 60_000;
            let moved = callbacks
                .iter()
                .any(|(set_at, _)| *set_at > asked.at && *set_at < call.at);
            if call.at < due && !moved {
                return Err(format!(
                    "called at {} before the callback its flow asked for in {minutes} min \
                     (the call ended at {}): {call:?}",
                    call.at, asked.ends_at
                ));
            }
        }
        // D31: never a contact the task's filter leaves out, never outside its schedule, and
        // never between a callback's setting and its time.
        let segment = world.segments.get(&key.1).copied().unwrap_or_default();
        if task
            .filter
            .as_ref()
            .is_some_and(|kept| !kept.contains(&segment))
        {
            return Err(format!(
                "contact {} of segment {segment} called by a task filtered to {:?}: {call:?}",
                key.1, task.filter
            ));
        }
        if task.start_at.is_some_and(|start| call.at < start)
            || task.end_at.is_some_and(|end| call.at >= end)
        {
            return Err(format!(
                "called at {} outside its task's schedule {:?}-{:?}: {call:?}",
                call.at, task.start_at, task.end_at
            ));
        }
        if let Some((set_at, due)) =
            (callbacks.iter()).find(|(set_at, due)| call.at > *set_at && call.at < *due)
        {
            return Err(format!(
                "called at {} before its callback's time {due} (set at {set_at}): {call:?}",
                call.at
            ));
        }
        let tenant = &world.tenants[task.tenant];
        let (number, zone) = &world.contacts[&key.1];
        if let Some(listed_at) = tenant.listed.get(number) {
            if call.at > listed_at + LISTING_RACE_MS {
                return Err(format!(
                    "{number} called at {} though listed at {listed_at}: {call:?}",
                    call.at
                ));
            }
        }
        let local = chrono::Utc
            .timestamp_millis_opt(call.at)
            .single()
            .ok_or("a call's time")?
            .with_timezone(zone);
        let minute = local.hour() * 60 + local.minute();
        let within_hours = |hours: &Option<(u32, u32)>| {
            hours.is_none_or(|(start, end)| (start..end).contains(&minute))
        };
        if !in_force(&tenant.calling_hours, call.at).any(within_hours) {
            return Err(format!(
                "{number} called at {local} outside calling hours: {call:?}"
            ));
        }
        let times = self
            .by_number
            .entry((task.tenant, number.clone()))
            .or_default();
        times.push(call.at);
        let under_cap = |cap: &Option<(usize, i64)>| {
            cap.is_none_or(|(most, period)| {
                times.iter().filter(|at| **at > call.at - period).count() <= most
            })
        };
        // A callback's call is not held back by the cap (D31), though it counts toward it.
        let a_callback =
            !flow_asks.is_empty() || callbacks.iter().any(|(set_at, _)| *set_at < call.at);
        if !a_callback && !in_force(&tenant.cap, call.at).any(under_cap) {
            return Err(format!(
                "{number} called over its frequency cap: {call:?}, its calls {times:?}"
            ));
        }
        Ok(())
    }
}

/// The most calls an agent-paced task's pace lets ring against its queue's agents as read
/// (D30):
/// - progressive: `callsPerAgent` x the agents free (floor);
/// - predictive: 10 calls a ready agent (free or soon free), the most its search allows.
pub fn paced_ringing(pacing: &crate::world::SimPacing, agents: &QueueAgents) -> usize {
    match pacing.calls_per_agent {
        Some(per_agent) => (f64::from(agents.available) * per_agent).floor() as usize,
        None => {
            let ready = f64::from(agents.available + agents.soon_free);
            (ready * outbound_model::pacing::MOST_PER_AGENT).ceil() as usize
        }
    }
}

/// An agent-paced task's calls ringing when a run places `call` for it, within
/// [`paced_ringing`] of the last reading of its queue's agents before the call; plus the one
/// tolerance: the task's calls an agent had taken by the reading that ended by the call and
/// whose outcome was not recorded when that pass read its tasks. The pass counted each talking,
/// so the task's cap holds a place for it, which its run may fill once the outcome is recorded,
/// though that agent was counted free too.
fn check_pacing(world: &World, call: &Placed, placed: &[Placed]) -> Result<(), String> {
    let task_id = call.attempt.task_id.as_str();
    let Some(task) = world.tasks.iter().find(|task| task.id == task_id) else {
        return Ok(());
    };
    // A start in doubt sent again is not paced (D28): its places were held, or taken again,
    // for the attempt a run claimed under an earlier reading; its call rings, and counts, as
    // any other.
    let Some(pacing) = task.pacing.as_ref().filter(|_| call.by_run) else {
        return Ok(());
    };
    let Some(read) = world.provider.last_read(&pacing.queue, call.at) else {
        return Err(format!(
            "a call of agent-paced task {task_id} placed before any reading of its queue: \
             {call:?}"
        ));
    };
    let of_task = || {
        placed
            .iter()
            .filter(|other| other.attempt.task_id.as_str() == task_id)
    };
    let ringing = of_task().filter(|other| other.ringing_at(call.at)).count();
    let paced = paced_ringing(pacing, &read.agents);
    if ringing <= paced {
        return Ok(());
    }
    // The pass read its tasks (what it counted talking) before it read their agents.
    let tasks_read = world.provider.tasks_read_before(read.at);
    let recorded: BTreeSet<AttemptKey> = (world.recorded().into_iter())
        .filter(|outcome| outcome.at <= tasks_read)
        .map(|outcome| outcome.attempt())
        .collect();
    let ended_unrecorded = of_task()
        .filter(|other| other.with_agent && other.ends_at <= call.at)
        .filter(|other| other.answered_at.is_some_and(|answer| answer <= read.at))
        .filter(|other| {
            let a = &other.attempt;
            !recorded.contains(&attempt_key(&a.task_id, &a.contact_id, a.attempt))
        })
        .count();
    let bound = paced + ended_unrecorded;
    if ringing > bound {
        return Err(format!(
            "agent-paced task {task_id} ({pacing:?}) has {ringing} calls ringing at {}, over the \
             {bound} its queue's agents allowed ({read:?}; {ended_unrecorded} taken by an agent, \
             ended, unrecorded): {call:?}",
            call.at
        ));
    }
    Ok(())
}

/// The promises of the end, once every task is over and the queues are drained: nothing held
/// in flight; each call placed recorded exactly once with the provider's outcome, each outcome
/// recorded of a call placed (the one allowance below); each task's counters the sum of its
/// recorded outcomes.
pub async fn at_end(world: &World) -> Result<(), String> {
    let in_flight = world
        .engine
        .store
        .calls_in_flight()
        .await
        .map_err(|error| format!("read calls in flight: {error}"))?;
    if in_flight != 0 {
        return Err(format!("{in_flight} calls still held in flight at the end"));
    }
    let placed = world.provider.placed();
    let recorded = world.recorded();
    let mut by_attempt: BTreeMap<AttemptKey, &Recorded> = BTreeMap::new();
    for outcome in &recorded {
        if let Some(first) = by_attempt.insert(outcome.attempt(), outcome) {
            return Err(format!(
                "the outcome of one attempt recorded twice: {first:?} and {outcome:?}"
            ));
        }
    }
    let in_doubt = world.provider.in_doubt();
    for call in &placed {
        let attempt = &call.attempt;
        let key = attempt_key(&attempt.task_id, &attempt.contact_id, attempt.attempt);
        let Some(outcome) = by_attempt.remove(&key) else {
            return Err(format!(
                "a call placed, its outcome never recorded: {call:?}"
            ));
        };
        let same = outcome.reason == call.report.reason
            && outcome.duration_seconds == call.report.duration;
        if !same && !settled_in_doubt(world, &in_doubt, outcome) {
            return Err(format!(
                "recorded {outcome:?} of a call that ended {:?} after {} s: {call:?}",
                call.report.reason, call.report.duration
            ));
        }
    }
    if let Some(outcome) = (by_attempt.values()).find(|o| !settled_in_doubt(world, &in_doubt, o)) {
        return Err(format!(
            "an outcome recorded of an attempt that placed no call: {outcome:?}"
        ));
    }
    for task in &world.tasks {
        let stored = world.stored_task(task).await?;
        let mut counted = CallCounters::default();
        for outcome in recorded.iter().filter(|o| o.task_id == task.id) {
            counted.calls += 1;
            counted.duration += outcome.duration_seconds;
            match outcome.reason.outcome() {
                Outcome::Success => counted.success += 1,
                Outcome::Failed => counted.failed += 1,
                Outcome::NoAnswer => counted.no_answer += 1,
            }
        }
        let counters = CallCounters {
            abandoned: 0,
            callbacks: 0,
            ..stored.counters.clone()
        };
        if counters != counted {
            return Err(format!(
                "task {} ({:?}) counts {counters:?}; its recorded outcomes add up to {counted:?}",
                task.id, stored.status
            ));
        }
        if stored.in_flight != 0 {
            return Err(format!(
                "task {} ends with {} in flight",
                task.id, stored.in_flight
            ));
        }
        if stored.status == TaskStatus::Completed {
            check_all_done(world, task, &stored).await?;
        }
        check_history(world, task, &stored).await?;
        // D31: stopped by the tick after its schedule's end (paused, it stays paused).
        let now = world.seeded.now_ms();
        if stored.status == TaskStatus::Running
            && task.end_at.is_some_and(|end| end + 120_000 < now)
        {
            return Err(format!(
                "task {} still RUNNING at {now}, past its schedule's end {:?}",
                task.id, task.end_at
            ));
        }
    }
    Ok(())
}

/// D31's history agrees with the task: its snapshots never go back, its intervals add up to
/// the counters whatever snapshots the faults cost, and its latest change of state is the state
/// the task is in (each is written in the transaction of the change).
async fn check_history(
    world: &World,
    task: &crate::world::SimTask,
    stored: &outbound_model::Task,
) -> Result<(), String> {
    use outbound_model::history::{Counts, TaskHistory};
    let history = (world.engine.store)
        .history(&world.tenant_of(task)?, &stored.id)
        .await
        .map_err(|error| format!("read task {}'s history: {error}", task.id))?;
    let mut snapshots = history.snapshots.clone();
    snapshots.sort_by_key(|snapshot| snapshot.at);
    let totals = Counts::from(&stored.counters);
    for pair in snapshots.windows(2) {
        if pair[0].counts.since(&pair[1].counts) != Counts::default() {
            return Err(format!(
                "task {}'s history goes back: {:?} then {:?}",
                task.id, pair[0], pair[1]
            ));
        }
    }
    if let Some(past) = snapshots
        .iter()
        .find(|s| s.counts.since(&totals) != Counts::default())
    {
        return Err(format!(
            "task {}'s snapshot {past:?} is past its counters {totals:?}",
            task.id
        ));
    }
    let latest = history.states.iter().max_by_key(|change| change.at);
    if latest.map_or(TaskStatus::Draft, |change| change.status) != stored.status {
        return Err(format!(
            "task {} is {:?}; its history's states say {:?}",
            task.id, stored.status, history.states
        ));
    }
    let shown = TaskHistory::of(
        stored,
        history.snapshots,
        history.states,
        outbound_model::Timestamp(world.seeded.now_ms()),
    );
    let summed = shown
        .intervals
        .iter()
        .fold(Counts::default(), |sum, i| Counts {
            calls: sum.calls + i.call_count,
            success: sum.success + i.success_count,
            failed: sum.failed + i.fail_count,
            no_answer: sum.no_answer + i.no_answer_count,
            abandoned: sum.abandoned + i.abandon_count,
            callbacks: sum.callbacks + i.callback_count,
        });
    if summed != totals {
        return Err(format!(
            "task {}'s history adds up to {summed:?}; its counters are {totals:?}",
            task.id
        ));
    }
    Ok(())
}

/// A COMPLETED task left none of its contacts undone, those added while it ran included: each
/// reached a final state (a success, its attempts used, a final skip).
async fn check_all_done(
    world: &World,
    task: &crate::world::SimTask,
    stored: &outbound_model::Task,
) -> Result<(), String> {
    let states = (world.engine.store)
        .task_contacts(&world.tenant_of(task)?, &stored.id)
        .await
        .map_err(|error| format!("read task {}'s contacts: {error}", task.id))?;
    let done: BTreeSet<&str> = (states.iter())
        .filter(|state| state.done)
        .map(|state| state.contact_id.as_str())
        .collect();
    match task.contacts.iter().find(|id| !done.contains(id.as_str())) {
        None => Ok(()),
        Some(left) => Err(format!(
            "task {} COMPLETED with contact {left} not done: {:?}",
            task.id,
            states
                .iter()
                .find(|state| state.contact_id.as_str() == left)
        )),
    }
}

/// The one allowance (D28): an attempt left in doubt that may never be sent again (its number
/// listed meanwhile, its task stopped or its schedule ended) is settled "no outcome" once no
/// call it placed may be live, whether or not its start placed one; the provider's outcome of
/// such a call is never learnt. A claim whose run died before its start reached the provider
/// is in doubt the same way.
fn settled_in_doubt(world: &World, in_doubt: &BTreeSet<AttemptKey>, outcome: &Recorded) -> bool {
    let never_again = || {
        let Some(task) = world.tasks.iter().find(|task| task.id == outcome.task_id) else {
            return false;
        };
        let listed = (world.contacts.get(&outcome.contact_id))
            .is_some_and(|(number, _)| world.tenants[task.tenant].listed.contains_key(number));
        listed || task.over_by(outcome.at)
    };
    // In doubt for the service: its start left in doubt by the provider's answer, or never sent
    // since its last claim (its run died between the claim and the start).
    let attempt = outcome.attempt();
    let doubted = in_doubt.contains(&attempt)
        || !(world.provider).started_since(&attempt, world.last_claim(&attempt));
    outcome.reason == Reason::NoOutcome && outcome.duration_seconds == 0 && doubted && never_again()
}

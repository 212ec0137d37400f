//! The promises, read from the provider's own log of what it placed and from the store, after
//! every step ([`Checker::check_step`]) and once every task is over ([`at_end`]):
//! - no attempt placed twice (the provider's calls counted, not its tokens), and no contact
//!   called more often than its task's `maxDialCount`;
//! - no call to a number on its tenant's do-not-call list since before the call (the listing
//!   racing a claim already taken is allowed one second: the claim checked the list);
//! - no call outside its tenant's calling hours in the called party's zone;
//! - no number called more often than its tenant's frequency cap, across tasks;
//! - the service's calls in flight within its cap at every step, and none left at the end;
//! - every call placed recorded exactly once, with its outcome: each task's counters (calls,
//!   successes, failures, no answers, seconds) equal those of the provider's calls of that task,
//!   so no outcome is recorded twice, none is lost, and no attempt is counted that placed no call.

use crate::provider::Placed;
use crate::world::World;
use chrono::{TimeZone, Timelike};
use outbound_model::call::{Outcome, Reason};
use outbound_model::task::CallCounters;
use std::collections::{BTreeMap, BTreeSet};

/// How long after a number is listed a call claimed before may still be placed.
const LISTING_RACE_MS: i64 = 1_000;

/// What the step checks have seen so far.
#[derive(Debug, Default)]
pub struct Checker {
    seen: usize,
    attempts: BTreeSet<(String, String, u32)>,
    per_contact: BTreeMap<(String, String), u32>,
    /// Each tenant's calls to each number, by time.
    by_number: BTreeMap<(usize, String), Vec<i64>>,
}

impl Checker {
    /// The promises a step may break: the calls placed since the last step, and capacity.
    pub async fn check_step(&mut self, world: &World) -> Result<(), String> {
        let placed = world.provider.placed();
        for call in &placed[self.seen..] {
            self.check_call(world, call)?;
        }
        self.seen = placed.len();
        let in_flight = world
            .engine
            .store
            .calls_in_flight()
            .await
            .map_err(|error| format!("read calls in flight: {error}"));
        // A read the storm's faults refused says nothing; the next step reads again.
        if let Ok(in_flight) = in_flight {
            let cap = world.engine.config.max_in_flight;
            if in_flight > cap {
                return Err(format!(
                    "{in_flight} calls in flight, over the service's {cap}"
                ));
            }
        }
        Ok(())
    }

    fn check_call(&mut self, world: &World, call: &Placed) -> Result<(), String> {
        let attempt = &call.attempt;
        let key = (
            attempt.task_id.as_str().to_owned(),
            attempt.contact_id.as_str().to_owned(),
            attempt.attempt,
        );
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
        if *count > task.max_dial {
            return Err(format!(
                "contact {} of task {} called {count} times, over maxDialCount {}",
                key.1, key.0, task.max_dial
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
        if let Some((start, end)) = tenant.calling_hours {
            let local = chrono::Utc
                .timestamp_millis_opt(call.at)
                .single()
                .ok_or("a call's time")?
                .with_timezone(zone);
            let minute = local.hour() * 60 + local.minute();
            if !(start..end).contains(&minute) {
                return Err(format!(
                    "{number} called at {local} outside calling hours: {call:?}"
                ));
            }
        }
        let times = self
            .by_number
            .entry((task.tenant, number.clone()))
            .or_default();
        times.push(call.at);
        if let Some((most, period)) = tenant.cap {
            let within = times.iter().filter(|at| **at > call.at - period).count();
            if within > most {
                return Err(format!(
                    "{number} called {within} times within the cap's period (at most {most})"
                ));
            }
        }
        Ok(())
    }
}

/// The promises of the end, once every task is over and the queues are drained.
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
    for task in &world.tasks {
        let stored = world.stored_task(task).await?;
        let mut provider = CallCounters::default();
        for call in placed
            .iter()
            .filter(|call| call.attempt.task_id.as_str() == task.id)
        {
            provider.calls += 1;
            provider.duration += call.report.duration;
            match call.report.outcome() {
                Outcome::Success => provider.success += 1,
                Outcome::Failed => provider.failed += 1,
                Outcome::NoAnswer => provider.no_answer += 1,
            }
        }
        // An attempt in doubt whose number was listed meanwhile is never sent again (D28): once
        // no call its first start placed may be live it is settled "no outcome", a failed
        // call the provider may never have placed.
        let tenant = &world.tenants[task.tenant];
        let contacts = (world.engine.store)
            .task_contacts(&world.tenant_of(task)?, &stored.id)
            .await
            .map_err(|error| format!("read a task's contacts: {error}"))?;
        let settled_in_doubt = contacts.iter().filter(|contact| {
            contact.last_reason == Some(Reason::NoOutcome)
                && world
                    .contacts
                    .get(contact.contact_id.as_str())
                    .is_some_and(|(number, _)| tenant.listed.contains_key(number))
                && !placed.iter().any(|call| {
                    call.attempt.task_id.as_str() == task.id
                        && call.attempt.contact_id == contact.contact_id
                        && call.attempt.attempt == contact.attempts
                })
        });
        let settled_in_doubt = settled_in_doubt.count() as u64;
        provider.calls += settled_in_doubt;
        provider.failed += settled_in_doubt;
        let recorded = CallCounters {
            abandoned: 0,
            ..stored.counters.clone()
        };
        if recorded != provider {
            let no_outcome: Vec<_> = (contacts.iter())
                .filter(|contact| contact.last_reason == Some(Reason::NoOutcome))
                .map(|contact| {
                    let number = world.contacts.get(contact.contact_id.as_str());
                    let listed = number.and_then(|(number, _)| tenant.listed.get(number));
                    let calls: Vec<_> = (placed.iter())
                        .filter(|call| call.attempt.contact_id == contact.contact_id)
                        .map(|call| (call.attempt.attempt, call.at, call.report.reason))
                        .collect();
                    format!(
                        "{} attempt {} (listed at {listed:?}; the provider's calls: {calls:?})",
                        contact.contact_id, contact.attempts
                    )
                })
                .collect();
            return Err(format!(
                "task {} ({:?}) recorded {recorded:?}; the provider's calls ended {provider:?}; \
                 contacts settled no outcome: {no_outcome:?}",
                task.id, stored.status
            ));
        }
        if stored.in_flight != 0 {
            return Err(format!(
                "task {} ends with {} in flight",
                task.id, stored.in_flight
            ));
        }
    }
    Ok(())
}

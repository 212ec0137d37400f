//! The tick (D13): which running tasks get a dial run this minute, with what share of the
//! calls in flight, and which calls in flight are reconciled; and the pace jobs that repeat its
//! pass over the agent-paced tasks at the later slots of the minute (D30). A pace shares the
//! service out among every running task, as the minute's pass does, and sends runs to the
//! agent-paced ones alone: shared among them only, an agent-paced tenant would top up past its
//! share three times a minute and the others meet a full service.

use super::Engine;
use outbound_adapters::aws::actions::Function;
use outbound_adapters::store::dialing::{RunningTask, SourceNow};
use outbound_adapters::telephony::provider::Provider;
use outbound_model::error::Error;
use outbound_model::job::{DialJob, RECALL_JOB_LOST_AFTER_MILLIS};
use outbound_model::plan::{window_open, Claimant};
use outbound_model::schedule::SCHEDULE_ENDED;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{HeldBack, TaskContact, TaskOperation, WindowZone};
use outbound_model::transition::Transition;
use outbound_model::{Id, Task, TaskStatus, Tenant, Timestamp};
use std::collections::HashMap;

/// What one tick did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    pub running: usize,
    /// Running tasks that may dial now: inside their window when it is read in the task's zone,
    /// every one whose window is read in each called party's (D15).
    pub in_window: usize,
    /// Of those, tasks with nothing due (D23): neither a share nor a dial run.
    pub idle: usize,
    /// Of those, tasks with work and no share this tick (D29): no dial run.
    pub starved: usize,
    /// Of those, agent-paced tasks with work whose queue had no agent for them (D30).
    pub no_agents: usize,
    pub dial_jobs: usize,
    /// Jobs that pace the agent-paced tasks again later in the minute (D30).
    pub pace_jobs: usize,
    pub reconcile_jobs: usize,
    /// Jobs that copy a tenant's do-not-call guards to the claim's own keys (D16).
    pub guard_jobs: usize,
    /// Tasks stopped at their schedule's end (D31).
    pub ended: usize,
    /// Snapshots of running tasks' counters kept for their history (D31).
    pub snapshots: usize,
}

/// How recent a running task's latest outcome must be for the tick to look at its history: a
/// snapshot the tick missed (a dropped tick, an outage) is kept by a later one within it.
const SNAPSHOT_LOOKBACK_MILLIS: i64 = 10 * 60_000;

/// Which tick: the minute's, or a pace of the agent-paced tasks between them (D30).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Minute,
    Pace,
}

impl<P: Provider> Engine<P> {
    /// The tick (D13): one dial job for every running task that may dial now, carrying its
    /// share of the calls in flight (between tenants by weight, then by priority), spread over
    /// the minute; one reconcile job for every call claimed longer ago than the reconcile time.
    /// Reads only the running-task and the calls-in-flight indexes, never every task.
    #[tracing::instrument(skip_all)]
    pub async fn tick(&self) -> Result<TickReport, Error> {
        Function::DialerTick
            .scope(self.run_tick(Pass::Minute))
            .await
    }

    /// The tick again for the agent-paced tasks alone (D30), at a later slot of its minute: their
    /// queues read anew, their shares and caps, a dial run each at once. Nothing else of the
    /// tick (reconcile, recalls, the other tasks) is done twice.
    #[tracing::instrument(skip_all)]
    pub async fn pace(&self) -> Result<TickReport, Error> {
        self.run_tick(Pass::Pace).await
    }

    async fn run_tick(&self, pass: Pass) -> Result<TickReport, Error> {
        let now = self.clock.now();
        // The shards are read at once: the tick's time does not grow with their number.
        let mut running: Vec<RunningTask> = Box::pin(self.store.running_tasks()).await?;
        let mut report = TickReport {
            running: running.len(),
            ..TickReport::default()
        };
        // A task whose schedule has ended is stopped (D31): its calls in flight end as they
        // would, recorded by their outcomes.
        if pass == Pass::Minute {
            report.ended = self.stop_ended(&running, now).await;
            report.snapshots = Box::pin(self.keep_snapshots(&running, now)).await;
        }
        // A task whose daily window, read in its zone, is all that holds it back dials its
        // callbacks due (D31: the person asked for that time).
        let callbacks_only = Box::pin(self.callbacks_due_outside_window(&running, now)).await?;
        running.retain(|r| {
            r.task.status == TaskStatus::Running
                && match self.reach(&r.task, now) {
                    Some(Reach::Everyone) => true,
                    Some(Reach::Callbacks) => callbacks_only.contains_key(&r.task.id),
                    None => false,
                }
        });
        // A pace sends runs to the agent-paced tasks alone, each to its share of all of them.
        let runs_here = |r: &RunningTask| pass == Pass::Minute || r.task.settings.agents.is_some();
        report.in_window = running.len();
        // Every running task's data source and tenant rules, read at once.
        // Boxed: inline, the tick's future is too deep for the layout query of its function.
        let sources = Box::pin(self.sources_now(&running)).await?;
        let source_of = |r: &RunningTask| {
            sources
                .get(&(r.tenant.clone(), r.task.data_source_id.clone()))
                .copied()
        };
        // A task with nothing due asks for nothing: no share, no dial run (D23), unless
        // contacts were added or the rules it was judged under changed since (D24).
        running.retain(|r| {
            !r.task.idle_at(now)
                || source_of(r).is_some_and(|now| now.judged.moved_since(&r.task.idle_judged()))
        });
        report.idle = report.in_window - running.len();
        // The calls in flight due a look (D28), read before the shares: a start in doubt that
        // gave back its places is sent again by its reconcile job, and takes a place again.
        let stale = match pass {
            Pass::Minute => Box::pin(self.store.stale_calls(now)).await?,
            Pass::Pace => Vec::new(),
        };
        let mut resent: HashMap<Id, u32> = HashMap::new();
        for (_, task_id, state) in &stale {
            if state.released && state.call_id.is_none() {
                *resent.entry(task_id.clone()).or_default() += 1;
            }
        }
        // What a task can use (D23): its calls in flight and its contacts due now, at most its
        // cap; a task whose contacts are all final asks for nothing but its completion.
        let demands =
            Box::pin(self.demands(&running, &source_of, &resent, &callbacks_only, now)).await?;
        let demand = |r: &RunningTask| -> u32 { demands.get(&r.task.id).copied().unwrap_or(0) };
        let mut jobs = Vec::new();
        if !running.is_empty() {
            let asks: Vec<(&RunningTask, u32)> = running.iter().map(|r| (r, demand(r))).collect();
            // An agent-paced task asks for no more than its queue's agents allow (D30).
            let (caps, agents_read_at) = Box::pin(self.agent_caps(&asks)).await;
            let asks: Vec<(&RunningTask, u32)> = (asks.into_iter())
                .map(|(r, wants)| (r, caps.get(&r.task.id).map_or(wants, |cap| wants.min(*cap))))
                .collect();
            let shares: Vec<(&RunningTask, u32)> = self
                .config
                .fairness()
                .share_out(&asks, claimant)
                .into_iter()
                .map(|((r, _), share)| (*r, share))
                .collect();
            let shares = within_workers(shares, self.config.dial_workers, |r| &r.tenant);
            let runs = self.config.runs_per_tick.max(1);
            let spacing = self.pace_slot_seconds();
            let (mut starved, mut no_agents) = (Vec::new(), Vec::new());
            for (r, budget) in shares.iter().filter(|(r, _)| runs_here(r)) {
                if *budget > 0 {
                    continue;
                }
                if demand(r) > 0 {
                    // No agent for it (D30), or no room in its share (D29): no dial job, and its
                    // diagnostics say which.
                    if caps.get(&r.task.id) == Some(&0) {
                        no_agents.push(*r);
                    } else if pass == Pass::Minute {
                        starved.push(*r);
                    }
                } else if r.task.in_flight == 0 && pass == Pass::Minute {
                    // Nothing left to call, as its counters say: one run that checks whether it
                    // is complete, with room for one call should a contact be due after all
                    // (the claim's caps still hold the service's).
                    jobs.push((
                        DialJob::Dial {
                            tenant: r.tenant.clone(),
                            task_id: r.task.id.clone(),
                            budget: 1,
                            paced_at: None,
                        },
                        0,
                    ));
                }
            }
            report.starved = starved.len();
            report.no_agents = no_agents.len();
            Box::pin(self.mark_held_back(&starved, HeldBack::Capacity, now)).await?;
            Box::pin(self.mark_held_back(&no_agents, HeldBack::NoAgents, now)).await?;
            for run in 0..runs {
                for (r, budget) in (shares.iter()).filter(|(r, budget)| *budget > 0 && runs_here(r))
                {
                    // An agent-paced task's share is its pace against the agents as read now
                    // (D30): one run, at once. A later run would top it up from a reading of
                    // agents that has passed, replacing abandoned calls with more of them; the
                    // later slots pace it anew instead (`DialJob::Pace`).
                    if run > 0 && r.task.settings.agents.is_some() {
                        continue;
                    }
                    // The first run at once; the later ones each at a point of their slot of
                    // the minute set by the task, so the runs of many tasks do not all wake
                    // on the same second and meet on the same items.
                    let delay = match run {
                        0 => 0,
                        _ => spacing * run + spread(&r.task.id, spacing),
                    };
                    jobs.push((
                        DialJob::Dial {
                            tenant: r.tenant.clone(),
                            task_id: r.task.id.clone(),
                            budget: *budget,
                            paced_at: (r.task.settings.agents.is_some())
                                .then_some(agents_read_at.unwrap_or(now)),
                        },
                        delay,
                    ));
                }
            }
            report.dial_jobs = jobs.len();
            // The agent-paced tasks are paced anew at each later slot of the minute (D30), from a
            // new reading of their queues: one job a slot for all of them.
            if pass == Pass::Minute && running.iter().any(|r| r.task.settings.agents.is_some()) {
                for run in 1..runs {
                    jobs.push((DialJob::Pace, spacing * run));
                    report.pace_jobs += 1;
                }
            }
        }
        if pass == Pass::Minute {
            jobs.extend(lost_and_stale_jobs(&running, stale, now, &mut report));
        }
        if pass == Pass::Minute {
            let guards = guard_jobs(&sources);
            report.guard_jobs = guards.len();
            jobs.extend(guards);
        }
        self.send_jobs(jobs).await?;
        tracing::info!(?report, ?pass, "tick");
        Ok(report)
    }

    /// Stops each running task whose schedule's end has come (D31), with `stopReason`
    /// `schedule ended`: the tasks stopped. A stop that fails is tried again by the next tick
    /// (the run places no call meanwhile: its schedule is closed); one another request made
    /// first (a stop, a pause) stands.
    async fn stop_ended(&self, running: &[RunningTask], now: Timestamp) -> usize {
        let ended = running.iter().filter(|r| {
            r.task.status == TaskStatus::Running
                && r.task.settings.schedule.ended(now)
                && !planted(Bug::ScheduleIgnored)
        });
        let mut stopped = 0;
        for r in ended {
            let mut stop = Transition::of(TaskOperation::Stop, now);
            stop.stop_reason = Some(SCHEDULE_ENDED.to_owned());
            match self.store.transition(&r.tenant, &r.task, &stop).await {
                Ok(_) => stopped += 1,
                Err(Error::NotAllowed(_)) => {}
                Err(error) => tracing::warn!(%error, task = %r.task.id, "schedule end not written"),
            }
        }
        stopped
    }

    /// Keeps a snapshot of the counters of every running task with an outcome in the last
    /// [`SNAPSHOT_LOOKBACK_MILLIS`] whose counters moved since its newest (D31's history): at
    /// most one write per task a minute, and none for a task without new outcomes. A failure
    /// makes one interval of the history longer, never a count wrong: the next snapshot holds
    /// the totals.
    async fn keep_snapshots(&self, running: &[RunningTask], now: Timestamp) -> usize {
        let recent = running.iter().filter(|r| {
            r.task
                .last_outcome_at
                .is_some_and(|at| at.0 >= now.0 - SNAPSHOT_LOOKBACK_MILLIS)
        });
        let kept = futures::future::join_all(
            recent.map(|r| self.store.keep_snapshot(&r.tenant, &r.task, now)),
        )
        .await;
        kept.into_iter()
            .filter(|kept| match kept {
                Ok(snapshot) => snapshot.is_some(),
                Err(error) => {
                    tracing::warn!(%error, "a task's history snapshot not kept");
                    false
                }
            })
            .count()
    }

    /// The running tasks whose daily window, read in the task's zone, is all that keeps them
    /// from dialling now, with callbacks due by the next tick (D31: the window does not hold a
    /// callback's call), and how many (at most the per-task cap): one Query of the waiting
    /// index's rank 0 for each such task, none for the others.
    async fn callbacks_due_outside_window(
        &self,
        running: &[RunningTask],
        now: Timestamp,
    ) -> Result<HashMap<Id, u32>, Error> {
        let next_tick = Timestamp(now.0 + 60_000);
        let limit = self.config.max_in_flight_per_task as usize;
        let reads = running
            .iter()
            .filter(|r| {
                r.task.status == TaskStatus::Running
                    && self.reach(&r.task, now) == Some(Reach::Callbacks)
            })
            .map(|r| async move {
                let due = (self.store)
                    .due_callbacks(&r.tenant, &r.task.id, next_tick, limit)
                    .await?;
                Ok::<_, Error>((r.task.id.clone(), u32::try_from(due.len()).unwrap_or(0)))
            });
        Ok(futures::future::try_join_all(reads)
            .await?
            .into_iter()
            .filter(|(_, due)| *due > 0)
            .collect())
    }

    /// Each task's demand (D23): its calls in flight plus its contacts due now (those never
    /// dialled, which the counters tell: the data source's contacts less those final, waiting
    /// or in flight; and those waiting whose call is due before the next tick), at most the
    /// per-task cap; all of it while a large recall is applied (D12: its contacts come due as
    /// its job goes). The waiting ones are read only when the never-dialled do not already fill
    /// the cap, and then at most as many as would: a task's first ticks read nothing more, its
    /// last ones a Query per rank bounded by the cap. The starts in doubt that gave back their
    /// places and are sent again by this tick's reconcile jobs (`resent`, by task) count as in
    /// flight: each takes its place again.
    async fn demands(
        &self,
        running: &[RunningTask],
        source_of: &(impl Fn(&RunningTask) -> Option<SourceNow> + Sync),
        resent: &HashMap<Id, u32>,
        callbacks_only: &HashMap<Id, u32>,
        now: Timestamp,
    ) -> Result<HashMap<Id, u32>, Error> {
        let per_task = self.config.max_in_flight_per_task;
        let next_tick = Timestamp(now.0 + 60_000);
        let asks = running.iter().map(|r| async move {
            // Outside its window (D31): its calls in flight and its callbacks due, no more.
            if let Some(callbacks) = callbacks_only.get(&r.task.id) {
                let demand = r.task.in_flight.saturating_add(*callbacks);
                return Ok::<_, Error>((r.task.id.clone(), demand.min(per_task)));
            }
            let Some(source) = source_of(r) else {
                return Ok::<_, Error>((r.task.id.clone(), r.task.in_flight.min(per_task)));
            };
            // A large recall being applied (D12) makes its contacts due as its job goes: the
            // task asks for its cap until it is done.
            if r.task.pending_recall.is_some() {
                return Ok((r.task.id.clone(), per_task));
            }
            let never = (source.contacts)
                .saturating_sub(r.settled + r.waiting + u64::from(r.task.in_flight));
            let never = u32::try_from(never).unwrap_or(u32::MAX);
            // Its starts in doubt sent again this tick (counted among its waiting contacts
            // meanwhile) take their places again.
            let resent = resent.get(&r.task.id).copied().unwrap_or(0);
            let in_flight = r.task.in_flight.saturating_add(resent);
            let room = per_task.saturating_sub(in_flight.saturating_add(never));
            let due = if room > 0 && r.waiting > 0 {
                let found = (self.store)
                    .due_retries(
                        &r.tenant,
                        &r.task.id,
                        next_tick,
                        room as usize,
                        source.judged.rules_at,
                    )
                    .await?;
                u32::try_from(found.len()).unwrap_or(u32::MAX)
            } else {
                0
            };
            let demand = in_flight.saturating_add(never).saturating_add(due);
            Ok((r.task.id.clone(), demand.min(per_task)))
        });
        futures::future::try_join_all(asks)
            .await
            .map(|demands| demands.into_iter().collect())
    }

    /// What each running task's data source and tenant say now (D23, D24): its count of
    /// contacts, for its demand, and whether its data source gained contacts or its rules
    /// changed since a run marked it idle, so new work is dialled at this tick, not when the mark
    /// runs out. One BatchGetItem per 100 items.
    async fn sources_now(
        &self,
        running: &[RunningTask],
    ) -> Result<HashMap<(Tenant, Id), SourceNow>, Error> {
        if running.is_empty() {
            return Ok(HashMap::new());
        }
        let wanted: Vec<(&Tenant, &Id)> = running
            .iter()
            .map(|r| (&r.tenant, &r.task.data_source_id))
            .collect();
        self.store.judged_now(&wanted).await
    }

    /// Marks tasks the tick gave no share while they had work (D29: no dial job), so their
    /// diagnostics say `CAPACITY`, or whose queue had no agent for them (D30: `NO_AGENTS`); a
    /// task marked so within the last tick is not written again.
    async fn mark_held_back(
        &self,
        tasks: &[&RunningTask],
        by: HeldBack,
        now: Timestamp,
    ) -> Result<(), Error> {
        for r in tasks {
            if r.task.held_back(by).is_some_and(|at| now.0 - at.0 < 60_000) {
                continue;
            }
            self.store
                .mark_held_back(&r.tenant, &r.task, by, now)
                .await?;
        }
        Ok(())
    }

    async fn send_jobs(&self, jobs: Vec<(DialJob, u32)>) -> Result<(), Error> {
        // Refused entries are sent again by the next tick: a lost job delays a task one tick.
        self.dial_jobs.send_batch(jobs).await.map(drop)
    }

    /// Which of `task`'s contacts a run may call at `now`: none outside its schedule (D31); its
    /// callbacks alone while its daily window, read in the task's zone, is closed (the window is
    /// the task's alone, D13, and does not hold a callback's call, D31); otherwise every
    /// contact due (a window read in each contact's zone is checked per contact).
    pub(super) fn reach(&self, task: &Task, now: Timestamp) -> Option<Reach> {
        if !task.settings.schedule.open(now) && !planted(Bug::ScheduleIgnored) {
            return None;
        }
        if task.settings.window_zone == WindowZone::CalledParty
            || window_open(&task.settings, self.zone, now)
        {
            Some(Reach::Everyone)
        } else {
            Some(Reach::Callbacks)
        }
    }
}

/// Which of a task's contacts a dial run may call now ([`Engine::reach`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reach {
    /// Every contact due: the task's window is open, or read in each called party's zone.
    Everyone,
    /// Its callbacks due alone: its daily window, read in the task's zone, is closed (D31).
    Callbacks,
}

/// The tick's other jobs: a large recall whose job was lost, sent again after a minute (D12);
/// and a reconcile of each call in flight `stale` holds.
fn lost_and_stale_jobs(
    running: &[RunningTask],
    stale: Vec<(Tenant, Id, TaskContact)>,
    now: Timestamp,
    report: &mut TickReport,
) -> Vec<(DialJob, u32)> {
    let mut jobs = Vec::new();
    for r in running {
        if let (Some(recall), Some(at)) = (&r.task.pending_recall, r.task.pending_recall_at) {
            if now.0 - at.0 > RECALL_JOB_LOST_AFTER_MILLIS {
                jobs.push((
                    DialJob::Recall {
                        tenant: r.tenant.clone(),
                        task_id: r.task.id.clone(),
                        recall_id: recall.clone(),
                    },
                    0,
                ));
            }
        }
    }
    for (tenant, task_id, state) in stale {
        if let Some(attempt) = state.in_call {
            report.reconcile_jobs += 1;
            jobs.push((
                DialJob::Reconcile {
                    tenant,
                    task_id,
                    contact_id: state.contact_id,
                    attempt,
                },
                0,
            ));
        }
    }
    jobs
}

/// What the tick knows of a running task and its demand when it shares out (D13).
pub(super) fn claimant<'a>((r, demand): &'a (&RunningTask, u32)) -> Claimant<'a> {
    Claimant {
        tenant: &r.tenant,
        priority: r.task.settings.priority,
        id: &r.task.id,
        demand: Some(*demand),
    }
}

/// A second in `0..spacing` fixed by the task: the same for every tick, different between tasks.
/// The shares with each tenant's tasks that get a dial job bounded by its share of the dial
/// workers (D29): a tenant holding `n` of the `total` calls in flight the shares give out may
/// have `ceil(workers * n / total)` tasks dialling this tick (at least one), its tasks with the
/// largest shares first (then in D13's order, as the shares come); the others get no share this
/// tick (the tick marks them held back). Without it a tenant with many small tasks would take
/// the queue's workers from the others whatever its calls.
fn within_workers<T>(
    mut shares: Vec<(T, u32)>,
    workers: u32,
    tenant_of: impl Fn(&T) -> &Tenant,
) -> Vec<(T, u32)> {
    let total: u64 = shares.iter().map(|(_, share)| u64::from(*share)).sum();
    if total == 0 {
        return shares;
    }
    let mut held: HashMap<Tenant, u64> = HashMap::new();
    for (task, share) in &shares {
        *held.entry(tenant_of(task).clone()).or_default() += u64::from(*share);
    }
    let allowed = |tenant: &Tenant| -> usize {
        let of_workers = (u64::from(workers) * held[tenant]).div_ceil(total).max(1);
        usize::try_from(of_workers).unwrap_or(usize::MAX)
    };
    let mut order: Vec<usize> = (0..shares.len()).collect();
    // Stable: equal shares keep the order the shares came in.
    order.sort_by_key(|&at| std::cmp::Reverse(shares[at].1));
    let mut dialling: HashMap<Tenant, usize> = HashMap::new();
    for at in order {
        if shares[at].1 == 0 {
            continue;
        }
        let tenant = tenant_of(&shares[at].0).clone();
        let count = dialling.entry(tenant.clone()).or_default();
        if *count < allowed(&tenant) {
            *count += 1;
        } else {
            shares[at].1 = 0;
        }
    }
    shares
}

fn spread(task: &Id, spacing: u32) -> u32 {
    let hash = task.as_str().bytes().fold(0u32, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u32::from(byte))
    });
    hash % spacing.max(1)
}

/// One job for each tenant read whose claims still check its do-not-call guards in its partition
/// (D16): it copies them to the claim's own keys, a bounded part a job, and marks the tenant
/// once all are ([`outbound_adapters::store::Store::guard_numbers_apart`]). Until then, claims
/// check the guards every add and delete keeps.
fn guard_jobs(sources: &HashMap<(Tenant, Id), SourceNow>) -> Vec<(DialJob, u32)> {
    let mut tenants: Vec<&Tenant> = sources
        .iter()
        .filter(|(_, now)| !now.guards_apart)
        .map(|((tenant, _), _)| tenant)
        .collect();
    tenants.sort();
    tenants.dedup();
    tenants
        .into_iter()
        .map(|tenant| {
            let job = DialJob::GuardNumbers {
                tenant: tenant.clone(),
            };
            (job, 0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(name: &str) -> Tenant {
        Tenant::parse(name).unwrap()
    }

    /// D16: one guard job a tick for each tenant read whose claims still check the guards in
    /// its partition, however many of its data sources the tick read; none for a tenant whose
    /// guards are copied.
    #[test]
    fn one_guard_job_for_each_tenant_not_yet_copied() {
        let now = |guards_apart| SourceNow {
            judged: outbound_model::task::Judged {
                rules_at: Timestamp(0),
                contacts_added: 0,
            },
            contacts: 1,
            guards_apart,
        };
        let (old, copied) = (tenant("old"), tenant("copied"));
        let sources: HashMap<(Tenant, Id), SourceNow> = [
            ((old.clone(), Id::new()), now(false)),
            ((old.clone(), Id::new()), now(false)),
            ((copied.clone(), Id::new()), now(true)),
        ]
        .into();
        let jobs = guard_jobs(&sources);
        assert_eq!(jobs, vec![(DialJob::GuardNumbers { tenant: old }, 0)]);
    }

    /// D29: a tenant's tasks dialling in one tick stay within its share of the dial workers,
    /// its largest shares first; another tenant's are untouched, and a tenant holding any share
    /// keeps one task dialling.
    #[test]
    fn a_tenants_jobs_stay_within_its_share_of_the_workers() {
        let (many, few) = (tenant("many"), tenant("few"));
        // "many": 8 tasks holding 1 call each and one holding 4; "few": one task holding 4.
        let mut shares: Vec<((Tenant, &str), u32)> = (0..8)
            .map(|n| {
                (
                    (many.clone(), ["a", "b", "c", "d", "e", "f", "g", "h"][n]),
                    1,
                )
            })
            .collect();
        shares.push(((many.clone(), "big"), 4));
        shares.push(((few.clone(), "only"), 4));
        // 16 calls shared out, 4 workers: "many" holds 12 of 16 (3 workers), "few" 4 (1).
        let kept = within_workers(shares.clone(), 4, |(tenant, _)| tenant);
        let dialling: Vec<&str> = kept
            .iter()
            .filter(|(_, share)| *share > 0)
            .map(|((_, task), _)| *task)
            .collect();
        assert_eq!(dialling, ["a", "b", "big", "only"]);
        // As many workers as calls: nothing is cut.
        assert_eq!(
            within_workers(shares.clone(), 16, |(tenant, _)| tenant),
            shares
        );
        // One worker: each tenant still has a task dialling.
        let one = within_workers(shares, 1, |(tenant, _)| tenant);
        let dialling: Vec<&str> = one
            .iter()
            .filter(|(_, share)| *share > 0)
            .map(|((_, task), _)| *task)
            .collect();
        assert_eq!(dialling, ["big", "only"]);
    }
}

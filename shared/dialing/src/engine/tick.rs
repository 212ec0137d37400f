//! The tick (D13): which running tasks get a dial run this minute, with what share of the
//! calls in flight, and which calls in flight are reconciled.

use super::Engine;
use crate::plan::{window_open, Claimant, Fairness};
use crate::provider::Provider;
use outbound_adapters::aws::actions::Function;
use outbound_adapters::store::dialing::RunningTask;
use outbound_adapters::store::keys;
use outbound_model::error::Error;
use outbound_model::job::DialJob;
use outbound_model::task::WindowZone;
use outbound_model::{Id, Task, TaskStatus, Tenant, Timestamp};
use std::collections::HashSet;

/// What one tick did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    pub running: usize,
    /// Running tasks that may dial now: inside their window when it is read in the task's zone,
    /// every one whose window is read in each called party's (D15).
    pub in_window: usize,
    /// Of those, tasks with nothing due (D23): neither a share nor a dial run.
    pub idle: usize,
    pub dial_jobs: usize,
    pub reconcile_jobs: usize,
}

impl<P: Provider> Engine<P> {
    /// The tick (D13): one dial job for every running task that may dial now, carrying its
    /// share of the calls in flight (between tenants by weight, then by priority), spread over
    /// the minute; one reconcile job for every call claimed longer ago than the reconcile time.
    /// Reads only the running-task and the calls-in-flight indexes, never every task.
    #[tracing::instrument(skip_all)]
    pub async fn tick(&self) -> Result<TickReport, Error> {
        Function::DialerTick.scope(self.run_tick()).await
    }

    async fn run_tick(&self) -> Result<TickReport, Error> {
        let now = self.clock.now();
        // The shards are read at once: the tick's time does not grow with their number.
        let shards = (0..keys::INDEX_PARTITIONS).map(|shard| self.store.running_tasks(shard));
        let mut running: Vec<RunningTask> = futures::future::try_join_all(shards)
            .await?
            .into_iter()
            .flatten()
            .collect();
        let mut report = TickReport {
            running: running.len(),
            ..TickReport::default()
        };
        running.retain(|r| r.task.status == TaskStatus::Running && self.may_dial_now(&r.task, now));
        report.in_window = running.len();
        // A task with nothing due asks for nothing: no share, no dial run (D23), unless
        // contacts were added or the rules it was judged under changed since (D24).
        // Boxed: inline, the tick's future is too deep for the layout query of its function.
        let changed = Box::pin(self.woken_since_idle(&running, now)).await?;
        running.retain(|r| !r.task.idle_at(now) || changed.contains(&r.task.id));
        report.idle = report.in_window - running.len();
        let mut jobs = Vec::new();
        if !running.is_empty() {
            fn claimant(r: &RunningTask) -> Claimant<'_> {
                Claimant {
                    tenant: &r.tenant,
                    priority: r.task.settings.priority,
                    id: &r.task.id,
                }
            }
            let shares = Fairness::of(&self.config).share_out(&running, claimant);
            let runs = self.config.runs_per_tick.max(1);
            let spacing = 60 / runs;
            for run in 0..runs {
                for (r, budget) in &shares {
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
                        },
                        delay,
                    ));
                }
            }
            report.dial_jobs = jobs.len();
        }
        // A large recall whose job was lost is sent again after a minute (D12).
        for r in &running {
            if let (Some(recall), Some(at)) = (&r.task.pending_recall, r.task.pending_recall_at) {
                if now.0 - at.0 > 60_000 {
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
        // Each call in flight is due a look at a time of its own: a claim whose provider id was
        // not saved soon after it (in doubt, D28), a placed call a reconcile time after it.
        let shards = (0..keys::INDEX_PARTITIONS).map(|shard| self.store.stale_calls(shard, now));
        for stale in futures::future::try_join_all(shards).await? {
            for (tenant, task_id, state) in stale {
                if let Some(attempt) = state.in_call {
                    report.reconcile_jobs += 1;
                    jobs.push((
                        DialJob::Reconcile {
                            tenant: tenant.clone(),
                            task_id,
                            contact_id: state.contact_id,
                            attempt,
                        },
                        0,
                    ));
                }
            }
        }
        self.send_jobs(jobs).await?;
        tracing::info!(?report, "tick");
        Ok(report)
    }

    /// The idle tasks among `running` whose data source gained contacts (D23) or whose tenant
    /// settings or data source changed (D24) after the run that marked them idle judged them:
    /// the new work is dialled at this tick, not when the mark runs out. Reads only when some
    /// task is idle.
    async fn woken_since_idle(
        &self,
        running: &[RunningTask],
        now: Timestamp,
    ) -> Result<HashSet<Id>, Error> {
        let idle: Vec<&RunningTask> = running.iter().filter(|r| r.task.idle_at(now)).collect();
        if idle.is_empty() {
            return Ok(HashSet::new());
        }
        let wanted: Vec<(&Tenant, &Id)> = idle
            .iter()
            .map(|r| (&r.tenant, &r.task.data_source_id))
            .collect();
        let now_judged = self.store.judged_now(&wanted).await?;
        Ok(idle
            .into_iter()
            .filter(|r| {
                now_judged
                    .get(&(r.tenant.clone(), r.task.data_source_id.clone()))
                    .is_some_and(|judged| judged.moved_since(&r.task.idle_judged()))
            })
            .map(|r| r.task.id.clone())
            .collect())
    }

    async fn send_jobs(&self, jobs: Vec<(DialJob, u32)>) -> Result<(), Error> {
        // Refused entries are sent again by the next tick: a lost job delays a task one tick.
        self.dial_jobs.send_batch(jobs).await.map(drop)
    }

    /// Whether a run of `task` may find anything to call at `now`: a window read in the task's
    /// zone is the task's alone (D13); one read in each contact's zone is checked per contact.
    pub(super) fn may_dial_now(&self, task: &Task, now: Timestamp) -> bool {
        task.settings.window_zone == WindowZone::CalledParty
            || window_open(&task.settings, self.zone, now)
    }
}

/// A second in `0..spacing` fixed by the task: the same for every tick, different between tasks.
fn spread(task: &Id, spacing: u32) -> u32 {
    let hash = task.as_str().bytes().fold(0u32, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u32::from(byte))
    });
    hash % spacing.max(1)
}

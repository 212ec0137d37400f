//! The engine's three entry points, one per function, each safe to run any number of times at
//! once: [`Engine::tick`] (dialer-tick: the running tasks inside their window, one dial job each,
//! and the calls in flight too long, one reconcile job each), [`Engine::run_job`] (dialer: one
//! task's due contacts claimed and called, or one lost outcome reconciled) and
//! [`Engine::call_event`] (call-events: an outcome recorded exactly once).

use super::local_time::{contact_zones, Windows};
use super::plan::{due_contacts, window_open, Claimant, Clock, Fairness, SystemClock};
use super::provider::{Busy, CallRequest, CallStatus, PlaceError, Provider, ServiceRefusal};
use super::simulated::SimulatedEvent;
use super::telephony::Telephony;
use chrono_tz::Tz;
use outbound_adapters::queue::{self, Queue};
use outbound_adapters::store::dialing::{
    Attempts, Caps, ClaimRefused, FrequencyClaim, Gate, RecordFailure, RunningTask, Skipped,
    SKIPS_IN_ONE,
};
use outbound_adapters::store::{keys, Store};
use outbound_app::config::dialing::DialerConfig;
use outbound_app::App;
use outbound_model::call::{CallAttempt, CallRef, CallReport, Due, Fresh, Outcome, Skip, Target};
use outbound_model::dnc::listed_forms;
use outbound_model::error::ConfigError;
use outbound_model::error::Error;
use outbound_model::job::{DialJob, RecallManifest};
use outbound_model::numbers::{e164, Country};
use outbound_model::settings::FrequencyCap;
use outbound_model::task::WindowZone;
use outbound_model::task::{SweepMark, TaskContact};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use outbound_telemetry::Unit;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one tick did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    pub running: usize,
    /// Running tasks that may dial now: inside their window when it is read in the task's zone,
    /// every one whose window is read in each called party's (D15).
    pub in_window: usize,
    pub dial_jobs: usize,
    pub reconcile_jobs: usize,
}

/// What one dial run did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DialReport {
    pub placed: usize,
    pub completed: bool,
}

/// How long one dial run may wait for the provider rate before it leaves the rest to the next.
const RUN_DEADLINE: Duration = Duration::from_secs(20);
/// Quota refusals in a row, with nothing else in flight, that mean a quota is missing.
const QUOTA_TRIES: u32 = 5;
/// How long a contact whose call the provider refused for rate or capacity waits.
const BUSY_RETRY: Duration = Duration::from_secs(5);

/// Configuration, clients and the provider, built once per cold start.
pub struct Engine<P> {
    pub store: Store,
    pub provider: P,
    pub config: DialerConfig,
    /// The service zone (D4), for tasks without their own.
    pub zone: Tz,
    /// Where the tick sends its dial and reconcile jobs.
    pub dial_jobs: Queue<DialJob>,
    /// Where large recalls keep their lists of contacts.
    pub blob: outbound_adapters::blob::Blob,
    pub clock: Arc<dyn Clock>,
}

impl Engine<Telephony> {
    /// The engine as configured: the configured provider and the system clock.
    pub fn from_app(app: &App) -> Result<Self, ConfigError> {
        Ok(Self::over(
            app,
            Telephony::from_app(app)?,
            Arc::new(SystemClock),
        ))
    }
}

impl<P> Engine<P> {
    /// The engine over `app`'s store, bucket and dial queue, with `provider` and `clock`.
    pub fn over(app: &App, provider: P, clock: Arc<dyn Clock>) -> Self {
        Engine {
            store: app.store.clone(),
            provider,
            config: app.config.dialing.clone(),
            zone: app.config.time_zone,
            dial_jobs: app.dial_jobs.clone(),
            blob: app.blob.clone(),
            clock,
        }
    }

    /// The same engine with another provider, made from the configured one (tests wrap it to
    /// record calls, or replace it with one that refuses).
    pub fn with_provider<Q>(self, provider: impl FnOnce(P) -> Q) -> Engine<Q> {
        Engine {
            provider: provider(self.provider),
            store: self.store,
            config: self.config,
            zone: self.zone,
            dial_jobs: self.dial_jobs,
            blob: self.blob,
            clock: self.clock,
        }
    }
}

enum Step {
    /// The contact is settled for the cursor: claimed by this run or another.
    Settled { placed: bool },
    /// Not called (D18): written with the run's other skips, settled for the cursor.
    Skipped(Skip, Option<Timestamp>),
    /// Not settled, but the run goes on with the next contact (its number's count of attempts
    /// moved under a concurrent claim).
    Later,
    /// Nothing more for this run.
    Stop,
}

/// What the tenant's settings and the task's data source say of its calls (D14-D17).
struct Rules {
    windows: Windows,
    country: Option<Country>,
    cap: Option<FrequencyCap>,
}

/// One due contact's number as the rules read it.
struct Callee {
    target: Target,
    e164: Option<String>,
    /// Its time zones (D15).
    zones: Vec<Tz>,
    /// The form its attempts are counted under for the frequency cap (D17).
    counted: String,
}

impl Callee {
    fn of(target: &Target, rules: &Rules) -> Self {
        let e164 = e164(&target.phone, rules.country);
        Callee {
            zones: contact_zones(
                target.time_zone.as_deref(),
                e164.as_deref(),
                rules.windows.task_zone,
            ),
            counted: e164
                .clone()
                .unwrap_or_else(|| target.phone.as_str().to_owned()),
            e164,
            target: target.clone(),
        }
    }
}

impl<P: Provider> Engine<P> {
    fn caps(&self) -> Caps {
        Caps {
            per_task: self.config.max_in_flight_per_task,
            total: self.config.max_in_flight,
            rate_per_second: self.config.rate_per_second,
        }
    }

    /// The tick (D13): one dial job for every running task that may dial now, carrying its
    /// share of the calls in flight (between tenants by weight, then by priority), spread over
    /// the minute; one reconcile job for every call claimed longer ago than the reconcile time.
    /// Reads only the running-task and the calls-in-flight indexes, never every task.
    #[tracing::instrument(skip_all)]
    pub async fn tick(&self) -> Result<TickReport, Error> {
        let now = self.clock.now();
        // The shards are read at once: the tick's time does not grow with their number.
        let shards = (0..keys::SHARDS).map(|shard| self.store.running_tasks(shard));
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
        let stale_before = Timestamp(now.0 - self.config.reconcile_after.as_millis() as i64);
        let shards = (0..keys::SHARDS).map(|shard| self.store.stale_calls(shard, stale_before));
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

    async fn send_jobs(&self, jobs: Vec<(DialJob, u32)>) -> Result<(), Error> {
        // Refused entries are sent again by the next tick: a lost job delays a task one tick.
        self.dial_jobs.send_batch(jobs).await.map(drop)
    }

    /// One message of the dial queue.
    pub async fn run_job(&self, body: &str) -> Result<(), Error> {
        let job: DialJob = queue::decode(body)?;
        match job {
            DialJob::Dial {
                tenant,
                task_id,
                budget,
            } => self.dial(&tenant, &task_id, budget).await.map(drop),
            DialJob::Recall {
                tenant,
                task_id,
                recall_id,
            } => self.apply_recall(&tenant, &task_id, &recall_id).await,
            DialJob::Reconcile {
                tenant,
                task_id,
                contact_id,
                attempt,
            } => {
                self.reconcile(&tenant, &task_id, &contact_id, attempt)
                    .await
            }
        }
    }

    /// Calls up to `budget` due contacts of one task (D13), each only when its window is open in
    /// its local time (D15), its number is not on the do-not-call list (D16) and under the
    /// frequency cap (D17); then, when nothing is left to call or in flight, completes it.
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn dial(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        budget: u32,
    ) -> Result<DialReport, Error> {
        let mut report = DialReport::default();
        let task = match self.store.task(tenant, task_id).await {
            Ok(task) => task,
            Err(Error::NotFound(_)) => return Ok(report),
            Err(error) => return Err(error),
        };
        let now = self.clock.now();
        if task.status != TaskStatus::Running || !self.may_dial_now(&task, now) {
            return Ok(report);
        }
        // The budget is the task's share of calls in flight: this run tops it up to its share,
        // so calls ended since the tick are replaced at once (D13).
        let room = budget
            .min(self.config.max_in_flight_per_task)
            .saturating_sub(task.in_flight) as usize;
        // Nothing to place and, with calls in flight, nothing to complete: no contact need be
        // read (a read in contact order is one Query a contact shard).
        if room == 0 && task.in_flight > 0 {
            return Ok(report);
        }
        let retries = if room > 0 {
            self.store.due_retries(tenant, task_id, now, room).await?
        } else {
            Vec::new()
        };
        let fresh = self
            .store
            .contacts_after(
                tenant,
                &task.data_source_id,
                task.cursor.as_deref(),
                room.max(1),
            )
            .await?;
        if retries.is_empty() && fresh.is_empty() {
            if task.in_flight == 0 {
                report.completed = self.complete_if_done(tenant, &task).await?;
            }
            return Ok(report);
        }
        if room == 0 {
            return Ok(report);
        }
        let retry_ids: Vec<Id> = retries.iter().map(|s| s.contact_id.clone()).collect();
        let (rules, mut targets) = futures::future::try_join(self.rules(tenant, &task), async {
            if retry_ids.is_empty() {
                Ok(HashMap::new())
            } else {
                self.store
                    .contact_targets(tenant, &task.data_source_id, &retry_ids)
                    .await
            }
        })
        .await?;
        for state in &retries {
            if !targets.contains_key(&state.contact_id) {
                // Deleted from the data source: never dialled again, and no reason to wait (D13).
                self.store.finish_deleted(tenant, task_id, state).await?;
            }
        }
        let fresh_ids: Vec<Fresh> = fresh.iter().map(|(f, _, _)| f.clone()).collect();
        for (f, target, _) in &fresh {
            targets.insert(f.contact_id.clone(), target.clone());
        }
        let existing: HashSet<Id> = targets.keys().cloned().collect();
        let due = due_contacts(&retries, &fresh_ids, &existing, now, room);
        let calls: Vec<(&Due, Callee)> = due
            .iter()
            .map(|one| (one, Callee::of(&targets[&one.contact_id], &rules)))
            .collect();
        let attempts = match rules.cap {
            Some(_) => {
                let numbers: Vec<String> = calls.iter().map(|(_, c)| c.counted.clone()).collect();
                self.store.frequency_attempts(tenant, &numbers).await?
            }
            None => HashMap::new(),
        };
        let started = Instant::now();
        let mut settled = HashSet::new();
        let mut skipped = Vec::new();
        for (one, callee) in &calls {
            let seen = attempts.get(&callee.counted).cloned().unwrap_or_default();
            match self
                .try_call(tenant, &task, one, callee, &rules, seen, started)
                .await?
            {
                Step::Settled { placed } => {
                    report.placed += usize::from(placed);
                    settled.insert(one.contact_id.clone());
                }
                Step::Skipped(skip, until) => {
                    settled.insert(one.contact_id.clone());
                    skipped.push(Skipped {
                        due: (*one).clone(),
                        skip,
                        until,
                    });
                    if skipped.len() == SKIPS_IN_ONE {
                        self.skip(tenant, &task, std::mem::take(&mut skipped))
                            .await?;
                    }
                }
                Step::Later => {}
                Step::Stop => break,
            }
        }
        // Before the cursor moves past them.
        self.skip(tenant, &task, skipped).await?;
        // The cursor moves past the fresh contacts settled in order, never past one left over.
        let mut cursor = None;
        for (f, _, sk) in &fresh {
            if !settled.contains(&f.contact_id) && !retry_ids.contains(&f.contact_id) {
                break;
            }
            cursor = Some(sk);
        }
        if let Some(sk) = cursor {
            self.store.advance_cursor(tenant, task_id, sk).await?;
        }
        Ok(report)
    }

    /// Whether a run of `task` may find anything to call at `now`: a window read in the task's
    /// zone is the task's alone (D13); one read in each contact's zone is checked per contact.
    fn may_dial_now(&self, task: &Task, now: Timestamp) -> bool {
        task.settings.window_zone == WindowZone::CalledParty
            || window_open(&task.settings, self.zone, now)
    }

    /// What the tenant's settings and the task's data source say about its calls (D14-D17).
    async fn rules(&self, tenant: &Tenant, task: &Task) -> Result<Rules, Error> {
        let (settings, source) = futures::future::try_join(
            self.store.settings(tenant),
            self.store.data_source(tenant, &task.data_source_id),
        )
        .await?;
        Ok(Rules {
            windows: Windows::of(&task.settings, settings.calling_hours, self.zone),
            country: source.default_country.or(settings.default_country),
            cap: settings.frequency_cap,
        })
    }

    /// Calls one due contact, or records why not (D18). Answers what the run does next.
    #[allow(clippy::too_many_arguments)]
    async fn try_call(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        callee: &Callee,
        rules: &Rules,
        seen: Attempts,
        started: Instant,
    ) -> Result<Step, Error> {
        if callee.e164.is_none() && self.provider.needs_e164() {
            return Ok(Step::Skipped(Skip::InvalidNumber, None));
        }
        let frequency = rules.cap.map(|cap| FrequencyClaim {
            number: callee.counted.clone(),
            cap,
            seen,
        });
        let now = self.clock.now();
        if let Some(at) = frequency
            .as_ref()
            .and_then(|f| f.seen.eligible_at(f.cap))
            .filter(|at| *at > now)
        {
            return Ok(Step::Skipped(Skip::FrequencyCap, Some(at)));
        }
        let gate = Gate {
            numbers: listed_forms(&callee.target.phone, callee.e164.as_deref())
                .into_iter()
                .map(str::to_owned)
                .collect(),
            frequency,
        };
        loop {
            let now = self.clock.now();
            // D15: the window is checked when a call is placed, in the contact's local time.
            if let Err((skip, opens)) = rules.windows.check(&callee.zones, now) {
                let at = opens.unwrap_or(Timestamp(now.0 + 3_600_000));
                return Ok(Step::Skipped(skip, Some(at)));
            }
            match self
                .store
                .claim_call(tenant, task, due, &gate, self.caps(), now)
                .await
            {
                Ok(call) => return self.place(call, callee).await,
                Err(ClaimRefused::Taken) => return Ok(Step::Settled { placed: false }),
                Err(ClaimRefused::DoNotCall) => return Ok(Step::Skipped(Skip::Dnc, None)),
                Err(ClaimRefused::Capped(at)) => {
                    return Ok(Step::Skipped(Skip::FrequencyCap, Some(at)))
                }
                Err(ClaimRefused::Contended) => return Ok(Step::Later),
                Err(ClaimRefused::RateLimited) if started.elapsed() < RUN_DEADLINE => {
                    let into_second = u64::try_from(now.0.rem_euclid(1000)).unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(1000 - into_second + 5)).await;
                }
                Err(ClaimRefused::Store(error)) => return Err(error),
                Err(refused) => {
                    tracing::debug!(?refused, "no more calls this run");
                    return Ok(Step::Stop);
                }
            }
        }
    }

    /// Records a run's skips (D18), together: settled for this run either way, by these skips
    /// or by whichever run moved a contact first.
    async fn skip(&self, tenant: &Tenant, task: &Task, skipped: Vec<Skipped>) -> Result<(), Error> {
        if skipped.is_empty() {
            return Ok(());
        }
        let written = self
            .store
            .skip_contacts(tenant, task, &skipped, self.clock.now())
            .await?;
        outbound_telemetry::metrics(&[], &[("Skips", written as f64, Unit::Count)]);
        Ok(())
    }

    async fn place(&self, call: CallRef, callee: &Callee) -> Result<Step, Error> {
        let request = CallRequest {
            tenant: call.tenant.clone(),
            task_id: call.task_id.clone(),
            contact_id: call.contact_id.clone(),
            attempt: call.attempt,
            phone: callee.target.phone.clone(),
            e164: callee.e164.clone(),
            script: callee.target.script.clone(),
        };
        match self.provider.place(&request).await {
            Ok(call_id) => {
                if !self.store.mark_placed(&call, &call_id).await? {
                    tracing::warn!(%call_id, "call placed after its attempt was settled");
                }
                tracing::info!(%call_id, task = %call.task_id, attempt = call.attempt, "call placed");
                outbound_telemetry::metrics(&[], &[("CallsPlaced", 1.0, Unit::Count)]);
                Ok(Step::Settled { placed: true })
            }
            Err(PlaceError::Busy { kind, detail }) => {
                tracing::warn!(%detail, ?kind, "provider busy; the contact waits");
                let retry_at = Timestamp(self.clock.now().0 + BUSY_RETRY.as_millis() as i64);
                // A quota refusal with no other call of the service in flight (the claim itself
                // is one) says the quota may be missing rather than used up.
                let alone = kind == Busy::Quota && self.store.calls_in_flight().await? <= 1;
                self.give_back(&call, retry_at, alone, true).await?;
                if alone {
                    self.quota_refused(&call).await?;
                }
                Ok(Step::Stop)
            }
            Err(PlaceError::ServiceRefused { refusal, detail }) => {
                tracing::error!(%detail, task = %call.task_id, "the provider refuses the service's calls");
                self.give_back(&call, self.clock.now(), false, false)
                    .await?;
                self.service_refused(&call, refusal).await?;
                Ok(Step::Stop)
            }
            Err(PlaceError::NumberRefused(why)) => {
                let report = CallReport {
                    outcome: Outcome::Failed,
                    duration: 0,
                    invalid_number: true,
                    reason: why,
                };
                self.record(call, &report).await?;
                Ok(Step::Settled { placed: true })
            }
            Err(PlaceError::Unknown(cause)) => {
                // Whether a call started is unknown: it stays in flight and is reconciled.
                tracing::error!(error = %cause, task = %call.task_id, "placing a call failed");
                Ok(Step::Stop)
            }
        }
    }

    /// Gives back a claim the provider refused: not an attempt (D13). When the release cannot be
    /// written (its transaction keeps meeting others on the shared capacity), the refusal is
    /// marked on the contact's own state instead, and reconcile gives the claim back later.
    async fn give_back(
        &self,
        call: &CallRef,
        retry_at: Timestamp,
        quota_refused: bool,
        provider_busy: bool,
    ) -> Result<(), Error> {
        let Err(error) = self
            .store
            .release_call(call, retry_at, quota_refused, provider_busy)
            .await
        else {
            return Ok(());
        };
        tracing::warn!(%error, "refused call not given back; marked for reconcile");
        self.store.mark_refused(call).await.map_err(|_| error)
    }

    /// After a quota refusal with nothing else in flight: [`QUOTA_TRIES`] of them in a row for
    /// one contact mean the quota is missing (Connect's campaign calls are off by default). The
    /// provider then falls back to traffic without that quota where the deployment allows it
    /// (the contact is simply called again); otherwise the task fails with a reason that says
    /// it is the service's configuration (D13).
    async fn quota_refused(&self, call: &CallRef) -> Result<(), Error> {
        let refusals = self
            .store
            .task_contact(&call.tenant, &call.task_id, &call.contact_id)
            .await?
            .map_or(0, |state| state.quota_refusals);
        if refusals < QUOTA_TRIES {
            return Ok(());
        }
        if self.provider.fall_back() {
            tracing::warn!(refusals, "campaign quota missing: calls go on as general traffic, without answering-machine detection");
            outbound_telemetry::metrics(&[], &[("CampaignFallbacks", 1.0, Unit::Count)]);
            return Ok(());
        }
        self.service_refused(call, ServiceRefusal::CampaignQuota)
            .await
    }

    /// The provider refuses every call of the service: the task that met it fails with the
    /// refusal's fixed reason, and the refusal is counted for the operator's alarm.
    async fn service_refused(&self, call: &CallRef, refusal: ServiceRefusal) -> Result<(), Error> {
        outbound_telemetry::metrics(
            &[("Refusal", refusal.name())],
            &[("ServiceRefusedCalls", 1.0, Unit::Count)],
        );
        let reason = refusal.fail_reason().to_owned();
        match self
            .store
            .fail_task(&call.tenant, &call.task_id, reason)
            .await
        {
            Ok(_) | Err(Error::NotAllowed(_)) | Err(Error::NotFound(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Applies a committed recall (D12): every contact it names, at most once each, then lets
    /// the task complete again. Safe to run any number of times.
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn apply_recall(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        recall: &Id,
    ) -> Result<(), Error> {
        let task = match self.store.task(tenant, task_id).await {
            Ok(task) => task,
            Err(Error::NotFound(_)) => return Ok(()),
            Err(error) => return Err(error),
        };
        if task.pending_recall.as_ref() != Some(recall) {
            return Ok(());
        }
        let key = outbound_adapters::blob::recall_key(tenant, task_id, recall);
        let Some(bytes) = self.blob.get(&key, 64 * 1024 * 1024).await? else {
            tracing::error!(%key, "recall list is gone; the recall ends as it stands");
            return self.store.finish_recall(tenant, task_id, recall).await;
        };
        let manifest: RecallManifest =
            serde_json::from_slice(&bytes).map_err(|e| Error::internal("decode recall list", e))?;
        // One bounded chunk a job, from where the last job stopped; the rest goes to the next
        // job through the dial queue, so no job's work grows with the recall (D12).
        let from = usize::try_from(task.pending_recall_applied)
            .unwrap_or(usize::MAX)
            .min(manifest.ids.len());
        let to = (from + self.config.recall_chunk).min(manifest.ids.len());
        let applied = self
            .store
            .apply_recall(
                tenant,
                &task,
                recall,
                &manifest.ids[from..to],
                manifest.priority,
                manifest.at,
            )
            .await?;
        tracing::info!(
            applied,
            from,
            to,
            of = manifest.ids.len(),
            "recall chunk applied"
        );
        if to == manifest.ids.len() {
            return self.store.finish_recall(tenant, task_id, recall).await;
        }
        self.store
            .advance_recall(tenant, task_id, recall, to as u64, self.clock.now())
            .await?;
        let next = DialJob::Recall {
            tenant: tenant.clone(),
            task_id: task_id.clone(),
            recall_id: recall.clone(),
        };
        if let Err(error) = self.dial_jobs.send(&next, 0).await {
            // The tick sends it again a minute after the last chunk; it resumes where this stopped.
            tracing::warn!(%error, "next recall job not queued");
        }
        Ok(())
    }

    /// Completes a task when every contact of its data source has a final outcome and nothing is
    /// in flight (D10, D13). Answers whether it did.
    async fn complete_if_done(&self, tenant: &Tenant, task: &Task) -> Result<bool, Error> {
        if self.store.any_waiting(tenant, &task.id).await? {
            return Ok(false);
        }
        let source = match self.store.data_source(tenant, &task.data_source_id).await {
            Ok(source) => source,
            Err(Error::NotFound(_)) => return Ok(false),
            Err(error) => return Err(error),
        };
        // The check reads a bounded page of contacts a run, resuming where the last run
        // stopped while nothing was recalled or added since (D13).
        let resume = task.sweep.as_ref().filter(|mark| {
            mark.revision == task.revision && mark.contacts_added == source.contacts_added
        });
        let after = resume.map(|mark| mark.after.as_str());
        let sweep = self
            .store
            .sweep_step(tenant, task, after, self.config.sweep_page)
            .await?;
        if !sweep.never_dialled.is_empty() {
            self.store
                .queue_never_dialled(tenant, task, &sweep.never_dialled, self.clock.now())
                .await?;
            return Ok(false);
        }
        if sweep.unfinished > 0 {
            return Ok(false);
        }
        if let Some(after) = sweep.next {
            let mark = SweepMark {
                after,
                revision: task.revision,
                contacts_added: source.contacts_added,
            };
            self.store.save_sweep(tenant, &task.id, &mark).await?;
            return Ok(false);
        }
        if after.is_none() && task.sweep.is_some() {
            tracing::info!(task = %task.id, "completion check started over");
        }
        match self
            .store
            .complete_idle(tenant, task, source.contacts_added)
            .await
        {
            Ok(_) => {
                tracing::info!(task = %task.id, "task completed");
                Ok(true)
            }
            // A call was claimed, a recall came, a contact was added, or the task left RUNNING
            // meanwhile.
            Err(Error::NotAllowed(_)) | Err(Error::NotFound(_)) | Err(Error::Conflict(_)) => {
                Ok(false)
            }
            Err(error) => Err(error),
        }
    }

    /// Records what became of a call, exactly once (D13).
    #[tracing::instrument(skip_all, fields(task = %call.task_id, contact = %call.contact_id, attempt = call.attempt))]
    pub async fn record(&self, mut call: CallRef, report: &CallReport) -> Result<(), Error> {
        let now = self.clock.now();
        let mut with_contact = true;
        for _ in 0..4 {
            let next = call.after(report, now);
            match self
                .store
                .record_outcome(&call, report, &next, now, with_contact)
                .await?
            {
                RecordFailure::None => {
                    tracing::info!(outcome = ?report.outcome, reason = %report.reason, "outcome recorded");
                    let outcome = match report.outcome {
                        Outcome::Success => "success",
                        Outcome::Failed => "failed",
                        Outcome::NoAnswer => "noAnswer",
                    };
                    outbound_telemetry::metrics(
                        &[("Outcome", outcome)],
                        &[
                            ("CallOutcomes", 1.0, Unit::Count),
                            ("CallSeconds", report.duration as f64, Unit::Seconds),
                        ],
                    );
                    return Ok(());
                }
                RecordFailure::NotInFlight => {
                    tracing::info!("outcome recorded before; nothing changes");
                    return Ok(());
                }
                RecordFailure::StateChanged(state) => {
                    // Only a recall changes a contact during its call. It granted
                    // `attempts + maxDialCount` counting from before this call: the fresh
                    // attempts come after it (D12), so this call is not one of them.
                    call.allowance = state.allowance + 1;
                    call.recalled = state.recalled;
                    call.priority = state.priority;
                    call.claimed_at = state.updated_at;
                }
                RecordFailure::ContactGone => with_contact = false,
                RecordFailure::TaskGone => {
                    return self
                        .store
                        .drop_orphan_call(
                            &call.tenant,
                            &call.task_id,
                            &call.contact_id,
                            call.attempt,
                            call.shard,
                        )
                        .await;
                }
            }
        }
        Err(Error::internal(
            "record call outcome",
            "the contact's state kept changing",
        ))
    }

    /// One message of the call-events queue: an Amazon Connect contact event or a simulated
    /// outcome. Events that are no call's end are acknowledged and ignored; an outcome that
    /// arrives before its call is marked placed fails, so SQS delivers it again later.
    pub async fn call_event(&self, body: &str) -> Result<(), Error> {
        let Some(ended) = parse_call_event(body)? else {
            return Ok(());
        };
        if let Some(call) = self.store.call_by_provider_id(&ended.call_id).await? {
            return self.record(call, &ended.report).await;
        }
        // No call record: the provider took the call but its id was never saved (the run died
        // after placing it, or saving failed), or is not saved yet; or the call is not ours.
        let attempt = match ended.attempt {
            Some(attempt) => Some(attempt),
            None => self.provider.attempt_of(&ended.call_id).await?,
        };
        match attempt {
            Some(attempt) => self.record_recovered(&attempt, &ended.report).await,
            None => {
                tracing::info!(call_id = %ended.call_id, "outcome of a call that is not ours; ignored");
                outbound_telemetry::metrics(&[], &[("UnknownCallEvents", 1.0, Unit::Count)]);
                Ok(())
            }
        }
    }

    /// Records the outcome of attempt `attempt` found from what the call carries: while that
    /// attempt is still in flight, exactly as its call record would have (D13).
    async fn record_recovered(
        &self,
        attempt: &CallAttempt,
        report: &CallReport,
    ) -> Result<(), Error> {
        let Some((state, task)) = self.in_flight(attempt).await? else {
            tracing::info!(task_id = %attempt.task_id, contact_id = %attempt.contact_id, attempt = attempt.attempt, "outcome recorded before; nothing changes");
            return Ok(());
        };
        tracing::warn!(task_id = %attempt.task_id, contact_id = %attempt.contact_id, attempt = attempt.attempt, "outcome of a call whose id was not saved");
        self.settle(attempt, &state, task, report).await
    }

    /// Attempt `attempt` while it is in flight: the contact's state and its task (`None`: the
    /// task was deleted). `None` once the attempt is settled or the state is gone.
    async fn in_flight(
        &self,
        attempt: &CallAttempt,
    ) -> Result<Option<(TaskContact, Option<Task>)>, Error> {
        let CallAttempt {
            tenant,
            task_id,
            contact_id,
            ..
        } = attempt;
        let Some(state) = self.store.task_contact(tenant, task_id, contact_id).await? else {
            return Ok(None);
        };
        if state.in_call != Some(attempt.attempt) {
            return Ok(None);
        }
        let task = match self.store.task(tenant, task_id).await {
            Ok(task) => Some(task),
            Err(Error::NotFound(_)) => None,
            Err(error) => return Err(error),
        };
        Ok(Some((state, task)))
    }

    /// Ends attempt `attempt`, in flight as `state` says, with `report`: recorded on its task,
    /// or, the task deleted, its place among the service's calls in flight given back.
    async fn settle(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: Option<Task>,
        report: &CallReport,
    ) -> Result<(), Error> {
        match task {
            Some(task) => self.record(call_of(attempt, &task, state), report).await,
            None => {
                let CallAttempt {
                    tenant,
                    task_id,
                    contact_id,
                    attempt,
                } = attempt;
                self.store
                    .drop_orphan_call(tenant, task_id, contact_id, *attempt, state.slot_shard)
                    .await
            }
        }
    }

    /// Settles a call whose outcome never came (D13): what the provider says of it, else failed
    /// "no outcome". A call the provider still reports in progress is given three times the
    /// reconcile time before it is given up.
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn reconcile(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        contact_id: &Id,
        attempt: u32,
    ) -> Result<(), Error> {
        let call = CallAttempt {
            tenant: tenant.clone(),
            task_id: task_id.clone(),
            contact_id: contact_id.clone(),
            attempt,
        };
        // A deleted task's call keeps its place among the service's calls in flight until the
        // provider says it ended (D11, D13): the service's cap holds for calls still connected.
        let Some((state, task)) = self.in_flight(&call).await? else {
            return Ok(());
        };
        let now = self.clock.now();
        let report = match &state.call_id {
            // Refused by the provider, never placed: given back, not an attempt (D13).
            None if state.refused == Some(attempt) => match &task {
                Some(task) => {
                    let call = call_of(&call, task, &state);
                    return self.store.release_call(&call, now, false, false).await;
                }
                None => CallReport::no_outcome(),
            },
            None => CallReport::no_outcome(),
            Some(call_id) => match self.provider.describe(call_id).await? {
                CallStatus::Ended(report) => report,
                // Still connected: it keeps its places, and is looked at again a reconcile
                // time from now; its DISCONNECTED event records it when it comes.
                CallStatus::InProgress
                    if state.claimed_at.is_some_and(|at| {
                        now.0 - at.0 < self.config.max_call.as_millis() as i64
                    }) =>
                {
                    return self
                        .store
                        .check_call_later(tenant, task_id, contact_id, attempt, now)
                        .await
                }
                CallStatus::InProgress => {
                    tracing::warn!(%call_id, "call still live past DIAL_MAX_CALL_SECONDS; its places are given back");
                    CallReport::no_outcome()
                }
                CallStatus::Unknown => CallReport::no_outcome(),
            },
        };
        self.settle(&call, &state, task, &report).await
    }
}

/// A second in `0..spacing` fixed by the task: the same for every tick, different between tasks.
fn spread(task: &Id, spacing: u32) -> u32 {
    let hash = task.as_str().bytes().fold(0u32, |hash, byte| {
        hash.wrapping_mul(31).wrapping_add(u32::from(byte))
    });
    hash % spacing.max(1)
}

/// The reference of attempt `attempt` of a contact whose state in the task is `state`, read
/// while that attempt is in flight: what its call record would hold. A recall made during the
/// call moved the state on (`updated_at` past the claim) and granted its fresh attempts counting
/// from before this call, so this call is not one of them (D12), as [`Engine::record`] allows on
/// the event path.
fn call_of(attempt: &CallAttempt, task: &Task, state: &TaskContact) -> CallRef {
    let recalled_during_call = state.claimed_at != Some(state.updated_at);
    CallRef {
        tenant: attempt.tenant.clone(),
        task_id: task.id.clone(),
        data_source_id: task.data_source_id.clone(),
        contact_id: attempt.contact_id.clone(),
        attempt: attempt.attempt,
        call_interval: task.settings.call_interval,
        allowance: state.allowance + u32::from(recalled_during_call),
        recalled: state.recalled,
        priority: state.priority,
        claimed_at: state.updated_at,
        shard: state.slot_shard,
        rules: task.settings.retry_rules.clone(),
        max_dial_count: u32::from(task.settings.max_dial_count),
    }
}

/// A call that ended, as a call-events message tells it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndedCall {
    /// The provider's id of the call.
    pub call_id: String,
    pub report: CallReport,
    /// The attempt it was, when the event itself says (the simulated provider's do).
    pub attempt: Option<CallAttempt>,
}

/// The call a call-events message says ended; `None` for an event that is not the end of a call.
pub fn parse_call_event(body: &str) -> Result<Option<EndedCall>, Error> {
    let value: serde_json::Value =
        serde_json::from_str(body).map_err(|e| Error::internal("decode call event", e))?;
    if value.get("detail-type").is_some() {
        return Ok(
            super::connect::parse_event(body)?.map(|disconnect| EndedCall {
                call_id: disconnect.contact_id,
                report: disconnect.report,
                attempt: None,
            }),
        );
    }
    let event: SimulatedEvent =
        serde_json::from_value(value).map_err(|e| Error::internal("decode call event", e))?;
    let ended = event.simulated_call;
    Ok(Some(EndedCall {
        call_id: ended.call_id,
        report: ended.report,
        attempt: ended.attempt,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lambda_events::event::sqs::SqsEvent;

    /// The dialer's SQS event as Lambda delivers it (tests/events/dialer-sqs-jobs.json, also
    /// used with `cargo lambda invoke`): each body is a dial job.
    #[test]
    fn dial_jobs_read_from_the_recorded_sqs_event() {
        let event: SqsEvent =
            serde_json::from_str(include_str!("../../../tests/events/dialer-sqs-jobs.json"))
                .unwrap();
        let jobs: Vec<DialJob> = event
            .records
            .iter()
            .map(|record| serde_json::from_str(record.body.as_deref().unwrap()).unwrap())
            .collect();
        let task = Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G7").unwrap();
        assert_eq!(
            jobs,
            vec![
                DialJob::Dial {
                    tenant: Tenant::parse("acme").unwrap(),
                    task_id: task.clone(),
                    budget: 10
                },
                DialJob::Reconcile {
                    tenant: Tenant::parse("acme").unwrap(),
                    task_id: task,
                    contact_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G8").unwrap(),
                    attempt: 2
                },
            ]
        );
    }

    /// The call-events queue carries both kinds of outcome; events that end no call are ignored.
    #[test]
    fn call_events_are_read_from_either_provider() {
        let simulated = r#"{"simulatedCall":{"callId":"sim-1","report":{"outcome":3,"duration":0,"invalidNumber":false,"reason":"unanswered"}}}"#;
        let ended = parse_call_event(simulated).unwrap().unwrap();
        assert_eq!(
            (ended.call_id.as_str(), ended.report.outcome, ended.attempt),
            ("sim-1", Outcome::NoAnswer, None)
        );
        let connect = include_str!("../../../tests/events/connect-disconnected-human.json");
        let ended = parse_call_event(connect).unwrap().unwrap();
        assert_eq!(
            (ended.call_id.as_str(), ended.report.outcome, ended.attempt),
            (
                "3f8e2d71-9c4b-4a6e-b5d0-1a7c9e2f4b83",
                Outcome::Success,
                None
            )
        );
        let ignored = include_str!("../../../tests/events/connect-connected-to-system.json");
        assert_eq!(parse_call_event(ignored).unwrap(), None);
        assert!(parse_call_event("not json").is_err());
    }
}

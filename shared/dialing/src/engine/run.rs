//! A dial run (D13-D18): one task's due contacts claimed and called up to its share, each
//! only inside its window in the called party's time, off the do-not-call list and under the
//! frequency cap; a contact that may not be called is skipped with its reason, and a call the
//! provider refuses is given back (not an attempt).

use super::Engine;
use crate::local_time::{contact_zones, own_zone, Windows};
use crate::plan::due_contacts;
use crate::provider::{Busy, CallRequest, PlaceError, Provider, ServiceRefusal};
use chrono_tz::Tz;
use outbound_adapters::store::dialing::{
    Attempts, Caps, ClaimRefused, FrequencyClaim, Gate, GiveBack, Skipped, SKIPS_IN_ONE,
};
use outbound_model::call::{CallRef, CallReport, Outcome, Skip, Target};
use outbound_model::dnc::lookup_key;
use outbound_model::error::Error;
use outbound_model::numbers::{e164, Country};
use outbound_model::settings::FrequencyCap;
use outbound_model::task::{rules_time, Due, Fresh, IDLE_AT_MOST};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use outbound_telemetry::Unit;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

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

enum Next {
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
    /// The caps a claim of this run stays under: the task's own is its share, so runs of one
    /// task that overlap never hold more than the share between them (D23).
    caps: Caps,
    /// When these rules last changed (D24): contacts parked under older ones are judged again.
    rules_at: Timestamp,
}

/// One due contact's number as the rules read it.
struct Callee {
    target: Target,
    e164: Option<String>,
    /// Its time zones (D15).
    zones: Vec<Tz>,
    /// Whether its own `timeZone` field names its zone, rather than its number (D24).
    own_zone: bool,
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
            own_zone: own_zone(target.time_zone.as_deref()).is_some(),
            counted: e164
                .clone()
                .unwrap_or_else(|| target.phone.as_str().to_owned()),
            e164,
            target: target.clone(),
        }
    }
}

impl<P: Provider> Engine<P> {
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
        let share = budget.min(self.config.max_in_flight_per_task);
        let (rules, fresh) = futures::future::try_join(
            self.rules(tenant, &task, share),
            self.store.contacts_after(
                tenant,
                &task.data_source_id,
                task.cursor.as_deref(),
                room.max(1),
            ),
        )
        .await?;
        let retries = if room > 0 {
            self.store
                .due_retries(tenant, task_id, now, room, rules.rules_at)
                .await?
        } else {
            Vec::new()
        };
        if retries.is_empty() && fresh.is_empty() {
            if task.in_flight == 0 {
                report.completed = self.complete_if_done(tenant, &task).await?;
            }
            if !report.completed && room > 0 {
                self.rest_until_due(tenant, &task, now, rules.rules_at)
                    .await?;
            }
            return Ok(report);
        }
        if room == 0 {
            // Contacts due, and no room in the task's share: held back by capacity (D23).
            self.store.mark_held_back(tenant, task_id, now).await?;
            return Ok(report);
        }
        let retry_ids: Vec<Id> = retries.iter().map(|s| s.contact_id.clone()).collect();
        let mut targets = if retry_ids.is_empty() {
            HashMap::new()
        } else {
            self.store
                .contact_targets(tenant, &task.data_source_id, &retry_ids)
                .await?
        };
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
                Next::Settled { placed } => {
                    report.placed += usize::from(placed);
                    settled.insert(one.contact_id.clone());
                }
                Next::Skipped(skip, until) => {
                    settled.insert(one.contact_id.clone());
                    let window = matches!(skip, Skip::OutsideWindow | Skip::CallingHours);
                    skipped.push(Skipped {
                        due: (*one).clone(),
                        skip,
                        until,
                        parked_under: window.then_some(rules.rules_at),
                    });
                    if skipped.len() == SKIPS_IN_ONE {
                        self.skip(tenant, &task, std::mem::take(&mut skipped))
                            .await?;
                    }
                }
                Next::Later => {}
                Next::Stop => break,
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

    /// What the tenant's settings and the task's data source say about its calls (D14-D17).
    async fn rules(&self, tenant: &Tenant, task: &Task, share: u32) -> Result<Rules, Error> {
        let (settings, source) = futures::future::try_join(
            self.store.settings(tenant),
            self.store.data_source(tenant, &task.data_source_id),
        )
        .await?;
        Ok(Rules {
            windows: Windows::of(&task.settings, settings.calling_hours, self.zone),
            country: source.default_country.or(settings.default_country),
            cap: settings.frequency_cap,
            caps: Caps {
                per_task: share,
                ..self.caps()
            },
            rules_at: rules_time(&settings, Some(&source)),
        })
    }

    /// A run that found nothing due (D23): the task gets no share and no dial run until its
    /// earliest waiting contact is due (at most [`IDLE_AT_MOST`] ahead, so a contact added
    /// meanwhile is not kept waiting longer), unless an outcome, a recall or a resume comes
    /// first. Nothing is marked when a contact is due within the next tick.
    async fn rest_until_due(
        &self,
        tenant: &Tenant,
        task: &Task,
        now: Timestamp,
        rules_at: Timestamp,
    ) -> Result<(), Error> {
        let Some(due) = self
            .store
            .earliest_waiting(tenant, &task.id, rules_at)
            .await?
        else {
            return Ok(());
        };
        let next_tick = Timestamp(now.0 + 60_000);
        if due.0 <= next_tick.0 {
            return Ok(());
        }
        let until = Timestamp(due.0.min(now.0 + IDLE_AT_MOST.as_millis() as i64));
        self.store.mark_idle(tenant, task, until, rules_at).await
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
    ) -> Result<Next, Error> {
        if callee.e164.is_none() && self.provider.needs_e164() {
            return Ok(Next::Skipped(Skip::InvalidNumber, None));
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
            return Ok(Next::Skipped(Skip::FrequencyCap, Some(at)));
        }
        let gate = Gate {
            listed_as: Some(lookup_key(&callee.target.phone, callee.e164.as_deref()).to_owned()),
            frequency,
        };
        loop {
            let now = self.clock.now();
            // D15: the window is checked when a call is placed, in the contact's local time; a
            // number whose zones share no open minute is final (D24).
            match rules.windows.admit(&callee.zones, callee.own_zone, now) {
                Ok(()) => {}
                Err((skip, _)) if skip.is_final() => return Ok(Next::Skipped(skip, None)),
                Err((skip, opens)) => {
                    let at = opens.unwrap_or(Timestamp(now.0 + 3_600_000));
                    return Ok(Next::Skipped(skip, Some(at)));
                }
            }
            match self
                .store
                .claim_call(tenant, task, due, &gate, rules.caps, now)
                .await
            {
                Ok(call) => return self.place(call, callee, gate.frequency.as_ref()).await,
                Err(ClaimRefused::Taken) => return Ok(Next::Settled { placed: false }),
                Err(ClaimRefused::DoNotCall) => return Ok(Next::Skipped(Skip::Dnc, None)),
                Err(ClaimRefused::Capped(at)) => {
                    return Ok(Next::Skipped(Skip::FrequencyCap, Some(at)))
                }
                Err(ClaimRefused::Contended) => return Ok(Next::Later),
                Err(ClaimRefused::RateLimited) if started.elapsed() < RUN_DEADLINE => {
                    let into_second = u64::try_from(now.0.rem_euclid(1000)).unwrap_or(0);
                    tokio::time::sleep(Duration::from_millis(1000 - into_second + 5)).await;
                }
                Err(ClaimRefused::Store(error)) => return Err(error),
                Err(refused) => {
                    tracing::debug!(?refused, "no more calls this run");
                    return Ok(Next::Stop);
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

    /// Places a claimed call. `frequency` is the attempt the claim counted toward the frequency
    /// cap, taken back should the provider refuse the call.
    async fn place(
        &self,
        call: CallRef,
        callee: &Callee,
        frequency: Option<&FrequencyClaim>,
    ) -> Result<Next, Error> {
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
            Ok(call_id) => self.placed(&call, &call_id).await,
            Err(PlaceError::Busy { kind, detail }) => {
                tracing::warn!(%detail, ?kind, "provider busy; the contact waits");
                let retry_at = Timestamp(self.clock.now().0 + BUSY_RETRY.as_millis() as i64);
                if kind == Busy::Quota && self.store.campaign_quota_missing().await? {
                    // The service already knows the quota is missing (D23): this dialer falls
                    // back at once, or the task fails, without counting refusals of its own.
                    let why = GiveBack::ProviderBusy;
                    self.give_back(&call, retry_at, why, frequency).await?;
                    if !self.provider.fall_back() {
                        self.service_refused(&call, ServiceRefusal::CampaignQuota)
                            .await?;
                    }
                    return Ok(Next::Stop);
                }
                // A quota refusal with no other call of the service in flight (the claim itself
                // is one) says the quota may be missing rather than used up.
                let alone = kind == Busy::Quota && self.store.calls_in_flight().await? <= 1;
                let why = if alone {
                    GiveBack::QuotaRefused
                } else {
                    GiveBack::ProviderBusy
                };
                self.give_back(&call, retry_at, why, frequency).await?;
                if alone {
                    self.quota_refused(&call).await?;
                }
                Ok(Next::Stop)
            }
            Err(PlaceError::ServiceRefused { refusal, detail }) => {
                tracing::error!(%detail, task = %call.task_id, "the provider refuses the service's calls");
                self.give_back(&call, self.clock.now(), GiveBack::Refused, frequency)
                    .await?;
                self.service_refused(&call, refusal).await?;
                Ok(Next::Stop)
            }
            Err(PlaceError::NumberRefused(why)) => {
                let report = CallReport {
                    outcome: Outcome::Failed,
                    duration: 0,
                    invalid_number: true,
                    reason: why,
                };
                self.record(call, &report).await?;
                Ok(Next::Settled { placed: true })
            }
            Err(PlaceError::Unknown(cause)) => {
                // Whether a call started is unknown. The same request again carries the same
                // idempotency token: the provider answers the call the first one started, or
                // starts it now; either way its id is saved. Failing that, the attempt stays in
                // flight with no id, and its outcome event (which names the attempt) records it
                // whenever it comes, up to DIAL_MAX_CALL_SECONDS (reconcile).
                tracing::warn!(error = %cause, task = %call.task_id, "placing a call failed; asked again");
                match self.provider.place(&request).await {
                    Ok(call_id) => self.placed(&call, &call_id).await,
                    Err(again) => {
                        tracing::error!(error = %again, task = %call.task_id, "placing a call failed twice; left to reconcile");
                        Ok(Next::Stop)
                    }
                }
            }
        }
    }

    /// Saves the provider's id of a placed call, so its outcome finds its attempt.
    async fn placed(&self, call: &CallRef, call_id: &str) -> Result<Next, Error> {
        if !self.store.mark_placed(call, call_id).await? {
            tracing::warn!(%call_id, "call placed after its attempt was settled");
        }
        tracing::info!(%call_id, task = %call.task_id, attempt = call.attempt, "call placed");
        outbound_telemetry::metrics(&[], &[("CallsPlaced", 1.0, Unit::Count)]);
        Ok(Next::Settled { placed: true })
    }

    /// Gives back a claim the provider refused: not an attempt (D13), nor one toward the
    /// frequency cap (D23). When the release cannot be
    /// written (its transaction keeps meeting others on the shared capacity), the refusal is
    /// marked on the contact's own state instead, and reconcile gives the claim back later.
    async fn give_back(
        &self,
        call: &CallRef,
        retry_at: Timestamp,
        why: GiveBack,
        frequency: Option<&FrequencyClaim>,
    ) -> Result<(), Error> {
        let Err(error) = self.store.release_call(call, retry_at, why).await else {
            if let Some(frequency) = frequency {
                // Best effort: a count left over makes the number wait, never called too often.
                if let Err(error) = self
                    .store
                    .uncount_attempt(&call.tenant, frequency, call.claimed_at)
                    .await
                {
                    tracing::warn!(%error, "a refused attempt stays counted toward the cap");
                }
            }
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
        // The verdict is the service's, not this process's: every dialer reads it.
        self.store
            .remember_campaign_quota_missing(self.clock.now())
            .await?;
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
}

//! One claimed call (D13, D14, D16-D18, D22, D28): a due contact judged against the rules
//! (a number without an E.164 form is never handed to a provider), claimed in the store, placed
//! with the provider, and what the provider's answer makes of it: placed, given back (not an
//! attempt), recorded as an invalid number, in doubt until the next tick, or the task failed
//! for a refusal of the whole service.

use super::run::{Callee, Rules, RUN_DEADLINE};
use super::Engine;
use outbound_adapters::store::dialing::{
    Attempts, ClaimRefused, FrequencyClaim, Gate, GiveBack, Skipped,
};
use outbound_adapters::telephony::provider::{
    Busy, CallRequest, PlaceError, Provider, ServiceRefusal,
};
use outbound_model::call::{CallAttempt, CallRef, CallReport, Reason, Skip};
use outbound_model::dnc::lookup_key;
use outbound_model::error::Error;
use outbound_model::local_time::Windows;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{Due, HeldBack};
use outbound_model::telephony::{Withheld, E164_ATTRIBUTE};
use outbound_model::Tenant;
use outbound_model::{Id, Task, Timestamp};
use outbound_telemetry::Unit;
use std::collections::HashSet;
use std::time::Duration;
// tokio's clock: the same as std's in a Lambda, virtual under the simulation's paused runtime,
// where a deadline read from the wall clock would make a run's length depend on the machine.
use tokio::time::Instant;

/// Quota refusals in a row, with nothing else in flight, that mean a quota is missing.
const QUOTA_TRIES: u32 = 5;
/// How long a contact whose call the provider refused for rate or capacity waits.
const BUSY_RETRY: Duration = Duration::from_secs(5);

/// Where one due contact leaves its run.
pub(super) enum Next {
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

/// What holds a call back at a moment, by the rules of time alone.
enum Held {
    /// D31: the task's schedule is closed, however long the run has gone on.
    Schedule,
    /// D15: the window, read in the contact's local time, is closed until then (an hour from
    /// now when it says no time); final when the number's zones share no open minute (D24).
    Window(Skip, Timestamp),
}

/// Whether the schedule or the window holds a call of `callee` back at `now`: read before its
/// claim, and again as it is placed.
fn held_by_time(task: &Task, windows: &Windows, callee: &Callee, now: Timestamp) -> Option<Held> {
    if !task.settings.schedule.open(now) && !planted(Bug::ScheduleIgnored) {
        return Some(Held::Schedule);
    }
    let (skip, opens) = windows.admit(&callee.zones, callee.own_zone, now).err()?;
    Some(Held::Window(
        skip,
        opens.unwrap_or(Timestamp(now.0 + 3_600_000)),
    ))
}

impl<P: Provider> Engine<P> {
    /// Calls one due contact, or records why not (D18). Answers what the run does next.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn try_call(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        callee: &Callee,
        rules: &Rules,
        seen: Attempts,
        started: Instant,
    ) -> Result<Next, Error> {
        let target = &callee.target;
        let fields = |name: &str| target.fields.get(name).map(String::as_str);
        if !task.settings.filter.matches(target.phone.as_str(), fields)
            && !planted(Bug::FilterIgnored)
        {
            return Ok(Next::Skipped(Skip::Filtered, None));
        }
        // D14: no provider is given a number in any form but E.164. One without it (not valid,
        // or written without `+` and no country to read it in) is never called: final.
        let Some(to) = callee.e164.as_deref() else {
            return Ok(Next::Skipped(Skip::InvalidNumber, None));
        };
        let request = match self.request(tenant, task, due, callee, to, rules) {
            Ok(request) => request,
            Err(withheld) => {
                self.withhold(tenant, &task.id, withheld).await?;
                return Ok(Next::Stop);
            }
        };
        if !self
            .provider
            .attributes_fit(&request.attributes, rules.results_room)
        {
            return Ok(Next::Skipped(Skip::AttributesTooLarge, None));
        }
        // A callback keeps to the calling hours and the do-not-call list alone (D31): the
        // person asked for its time, so the daily window and the cap do not hold it back.
        let callback = due
            .state
            .as_ref()
            .is_some_and(|state| state.callback.is_some());
        let windows = match callback {
            true => rules.windows.calling_hours_only(),
            false => rules.windows,
        };
        // Counted whether or not the tenant has a cap, so that one set later counts this call.
        let frequency = (!planted(Bug::FrequencyIgnored)).then(|| FrequencyClaim {
            number: callee.counted.clone(),
            cap: rules.cap.filter(|_| !callback),
            seen,
        });
        let now = self.clock.now();
        if let Some(at) = frequency
            .as_ref()
            .and_then(FrequencyClaim::eligible_at)
            .filter(|at| *at > now)
        {
            return Ok(Next::Skipped(Skip::FrequencyCap, Some(at)));
        }
        let gate = Gate {
            listed_as: (!planted(Bug::DncIgnored))
                .then(|| lookup_key(&callee.target.phone, callee.e164.as_deref()).to_owned()),
            guards_apart: rules.guards_apart,
            frequency,
            calling_from: request.caller_id.clone(),
        };
        loop {
            let now = self.clock.now();
            match held_by_time(task, &windows, callee, now) {
                None => {}
                Some(Held::Schedule) => return Ok(Next::Stop),
                Some(Held::Window(skip, _)) if skip.is_final() => {
                    return Ok(Next::Skipped(skip, None))
                }
                Some(Held::Window(skip, opens)) => return Ok(Next::Skipped(skip, Some(opens))),
            }
            let refused = match (self.store)
                .claim_call(tenant, task, due, &gate, rules.caps, now)
                .await
            {
                Ok(call) => {
                    // The claim may have taken seconds (its retries): the schedule and the
                    // window are read again as the call is placed (D15, D31), and a claim they
                    // no longer allow is given back, never placed (seed 1851 placed a call 1.4 s
                    // after its task's schedule ended, its claim throttled twice).
                    let now = self.clock.now();
                    let closed = held_by_time(task, &windows, callee, now).map(|held| match held {
                        Held::Schedule => now,
                        Held::Window(_, opens) => opens,
                    });
                    // An agent-paced run's budget holds while the reading of the agents it was
                    // paced by is the newest (D30); a pass that read them since paces the task
                    // anew (seed 3467: a claim answered a second late, after a reading of no
                    // agent free, rang a call for nobody).
                    let repaced = match (closed, rules.paced_at) {
                        (None, Some(paced_at)) => self.repaced(tenant, task, paced_at).await,
                        _ => false,
                    };
                    if let Some(retry_at) = closed.or(repaced.then_some(now)) {
                        let frequency = gate.frequency.as_ref();
                        self.give_back(&call, retry_at, GiveBack::Refused, frequency)
                            .await?;
                        return Ok(Next::Stop);
                    }
                    return self.place(call, &request, gate.frequency.as_ref()).await;
                }
                Err(ClaimRefused::Store(error)) => return Err(error),
                Err(refused) => refused,
            };
            match on_refusal(&refused, now, started.elapsed() < RUN_DEADLINE) {
                OnRefusal::Taken => return Ok(Next::Settled { placed: false }),
                OnRefusal::Skip(skip, until) => return Ok(Next::Skipped(skip, until)),
                OnRefusal::Later => return Ok(Next::Later),
                OnRefusal::Wait(wait) => tokio::time::sleep(wait).await,
                OnRefusal::Withhold => {
                    self.withhold(tenant, &task.id, Withheld::CallerId).await?;
                    return Ok(Next::Stop);
                }
                OnRefusal::HeldBack => {
                    tracing::debug!(?refused, "no more calls this run");
                    self.store
                        .mark_held_back(tenant, task, HeldBack::Capacity, now)
                        .await?;
                    return Ok(Next::Stop);
                }
                OnRefusal::Stop => {
                    tracing::debug!(?refused, "no more calls this run");
                    return Ok(Next::Stop);
                }
            }
        }
    }

    /// Whether the agents of `task`'s queue were read after `paced_at`, the reading its run's
    /// budget was paced by (D30). A reading that cannot be had counts as a newer one: the call
    /// waits for the next pace rather than ring for an agent who may not be there.
    async fn repaced(&self, tenant: &Tenant, task: &Task, paced_at: Timestamp) -> bool {
        if planted(Bug::StalePaceKept) {
            return false;
        }
        let Some(pacing) = &task.settings.agents else {
            return false;
        };
        match self.store.queue_agents(tenant, &pacing.queue_id).await {
            Ok(reading) => reading.is_some_and(|(_, read_at)| read_at > paced_at),
            Err(error) => {
                tracing::warn!(%error, "the queue's last reading could not be read: the call waits for the next pace");
                true
            }
        }
    }

    /// Records a run's skips (D18), together: settled for this run either way, by these skips
    /// or by whichever run moved a contact first.
    pub(super) async fn skip(
        &self,
        tenant: &Tenant,
        task: &Task,
        skipped: Vec<Skipped>,
        settled: &mut HashSet<Id>,
    ) -> Result<(), Error> {
        if skipped.is_empty() {
            return Ok(());
        }
        let written = self
            .store
            .skip_contacts(tenant, task, &skipped, self.clock.now())
            .await?;
        settled.extend(skipped.into_iter().map(|one| one.due.contact_id));
        outbound_telemetry::metrics(&[], &[("Skips", written as f64, Unit::Count)]);
        Ok(())
    }

    /// The call attempt `due.attempt` to `callee` would be (D22), to `to`, its number in E.164
    /// (D14): from the number the task and its tenant chose for it by `to`'s country and area
    /// (none where the provider shows its own whatever the call names), with their flow, the
    /// service's own attributes and the contact's values of the task's `callAttributes` (a
    /// field it lacks is left out).
    pub(super) fn request(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        callee: &Callee,
        to: &str,
        rules: &Rules,
    ) -> Result<CallRequest, Withheld> {
        let attempt = CallAttempt {
            tenant: tenant.clone(),
            task_id: task.id.clone(),
            contact_id: due.contact_id.clone(),
            attempt: due.attempt,
        };
        let sent = task.settings.call_attributes.iter().filter_map(|name| {
            let value = match name.as_str() {
                E164_ATTRIBUTE => callee.e164.as_ref(),
                field => callee.target.fields.get(field),
            };
            Some((name.clone(), value?.clone()))
        });
        // The service's own last, signed (D29): they name the attempt, whatever a field is
        // called, and only the service could have written them.
        let signature = self.signer.attribute(&attempt);
        let attributes = sent
            .chain(attempt.attributes())
            .chain([signature])
            .collect();
        let caller_id = if self.provider.per_call_caller_id() {
            rules.setup.caller_id(Some(to))?.map(str::to_owned)
        } else {
            None
        };
        let contact_flow_id = rules.setup.contact_flow_id()?.map(str::to_owned);
        Ok(CallRequest {
            tenant: attempt.tenant,
            task_id: attempt.task_id,
            contact_id: attempt.contact_id,
            attempt: attempt.attempt,
            to: to.to_owned(),
            script: callee.target.script.clone(),
            caller_id,
            contact_flow_id,
            attributes,
            voicemail: task.settings.voicemail,
            simulated_results: callee.target.simulated_results.clone(),
            queue_id: task.settings.agents.as_ref().map(|a| a.queue_id.clone()),
        })
    }

    /// A task whose number or flow is no longer its tenant's (D28): it fails, saying so, and
    /// no call of it is placed.
    async fn withhold(&self, tenant: &Tenant, task: &Id, withheld: Withheld) -> Result<(), Error> {
        tracing::warn!(%task, ?withheld, "the task's caller ID or flow is no longer its tenant's");
        match self
            .store
            .fail_task(tenant, task, withheld.fail_reason().to_owned())
            .await
        {
            Ok(_) | Err(Error::NotAllowed(_)) | Err(Error::NotFound(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Places a claimed call as `request` (built before the claim, for the attempt it took).
    /// `frequency` is the attempt the claim counted toward the frequency cap, taken back should
    /// the provider refuse the call. A start whose answer is unknown is asked once more at once
    /// with the same client token (D28), and that answer settles it.
    async fn place(
        &self,
        mut call: CallRef,
        request: &CallRequest,
        frequency: Option<&FrequencyClaim>,
    ) -> Result<Next, Error> {
        debug_assert_eq!(request.attempt, call.attempt);
        // Recorded with the call, so its outcome writes it on the contact's state (D22).
        call.caller_id = request.caller_id.clone();
        let mut answer = self.provider.place(request).await;
        if let Err(PlaceError::Unknown(cause)) = &answer {
            tracing::warn!(error = %cause, task = %call.task_id, "placing a call failed; asked again with its token");
            answer = PlaceError::sent_again(self.provider.place(request).await);
        }
        self.answered(&call, answer, frequency).await
    }

    /// What the provider's answer to the start of `call` makes of it (D13, D28).
    pub(super) async fn answered(
        &self,
        call: &CallRef,
        answer: Result<String, PlaceError>,
        frequency: Option<&FrequencyClaim>,
    ) -> Result<Next, Error> {
        match answer {
            Ok(call_id) => self.placed(call, &call_id).await,
            Err(PlaceError::Busy { kind, detail }) => {
                tracing::warn!(%detail, ?kind, "provider busy; the contact waits");
                let retry_at = Timestamp(self.clock.now().0 + BUSY_RETRY.as_millis() as i64);
                if kind == Busy::Quota && self.store.campaign_quota_missing().await? {
                    // The service already knows the quota is missing (D23): this dialer falls
                    // back at once, or the task fails, without counting refusals of its own.
                    let why = GiveBack::ProviderBusy;
                    self.give_back(call, retry_at, why, frequency).await?;
                    if !self.provider.fall_back() {
                        self.service_refused(call, ServiceRefusal::CampaignQuota)
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
                self.give_back(call, retry_at, why, frequency).await?;
                if alone {
                    self.quota_refused(call).await?;
                }
                Ok(Next::Stop)
            }
            Err(PlaceError::ServiceRefused { refusal, detail }) => {
                tracing::error!(%detail, task = %call.task_id, "the provider refuses the service's calls");
                self.give_back(call, self.clock.now(), GiveBack::Refused, frequency)
                    .await?;
                self.service_refused(call, refusal).await?;
                Ok(Next::Stop)
            }
            Err(PlaceError::NumberRefused(why)) => {
                let report = CallReport {
                    detail: why,
                    ..Reason::InvalidNumber.report(0)
                };
                self.record(call.clone(), &report).await?;
                Ok(Next::Settled { placed: true })
            }
            Err(PlaceError::Unknown(cause)) => {
                // In doubt (D28): the attempt keeps its places only until the tick after, which
                // finds its claim (looked at CLAIM_CHECKED_AFTER on) and sends it again with the
                // same token, or gives its places back while its outcome may still come.
                tracing::error!(error = %cause, task = %call.task_id, "whether a call started is unknown; in doubt until the next tick");
                outbound_telemetry::metrics(&[], &[("CallsInDoubt", 1.0, Unit::Count)]);
                Ok(Next::Stop)
            }
        }
    }

    /// Saves the provider's id of a placed call, so its outcome finds its attempt.
    async fn placed(&self, call: &CallRef, call_id: &str) -> Result<Next, Error> {
        let check_at =
            Timestamp(call.claimed_at.0 + self.config.reconcile_after.as_millis() as i64);
        if !self.store.mark_placed(call, call_id, check_at).await? {
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
        if planted(Bug::GiveBackSkipped) {
            return Ok(());
        }
        let Err(error) = self.store.release_call(call, retry_at, why).await else {
            if let Some(frequency) = frequency {
                self.uncount(&call.tenant, frequency, call.claimed_at).await;
            }
            return Ok(());
        };
        tracing::warn!(%error, "refused call not given back; marked for reconcile");
        self.store.mark_refused(call).await.map_err(|_| error)
    }

    /// Takes back an attempt counted at `at` toward the frequency cap for a call never placed.
    /// Best effort: a count left over makes the number wait, never called too often.
    pub(super) async fn uncount(&self, tenant: &Tenant, frequency: &FrequencyClaim, at: Timestamp) {
        if let Err(error) = self.store.uncount_attempt(tenant, frequency, at).await {
            tracing::warn!(%error, "an attempt never placed stays counted toward the cap");
        }
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

/// What a run does with a claim the store refused (D13, D16, D17, D22, D23).
#[derive(Debug, PartialEq, Eq)]
enum OnRefusal {
    /// Another run claimed the attempt, or the contact's state moved on: settled for the cursor.
    Taken,
    /// Not called (D18), until then if it may be later.
    Skip(Skip, Option<Timestamp>),
    /// The number's count of attempts moved under a concurrent claim: on with the next contact.
    Later,
    /// This second's provider rate is used up: the same claim again after this wait, at the
    /// next second.
    Wait(Duration),
    /// The caller ID is no longer the tenant's (the operator took it back since the run read
    /// the settings): the task fails, the run stops (D22, D28).
    Withhold,
    /// Due and no room: held back by capacity, as its diagnostics say (D19, D23); the run stops.
    HeldBack,
    /// Nothing more for this run.
    Stop,
}

/// The run's answer to `refused` at `now`; `may_wait`: the run is within its deadline, so a
/// claim refused for this second's rate waits for the next. A store that did not answer stops
/// the run here; the run returns the store's error itself, before asking.
fn on_refusal(refused: &ClaimRefused, now: Timestamp, may_wait: bool) -> OnRefusal {
    match refused {
        ClaimRefused::Taken => OnRefusal::Taken,
        ClaimRefused::DoNotCall => OnRefusal::Skip(Skip::Dnc, None),
        ClaimRefused::Capped(at) => OnRefusal::Skip(Skip::FrequencyCap, Some(*at)),
        ClaimRefused::Contended => OnRefusal::Later,
        ClaimRefused::CallerIdGone => OnRefusal::Withhold,
        ClaimRefused::RateLimited if may_wait => {
            let into_second = u64::try_from(now.0.rem_euclid(1000)).unwrap_or(0);
            OnRefusal::Wait(Duration::from_millis(1000 - into_second + 5))
        }
        ClaimRefused::TaskFull | ClaimRefused::ServiceFull => OnRefusal::HeldBack,
        ClaimRefused::RateLimited | ClaimRefused::TaskNotRunning | ClaimRefused::Store(_) => {
            OnRefusal::Stop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refused_claim_has_one_answer() {
        let now = Timestamp(1_800_000_000_250);
        let at = Timestamp(now.0 + 60_000);
        let cases = [
            (ClaimRefused::Taken, OnRefusal::Taken),
            (ClaimRefused::DoNotCall, OnRefusal::Skip(Skip::Dnc, None)),
            (
                ClaimRefused::Capped(at),
                OnRefusal::Skip(Skip::FrequencyCap, Some(at)),
            ),
            (ClaimRefused::Contended, OnRefusal::Later),
            (ClaimRefused::CallerIdGone, OnRefusal::Withhold),
            (ClaimRefused::TaskFull, OnRefusal::HeldBack),
            (ClaimRefused::ServiceFull, OnRefusal::HeldBack),
            (ClaimRefused::TaskNotRunning, OnRefusal::Stop),
            (
                ClaimRefused::Store(Error::unavailable("claiming a call", "throttled")),
                OnRefusal::Stop,
            ),
        ];
        for (refused, answer) in cases {
            assert_eq!(on_refusal(&refused, now, true), answer, "{refused:?}");
        }
    }

    #[test]
    fn a_claim_over_the_rate_waits_for_the_next_second_only_within_the_deadline() {
        // 250 ms into the second: the next begins in 750 ms, and 5 more leave it begun.
        let now = Timestamp(1_800_000_000_250);
        assert_eq!(
            on_refusal(&ClaimRefused::RateLimited, now, true),
            OnRefusal::Wait(Duration::from_millis(755))
        );
        assert_eq!(
            on_refusal(&ClaimRefused::RateLimited, now, false),
            OnRefusal::Stop
        );
    }
}

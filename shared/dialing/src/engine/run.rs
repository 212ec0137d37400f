//! A dial run (D13-D18, D22): one task's due contacts claimed and called up to its share, each
//! only inside its window in the called party's time, off the do-not-call list and under the
//! frequency cap, from the caller ID and with the flow and attributes the task and its tenant
//! chose; a contact that may not be called is skipped with its reason, and a call the provider
//! refuses is given back (not an attempt).

use super::completion::Completion;
use super::Engine;
use chrono_tz::Tz;
use outbound_adapters::store::dialing::{
    Attempts, Caps, ClaimRefused, FrequencyClaim, Gate, GiveBack, Skipped,
    CLAIM_CHECKED_AFTER_MILLIS, SKIPS_IN_ONE,
};
use outbound_adapters::telephony::provider::{
    Busy, CallRequest, PlaceError, Provider, ServiceRefusal,
};
use outbound_model::call::{CallAttempt, CallRef, CallReport, Reason, Skip, Target};
use outbound_model::dnc::lookup_key;
use outbound_model::error::Error;
use outbound_model::local_time::{contact_zones, own_zone, Windows};
use outbound_model::numbers::{e164, Country};
use outbound_model::plan::due_contacts;
use outbound_model::run_slice::{self, rests_until, takes_another, FreshContact, SlicePlan};
use outbound_model::settings::FrequencyCap;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{rules_time, Due, Fresh, HeldBack, Judged, RunSlice, TaskContact};
use outbound_model::telephony::{results_room, CallSetup, Withheld, E164_ATTRIBUTE};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
use outbound_telemetry::Unit;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
// tokio's clock: the same as std's in a Lambda, virtual under the simulation's paused runtime,
// where a deadline read from the wall clock would make a run's length depend on the machine.
use tokio::time::Instant;

/// What one dial run did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DialReport {
    pub placed: usize,
    pub completed: bool,
}

/// How long one dial run may wait for the provider rate before it leaves the rest to the next.
const RUN_DEADLINE: Duration = Duration::from_secs(20);
/// How long a run's slice holds its room, should the run die without giving it back: its
/// deadline and a grace (D28). A claim whose provider id was not saved by then is in doubt,
/// looked at by the tick after.
const SLICE_LIFETIME: Duration = Duration::from_millis(CLAIM_CHECKED_AFTER_MILLIS as u64);
const _: () = assert!(SLICE_LIFETIME.as_secs() > RUN_DEADLINE.as_secs());
/// Slices one run may lose to runs that took them first before it leaves the task to them.
const SLICE_TRIES: usize = 4;
/// Quota refusals in a row, with nothing else in flight, that mean a quota is missing.
const QUOTA_TRIES: u32 = 5;
/// How long a contact whose call the provider refused for rate or capacity waits.
const BUSY_RETRY: Duration = Duration::from_secs(5);

/// What one try at a slice came to.
enum Slice {
    /// `more`: the slice was full and every contact of it settled, so the task may have more
    /// due and room for them: the run takes the next slice.
    Done { report: DialReport, more: bool },
    /// Another run moved the task's cursor or room first.
    Lost,
}

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

/// What the tenant's settings and the task's data source say of its calls (D14-D17).
struct Rules {
    windows: Windows,
    country: Option<Country>,
    cap: Option<FrequencyCap>,
    /// The caps a claim of this run stays under: the task's own is its share, so runs of one
    /// task that overlap never hold more than the share between them (D23).
    caps: Caps,
    /// When these rules last changed (D24), and the data source's `contacts_added`: contacts
    /// parked under older rules are judged again, and a resting task wakes when either moves.
    judged: Judged,
    /// The caller ID and flow of the task's calls (D22), local presence's numbers mapped once.
    setup: CallSetup,
    /// The bytes of attributes the flow may add during a call: the task's results (D22).
    results_room: usize,
    /// Where the claim checks the tenant's do-not-call guards (D16).
    guards_apart: bool,
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
            zones: if planted(Bug::CallingHoursInUtc) {
                vec![Tz::UTC]
            } else {
                contact_zones(
                    target.time_zone.as_deref(),
                    e164.as_deref(),
                    rules.windows.task_zone,
                )
            },
            own_zone: own_zone(target.time_zone.as_deref()).is_some(),
            counted: e164
                .clone()
                .unwrap_or_else(|| target.phone.as_str().to_owned()),
            e164,
            target: target.clone(),
        }
    }
}

/// A start in doubt to send again (D28): the request, and the attempt it counted toward the
/// frequency cap (and when), to take back should it not be sent.
pub(super) struct Resend {
    pub(super) request: CallRequest,
    pub(super) counted: Option<(FrequencyClaim, Timestamp)>,
}

/// What may become of a start in doubt now (D28).
pub(super) enum Again {
    /// Sent again with its token.
    Send(Box<Resend>),
    /// Not now, maybe later: its task paused, its window or the calling hours closed, its
    /// number at the frequency cap.
    Later,
    /// Never by this attempt: its task over, its contact deleted, its number listed, or its
    /// number, flow or caller ID no longer the tenant's.
    Never,
}

impl<P: Provider> Engine<P> {
    /// Calls up to `budget` due contacts of one task (D13), each only when its window is open in
    /// its local time (D15), its number is not on the do-not-call list (D16) and under the
    /// frequency cap (D17); then, when nothing is left to call or in flight, completes it.
    /// Runs that overlap take different slices of the task's contacts and room (D23).
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn dial(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        budget: u32,
    ) -> Result<DialReport, Error> {
        let mut report = DialReport::default();
        let started = Instant::now();
        let mut lost = 0;
        let mut task = match self.store.task(tenant, task_id).await {
            Ok(task) => task,
            Err(Error::NotFound(_)) => return Ok(report),
            Err(error) => return Err(error),
        };
        while lost < SLICE_TRIES && started.elapsed() < RUN_DEADLINE {
            let now = self.clock.now();
            if task.status != TaskStatus::Running || !self.may_dial_now(&task, now) {
                break;
            }
            match self.dial_slice(tenant, &task, budget, now).await? {
                Slice::Done { report: done, more } => {
                    report.placed += done.placed;
                    report.completed |= done.completed;
                    if !more {
                        break;
                    }
                }
                // Another run took the slice first: the next one, after it.
                Slice::Lost => lost += 1,
            }
            task = match self.store.task(tenant, task_id).await {
                Ok(again) => again,
                Err(Error::NotFound(_)) => break,
                Err(error) => return Err(error),
            };
        }
        Ok(report)
    }

    /// One run over the slice of `task` (as read) that is due now: its retries, then the
    /// never-dialled contacts after its cursor, at most its room. The cursor moves past the
    /// slice, and the room is taken, before any call (D23).
    async fn dial_slice(
        &self,
        tenant: &Tenant,
        task: &Task,
        budget: u32,
        now: Timestamp,
    ) -> Result<Slice, Error> {
        let mut report = DialReport::default();
        // Runs that died left their slices (D28): their room is free once lapsed, and their
        // never-dialled contacts are queued, never left behind the cursor.
        for (run, slice) in task.lapsed_slices(now) {
            self.requeue_lapsed(tenant, task, slice, now).await?;
            self.store.give_back_room(tenant, &task.id, run).await?;
        }
        // The budget is the task's share of calls in flight: this run tops it up to its share,
        // less what runs still going have taken (D23), so calls ended since the tick are
        // replaced at once (D13) and overlapping runs never claim the same room.
        let share = budget.min(self.config.max_in_flight_per_task);
        let taken = task.reserved_at(now);
        let room = run_slice::room(share, task.in_flight, taken);
        // Nothing to place and, with calls in flight or runs going, nothing to complete: no
        // contact need be read (a read in contact order is one Query a contact shard).
        if room == 0 && (task.in_flight > 0 || taken > 0) {
            return Ok(Slice::Done {
                report,
                more: false,
            });
        }
        let read = futures::future::try_join(
            self.rules(tenant, task, share),
            self.store.contacts_after(
                tenant,
                &task.data_source_id,
                task.cursor.as_deref(),
                room.max(1),
                &task.settings.call_attributes,
            ),
        )
        .await;
        let (rules, fresh) = match read {
            Ok(read) => read,
            // Its data source is gone (D11 keeps it while the task runs): nothing to dial, and
            // nothing the completion check could read.
            Err(Error::NotFound(_)) => {
                return Ok(Slice::Done {
                    report,
                    more: false,
                })
            }
            Err(error) => return Err(error),
        };
        let retries = if room > 0 {
            self.store
                .due_retries(tenant, &task.id, now, room, rules.judged.rules_at)
                .await?
        } else {
            Vec::new()
        };
        if retries.is_empty() && fresh.is_empty() {
            // A run still in its slice has contacts without a state yet, which the check would
            // take for never-dialled ones left behind the cursor and queue under the run.
            let completion = if task.in_flight == 0 && taken == 0 {
                self.complete_if_done(tenant, task, rules.judged.contacts_added)
                    .await?
            } else {
                Completion::NotYet
            };
            report.completed = completion == Completion::Completed;
            if !report.completed && room > 0 {
                let pending = completion == Completion::OutcomesPending;
                self.rest_until_due(tenant, task, now, rules.judged, pending)
                    .await?;
            }
            return Ok(Slice::Done {
                report,
                more: false,
            });
        }
        if room == 0 {
            // Contacts due, and no room in the task's share: held back by capacity (D23).
            self.store
                .mark_held_back(tenant, task, HeldBack::Capacity, now)
                .await?;
            return Ok(Slice::Done {
                report,
                more: false,
            });
        }
        let retry_ids: Vec<Id> = retries.iter().map(|s| s.contact_id.clone()).collect();
        let mut targets = if retry_ids.is_empty() {
            HashMap::new()
        } else {
            self.store
                .contact_targets(
                    tenant,
                    &task.data_source_id,
                    &retry_ids,
                    &task.settings.call_attributes,
                )
                .await?
        };
        for state in &retries {
            if !targets.contains_key(&state.contact_id) {
                // Deleted from the data source: never dialled again, and no reason to wait (D13).
                self.store.finish_deleted(tenant, task, state).await?;
            }
        }
        let fresh_ids: Vec<Fresh> = fresh.iter().map(|(f, _, _)| f.clone()).collect();
        for (f, target, _) in &fresh {
            targets.insert(f.contact_id.clone(), target.clone());
        }
        let existing: HashSet<Id> = targets.keys().cloned().collect();
        let due = due_contacts(&retries, &fresh_ids, &existing, now, room);
        // The slice: the cursor moves past the last never-dialled contact this run will try (and
        // past those before it, called or deleted already), and the run's room is taken.
        let plan = SlicePlan::of(&due, &fresh, task.cursor.as_deref(), now, SLICE_LIFETIME);
        let run = Id::new();
        if !self
            .store
            .take_slice(tenant, task, run.as_str(), plan.last(), &plan.slice)
            .await?
        {
            return Ok(Slice::Lost);
        }
        // Whatever the calls come to, an error included, the slice is ended (D28): its room
        // given back and the contacts it did not settle put back in play.
        let mut settled = HashSet::new();
        let called = self
            .call_slice(tenant, task, &due, &targets, &rules, &mut settled)
            .await;
        let ended = self
            .end_slice(tenant, task, run.as_str(), &plan, &fresh, &settled)
            .await;
        report.placed += called?;
        ended?;
        let more = takes_another(&due, &settled);
        Ok(Slice::Done { report, more })
    }

    /// Queues the never-dialled contacts of a dead run's lapsed slice (D28): those after its
    /// `from` up to its `to`, at most its room of them; each is queued only where it has no
    /// state yet (a contact the run claimed, or another queued, is left as it is).
    async fn requeue_lapsed(
        &self,
        tenant: &Tenant,
        task: &Task,
        slice: &RunSlice,
        now: Timestamp,
    ) -> Result<(), Error> {
        let Some(to) = slice.to.as_deref() else {
            return Ok(());
        };
        let read = self
            .store
            .contacts_after(
                tenant,
                &task.data_source_id,
                slice.from.as_deref(),
                slice.room.max(1) as usize,
                &[],
            )
            .await;
        let taken: Vec<Id> = match read {
            Ok(fresh) => fresh
                .into_iter()
                .filter(|(_, _, key)| key.as_str() <= to)
                .map(|(fresh, _, _)| fresh.contact_id)
                .collect(),
            // Its data source is gone: nothing to call.
            Err(Error::NotFound(_)) => return Ok(()),
            Err(error) => return Err(error),
        };
        self.store
            .queue_never_dialled(tenant, task, &taken, now)
            .await
    }

    /// Calls or skips the contacts `due` of a slice, each settled into `settled` once its claim
    /// or its skip is written: the calls placed.
    async fn call_slice(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &[Due],
        targets: &HashMap<Id, Target>,
        rules: &Rules,
        settled: &mut HashSet<Id>,
    ) -> Result<usize, Error> {
        let calls: Vec<(&Due, Callee)> = due
            .iter()
            .map(|one| (one, Callee::of(&targets[&one.contact_id], rules)))
            .collect();
        let attempts = match rules.cap {
            Some(_) => {
                let numbers: Vec<String> = calls.iter().map(|(_, c)| c.counted.clone()).collect();
                self.store.frequency_attempts(tenant, &numbers).await?
            }
            None => HashMap::new(),
        };
        let started = Instant::now();
        let mut placed = 0;
        let mut skipped = Vec::new();
        for (one, callee) in &calls {
            let seen = attempts.get(&callee.counted).cloned().unwrap_or_default();
            match self
                .try_call(tenant, task, one, callee, rules, seen, started)
                .await?
            {
                Next::Settled { placed: one_placed } => {
                    placed += usize::from(one_placed);
                    settled.insert(one.contact_id.clone());
                }
                Next::Skipped(skip, until) => {
                    let window = matches!(skip, Skip::OutsideWindow | Skip::CallingHours);
                    skipped.push(Skipped {
                        due: (*one).clone(),
                        skip,
                        until,
                        parked_under: window.then_some(rules.judged.rules_at),
                    });
                    if skipped.len() == SKIPS_IN_ONE {
                        self.skip(tenant, task, std::mem::take(&mut skipped), settled)
                            .await?;
                    }
                }
                Next::Later => {}
                Next::Stop => break,
            }
        }
        self.skip(tenant, task, skipped, settled).await?;
        Ok(placed)
    }

    /// Ends run `run`'s slice (D23): gives its room back, and returns the never-dialled contacts
    /// it did not settle (its deadline, a busy provider, an error). While no run has taken a
    /// slice after it, the cursor moves back to the first of them, so they come next as if never
    /// taken; otherwise they are queued as due retries, never left behind the cursor.
    async fn end_slice(
        &self,
        tenant: &Tenant,
        task: &Task,
        run: &str,
        plan: &SlicePlan,
        fresh: &[FreshContact],
        settled: &HashSet<Id>,
    ) -> Result<(), Error> {
        let (left, back_to) = plan.left(fresh, settled, task.cursor.as_deref());
        if self
            .store
            .end_slice(tenant, &task.id, run, plan.last(), back_to)
            .await?
        {
            return Ok(());
        }
        if !left.is_empty() {
            self.store
                .queue_never_dialled(tenant, task, &left, self.clock.now())
                .await?;
        }
        self.store.give_back_room(tenant, &task.id, run).await
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
            judged: Judged {
                rules_at: rules_time(&settings, Some(&source)),
                contacts_added: source.contacts_added,
            },
            setup: CallSetup::new(&task.settings, &settings, self.config.telephony.fallback),
            results_room: results_room(&task.settings.result_attributes),
            guards_apart: settings.dial_guards,
        })
    }

    /// A run that found nothing due (D23): the task gets no share and no dial run until
    /// [`rests_until`] says, unless an outcome, a recall or a resume comes first, or the tick
    /// finds contacts added or the rules changed since `judged`. A task whose only contacts
    /// left wait for their outcome (`outcomes_pending`, D28) rests until one comes: its share
    /// goes to tasks with work.
    async fn rest_until_due(
        &self,
        tenant: &Tenant,
        task: &Task,
        now: Timestamp,
        judged: Judged,
        outcomes_pending: bool,
    ) -> Result<(), Error> {
        let waiting = self
            .store
            .earliest_waiting(tenant, &task.id, judged.rules_at)
            .await?;
        match rests_until(waiting, outcomes_pending, now) {
            Some(until) => self.store.mark_idle(tenant, task, until, judged).await,
            None => Ok(()),
        }
    }

    /// The start of attempt `attempt`, in doubt (D28), to send again: built as the claim built it,
    /// from the number it was claimed with, and counted toward the frequency cap; else whether
    /// its contact may be called later ([`Again`]).
    pub(super) async fn request_again(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: &Task,
    ) -> Result<Again, Error> {
        let now = self.clock.now();
        match task.status {
            TaskStatus::Running if self.may_dial_now(task, now) => {}
            TaskStatus::Running | TaskStatus::Paused => return Ok(Again::Later),
            _ => return Ok(Again::Never),
        }
        let tenant = &attempt.tenant;
        let rules = match self
            .rules(tenant, task, self.config.max_in_flight_per_task)
            .await
        {
            Ok(rules) => rules,
            Err(Error::NotFound(_)) => return Ok(Again::Never),
            Err(error) => return Err(error),
        };
        let targets = self
            .store
            .contact_targets(
                tenant,
                &task.data_source_id,
                std::slice::from_ref(&attempt.contact_id),
                &task.settings.call_attributes,
            )
            .await?;
        let Some(target) = targets.get(&attempt.contact_id) else {
            return Ok(Again::Never);
        };
        let callee = Callee::of(target, &rules);
        if rules
            .windows
            .admit(&callee.zones, callee.own_zone, now)
            .is_err()
        {
            return Ok(Again::Later);
        }
        let listed_as = lookup_key(&callee.target.phone, callee.e164.as_deref());
        if self
            .store
            .dnc_entry_of(tenant, &[listed_as])
            .await?
            .is_some()
        {
            return Ok(Again::Never);
        }
        let due = Due {
            contact_id: attempt.contact_id.clone(),
            attempt: attempt.attempt,
            state: Some(state.clone()),
        };
        let Ok(mut request) = self.request(tenant, task, &due, &callee, &rules) else {
            // Its number or flow is no longer the tenant's: never sent again.
            return Ok(Again::Never);
        };
        // The number the claim chose, presented again only while the tenant holds it: a re-send
        // may come days later (D28), after the operator took it back.
        if let Some(number) = &state.calling_from {
            if !self.store.holds_caller_id(tenant, number).await? {
                return Ok(Again::Never);
            }
        }
        request.caller_id = state.calling_from.clone();
        // Sent again, the start may be the one that places the call, now: counted toward the
        // frequency cap as an attempt at this time, so only while the number is under it (D17).
        let counted = match rules.cap.filter(|_| !planted(Bug::ResendUncounted)) {
            None => None,
            Some(cap) => {
                let number = callee.counted;
                let seen = (self.store)
                    .frequency_attempts(tenant, std::slice::from_ref(&number))
                    .await?
                    .remove(&number)
                    .unwrap_or_default();
                let frequency = FrequencyClaim { number, cap, seen };
                let capped = (frequency.seen.eligible_at(cap)).is_some_and(|at| at > now);
                if capped || !self.store.count_attempt(tenant, &frequency, now).await? {
                    return Ok(Again::Later);
                }
                Some((frequency, now))
            }
        };
        Ok(Again::Send(Box::new(Resend { request, counted })))
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
        let request = match self.request(tenant, task, due, callee, rules) {
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
        let frequency = (rules.cap)
            .filter(|_| !planted(Bug::FrequencyIgnored))
            .map(|cap| FrequencyClaim {
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
            listed_as: (!planted(Bug::DncIgnored))
                .then(|| lookup_key(&callee.target.phone, callee.e164.as_deref()).to_owned()),
            guards_apart: rules.guards_apart,
            frequency,
            calling_from: request.caller_id.clone(),
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
            let refused = match (self.store)
                .claim_call(tenant, task, due, &gate, rules.caps, now)
                .await
            {
                Ok(call) => return self.place(call, &request, gate.frequency.as_ref()).await,
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

    /// Records a run's skips (D18), together: settled for this run either way, by these skips
    /// or by whichever run moved a contact first.
    async fn skip(
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

    /// The call attempt `due.attempt` to `callee` would be (D22): from the number the task and
    /// its tenant chose for it (none where the provider shows its own whatever the call names),
    /// with their flow, the service's own attributes and the contact's values of the task's
    /// `callAttributes` (a field it lacks is left out).
    fn request(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        callee: &Callee,
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
            rules
                .setup
                .caller_id(callee.e164.as_deref())?
                .map(str::to_owned)
        } else {
            None
        };
        let contact_flow_id = rules.setup.contact_flow_id()?.map(str::to_owned);
        Ok(CallRequest {
            tenant: attempt.tenant,
            task_id: attempt.task_id,
            contact_id: attempt.contact_id,
            attempt: attempt.attempt,
            phone: callee.target.phone.clone(),
            e164: callee.e164.clone(),
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

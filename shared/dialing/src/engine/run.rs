//! A dial run (D13-D18, D22, D23): one task's due contacts taken a slice at a time (its retries,
//! then the never-dialled after its cursor, at most its room), each called by [`super::call`]
//! or skipped with its reason, and the rules (D14-D17) its calls are judged by; a run that finds
//! nothing due rests the task until something is.

use super::call::Next;
use super::completion::Completion;
use super::tick::Reach;
use super::Engine;
use chrono_tz::Tz;
use outbound_adapters::store::dialing::{Caps, Skipped, CLAIM_CHECKED_AFTER_MILLIS, SKIPS_IN_ONE};
use outbound_adapters::telephony::provider::Provider;
use outbound_model::call::{Skip, Target};
use outbound_model::error::Error;
use outbound_model::local_time::{contact_zones, own_zone, Windows};
use outbound_model::numbers::{e164, Country};
use outbound_model::plan::due_contacts;
use outbound_model::run_slice::{self, rests_until, takes_another, FreshContact, SlicePlan};
use outbound_model::settings::FrequencyCap;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{rules_time, Due, Fresh, HeldBack, Judged, RunSlice};
use outbound_model::telephony::{results_room, CallSetup};
use outbound_model::Tenant;
use outbound_model::{Id, Task, TaskStatus, Timestamp};
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
pub(super) const RUN_DEADLINE: Duration = Duration::from_secs(20);
/// How long a run's slice holds its room, should the run die without giving it back: its
/// deadline and a grace (D28). A claim whose provider id was not saved by then is in doubt,
/// looked at by the tick after.
const SLICE_LIFETIME: Duration = Duration::from_millis(CLAIM_CHECKED_AFTER_MILLIS as u64);
const _: () = assert!(SLICE_LIFETIME.as_secs() > RUN_DEADLINE.as_secs());
/// Slices one run may lose to runs that took them first before it leaves the task to them.
const SLICE_TRIES: usize = 4;

/// What one try at a slice came to.
enum Slice {
    /// `more`: the slice was full and every contact of it settled, so the task may have more
    /// due and room for them: the run takes the next slice.
    Done { report: DialReport, more: bool },
    /// Another run moved the task's cursor or room first.
    Lost,
}

/// What the tenant's settings and the task's data source say of its calls (D14-D17).
pub(super) struct Rules {
    pub(super) windows: Windows,
    pub(super) country: Option<Country>,
    pub(super) cap: Option<FrequencyCap>,
    /// The caps a claim of this run stays under: the task's own is its share, so runs of one
    /// task that overlap never hold more than the share between them (D23).
    pub(super) caps: Caps,
    /// When these rules last changed (D24), and the data source's `contacts_added`: contacts
    /// parked under older rules are judged again, and a resting task wakes when either moves.
    pub(super) judged: Judged,
    /// When the agents of the task's queue were read for this run's budget (D30): a run of an
    /// agent-paced task places a call only while that reading is the newest kept. None for any
    /// other run.
    pub(super) paced_at: Option<Timestamp>,
    /// The caller ID and flow of the task's calls (D22), local presence's numbers mapped once.
    pub(super) setup: CallSetup,
    /// The bytes of attributes the flow may add during a call: the task's results (D22).
    pub(super) results_room: usize,
    /// Where the claim checks the tenant's do-not-call guards (D16).
    pub(super) guards_apart: bool,
}

/// One due contact's number as the rules read it.
pub(super) struct Callee {
    pub(super) target: Target,
    pub(super) e164: Option<String>,
    /// Its time zones (D15).
    pub(super) zones: Vec<Tz>,
    /// Whether its own `timeZone` field names its zone, rather than its number (D24).
    pub(super) own_zone: bool,
    /// The form its attempts are counted under for the frequency cap (D17).
    pub(super) counted: String,
}

impl Callee {
    pub(super) fn of(target: &Target, rules: &Rules) -> Self {
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
impl<P: Provider> Engine<P> {
    /// Calls up to `budget` due contacts of one task (D13), each only when its window is open in
    /// its local time (D15), its number is not on the do-not-call list (D16) and under the
    /// frequency cap (D17); then, when nothing is left to call or in flight, completes it.
    /// Runs that overlap take different slices of the task's contacts and room (D23).
    pub async fn dial(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        budget: u32,
    ) -> Result<DialReport, Error> {
        self.dial_paced(tenant, task_id, budget, None).await
    }

    /// [`Engine::dial`] for a budget paced against the agents of the task's queue as read at
    /// `paced_at` (D30), when it is one.
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn dial_paced(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        budget: u32,
        paced_at: Option<Timestamp>,
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
            let reach = match (task.status, self.reach(&task, now)) {
                (TaskStatus::Running, Some(reach)) => reach,
                _ => break,
            };
            match (self.dial_slice(tenant, &task, budget, paced_at, now, reach)).await? {
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
    /// never-dialled contacts after its cursor, at most its room; its callbacks due alone when
    /// `reach` says its window is closed. The cursor moves past the slice, and the room is
    /// taken, before any call (D23).
    async fn dial_slice(
        &self,
        tenant: &Tenant,
        task: &Task,
        budget: u32,
        paced_at: Option<Timestamp>,
        now: Timestamp,
        reach: Reach,
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
        let fresh = async {
            match reach {
                Reach::Everyone => {
                    self.store
                        .contacts_after(
                            tenant,
                            &task.data_source_id,
                            task.cursor.as_deref(),
                            room.max(1),
                            &task.settings.contact_fields(),
                        )
                        .await
                }
                Reach::Callbacks => Ok(Vec::new()),
            }
        };
        let read = futures::future::try_join(self.rules(tenant, task, share), fresh).await;
        let (rules, fresh) = match read {
            Ok((rules, fresh)) => (Rules { paced_at, ..rules }, fresh),
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
        let retries = match reach {
            _ if room == 0 => Vec::new(),
            Reach::Everyone => {
                self.store
                    .due_retries(tenant, &task.id, now, room, rules.judged.rules_at)
                    .await?
            }
            Reach::Callbacks => {
                self.store
                    .due_callbacks(tenant, &task.id, now, room)
                    .await?
            }
        };
        if retries.is_empty() && fresh.is_empty() {
            if reach == Reach::Callbacks {
                // Its window closed: neither complete nor rest, its other contacts waiting for it.
                return Ok(Slice::Done {
                    report,
                    more: false,
                });
            }
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
                    &task.settings.contact_fields(),
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
        // Read whether or not the tenant has a cap: each claim counts its number's attempt.
        let mut numbers: Vec<String> = calls.iter().map(|(_, c)| c.counted.clone()).collect();
        // A batch read refuses a key named twice: two contacts may share a number's E.164 form.
        numbers.sort_unstable();
        numbers.dedup();
        let attempts = self.store.frequency_attempts(tenant, &numbers).await?;
        let started = Instant::now();
        let mut placed = 0;
        let mut skipped = Vec::new();
        for (one, callee) in &calls {
            let seen = attempts.get(&callee.counted).cloned().unwrap_or_default();
            // Boxed: inline, a slice's future is too large for a thread's stack in a debug build.
            let next = Box::pin(self.try_call(tenant, task, one, callee, rules, seen, started));
            match next.await? {
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
                    if skipped.iter().map(Skipped::actions).sum::<usize>() + 1 >= SKIPS_IN_ONE {
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
    pub(super) async fn rules(
        &self,
        tenant: &Tenant,
        task: &Task,
        share: u32,
    ) -> Result<Rules, Error> {
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
            paced_at: None,
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
}

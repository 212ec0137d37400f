//! What became of each call, recorded exactly once (D13): an ended call's report, a call whose
//! id was never saved found from what it carries, and a call whose outcome never came
//! reconciled with the provider.

use super::resend::Again;
use super::Engine;
use crate::call_event::EndedCall;
use outbound_adapters::store::dialing::{GiveBack, RecordFailure};
use outbound_adapters::telephony::provider::{CallRequest, CallStatus, PlaceError, Provider};
use outbound_model::call::{CallAttempt, CallRef, CallReport};
use outbound_model::error::Error;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::TaskContact;
use outbound_model::Tenant;
use outbound_model::Timestamp;
use outbound_model::{Id, Task};
use outbound_telemetry::Unit;

impl<P: Provider> Engine<P> {
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
                    tracing::info!(outcome = ?report.outcome(), reason = report.reason.name(), detail = %report.detail, "outcome recorded");
                    outbound_telemetry::metrics(
                        &[("Outcome", report.outcome().name())],
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
                    // An attempt in doubt may have given back its places meanwhile (D28),
                    // and a call may have reached an agent (D30).
                    call.released = state.released;
                    call.with_agent = state.with_agent;
                    if state.updated_at != call.claimed_at {
                        // Only a recall moves a contact on during its call. It granted
                        // `attempts + maxDialCount` counting from before this call: the fresh
                        // attempts come after it (D12), so this call is not one of them.
                        call.allowance = state.allowance + 1;
                        call.recalled = state.recalled;
                        call.priority = state.priority;
                        call.claimed_at = state.updated_at;
                    }
                }
                RecordFailure::ContactGone => with_contact = false,
                RecordFailure::ReportsArrived {
                    results,
                    flow_writes,
                } => {
                    call.results = results;
                    if let Some(record) = call.record.as_mut() {
                        record.flow_writes = flow_writes;
                    }
                }
                RecordFailure::TaskGone => {
                    return self
                        .store
                        .drop_orphan_call(
                            &call.tenant,
                            &call.task_id,
                            &call.contact_id,
                            call.attempt,
                            (!call.released).then_some(call.shard),
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

    /// A call that reached an agent of its task's queue, as its call-events message told it
    /// (D30): counted among the task's calls talking, once, so the pace counts the rest of its
    /// calls in flight as ringing. A call whose record is not saved yet, or whose outcome came
    /// first, is not counted: pacing then takes it for ringing, and places fewer calls.
    pub async fn call_with_agent(&self, call_id: &str) -> Result<(), Error> {
        match self.store.call_by_provider_id(call_id).await? {
            Some(call) => {
                let counted = self.store.mark_with_agent(&call).await?;
                tracing::info!(call_id, counted, "call with an agent");
            }
            None => tracing::info!(
                call_id,
                "a call with an agent that has no record; not counted"
            ),
        }
        Ok(())
    }

    /// A call that ended, as its call-events message told it: recorded on its attempt. An outcome
    /// that arrives before its call is marked placed fails, so SQS delivers it again later.
    pub async fn call_ended(&self, ended: EndedCall) -> Result<(), Error> {
        if let Some(call) = self.store.call_by_provider_id(&ended.call_id).await? {
            return self.record(call, &ended.report).await;
        }
        // No call record: the provider took the call but its id was never saved (the run died
        // after placing it, or saving failed), or is not saved yet; or the call is not ours.
        let carried = match ended.attempt {
            Some(carried) => Some(carried),
            None => self.provider.attempt_of(&ended.call_id).await?,
        };
        match carried {
            Some(carried) if self.signer.verifies(&carried) => {
                (self.record_recovered(&carried.attempt, &ended.call_id, &ended.report)).await
            }
            Some(_) => {
                crate::flow_results::unsigned(&ended.call_id, "call outcome");
                Ok(())
            }
            None => {
                tracing::info!(call_id = %ended.call_id, "outcome of a call that is not ours; ignored");
                outbound_telemetry::metrics(&[], &[("UnknownCallEvents", 1.0, Unit::Count)]);
                Ok(())
            }
        }
    }

    /// Records the outcome of attempt `attempt` found from what the call carries: while that
    /// attempt is still in flight, exactly as its call record would have (D13), with what its
    /// flow reported before any record of it was written (D28).
    async fn record_recovered(
        &self,
        attempt: &CallAttempt,
        call_id: &str,
        report: &CallReport,
    ) -> Result<(), Error> {
        let Some((state, task)) = self.in_flight(attempt).await? else {
            tracing::info!(task_id = %attempt.task_id, contact_id = %attempt.contact_id, attempt = attempt.attempt, "outcome recorded before; nothing changes");
            return Ok(());
        };
        tracing::warn!(task_id = %attempt.task_id, contact_id = %attempt.contact_id, attempt = attempt.attempt, "outcome of a call whose id was not saved");
        self.settle(attempt, &state, task, report, Some(call_id))
            .await
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

    /// Ends attempt `attempt`, in flight as `state` says, with `report`: recorded on its task
    /// from its call record when its id was saved (what its flow reported is there, D22, D28),
    /// else from its state and what the flow reported before any record (`call_id`, the
    /// provider's id of the call, when the outcome event named it); or, the task deleted, its
    /// place among the service's calls in flight given back.
    async fn settle(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: Option<Task>,
        report: &CallReport,
        call_id: Option<&str>,
    ) -> Result<(), Error> {
        match task {
            Some(task) => {
                let saved = match &state.call_id {
                    Some(call_id) => self
                        .store
                        .call_by_provider_id(call_id)
                        .await?
                        .filter(|call| call.attempt_ref() == *attempt),
                    None => None,
                };
                let mut call = match (saved, call_id) {
                    (Some(saved), _) => saved,
                    (None, Some(call_id)) => {
                        let (results, read) =
                            self.store.reported_before_record(call_id, attempt).await?;
                        CallRef {
                            results,
                            record: Some(read),
                            ..call_of(attempt, &task, state)
                        }
                    }
                    (None, None) => call_of(attempt, &task, state),
                };
                call.released = state.released;
                self.record(call, report).await
            }
            None => {
                let CallAttempt {
                    tenant,
                    task_id,
                    contact_id,
                    attempt,
                } = attempt;
                let shard = (!state.released).then_some(state.capacity_shard);
                self.store
                    .drop_orphan_call(tenant, task_id, contact_id, *attempt, shard)
                    .await
            }
        }
    }

    /// Settles a call whose outcome never came (D13): what the provider says of it, else failed
    /// "no outcome". A call the provider still reports in progress is given three times the
    /// reconcile time before it is given up. An attempt in doubt (D28) is sent again with its
    /// token when its contact may be called now, else gives back its places and waits for its
    /// outcome; released, it is sent again with its token (its places taken again) once its
    /// contact may be called, for as long as the provider honours the token, and only then
    /// settled "no outcome".
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
        // A call may be live until DIAL_MAX_CALL_SECONDS after the latest start that may have
        // placed it: its claim, or a start in doubt sent again with its token since (D28).
        let sent_again_at = state
            .sent_again_at
            .filter(|_| !planted(Bug::ResendJudgedByClaim));
        let may_be_live = (sent_again_at.or(state.claimed_at))
            .is_some_and(|at| now.0 - at.0 < self.config.max_call.as_millis() as i64);
        let later = Timestamp(now.0 + self.config.reconcile_after.as_millis() as i64);
        let report = match &state.call_id {
            // Refused by the provider, never placed: given back, not an attempt (D13).
            None if state.refused == Some(attempt) => match &task {
                Some(task) => {
                    let call = call_of(&call, task, &state);
                    return self.store.release_call(&call, now, GiveBack::Refused).await;
                }
                None => CallReport::no_outcome(),
            },
            // In doubt, still holding its places (D28): sent again, or its places given back.
            None if !state.released => match &task {
                Some(task) => return self.resolve_doubt(&call, &state, task, later).await,
                None => CallReport::no_outcome(),
            },
            // In doubt, its places given back: the provider may have a live call, whose
            // outcome event names the attempt and is recorded when it comes. While the
            // provider honours its token the start is sent again with it once the contact may
            // be called: the call placed, or the one the first start placed, never a second
            // (a person who answered and talks on is never called twice). Meanwhile it waits.
            None => match &task {
                Some(task)
                    if now.0 - state.claimed_at.unwrap_or(state.updated_at).0
                        < RESEND_WITHIN.as_millis() as i64
                        && !planted(Bug::ReleasedNeverResent) =>
                {
                    return self
                        .resend_released(&call, &state, task, later, may_be_live)
                        .await
                }
                _ if may_be_live => {
                    return self
                        .store
                        .check_call_later(tenant, (task_id, contact_id), attempt, later, None)
                        .await
                }
                _ => CallReport::no_outcome(),
            },
            Some(call_id) => match self.provider.describe(call_id).await? {
                CallStatus::Ended(report) => report,
                // Still connected: it keeps its places, and is looked at again a reconcile
                // time from now; its DISCONNECTED event records it when it comes.
                CallStatus::InProgress if may_be_live => {
                    return self
                        .store
                        .check_call_later(tenant, (task_id, contact_id), attempt, later, None)
                        .await
                }
                CallStatus::InProgress => {
                    tracing::warn!(%call_id, "call still live past DIAL_MAX_CALL_SECONDS; its places are given back");
                    CallReport::no_outcome()
                }
                CallStatus::Unknown => CallReport::no_outcome(),
            },
        };
        self.settle(&call, &state, task, &report, None).await
    }

    /// An attempt in doubt that still holds its places (D28): while its contact may be called
    /// now, the start is sent again with the same client token and the answer settles it (the
    /// call already placed, or placed now; a certain refusal given back). Otherwise, or when
    /// the answer is unknown again, its places are given back (an agent-paced task's are kept
    /// while its call may ring, D30) and it waits for its outcome, looked at again from `later`.
    async fn resolve_doubt(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: &Task,
        later: Timestamp,
    ) -> Result<(), Error> {
        let call = call_of(attempt, task, state);
        let now = self.clock.now();
        let keys = (&attempt.task_id, &attempt.contact_id);
        if let Again::Send(resend) = self.request_again(attempt, state, task).await? {
            // Its call may be live until DIAL_MAX_CALL_SECONDS after this send, whatever the
            // answer: the time is kept before it is sent (a start placed an hour after its
            // last send was settled "no outcome" a minute into its call, seed 4197).
            let tenant = &attempt.tenant;
            if !(self.store)
                .call_checked_later(tenant, keys, attempt.attempt, later, Some(now))
                .await?
            {
                // Settled, or its places given back, since it was read: not sent.
                self.not_sent(tenant, &resend).await;
                return Ok(());
            }
            // Settled by its answer; or still in doubt and holding its places, looked at again
            // from `later` as written above.
            if self.send_again(&call, &resend.request).await? || keeps_places_in_doubt(task) {
                return Ok(());
            }
        }
        if keeps_places_in_doubt(task) && may_ring(state, now) {
            let sent = last_sent(state);
            return (self.store)
                .check_call_later(&attempt.tenant, keys, attempt.attempt, later, Some(sent))
                .await;
        }
        if self
            .store
            .release_in_doubt(&attempt.tenant, task, state, attempt.attempt, later)
            .await?
        {
            tracing::warn!(task = %attempt.task_id, contact = %attempt.contact_id, attempt = attempt.attempt, "call in doubt gave back its places; it waits for its outcome");
            outbound_telemetry::metrics(&[], &[("CallsReleasedInDoubt", 1.0, Unit::Count)]);
        }
        Ok(())
    }
}

impl<P: Provider> Engine<P> {
    /// Sends the start of a call in doubt again with its token (D28): true when the answer
    /// settled it (the call placed, or the one the first start placed; a number refused), false
    /// when it is still in doubt, a busy provider included ([`PlaceError::sent_again`]).
    async fn send_again(&self, call: &CallRef, request: &CallRequest) -> Result<bool, Error> {
        match PlaceError::sent_again(self.provider.place(request).await) {
            Err(PlaceError::Unknown(cause)) => {
                tracing::warn!(error = %cause, "a call in doubt is still in doubt");
                Ok(false)
            }
            answer => {
                tracing::info!(
                    ok = answer.is_ok(),
                    "a call in doubt sent again with its token"
                );
                self.answered(call, answer, None).await?;
                Ok(true)
            }
        }
    }

    /// An attempt in doubt that gave back its places (D28): once its contact may be called it
    /// takes its places again and its start is sent again with its token; still in doubt, it
    /// gives them back. Not callable now, or no room, it is looked at again from `later`. Never
    /// to be sent again (its number listed, its contact deleted, ...), it waits only while a
    /// call its first start placed may be live (`may_be_live`), for that call's outcome; then it
    /// is settled "no outcome".
    async fn resend_released(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: &Task,
        later: Timestamp,
        may_be_live: bool,
    ) -> Result<(), Error> {
        let CallAttempt {
            tenant,
            task_id,
            contact_id,
            attempt: number,
        } = attempt;
        let resend = match self.request_again(attempt, state, task).await? {
            Again::Send(resend) => Some(resend),
            Again::Later => None,
            Again::Never if may_be_live => None,
            Again::Never => {
                let report = CallReport::no_outcome();
                return (self.settle(attempt, state, Some(task.clone()), &report, None)).await;
            }
        };
        if let Some(resend) = resend {
            let now = self.clock.now();
            let held = (self.store)
                .hold_in_doubt_again(tenant, task, state, *number, self.caps(), now)
                .await?;
            if held {
                let held = TaskContact {
                    released: false,
                    ..state.clone()
                };
                if self
                    .send_again(&call_of(attempt, task, &held), &resend.request)
                    .await?
                {
                    return Ok(());
                }
                if keeps_places_in_doubt(task) {
                    let (keys, now) = ((task_id, contact_id), self.clock.now());
                    return (self.store)
                        .check_call_later(tenant, keys, *number, later, Some(now))
                        .await;
                }
                (self.store)
                    .release_in_doubt(tenant, task, &held, *number, later)
                    .await?;
                return Ok(());
            }
            self.not_sent(tenant, &resend).await;
        }
        (self.store)
            .check_call_later(tenant, (task_id, contact_id), *number, later, None)
            .await
    }
}

/// Whether a start of `task` in doubt keeps its places while its call may ring (sent again just
/// now, or within [`RING_MOST_MILLIS`] of its last send) instead of giving them back (D28, D30):
/// a call ringing holds a place in its task's pace, or the pace would ring another for the same
/// agent. An agentless task's gives them back, so no fault holds the service's capacity.
fn keeps_places_in_doubt(task: &Task) -> bool {
    task.settings.agents.is_some()
}

/// How long a call's start may ring after it was sent: Amazon Connect rings a call for about
/// a minute before its flow hears no answer; twice that.
const RING_MOST_MILLIS: i64 = 120_000;

/// When the start of the attempt in flight was last sent: its claim, or its latest re-send.
fn last_sent(state: &TaskContact) -> Timestamp {
    (state.sent_again_at)
        .or(state.claimed_at)
        .unwrap_or(state.updated_at)
}

/// Whether the call of the attempt in flight may still be ringing at `now`, by its last send.
fn may_ring(state: &TaskContact, now: Timestamp) -> bool {
    now.0 < last_sent(state).0 + RING_MOST_MILLIS
}

/// How long after its claim an attempt in doubt is sent again with its token: Amazon Connect
/// honours a `ClientToken` for 7 days, so a start sent again within 6 returns the call the
/// first placed, if it did. Past it the attempt is settled "no outcome" (D28).
const RESEND_WITHIN: std::time::Duration = std::time::Duration::from_secs(6 * 86_400);

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
        shard: state.capacity_shard,
        rules: task.settings.retry_rules.clone(),
        max_dial_count: u32::from(task.settings.max_dial_count),
        // Chosen when the call was claimed, and kept on its state (D28).
        caller_id: state.calling_from.clone(),
        result_attributes: task.settings.result_attributes.clone(),
        voicemail: task.settings.voicemail,
        results: Default::default(),
        earlier_results: state.answered_results(),
        released: state.released,
        with_agent: state.with_agent,
        counters_apart: task.counters_apart,
        record: None,
        callback: state.callback.as_ref().map(|callback| callback.id.clone()),
        callbacks: state.callbacks,
    }
}

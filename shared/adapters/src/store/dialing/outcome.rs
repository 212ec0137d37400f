//! A call's outcome, recorded exactly once (D7, D13), and the end of a call whose task or
//! contact is gone.

use crate::store::keys;
use crate::store::shards::ContactShards;
use crate::store::{
    from_item, n, s, to_attribute, to_item, Actions, ConditionFailure, Expr, Store, WriteFailure,
};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::call::{AfterOutcome, CallRef, CallReport, Learnt, Outcome, Reason};
use outbound_model::callback::{
    Before, CallbackRecord, CallbackSource, CallbackStatus, PendingCallback, CALLBACK_RANK,
};
use outbound_model::contact::status;
use outbound_model::error::Error;
use outbound_model::event::Event;
use outbound_model::task::{CallCounters, TaskContact};
use outbound_model::Tenant;
use outbound_model::{Id, Task, Timestamp};

use super::results::{
    flow_writes_of, record_expires_at, result_moves, results_of, Seen, FLOW_WRITES, RECORDED_AT,
};
use super::{Call, Deltas, RecordFailure};
use crate::store::counters;

/// Tries of an outcome whose result counters turn out full or moved under it.
const RESULT_TRIES: usize = 4;

impl Store {
    /// Records the outcome of a call exactly once (D7, D13): the contact's state in the task
    /// (with what the call learnt, D22), the task's counters and calls in flight, the contact's
    /// status, call count and update time, and the service's calls in flight, the outcome's
    /// event (D20), the contact's recall mark (D12: put when the outcome is failed or no answer,
    /// deleted when a later attempt succeeds), and for an answered call the task's result
    /// counters (D22), in one transaction conditioned on that attempt being in flight. A result counter that
    /// turns out full or moved sends the transaction again as its stored item tells.
    #[tracing::instrument(skip_all, fields(tenant = %call.tenant, task = %call.task_id, contact = %call.contact_id, attempt = call.attempt))]
    pub async fn record_outcome(
        &self,
        call: &CallRef,
        report: &CallReport,
        next: &AfterOutcome,
        now: Timestamp,
        with_contact: bool,
    ) -> Result<RecordFailure, Error> {
        let learnt = call.learnt(report);
        let answered = report.outcome() == Outcome::Success;
        let moves = result_moves(call, answered, &learnt);
        // Its data source gone, the contact is not found where one shard would hold it, and
        // the outcome is recorded on the task alone.
        let source_contact = if with_contact {
            let shards = self
                .shards_if_exists(&call.tenant, &call.data_source_id)
                .await?
                .unwrap_or_else(|| ContactShards::new(&call.tenant, &call.data_source_id, 1));
            Some(shards.of_contact(&call.contact_id))
        } else {
            None
        };
        // The record of a callback the flow asked for (D31), named once for every try.
        let asked = next.callback.then(Id::new);
        let mut seen: Vec<Option<Seen>> = vec![None; moves.len()];
        for _ in 0..RESULT_TRIES {
            let actions = self
                .outcome_actions(
                    call,
                    report,
                    (next, asked.as_ref()),
                    &learnt,
                    now,
                    source_contact.clone(),
                )?
                .move_results(&call.tenant, &call.task_id, &moves, &seen)?;
            let failed = match self.transact("record call outcome", actions).await {
                Ok(()) => {
                    self.prune_results(&call.tenant, &call.task_id, &moves)
                        .await;
                    return Ok(RecordFailure::None);
                }
                Err(failure) => failure.condition()?,
            };
            let only_results = ![Call::Contact, Call::Task, Call::SourceContact, Call::Record]
                .into_iter()
                .any(|label| failed.failed(label));
            if !only_results {
                return refused(failed, call);
            }
            Seen::update(&mut seen, &failed);
        }
        Err(Error::internal(
            "record call outcome",
            "the task's result counters kept changing",
        ))
    }

    /// The outcome's actions but the result counters.
    fn outcome_actions(
        &self,
        call: &CallRef,
        report: &CallReport,
        (next, asked): (&AfterOutcome, Option<&Id>),
        learnt: &Learnt,
        now: Timestamp,
        source_contact: Option<String>,
    ) -> Result<Actions<'_, Call>, Error> {
        let tenant = &call.tenant;
        let counter = counters::calls_ended(report.outcome());
        let (state_update, state_expr) = state_after(call, report, (next, asked), learnt, now)?;
        let reason = report.reason;
        let mut moved = Deltas::default();
        moved
            .add(
                if next.done {
                    counters::CONTACTS_FINAL
                } else {
                    counters::CONTACTS_WAITING
                },
                1,
            )
            .add(counters::attempts_ended(reason), 1);
        if report.outcome() == Outcome::Success && call.earlier_results.is_none() {
            moved.add(counters::CONTACTS_ANSWERED, 1);
        }
        if call.released {
            // In doubt, it gave back its places and waited (D28).
            moved.add(counters::CONTACTS_WAITING, -1);
        }
        let (counters, task_expr) = moved.clause(
            Expr::default()
                .name("#c", "counters")
                .name("#calls", "calls")
                .name("#outcome", counter)
                .name("#duration", "duration")
                .value(":one", n(1))
                .value(":minus_one", n(-1))
                .value(":duration", n(report.duration))
                .value(":now", n(now.0)),
        );
        // The outcome may make work due: a run that read the task before marks it idle no more.
        let mut adds: Vec<String> = ["awake :one".to_owned()]
            .into_iter()
            .chain(counters)
            .collect();
        if !call.released {
            adds.insert(0, "in_flight :minus_one".to_owned());
        }
        if call.with_agent {
            adds.push("talking :minus_one".to_owned());
        }

        // Abandoned calls (D30) and callbacks' calls (D31, `callbackCount`) are counted apart
        // too.
        let abandoned = reason == Reason::Abandoned;
        let (abandoned, task_expr) = counted_apart(task_expr, abandoned, CallCounters::ABANDONED);
        let callback = call.callback.is_some();
        let (callback, task_expr) = counted_apart(task_expr, callback, CallCounters::CALLBACKS);
        let task_update = format!(
            "SET #c.#calls = #c.#calls + :one, #c.#outcome = #c.#outcome + :one, \
             #c.#duration = #c.#duration + :duration{abandoned}{callback}, updated_at = :now, \
             last_outcome_at = :now REMOVE idle_until ADD {}",
            adds.join(", ")
        );
        // Whether the attempt still holds its places is part of the condition: a release in
        // doubt between the read and this write sends the outcome again (D28).
        // So is whether it reached an agent (D30): a call that did meanwhile is counted out of
        // the task's `talking` by the outcome sent again.
        let released = if call.released {
            "released = :true"
        } else {
            "attribute_not_exists(released)"
        };
        let with_agent = if call.with_agent {
            "with_agent = :true"
        } else {
            "attribute_not_exists(with_agent)"
        };
        let contact_condition =
            if outbound_model::simulation::planted(outbound_model::simulation::Bug::OutcomeTwice) {
                format!("{released} AND {with_agent}")
            } else {
                format!(
                    "in_call = :attempt AND updated_at = :claimed AND {released} AND {with_agent}"
                )
            };
        let state_expr = state_expr.value(":true", AttributeValue::Bool(true));
        let (counters_pk, counters_sk) =
            counters::key_of(tenant, &call.task_id, call.counters_apart);
        let mut actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(tenant, &call.task_id),
                keys::contact(&call.contact_id),
                &state_update,
                Some(&contact_condition),
                state_expr,
            )?
            .update(
                Call::Task,
                counters_pk,
                counters_sk,
                &task_update,
                Some("attribute_exists(pk)"),
                task_expr,
            )?;
        if !call.released {
            actions = actions.give_back_service_place(Call::Service, call.shard)?;
        }
        let mut actions = actions.event(
            Call::Event,
            &Event::call_completed(tenant, now, (call, report), learnt, next.done),
        )?;
        if let Some(callback) = call
            .callback
            .as_ref()
            .filter(|_| next.done || next.callback)
        {
            // Answered, or its second try not (D31): the callback is settled.
            let (status, reason) = match report.outcome() {
                Outcome::Success => (CallbackStatus::Done, None),
                _ => (CallbackStatus::Missed, Some(report.reason.name())),
            };
            let (update, expr) = match reason {
                Some(reason) => (
                    "SET #status = :status, reason = :reason",
                    Expr::default().value(":reason", s(reason)),
                ),
                None => ("SET #status = :status", Expr::default()),
            };
            actions = actions.update(
                Call::Callback,
                keys::task_contacts(tenant, &call.task_id),
                keys::callback(callback),
                update,
                None,
                expr.name("#status", "status")
                    .value(":status", s(status.name())),
            )?;
        }
        if let (Some(id), Some(at)) = (asked, next.next_attempt_at) {
            // The flow asked for a callback (D31): its record, listed with the API's.
            let record = CallbackRecord {
                id: id.clone(),
                contact_id: call.contact_id.clone(),
                // The list reads the number from the contact: the call knows it not.
                phone: String::new(),
                at,
                source: CallbackSource::Flow,
                status: CallbackStatus::Pending,
                reason: None,
                created_at: now,
            };
            let item = to_item(
                &record,
                [
                    (keys::PK, keys::task_contacts(tenant, &call.task_id)),
                    (keys::SK, keys::callback(id)),
                ],
            )?;
            actions = actions.put(
                Call::AskedCallback,
                item,
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?;
        }
        let pk = keys::task_contacts(tenant, &call.task_id);
        let mark = keys::recallable(&call.contact_id);
        if matches!(report.outcome().code(), status::FAILED | status::NO_ANSWER) {
            let item = [
                (keys::PK.to_owned(), s(&pk)),
                (keys::SK.to_owned(), s(mark)),
            ]
            .into();
            actions = actions.put(Call::Recallable, item, None)?;
        } else if call.attempt > 1 {
            // An earlier attempt of this task may have left one; the first has none to delete.
            actions = actions.delete(Call::Recallable, pk, mark, None)?;
        }
        // What the flow reported is counted or refused, never dropped (D29): the record is
        // marked recorded while it holds the reports the outcome read; a later report is
        // refused, one in between sends the outcome again with it.
        if let Some(read) = call
            .record
            .as_ref()
            .filter(|_| !call.result_attributes.is_empty())
        {
            // DynamoDB refuses an expression value the expressions do not use, so `:read` is
            // given only with the condition that reads it.
            let (condition, values) = if read.flow_writes == 0 {
                (
                    format!("attribute_not_exists({FLOW_WRITES})"),
                    Expr::default(),
                )
            } else {
                (
                    format!("{FLOW_WRITES} = :read"),
                    Expr::default().value(":read", n(read.flow_writes)),
                )
            };
            actions = actions.update(
                Call::Record,
                keys::call(&read.call_id),
                keys::CALL.to_owned(),
                // A record the outcome creates (its call's id never saved, D28) expires as
                // a placed call's does.
                &format!(
                    "SET {RECORDED_AT} = :now, expires_at = if_not_exists(expires_at, :expires)"
                ),
                Some(&condition),
                values
                    .value(":now", n(now.0))
                    .value(":expires", n(record_expires_at(now.0))),
            )?;
        }
        if let Some(source_pk) = source_contact {
            // The contact's own status and call count (D7) change: so does its `updateTime`,
            // which its data source's list and export show.
            actions = actions.update(
                Call::SourceContact,
                source_pk,
                keys::contact(&call.contact_id),
                "SET #status = :outcome, updated_at = :now ADD call_count :one",
                Some("attribute_exists(pk)"),
                Expr::default()
                    .name("#status", "status")
                    .value(":outcome", n(report.outcome().code()))
                    .value(":now", n(now.0))
                    .value(":one", n(1)),
            )?;
        }
        Ok(actions)
    }

    /// Counts the call `call` among its task's calls talking to an agent (D30), once, while its
    /// attempt is in flight: the provider said the call reached an agent of the task's queue.
    /// Answers false when it was counted already, or the attempt is no longer in flight (its
    /// outcome came first, as events may be reordered) or is in doubt.
    pub async fn mark_with_agent(&self, call: &CallRef) -> Result<bool, Error> {
        let (counters_pk, counters_sk) =
            counters::key_of(&call.tenant, &call.task_id, call.counters_apart);
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(&call.tenant, &call.task_id),
                keys::contact(&call.contact_id),
                "SET with_agent = :true",
                Some(
                    "in_call = :attempt AND attribute_not_exists(with_agent) \
                     AND attribute_not_exists(released)",
                ),
                Expr::default()
                    .value(":true", AttributeValue::Bool(true))
                    .value(":attempt", n(call.attempt)),
            )?
            .update(
                Call::Task,
                counters_pk,
                counters_sk,
                "ADD talking :one",
                Some("attribute_exists(pk)"),
                Expr::default().value(":one", n(1)),
            )?;
        match self.transact("mark call with agent", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }

    /// Keeps attempt `attempt` in flight and moves it in the in-flight index to `check_at`, so
    /// the tick reconciles it again only then: the provider says it is live, or it is in doubt
    /// and its outcome may still come (D28). With `sent_again_at`, its start was just sent again
    /// then and is still in doubt: it keeps its places (it must not have given them back), its
    /// call may ring from then (D28, D30).
    pub async fn check_call_later(
        &self,
        tenant: &Tenant,
        keys: (&Id, &Id),
        attempt: u32,
        check_at: Timestamp,
        sent_again_at: Option<Timestamp>,
    ) -> Result<(), Error> {
        self.call_checked_later(tenant, keys, attempt, check_at, sent_again_at)
            .await
            .map(drop)
    }

    /// [`Store::check_call_later`], answering whether it was written: false when the attempt is
    /// no longer in flight or, with `sent_again_at`, no longer holds its places.
    pub async fn call_checked_later(
        &self,
        tenant: &Tenant,
        (task, contact): (&Id, &Id),
        attempt: u32,
        check_at: Timestamp,
        sent_again_at: Option<Timestamp>,
    ) -> Result<bool, Error> {
        let expr = Expr::default()
            .value(":attempt", n(attempt))
            .value(":checked", s(keys::in_flight_order(check_at.0, contact)));
        let (update, condition, expr) = match sent_again_at {
            None => ("SET gsi2sk = :checked", "in_call = :attempt", expr),
            Some(sent) => (
                "SET gsi2sk = :checked, sent_again_at = :sent",
                "in_call = :attempt AND attribute_not_exists(released)",
                expr.value(":sent", n(sent.0)),
            ),
        };
        let written = self
            .update_one(
                "check call later",
                (keys::task_contacts(tenant, task), keys::contact(contact)),
                update,
                Some(condition),
                expr,
            )
            .await;
        WriteFailure::took_effect(written)
    }

    /// Ends a call whose task was deleted while it was in flight: gives back the service's
    /// place (`shard`; `None`: an attempt in doubt that gave it back already, D28), once,
    /// whichever of this and the task's reclaim comes first.
    pub async fn drop_orphan_call(
        &self,
        tenant: &Tenant,
        task: &Id,
        contact: &Id,
        attempt: u32,
        shard: Option<u32>,
    ) -> Result<(), Error> {
        let condition = if shard.is_some() {
            "in_call = :attempt AND attribute_not_exists(released)"
        } else {
            "in_call = :attempt"
        };
        let mut actions = Actions::new(&self.table).delete(
            Call::Contact,
            keys::task_contacts(tenant, task),
            keys::contact(contact),
            Some((condition, Expr::default().value(":attempt", n(attempt)))),
        )?;
        if let Some(shard) = shard {
            actions = actions.give_back_service_place(Call::Service, shard)?;
        }
        match self.transact("drop orphan call", actions).await {
            Ok(()) => Ok(()),
            Err(failure) => failure.condition().map(drop),
        }
    }

    /// Makes final the state of a contact deleted from the data source, so it neither waits nor
    /// keeps the task from completing (D13).
    /// The contact is no longer in the data source, so it leaves the task's counters (D19).
    pub async fn finish_deleted(
        &self,
        tenant: &Tenant,
        task: &Task,
        state: &TaskContact,
    ) -> Result<(), Error> {
        let mut moved = Deltas::default();
        moved.moved(Some(state), None);
        let mut actions = Actions::new(&self.table).update(
            Call::Contact,
            keys::task_contacts(tenant, &task.id),
            keys::contact(&state.contact_id),
            "SET done = :true REMOVE gsi1pk, gsi1sk, skip",
            // Not done yet: two runs that read the same state finish it, and move the
            // counters, once.
            Some(
                "attribute_not_exists(in_call) AND updated_at = :seen \
                 AND (attribute_not_exists(done) OR done = :false)",
            ),
            Expr::default()
                .value(":true", AttributeValue::Bool(true))
                .value(":false", AttributeValue::Bool(false))
                .value(":seen", n(state.updated_at.0)),
        )?;
        let (counters, expr) = moved.clause(Expr::default());
        if let Some(counters) = counters {
            let (counters_pk, counters_sk) = counters::key_of_task(tenant, task);
            actions = actions.update(
                Call::Task,
                counters_pk,
                counters_sk,
                &format!("ADD {counters}"),
                Some("attribute_exists(pk)"),
                expr,
            )?;
        }
        match self.transact("finish deleted contact", actions).await {
            Ok(()) => Ok(()),
            Err(failure) => failure.condition().map(drop),
        }
    }
}

/// When `counts`, the `SET` clause (to append to the counters' update) that counts one more in
/// the task's counter `name`, one its tasks created before it lack, and `expr` with what it
/// names; otherwise nothing.
fn counted_apart(expr: Expr, counts: bool, name: &str) -> (String, Expr) {
    if !counts {
        return (String::new(), expr);
    }
    let placeholder = format!("#{name}");
    let set = format!(", #c.{placeholder} = if_not_exists(#c.{placeholder}, :zero) + :one");
    (set, expr.name(&placeholder, name).value(":zero", n(0)))
}

/// The contact's state after the outcome: the update and its values. With another attempt to
/// come, the contact goes to the task's waiting index at its next attempt time. The caller ID
/// and the message left are the latest attempt's; an answered attempt's results replace those
/// of an earlier answer, and an attempt not answered leaves them (D22).
fn state_after(
    call: &CallRef,
    report: &CallReport,
    (next, asked): (&AfterOutcome, Option<&Id>),
    learnt: &Learnt,
    now: Timestamp,
) -> Result<(String, Expr), Error> {
    // A callback the flow asked for (D31) holds two tries, as one set by the API.
    let allowance = match asked {
        Some(_) => call.attempt + 2,
        None => call.allowance,
    };
    let mut expr = Expr::default()
        .value(":attempt", n(call.attempt))
        .value(":claimed", n(call.claimed_at.0))
        .value(":outcome", n(report.outcome().code()))
        .value(":duration", n(report.duration))
        .value(":now", n(now.0))
        .value(":done", AttributeValue::Bool(next.done))
        .value(":reason", s(report.reason.name()))
        .value(":allowance", n(allowance));
    let mut sets = vec![
        "attempts = :attempt",
        "last_outcome = :outcome",
        "last_duration = :duration",
        "allowance = :allowance",
        "updated_at = :now",
        "done = :done",
        "last_reason = :reason",
    ];
    let mut removes = vec![
        "in_call",
        "claimed_at",
        "sent_again_at",
        "call_id",
        "released",
        "with_agent",
        "calling_from",
        "gsi2pk",
        "gsi2sk",
    ];
    if call.callback.is_some() && next.done {
        removes.push("callback");
    }
    match next.next_attempt_at {
        Some(at) => {
            let rank = match next.callback {
                true => Some(CALLBACK_RANK),
                false => call.recalled.then_some(call.priority),
            };
            expr = expr
                .value(":next", n(at.0))
                .value(":wait_pk", s(keys::waiting(&call.tenant, &call.task_id)))
                .value(":wait_sk", s(keys::waiting_order(rank, at.0)));
            sets.extend([
                "next_attempt_at = :next",
                "gsi1pk = :wait_pk",
                "gsi1sk = :wait_sk",
            ]);
        }
        None => removes.extend(["next_attempt_at", "gsi1pk", "gsi1sk"]),
    }
    if let (Some(id), Some(at)) = (asked, next.next_attempt_at) {
        let pending = PendingCallback {
            id: id.clone(),
            at,
            source: CallbackSource::Flow,
            // Cancelled, the contact is where this answer left it: final.
            before: Before {
                allowance: call.allowance,
                done: true,
                next_attempt_at: None,
                recalled: call.recalled,
                priority: call.priority,
                // Not known here: a cancelled flow callback leaves no time in the export.
                callback_at: None,
            },
        };
        expr = expr
            .value(":callback", to_attribute(&pending)?)
            .value(":callbacks", n(call.callbacks.saturating_add(1)))
            .value(":callback_rank", n(CALLBACK_RANK))
            .value(":recalled", AttributeValue::Bool(true));
        sets.extend([
            "callback = :callback",
            "callbacks = :callbacks",
            "callback_at = :next",
            "recalled = :recalled",
            "priority = :callback_rank",
        ]);
    }
    match &learnt.caller_id {
        Some(number) => {
            expr = expr.value(":caller_id", s(number));
            sets.push("caller_id = :caller_id");
        }
        None => removes.push("caller_id"),
    }
    if learnt.message_left || report.outcome() == Outcome::Success {
        expr = expr.value(":true", AttributeValue::Bool(true));
    }
    if learnt.message_left {
        sets.push("message_left = :true");
    } else {
        removes.push("message_left");
    }
    if report.outcome() == Outcome::Success {
        sets.push("answered = :true");
        if learnt.results.is_empty() {
            removes.push("results");
        } else {
            let results = learnt
                .results
                .iter()
                .map(|(name, value)| (name.clone(), s(value)))
                .collect();
            expr = expr.value(":results", AttributeValue::M(results));
            sets.push("results = :results");
        }
    }
    Ok((
        format!("SET {} REMOVE {}", sets.join(", "), removes.join(", ")),
        expr,
    ))
}

/// What a refused outcome means, from the first action whose condition failed.
fn refused(failed: ConditionFailure<Call>, call: &CallRef) -> Result<RecordFailure, Error> {
    Ok(if failed.failed(Call::Contact) {
        let stored = failed.stored(Call::Contact).cloned();
        match stored.map(from_item::<TaskContact>).transpose()? {
            Some(state) if state.in_call == Some(call.attempt) => {
                RecordFailure::StateChanged(Box::new(state))
            }
            _ => RecordFailure::NotInFlight,
        }
    } else if failed.failed(Call::Task) {
        RecordFailure::TaskGone
    } else if failed.failed(Call::Record) {
        let stored = failed.stored(Call::Record).cloned();
        match stored {
            Some(item) => {
                let flow_writes = flow_writes_of(&item);
                let results = results_of(&item);
                RecordFailure::ReportsArrived {
                    results,
                    flow_writes,
                }
            }
            None => RecordFailure::NotInFlight,
        }
    } else {
        RecordFailure::ContactGone
    })
}

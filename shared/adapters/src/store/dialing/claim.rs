//! A call's claim and placing (D13): one transaction takes the contact's attempt, a place among
//! the task's and the service's calls in flight and one of this second's calls at the provider rate, or
//! nothing; then the provider's call id is recorded, or the claim given back.

use crate::store::counters;
use crate::store::keys::{self, PK, SK};
use crate::store::{
    from_item, n, s, to_item, Actions, ConditionFailure, Expr, Store, WriteFailure,
};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::call::{CallRef, RecordRead};
use outbound_model::error::Error;
use outbound_model::task::Due;
use outbound_model::task::TaskContact;
use outbound_model::Tenant;
use outbound_model::{Task, TaskStatus, Timestamp};

use super::results::{flow_writes_of, PENDING};
use super::{not_claimed, Call, Caps, Claim, ClaimRefused, Deltas};
use crate::store::Item;
use outbound_model::settings::FrequencyCap;
use std::collections::HashMap;

/// Slots of a number's ring of attempt times: as many as the largest `maxCalls` (D17).
const RING: u64 = 100;

/// What a claim checks of the number it calls, beside the contact (D16, D17), and the number it
/// calls from (D22).
#[derive(Clone, Debug, Default)]
pub struct Gate {
    /// The key a do-not-call guard of the number would be kept under (D16, D24).
    pub listed_as: Option<String>,
    /// The tenant's guards have keys of their own ([`keys::dial_guard`]): the claim checks
    /// there, else in the tenant's partition.
    pub guards_apart: bool,
    /// The tenant's frequency cap, and the number's attempts as read before the claim (D17).
    pub frequency: Option<FrequencyClaim>,
    /// The caller ID the call goes out from (a number of the tenant's; `None`: the
    /// deployment's), kept on the contact's state while it is in flight so every path that
    /// records its outcome records it (D28), and checked to be the tenant's by the claim.
    pub calling_from: Option<String>,
}

/// How long after its claim a call whose provider id was not saved is looked at again (D28):
/// a run's deadline and its grace, after which the run that claimed it is surely over, so the
/// tick after finds it in doubt.
pub const CLAIM_CHECKED_AFTER_MILLIS: i64 = 30_000;

/// One attempt of a number, counted whether or not the tenant has a cap (D17): a cap set or
/// lowered later counts the calls already made.
#[derive(Clone, Debug)]
pub struct FrequencyClaim {
    /// The number counted: its E.164 form, else its normal form.
    pub number: String,
    /// The tenant's cap as the run read it, if any.
    pub cap: Option<FrequencyCap>,
    pub seen: Attempts,
}

impl FrequencyClaim {
    /// When the number may be called again, if its cap holds it now (D17).
    pub fn eligible_at(&self) -> Option<Timestamp> {
        self.eligible_after(&self.seen)
    }

    /// When the number may be called again after `attempts`, if the cap holds it.
    fn eligible_after(&self, attempts: &Attempts) -> Option<Timestamp> {
        self.cap.and_then(|cap| attempts.eligible_at(cap))
    }
}

/// One number's attempts across the tenant's tasks (D17): how many ever (while any is within a
/// period), and the times of the latest [`RING`] of them, by `count % RING`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attempts {
    pub count: u64,
    pub times: HashMap<u64, i64>,
}

impl Attempts {
    fn of(item: &Item) -> Attempts {
        let number =
            |value: &AttributeValue| value.as_n().ok().and_then(|raw| raw.parse::<i64>().ok());
        let count = item.get("n").and_then(number).unwrap_or(0).max(0) as u64;
        let times = item
            .iter()
            .filter_map(|(name, value)| {
                let entry = name.strip_prefix('t')?.parse::<u64>().ok()?;
                Some((entry, number(value)?))
            })
            .collect();
        Attempts { count, times }
    }

    /// From when the number may be called again under `cap`: the oldest of its latest
    /// `maxCalls` attempts plus the period and the time a claim has to place its call
    /// ([`CLAIM_CHECKED_AFTER_MILLIS`]; in the past when it may be called now); `None` while it
    /// has fewer attempts than that. An attempt is counted at its claim and its call placed up
    /// to that long after (a claim whose answer was lost is sent again by the SDK a second or
    /// more later): measured from the count alone, a call placed late and the next one claimed a
    /// period after the count came less than a period apart.
    pub fn eligible_at(&self, cap: FrequencyCap) -> Option<Timestamp> {
        let most = u64::from(cap.max_calls);
        if self.count < most {
            return None;
        }
        let oldest = self.times.get(&((self.count - most) % RING))?;
        Some(Timestamp(
            oldest + cap.period_millis() + CLAIM_CHECKED_AFTER_MILLIS,
        ))
    }
}

impl Store {
    /// The attempts of each of `numbers` across the tenant's tasks (D17), read consistently.
    pub async fn frequency_attempts(
        &self,
        tenant: &Tenant,
        numbers: &[String],
    ) -> Result<HashMap<String, Attempts>, Error> {
        let wanted = numbers
            .iter()
            .map(|number| {
                let (pk, sk) = keys::frequency(tenant, number);
                [(PK.to_owned(), s(pk)), (SK.to_owned(), s(sk))].into()
            })
            .collect();
        let items = self.batch_get_with(wanted, None).await?;
        let prefix = keys::frequency(tenant, "").0;
        Ok(items
            .iter()
            .filter_map(|item| {
                let number = crate::store::string_attr(item, PK)?.strip_prefix(&prefix)?;
                Some((number.to_owned(), Attempts::of(item)))
            })
            .collect())
    }

    /// The claim's checks of the number: its do-not-call guards are absent, and its count of
    /// attempts is still the one read (one more attempt, its time in the ring).
    fn check_gate<'a>(
        &self,
        mut actions: Actions<'a, Claim>,
        tenant: &Tenant,
        gate: &Gate,
        now: Timestamp,
    ) -> Result<Actions<'a, Claim>, Error> {
        if let Some(number) = &gate.calling_from {
            // A number presents its tenant only while the operator's assignment holds it.
            let (pk, sk) = keys::caller_id(number);
            actions = actions.check(
                Claim::CallerId,
                pk,
                sk,
                "#holder = :tenant",
                Expr::default()
                    .name("#holder", "tenant")
                    .value(":tenant", s(tenant.as_str())),
            )?;
        }
        if let Some(number) = &gate.listed_as {
            let (pk, sk) = if gate.guards_apart {
                keys::dial_guard(tenant, number)
            } else {
                (keys::tenant(tenant), keys::dnc_number(number))
            };
            actions = actions.check(
                Claim::DoNotCall,
                pk,
                sk,
                "attribute_not_exists(pk)",
                Expr::default(),
            )?;
        }
        let Some(frequency) = &gate.frequency else {
            return Ok(actions);
        };
        let (key, update, condition, expr) = count_one_more(tenant, frequency, now);
        actions.update(
            Claim::Frequency,
            key.0,
            key.1,
            update,
            Some(condition),
            expr,
        )
    }

    /// Counts one more attempt of `frequency.number` toward the tenant's cap (D17), at `now`,
    /// on the condition that nobody counted one since `frequency.seen` was read. A start in
    /// doubt sent again is counted so (D28): its first start may never have reached the
    /// provider, so the call may begin now. Answers false when another attempt was counted
    /// since: nothing is written.
    pub async fn count_attempt(
        &self,
        tenant: &Tenant,
        frequency: &FrequencyClaim,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let (key, update, condition, expr) = count_one_more(tenant, frequency, now);
        let written = self
            .update_one(
                "count an attempt sent again",
                key,
                update,
                Some(condition),
                expr,
            )
            .await;
        WriteFailure::took_effect(written)
    }
}

/// The write that counts one more attempt of a number toward the frequency cap: its key, update,
/// condition (its count as read) and their names and values.
fn count_one_more(
    tenant: &Tenant,
    frequency: &FrequencyClaim,
    now: Timestamp,
) -> ((String, String), &'static str, &'static str, Expr) {
    let seen = frequency.seen.count;
    // A count given back to 0 by a refused call (uncount_attempt) is as good as none.
    let (condition, expr) = if seen == 0 {
        (
            "attribute_not_exists(n) OR n = :seen",
            Expr::default().value(":seen", n(0)),
        )
    } else {
        ("n = :seen", Expr::default().value(":seen", n(seen)))
    };
    // Kept for the longest period a cap may have, not this cap's: raising `periodHours`
    // later must still find the attempts it counts.
    let expires = (now.0 + FrequencyCap::longest_period_millis()) / 1000 + 86_400;
    (
        keys::frequency(tenant, &frequency.number),
        "SET n = :count, #entry = :now, expires_at = :expires",
        condition,
        expr.name("#entry", &format!("t{}", seen % RING))
            .value(":count", n(seen + 1))
            .value(":now", n(now.0))
            .value(":expires", n(expires)),
    )
}

impl Store {
    /// Takes back the attempt a claim counted toward the number's frequency cap when the
    /// provider refused its call (D23: a refused call is never an attempt): the count and the
    /// ring's time are as before the claim. When another claim has counted an attempt of the
    /// number since, this one stays counted (the ring cannot lose one entry of its middle): the
    /// number may wait for one attempt too many, never get one too few.
    pub async fn uncount_attempt(
        &self,
        tenant: &Tenant,
        frequency: &FrequencyClaim,
        claimed_at: Timestamp,
    ) -> Result<(), Error> {
        let seen = frequency.seen.count;
        let entry = seen % RING;
        let expr = Expr::default()
            .name("#entry", &format!("t{entry}"))
            .value(":seen", n(seen))
            .value(":ours", n(seen + 1))
            .value(":claimed", n(claimed_at.0));
        let (update, expr) = match frequency.seen.times.get(&entry) {
            Some(before) => (
                "SET n = :seen, #entry = :before",
                expr.value(":before", n(*before)),
            ),
            None => ("SET n = :seen REMOVE #entry", expr),
        };
        let written = self
            .update_one(
                "uncount a refused attempt",
                keys::frequency(tenant, &frequency.number),
                update,
                Some("n = :ours AND #entry = :claimed"),
                expr,
            )
            .await;
        if !WriteFailure::took_effect(written)? {
            tracing::info!("a refused attempt stays counted: the number was claimed since");
        }
        Ok(())
    }

    /// Claims attempt `due.attempt` of a contact for a call now (D13): one transaction that
    /// takes the contact's attempt, a place among the task's and the service's calls in flight,
    /// and one of this second's calls at the provider rate, or nothing at all.
    #[tracing::instrument(skip_all, fields(tenant = tenant.as_str(), task = %task.id, contact = %due.contact_id, attempt = due.attempt))]
    pub async fn claim_call(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        gate: &Gate,
        caps: Caps,
        now: Timestamp,
    ) -> Result<CallRef, ClaimRefused> {
        // The contact's own capacity shard, and the next one should that shard be full.
        let shards = self.capacity_shards.max(1);
        let first = due.contact_id.as_str().bytes().fold(0u32, |hash, byte| {
            hash.wrapping_mul(31).wrapping_add(u32::from(byte))
        }) % shards;
        let mut refused = ClaimRefused::ServiceFull;
        for shard in [first, (first + 1) % shards]
            .into_iter()
            .take(shards.min(2) as usize)
        {
            let (actions, call) = self.take_attempt(tenant, task, due, gate, shard, now)?;
            let place = Place {
                caps,
                shard,
                shards,
            };
            // In flight, the contact is counted by `in_flight` alone: it leaves its counters.
            let mut moved = Deltas::default();
            moved.moved(due.state.as_ref(), None);
            let actions = not_claimed(take_capacity(
                actions,
                counters::key_of_task(tenant, task),
                place,
                &moved,
                now,
            ))?;
            let actions = not_claimed(self.check_gate(actions, tenant, gate, now))?;
            match self.transact("claim call", actions).await {
                Ok(()) => return Ok(call),
                Err(failure) => {
                    refused = refusal(failure.condition().map_err(ClaimRefused::Store)?, gate);
                    if !matches!(
                        refused,
                        ClaimRefused::ServiceFull | ClaimRefused::RateLimited
                    ) {
                        return Err(refused);
                    }
                }
            }
        }
        Err(refused)
    }

    /// The claim's first action: the contact's state in the task, created for its first
    /// attempt or moved to attempt `due.attempt` if nobody moved it since it was read; and the
    /// call reference the outcome will need.
    fn take_attempt(
        &self,
        tenant: &Tenant,
        task: &Task,
        due: &Due,
        gate: &Gate,
        shard: u32,
        now: Timestamp,
    ) -> Result<(Actions<'_, Claim>, CallRef), ClaimRefused> {
        let pk = keys::task_contacts(tenant, &task.id);
        let sk = keys::contact(&due.contact_id);
        let in_flight = [
            (
                keys::GSI2_PK,
                keys::in_flight_partition(keys::index_partition_of(&pk, self.index_partitions)),
            ),
            (
                keys::GSI2_SK,
                keys::in_flight_order(now.0 + CLAIM_CHECKED_AFTER_MILLIS, &due.contact_id),
            ),
        ];
        Ok(match &due.state {
            None => {
                let state = TaskContact {
                    in_call: Some(1),
                    claimed_at: Some(now),
                    capacity_shard: shard,
                    calling_from: gate.calling_from.clone(),
                    ..TaskContact::undialled(
                        due.contact_id.clone(),
                        u32::from(task.settings.max_dial_count),
                        task.settings.priority,
                        now,
                    )
                };
                let keys = [(PK, pk.clone()), (SK, sk.clone())].into_iter();
                let item =
                    to_item(&state, keys.chain(in_flight.clone())).map_err(ClaimRefused::Store)?;
                let actions = not_claimed(Actions::new(&self.table).put(
                    Claim::Contact,
                    item,
                    Some(("attribute_not_exists(pk)", Expr::default())),
                ))?;
                (actions, self.call_ref(tenant, task, &state, 1, shard, now))
            }
            Some(state) => {
                let mut expr = Expr::default()
                    .value(":attempt", n(due.attempt))
                    .value(":now", n(now.0))
                    .value(":fly_pk", s(&in_flight[0].1))
                    .value(":fly_sk", s(&in_flight[1].1))
                    .value(":attempts", n(state.attempts))
                    .value(":seen", n(state.updated_at.0))
                    .value(":false", AttributeValue::Bool(false));
                let mut sets = vec![
                    "in_call = :attempt",
                    "claimed_at = :now",
                    "updated_at = :now",
                    "gsi2pk = :fly_pk",
                    "gsi2sk = :fly_sk",
                ];
                let mut removes = vec!["gsi1pk", "gsi1sk", "skip", "released"];
                // Shard 0 is written as no shard, as a one-shard deployment has always done.
                if shard == 0 {
                    removes.push("slot_shard");
                } else {
                    expr = expr.value(":shard", n(shard));
                    sets.push("slot_shard = :shard");
                }
                match &gate.calling_from {
                    Some(number) => {
                        expr = expr.value(":from", s(number));
                        sets.push("calling_from = :from");
                    }
                    None => removes.push("calling_from"),
                }
                let update = format!("SET {} REMOVE {}", sets.join(", "), removes.join(", "));
                let actions = not_claimed(Actions::new(&self.table).update(
                    Claim::Contact,
                    pk.clone(),
                    sk.clone(),
                    &update,
                    Some(
                        "attribute_exists(pk) AND attribute_not_exists(in_call) \
                         AND attempts = :attempts AND updated_at = :seen AND done = :false",
                    ),
                    expr,
                ))?;
                (
                    actions,
                    self.call_ref(tenant, task, state, due.attempt, shard, now),
                )
            }
        })
    }

    fn call_ref(
        &self,
        tenant: &Tenant,
        task: &Task,
        state: &TaskContact,
        attempt: u32,
        shard: u32,
        now: Timestamp,
    ) -> CallRef {
        CallRef {
            tenant: tenant.clone(),
            task_id: task.id.clone(),
            data_source_id: task.data_source_id.clone(),
            contact_id: state.contact_id.clone(),
            attempt,
            call_interval: task.settings.call_interval,
            allowance: state.allowance,
            recalled: state.recalled,
            priority: state.priority,
            claimed_at: now,
            shard,
            rules: task.settings.retry_rules.clone(),
            max_dial_count: u32::from(task.settings.max_dial_count),
            // The dialer sets it from the request it places (the number the claim kept, D28).
            caller_id: None,
            result_attributes: task.settings.result_attributes.clone(),
            voicemail: task.settings.voicemail,
            results: Default::default(),
            earlier_results: state.answered_results(),
            released: false,
            with_agent: false,
            counters_apart: task.counters_apart,
            record: None,
            callback: state.callback.as_ref().map(|callback| callback.id.clone()),
            callbacks: state.callbacks,
        }
    }

    /// Records the provider's id of a claimed call, and the call record its outcome event is
    /// found by; the call is reconciled from `check_at` if no outcome came by then. Answers
    /// false when the attempt is no longer in flight.
    pub async fn mark_placed(
        &self,
        call: &CallRef,
        call_id: &str,
        check_at: Timestamp,
    ) -> Result<bool, Error> {
        let tenant = &call.tenant;
        let record = to_item(
            call,
            [(PK, keys::call(call_id)), (SK, keys::CALL.to_owned())],
        )?;
        let mut record = record;
        record.insert(
            "expires_at".to_owned(),
            n(super::results::record_expires_at(call.claimed_at.0)),
        );
        // Written field by field, so a pending record the flow's first report made keeps the
        // results and flow writes it holds (D28).
        let mut sets = Vec::new();
        let mut expr = Expr::default();
        for (at, (name, value)) in (record.into_iter())
            .filter(|(name, _)| name != PK && name != SK)
            .enumerate()
        {
            sets.push(format!("#f{at} = :f{at}"));
            expr = expr
                .name(&format!("#f{at}"), &name)
                .value(&format!(":f{at}"), value);
        }
        let update = format!("SET {} REMOVE {PENDING}", sets.join(", "));
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(tenant, &call.task_id),
                keys::contact(&call.contact_id),
                "SET call_id = :id, gsi2sk = :check REMOVE quota_refusals",
                Some("in_call = :attempt"),
                Expr::default()
                    .value(":id", s(call_id))
                    .value(
                        ":check",
                        s(keys::in_flight_order(check_at.0, &call.contact_id)),
                    )
                    .value(":attempt", n(call.attempt)),
            )?
            .update(
                Call::Record,
                keys::call(call_id),
                keys::CALL.to_owned(),
                &update,
                None,
                expr,
            )?;
        match self.transact("mark call placed", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }

    /// The call placed under the provider's id `call_id`, if its record exists.
    pub async fn call_by_provider_id(&self, call_id: &str) -> Result<Option<CallRef>, Error> {
        let Some(item) = self
            .get_item(keys::call(call_id), keys::CALL.to_owned())
            .await?
        else {
            return Ok(None);
        };
        if !super::results::of_placed_call(&item) {
            // The flow's report came first, or the call's id was never saved: no record of a
            // placed call, only what the flow reported or that the outcome was recorded.
            return Ok(None);
        }
        let flow_writes = flow_writes_of(&item);
        let mut call: CallRef = from_item(item)?;
        call.record = Some(RecordRead {
            call_id: call_id.to_owned(),
            flow_writes,
        });
        Ok(Some(call))
    }

    /// What the flow reported on attempt `attempt` of the call the provider knows as `call_id`
    /// when that call's record was never written (D28: its id not saved): the results of the
    /// pending record the flow's reports made, if any, and the record as read, so that the
    /// outcome marks it recorded on the condition that no report came since (a later report is
    /// then refused, one in between sends the outcome again with it). No record: no results,
    /// and the outcome leaves a record holding only that it was recorded.
    pub async fn reported_before_record(
        &self,
        call_id: &str,
        attempt: &outbound_model::call::CallAttempt,
    ) -> Result<(outbound_model::telephony::Results, RecordRead), Error> {
        let item = (self.get_item(keys::call(call_id), keys::CALL.to_owned())).await?;
        let of_attempt = item
            .as_ref()
            .filter(|item| item.contains_key(PENDING) && super::results::records(item, attempt));
        let results = of_attempt
            .map(super::results::results_of)
            .unwrap_or_default();
        let read = RecordRead {
            call_id: call_id.to_owned(),
            flow_writes: item.as_ref().map_or(0, flow_writes_of),
        };
        Ok((results, read))
    }

    /// Marks attempt `call` refused by the provider when [`Store::release_call`] could not be
    /// written (a conflict on the shared capacity it gives back): one write to the contact's own
    /// state, which reconcile reads to give the claim back later instead of spending it (D13).
    pub async fn mark_refused(&self, call: &CallRef) -> Result<(), Error> {
        let written = self
            .update_one(
                "mark call refused",
                (
                    keys::task_contacts(&call.tenant, &call.task_id),
                    keys::contact(&call.contact_id),
                ),
                "SET refused = :attempt",
                Some("in_call = :attempt AND attribute_not_exists(call_id)"),
                Expr::default().value(":attempt", n(call.attempt)),
            )
            .await;
        WriteFailure::took_effect(written).map(drop)
    }

    /// Gives back a claim the provider refused: not an attempt (D13). The contact waits until
    /// `retry_at`, ahead of the plain retries as before; `why` says what else the refusal marks.
    pub async fn release_call(
        &self,
        call: &CallRef,
        retry_at: Timestamp,
        why: GiveBack,
    ) -> Result<(), Error> {
        let tenant = &call.tenant;
        let quota_refused = why == GiveBack::QuotaRefused;
        let provider_busy = why != GiveBack::Refused;
        let rank = call.recalled.then_some(call.priority);
        let update = if quota_refused {
            "SET next_attempt_at = :at, gsi1pk = :wait_pk, gsi1sk = :wait_sk, \
             quota_refusals = if_not_exists(quota_refusals, :zero) + :one \
             REMOVE in_call, claimed_at, sent_again_at, call_id, refused, calling_from, gsi2pk, gsi2sk"
        } else {
            "SET next_attempt_at = :at, gsi1pk = :wait_pk, gsi1sk = :wait_sk \
             REMOVE in_call, claimed_at, sent_again_at, call_id, refused, calling_from, gsi2pk, gsi2sk"
        };
        let mut expr = Expr::default()
            .value(":at", n(retry_at.0))
            .value(":wait_pk", s(keys::waiting(tenant, &call.task_id)))
            .value(":wait_sk", s(keys::waiting_order(rank, retry_at.0)))
            .value(":attempt", n(call.attempt));
        if quota_refused {
            expr = expr.value(":zero", n(0)).value(":one", n(1));
        }
        let (counters_pk, counters_sk) =
            counters::key_of(tenant, &call.task_id, call.counters_apart);
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(tenant, &call.task_id),
                keys::contact(&call.contact_id),
                update,
                Some("in_call = :attempt AND attribute_not_exists(released)"),
                expr,
            )?
            .update(
                Call::Task,
                counters_pk,
                counters_sk,
                // A contact attempted before waits again; one never attempted is not dialled.
                // The contact is due again: a task resting meanwhile wakes (D23).
                &format!(
                    "{}ADD in_flight :minus_one, awake :one{} REMOVE idle_until",
                    if provider_busy {
                        "SET busy_until = :now "
                    } else {
                        ""
                    },
                    if call.attempt > 1 {
                        format!(", {} :one", counters::CONTACTS_WAITING)
                    } else {
                        String::new()
                    },
                ),
                Some("attribute_exists(pk)"),
                {
                    let expr = Expr::default()
                        .value(":minus_one", n(-1))
                        .value(":one", n(1));
                    if provider_busy {
                        expr.value(":now", n(retry_at.0))
                    } else {
                        expr
                    }
                },
            )?
            .give_back_service_place(Call::Service, call.shard)?;
        match self.transact("release call", actions).await {
            Ok(()) => Ok(()),
            // Already released or recorded, or the task is gone: nothing is held.
            Err(failure) => failure.condition().map(drop),
        }
    }
}

impl Store {
    /// Gives back the places in flight of attempt `attempt`, in doubt (D28: whether its call
    /// started is unknown, and it will not be sent again now): the contact stays in that attempt,
    /// waiting for its outcome, and is looked at again from `check_at`. In the task's counters it
    /// waits (D19). Answers false when the attempt is no longer in flight, was placed or released
    /// already, or the task is gone.
    pub async fn release_in_doubt(
        &self,
        tenant: &Tenant,
        task: &Task,
        state: &TaskContact,
        attempt: u32,
        check_at: Timestamp,
    ) -> Result<bool, Error> {
        let (counters_pk, counters_sk) = counters::key_of_task(tenant, task);
        let actions = Actions::new(&self.table)
            .update(
                Call::Contact,
                keys::task_contacts(tenant, &task.id),
                keys::contact(&state.contact_id),
                "SET released = :true, gsi2sk = :check",
                Some(
                    "in_call = :attempt AND attribute_not_exists(call_id) \
                     AND attribute_not_exists(released)",
                ),
                Expr::default()
                    .value(":true", AttributeValue::Bool(true))
                    .value(
                        ":check",
                        s(keys::in_flight_order(check_at.0, &state.contact_id)),
                    )
                    .value(":attempt", n(attempt)),
            )?
            .update(
                Call::Task,
                counters_pk,
                counters_sk,
                &format!(
                    "ADD in_flight :minus_one, {} :one",
                    counters::CONTACTS_WAITING
                ),
                Some("attribute_exists(pk)"),
                Expr::default()
                    .value(":minus_one", n(-1))
                    .value(":one", n(1)),
            )?
            .give_back_service_place(Call::Service, state.capacity_shard)?;
        match self.transact("release a call in doubt", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }
}

impl Store {
    /// Takes again the places an attempt in doubt gave back (D28), so its start can be sent
    /// again with its token: a place among the task's and the service's calls in flight (its own
    /// capacity shard's part) and one of this second's calls at the provider rate, as a claim
    /// takes them, on the condition that the attempt is still in flight, in doubt and released;
    /// `now` is kept as when it was sent again.
    /// Answers false when any of that no longer holds or there is no room: nothing is taken.
    pub async fn hold_in_doubt_again(
        &self,
        tenant: &Tenant,
        task: &Task,
        state: &TaskContact,
        attempt: u32,
        caps: Caps,
        now: Timestamp,
    ) -> Result<bool, Error> {
        let actions = Actions::new(&self.table).update(
            Claim::Contact,
            keys::task_contacts(tenant, &task.id),
            keys::contact(&state.contact_id),
            "SET sent_again_at = :now REMOVE released",
            Some("in_call = :attempt AND attribute_not_exists(call_id) AND released = :true"),
            Expr::default()
                .value(":true", AttributeValue::Bool(true))
                .value(":attempt", n(attempt))
                .value(":now", n(now.0)),
        )?;
        // Released, it waited among the task's contacts; held, it is counted in flight alone.
        let mut moved = Deltas::default();
        moved.add(counters::CONTACTS_WAITING, -1);
        let place = Place {
            caps,
            shard: state.capacity_shard,
            shards: self.capacity_shards.max(1),
        };
        let actions = take_capacity(
            actions,
            counters::key_of_task(tenant, task),
            place,
            &moved,
            now,
        )?;
        match self.transact("hold a call in doubt again", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }
}

/// Why a claim is given back without an attempt (D13).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveBack {
    /// The provider was busy (rate or capacity): the task's runs hold off until the retry time.
    ProviderBusy,
    /// A campaign-quota refusal with nothing else of the service in flight: as busy, and counted
    /// on the contact, since enough of them in a row say the quota is missing (D13).
    QuotaRefused,
    /// The provider refused the service's calls as a whole, or the call was never placed.
    Refused,
}

/// Where a claim takes its places: the caps, and the capacity shard of `shards` whose part of
/// the service's calls in flight and provider rate it takes.
#[derive(Clone, Copy)]
struct Place {
    caps: Caps,
    shard: u32,
    shards: u32,
}

/// The claim's places: one among the task's calls in flight (while it is RUNNING), one among
/// the service's (its shard's part of them), and one of this second's calls at the provider rate (its
/// shard's part of it).
fn take_capacity<'a>(
    actions: Actions<'a, Claim>,
    (counters_pk, counters_sk): (String, String),
    place: Place,
    moved: &Deltas,
    now: Timestamp,
) -> Result<Actions<'a, Claim>, Error> {
    let Place {
        caps,
        shard,
        shards,
    } = place;
    let second = now.0.div_euclid(1000);
    let (counters, expr) = moved.clause(
        Expr::default()
            .name("#status", "status")
            .value(":running", n(TaskStatus::Running.code()))
            .value(":one", n(1))
            .value(":now", n(now.0))
            .value(":cap", n(caps.per_task)),
    );
    let update = match counters {
        Some(counters) => {
            format!("SET last_call_at = :now REMOVE held_back_at, no_agents_at ADD in_flight :one, {counters}")
        }
        None => "SET last_call_at = :now REMOVE held_back_at, no_agents_at ADD in_flight :one"
            .to_owned(),
    };
    actions
        .update(
            Claim::Task,
            counters_pk,
            counters_sk,
            &update,
            Some("#status = :running AND (attribute_not_exists(in_flight) OR in_flight < :cap)"),
            expr,
        )?
        .update(
            Claim::Service,
            keys::dialer(shard),
            keys::CAPACITY.to_owned(),
            "ADD in_flight :one",
            Some("attribute_not_exists(in_flight) OR in_flight < :cap"),
            Expr::default()
                .value(":one", n(1))
                .value(":cap", n(keys::shard_part(caps.total, shards, shard))),
        )?
        .update(
            Claim::Rate,
            keys::dialer(shard),
            keys::rate_second(second),
            "ADD placed :one SET expires_at = :expires",
            Some("attribute_not_exists(placed) OR placed < :rate"),
            Expr::default()
                .value(":one", n(1))
                .value(
                    ":rate",
                    n(keys::shard_part(caps.rate_per_second, shards, shard)),
                )
                // Kept a day (the table's TTL attribute), so a clock skew cannot reuse it.
                .value(":expires", n(second + 86_400)),
        )
}

/// Why a claim's transaction was refused, from the first action whose condition failed.
fn refusal(failed: ConditionFailure<Claim>, gate: &Gate) -> ClaimRefused {
    if failed.failed(Claim::Contact) {
        ClaimRefused::Taken
    } else if failed.failed(Claim::DoNotCall) {
        ClaimRefused::DoNotCall
    } else if failed.failed(Claim::CallerId) {
        ClaimRefused::CallerIdGone
    } else if failed.failed(Claim::Frequency) {
        let stored = failed.stored(Claim::Frequency).map(Attempts::of);
        match (&gate.frequency, stored) {
            (Some(frequency), Some(now_stored)) => match frequency.eligible_after(&now_stored) {
                Some(at) if now_stored.count == frequency.seen.count => ClaimRefused::Capped(at),
                _ => ClaimRefused::Contended,
            },
            _ => ClaimRefused::Contended,
        }
    } else if failed.failed(Claim::Task) {
        // The task's counters, on their own item or the task's: its status is in either.
        let running = n(TaskStatus::Running.code());
        match failed
            .stored(Claim::Task)
            .and_then(|item| item.get("status"))
        {
            Some(status) if *status == running => ClaimRefused::TaskFull,
            _ => ClaimRefused::TaskNotRunning,
        }
    } else if failed.failed(Claim::Service) {
        ClaimRefused::ServiceFull
    } else {
        ClaimRefused::RateLimited
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// D17: a number at its cap may be called again a period after the attempt that opened it
    /// plus the time a claim has to place its call, so two calls placed are never less than a
    /// period apart when the first went out late (the simulation's seed 826: 421 ms inside).
    #[test]
    fn a_capped_number_waits_the_period_and_the_time_a_claim_has_to_place() {
        let cap = FrequencyCap {
            max_calls: 2,
            period_hours: 1,
        };
        let attempts = Attempts {
            count: 3,
            times: HashMap::from([(0, 1_000), (1, 2_000), (2, 3_000)]),
        };
        // The latest two are at 2,000 and 3,000: the oldest of them opens the period.
        assert_eq!(
            attempts.eligible_at(cap),
            Some(Timestamp(2_000 + 3_600_000 + CLAIM_CHECKED_AFTER_MILLIS))
        );
        let fewer = Attempts {
            count: 1,
            times: HashMap::from([(0, 1_000)]),
        };
        assert_eq!(fewer.eligible_at(cap), None);
    }
}

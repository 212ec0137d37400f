//! What calls learn (D22), where the task's views read it: the values a call's flow reports while
//! the call lasts, written on its call record (Amazon Connect's flow-results function), and the
//! task's result counters, moved by the outcome's own transaction.
//!
//! The counters of one result name are one item in the task's partition ([`keys::result_counts`]):
//! `vals`, a string set of the values kept, and per kept value its count under `c` + the value's
//! FNV-1a hash (so a value of up to 1 KB is stored once, in the set); `other`, the answered
//! contacts whose value was not kept; `set_by`, the answered contacts whose latest answer set the
//! name. The set adds a value only while it has room for it: 1,000 values of up to 64 bytes, a
//! longer one only while fewer than 100 are kept, so the item stays under ~180 KB whatever the
//! values (100 x 1 KB + 900 x 64 B + 1,000 counts of ~20 B). A value already kept, or one with
//! room, is one `ADD` whose condition says so; a value past the cap fails that condition and is
//! counted in `other` on the next try, which the failed condition's stored item tells apart.

use super::Call;
use crate::store::keys::{self, PK, SK};
use crate::store::{n, s, string_attr, Actions, ConditionFailure, Expr, Item, Store, WriteFailure};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::call::{CallAttempt, CallRef, Learnt};
use outbound_model::error::Error;
use outbound_model::telephony::{ResultTally, Results};
use outbound_model::{Id, Tenant, Timestamp};
use std::collections::HashMap;

/// Distinct values of a result name kept with their own count.
pub const KEPT_VALUES: usize = 1_000;
/// Of those, values longer than [`SHORT_VALUE_BYTES`] (up to 256 characters, 1 KB).
pub const KEPT_LONG_VALUES: usize = 100;
pub const SHORT_VALUE_BYTES: usize = 64;

/// Most values one flow report writes on a call record: the update expression stays under
/// DynamoDB's 4 KB.
pub const MAX_FLOW_VALUES: usize = 100;

/// The call record's count of flow reports written on it, and the time its outcome was
/// recorded (D29): a report after that is refused, and the outcome is recorded only while the
/// count is what it read.
pub(super) const FLOW_WRITES: &str = "flow_writes";
pub(super) const RECORDED_AT: &str = "recorded_at";

/// The results a call record holds, a pending one's too.
pub(super) fn results_of(item: &Item) -> Results {
    item.get("results")
        .and_then(|results| results.as_m().ok())
        .map(|map| {
            map.iter()
                .filter_map(|(name, value)| Some((name.clone(), value.as_s().ok()?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a call record is one the placing wrote (D28): not a pending one a flow's report
/// made, nor the bare mark an outcome leaves when the call's id was never saved (it holds only
/// `recorded_at`).
pub(super) fn of_placed_call(item: &Item) -> bool {
    !item.contains_key(PENDING) && item.contains_key("task_id")
}

/// When a call record written at `millis` (since the epoch) expires, in the table's TTL
/// seconds: two days on, far past any outcome event.
pub(super) fn record_expires_at(millis: i64) -> i64 {
    millis / 1000 + 2 * 86_400
}

/// Marks a call record created by the flow's first report before the placing wrote it (D28).
pub(super) const PENDING: &str = "pending";

/// The flow reports a call record holds ([`FLOW_WRITES`]; 0 before the first).
pub(super) fn flow_writes_of(record: &Item) -> u64 {
    record
        .get(FLOW_WRITES)
        .and_then(|value| value.as_n().ok())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0)
}

/// The set of kept values; the other attributes go through placeholders (`other` and `set` are
/// reserved words).
const VALS: &str = "vals";
const OTHER: &str = "other";
const SET_BY: &str = "set_by";

/// How many values the set of a result name may hold for `value` to join it.
fn room_for(value: &str) -> usize {
    if value.len() <= SHORT_VALUE_BYTES {
        KEPT_VALUES
    } else {
        KEPT_LONG_VALUES
    }
}

/// The attribute counting a kept value.
fn count_attribute(value: &str) -> String {
    format!("c{:016x}", keys::fnv1a_64(value))
}

/// How one result name's counters move with an answered call: from the contact's earlier
/// answer's value (`old`) to this one's (`new`); each `None` when that answer did not set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ResultMove {
    name: String,
    old: Option<String>,
    new: Option<String>,
}

/// The moves of an answered call's results, one per result name whose value changes; none for
/// a call not answered (the contact's earlier answer stands).
pub(super) fn result_moves(call: &CallRef, answered: bool, learnt: &Learnt) -> Vec<ResultMove> {
    if !answered {
        return Vec::new();
    }
    let empty = Results::new();
    let earlier = call.earlier_results.as_ref().unwrap_or(&empty);
    call.result_attributes
        .iter()
        .filter_map(|name| {
            let old = earlier.get(name);
            let new = learnt.results.get(name);
            (old != new).then(|| ResultMove {
                name: name.clone(),
                old: old.cloned(),
                new: new.cloned(),
            })
        })
        .collect()
}

/// What a failed condition showed of one name's counters: the values its set held (empty when
/// the item was missing). Without it, a value is taken to be kept, or to have room.
#[derive(Clone, Debug, Default)]
pub(super) struct Seen {
    vals: Vec<String>,
}

impl Seen {
    fn of(stored: Option<&Item>) -> Seen {
        let vals = stored
            .and_then(|item| item.get(VALS))
            .and_then(|vals| vals.as_ss().ok())
            .cloned()
            .unwrap_or_default();
        Seen { vals }
    }

    fn holds(&self, value: &str) -> bool {
        self.vals.iter().any(|kept| kept == value)
    }

    fn has_room_for(&self, value: &str) -> bool {
        self.vals.len() < room_for(value)
    }

    /// What each name's counters showed in `failed`, for the names whose condition failed;
    /// the others as they were.
    pub(super) fn update(seen: &mut [Option<Seen>], failed: &ConditionFailure<Call>) {
        for (at, seen) in seen.iter_mut().enumerate() {
            if failed.failed(Call::Result(at)) {
                *seen = Some(Seen::of(failed.stored(Call::Result(at))));
            }
        }
    }
}

impl ResultMove {
    /// The update of this name's counters and its condition, as `seen` (if anything) showed
    /// them: the new value counted where it is kept or has room, else in `other`; the old one
    /// taken from where it was counted.
    fn update(&self, seen: Option<&Seen>) -> (String, String, Expr) {
        let mut adds = Vec::new();
        let mut conditions = Vec::new();
        let mut expr = Expr::default();
        let mut other = 0i64;
        if let Some(new) = &self.new {
            let kept = seen.is_none_or(|seen| seen.holds(new) || seen.has_room_for(new));
            expr = expr
                .value(":new", s(new))
                .value(":new_room", n(room_for(new)));
            if kept {
                adds.push(format!("{VALS} :new_set, #new_count :one"));
                conditions.push(format!(
                    "(attribute_not_exists({VALS}) OR contains({VALS}, :new) OR size({VALS}) < :new_room)"
                ));
                expr = expr
                    .value(":new_set", AttributeValue::Ss(vec![new.clone()]))
                    .value(":one", n(1))
                    .name("#new_count", &count_attribute(new));
            } else {
                other += 1;
                conditions.push(format!(
                    "(NOT contains({VALS}, :new) AND size({VALS}) >= :new_room)"
                ));
            }
        }
        if let Some(old) = &self.old {
            let kept = seen.is_none_or(|seen| seen.holds(old));
            expr = expr.value(":old", s(old));
            if kept {
                adds.push("#old_count :minus_one".to_owned());
                conditions.push(format!("contains({VALS}, :old)"));
                expr = expr
                    .name("#old_count", &count_attribute(old))
                    .value(":minus_one", n(-1));
            } else {
                other -= 1;
                conditions.push(format!("NOT contains({VALS}, :old)"));
            }
        }
        if other != 0 {
            adds.push("#other :other".to_owned());
            expr = expr.name("#other", OTHER).value(":other", n(other));
        }
        let set_by = i64::from(self.new.is_some()) - i64::from(self.old.is_some());
        if set_by != 0 {
            adds.push("#set_by :set_by".to_owned());
            expr = expr.name("#set_by", SET_BY).value(":set_by", n(set_by));
        }
        (
            format!("ADD {}", adds.join(", ")),
            conditions.join(" AND "),
            expr,
        )
    }
}

impl Store {
    /// Takes out of each name's kept values the old value of `moves` whose count fell to zero
    /// (D29), so that it holds no place of the 1,000: one conditional write per value left,
    /// which a concurrent answer setting it again either precedes (the count is not zero) or
    /// follows (it adds the value back). A failure leaves the value kept at zero, logged.
    pub(super) async fn prune_results(&self, tenant: &Tenant, task: &Id, moves: &[ResultMove]) {
        for old in moves
            .iter()
            .filter_map(|one| Some((&one.name, one.old.as_ref()?)))
        {
            let (name, value) = old;
            let expr = Expr::default()
                .name("#count", &count_attribute(value))
                .value(":value", AttributeValue::Ss(vec![value.clone()]))
                .value(":zero", n(0));
            let pruned = self
                .update_one(
                    "prune result values",
                    (keys::task_contacts(tenant, task), keys::result_counts(name)),
                    &format!("DELETE {VALS} :value REMOVE #count"),
                    Some("#count = :zero"),
                    expr,
                )
                .await;
            if let Err(WriteFailure::Other(error)) = pruned {
                tracing::warn!(%error, result = %name, "a value no contact holds keeps its place");
            }
        }
    }
}

impl<'a> Actions<'a, Call> {
    /// The moves of the task's result counters (D22), each labelled by its place in `moves`.
    pub(super) fn move_results(
        mut self,
        tenant: &Tenant,
        task: &Id,
        moves: &[ResultMove],
        seen: &[Option<Seen>],
    ) -> Result<Self, Error> {
        for (at, one) in moves.iter().enumerate() {
            let (update, condition, expr) = one.update(seen.get(at).and_then(Option::as_ref));
            self = self.update(
                Call::Result(at),
                keys::task_contacts(tenant, task),
                keys::result_counts(&one.name),
                &update,
                Some(&condition),
                expr,
            )?;
        }
        Ok(self)
    }
}

/// What a flow's report did to its call record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowWrite {
    /// The values are on the record.
    Written,
    /// No record under that id (yet): the call is placed but not marked, or not ours.
    NoRecord,
    /// The record under that id is another attempt's: never this call's.
    OtherAttempt,
    /// The call's outcome was recorded before this report came (D29): refused.
    AfterOutcome,
}

/// Whether `stored`, a call record, is the record of `attempt`.
pub(super) fn records(stored: &Item, attempt: &CallAttempt) -> bool {
    let text = |name: &str| string_attr(stored, name);
    text("tenant") == Some(attempt.tenant.as_str())
        && text("task_id") == Some(attempt.task_id.as_str())
        && text("contact_id") == Some(attempt.contact_id.as_str())
        && stored.get("attempt").and_then(|value| value.as_n().ok())
            == Some(&attempt.attempt.to_string())
}

impl Store {
    /// Writes `results`, what a call's flow reported during the call, onto the record of the call
    /// the provider knows as `call_id` (D22), added to what earlier reports wrote there: only
    /// onto a record of the same attempt. With no record yet (the flow overtook the placing, or
    /// the call's id was never saved: a run that died, a start's answer lost), a pending record
    /// of the attempt is created with them, while that attempt is in flight: the placing fills
    /// it in, and an outcome found from what the call carries reads it (D28).
    pub async fn record_flow_results(
        &self,
        call_id: &str,
        attempt: &CallAttempt,
        results: &Results,
    ) -> Result<FlowWrite, Error> {
        if results.is_empty() {
            // Nothing to add.
            return Ok(FlowWrite::Written);
        }
        let key = (keys::call(call_id), keys::CALL.to_owned());
        let same_attempt = "tenant = :tenant AND task_id = :task AND contact_id = :contact \
                            AND attempt = :attempt AND attribute_not_exists(recorded_at)";
        let of_attempt = || {
            Expr::default()
                .value(":tenant", s(attempt.tenant.as_str()))
                .value(":task", s(attempt.task_id.as_str()))
                .value(":contact", s(attempt.contact_id.as_str()))
                .value(":attempt", n(attempt.attempt))
                .value(":one", n(1))
        };
        // Each value into the record's map, once the map is there; the first report writes it.
        for _ in 0..3 {
            let mut sets = Vec::new();
            let mut expr = of_attempt();
            for (at, (name, value)) in results.iter().enumerate() {
                sets.push(format!("results.#r{at} = :r{at}"));
                expr = expr
                    .name(&format!("#r{at}"), name)
                    .value(&format!(":r{at}"), s(value));
            }
            let added = self
                .update_one(
                    "record flow results",
                    key.clone(),
                    &format!("SET {} ADD {FLOW_WRITES} :one", sets.join(", ")),
                    Some(&format!("attribute_exists(results) AND {same_attempt}")),
                    expr,
                )
                .await;
            let stored = match added {
                Ok(_) => return Ok(FlowWrite::Written),
                Err(WriteFailure::Other(error)) => return Err(error),
                Err(WriteFailure::Condition(failed)) => failed.stored(()).cloned(),
            };
            let Some(stored) = stored else {
                match self.pending_record(call_id, attempt, results).await? {
                    Some(written) => return Ok(written),
                    // Another report made it in between: add to it.
                    None => continue,
                }
            };
            // Before the attempt: an outcome recorded with no record leaves one holding only that.
            if stored.contains_key(RECORDED_AT) {
                return Ok(FlowWrite::AfterOutcome);
            }
            if !records(&stored, attempt) {
                return Ok(FlowWrite::OtherAttempt);
            }
            if stored.contains_key("results") {
                // Another report made the map in between: add to it.
                continue;
            }
            let map = results
                .iter()
                .map(|(name, value)| (name.clone(), s(value)))
                .collect();
            let created = self
                .update_one(
                    "record flow results",
                    key.clone(),
                    &format!("SET results = :results ADD {FLOW_WRITES} :one"),
                    Some(&format!("attribute_not_exists(results) AND {same_attempt}")),
                    of_attempt().value(":results", AttributeValue::M(map)),
                )
                .await;
            match created {
                Ok(_) => return Ok(FlowWrite::Written),
                Err(WriteFailure::Other(error)) => return Err(error),
                // Another report made the map in between: add to it.
                Err(WriteFailure::Condition(_)) => continue,
            }
        }
        Err(Error::internal(
            "record flow results",
            "the call record kept changing",
        ))
    }

    /// The counters of each of `names`, the task's result attributes (D22), in that order: one
    /// BatchGetItem of at most 10 items.
    pub async fn result_tallies(
        &self,
        tenant: &Tenant,
        task: &Id,
        names: &[String],
    ) -> Result<Vec<ResultTally>, Error> {
        let pk = keys::task_contacts(tenant, task);
        let wanted = names
            .iter()
            .map(|name| {
                [
                    (PK.to_owned(), s(&pk)),
                    (SK.to_owned(), s(keys::result_counts(name))),
                ]
                .into()
            })
            .collect();
        let mut found: HashMap<String, Item> = self
            .batch_get_with(wanted, None)
            .await?
            .into_iter()
            .filter_map(|item| Some((string_attr(&item, SK)?.to_owned(), item)))
            .collect();
        Ok(names
            .iter()
            .map(|name| {
                found
                    .remove(&keys::result_counts(name))
                    .map(|item| tally_of(&item))
                    .unwrap_or_default()
            })
            .collect())
    }
}

/// One name's counters as stored.
fn tally_of(item: &Item) -> ResultTally {
    let number = |name: &str| {
        item.get(name)
            .and_then(|value| value.as_n().ok())
            .and_then(|raw| raw.parse::<i64>().ok())
            .unwrap_or(0)
            .max(0) as u64
    };
    let vals = item
        .get(VALS)
        .and_then(|vals| vals.as_ss().ok())
        .cloned()
        .unwrap_or_default();
    ResultTally {
        kept: vals
            .into_iter()
            .map(|value| {
                let count = number(&count_attribute(&value));
                (value, count)
            })
            .collect(),
        other: number(OTHER),
        set: number(SET_BY),
    }
}

impl Store {
    /// The pending record of attempt `attempt` under `call_id`, holding `results` (one flow
    /// write), created on the condition that there is no record yet and that the attempt is in
    /// flight. `None`: a record appeared meanwhile; `NoRecord`: the attempt is not in flight.
    async fn pending_record(
        &self,
        call_id: &str,
        attempt: &CallAttempt,
        results: &Results,
    ) -> Result<Option<FlowWrite>, Error> {
        let map = results
            .iter()
            .map(|(name, value)| (name.clone(), s(value)))
            .collect();
        let item: Item = [
            (PK.to_owned(), s(keys::call(call_id))),
            (SK.to_owned(), s(keys::CALL)),
            ("tenant".to_owned(), s(attempt.tenant.as_str())),
            ("task_id".to_owned(), s(attempt.task_id.as_str())),
            ("contact_id".to_owned(), s(attempt.contact_id.as_str())),
            ("attempt".to_owned(), n(attempt.attempt)),
            ("results".to_owned(), AttributeValue::M(map)),
            (FLOW_WRITES.to_owned(), n(1)),
            (PENDING.to_owned(), AttributeValue::Bool(true)),
            // As a placed call's record (the wall clock: the flow's report has no engine's).
            (
                "expires_at".to_owned(),
                n(record_expires_at(Timestamp::now().0)),
            ),
        ]
        .into();
        let actions = Actions::new(&self.table)
            .check(
                Call::Contact,
                keys::task_contacts(&attempt.tenant, &attempt.task_id),
                keys::contact(&attempt.contact_id),
                "in_call = :attempt",
                Expr::default().value(":attempt", n(attempt.attempt)),
            )?
            .put(
                Call::Record,
                item,
                Some(("attribute_not_exists(pk)", Expr::default())),
            )?;
        match self
            .transact("record flow results before the call record", actions)
            .await
        {
            Ok(()) => Ok(Some(FlowWrite::Written)),
            Err(failure) => {
                let failed = failure.condition()?;
                if failed.failed(Call::Contact) {
                    Ok(Some(FlowWrite::NoRecord))
                } else {
                    Ok(None)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved(old: Option<&str>, new: Option<&str>) -> ResultMove {
        ResultMove {
            name: "outcome".into(),
            old: old.map(str::to_owned),
            new: new.map(str::to_owned),
        }
    }

    fn seen(vals: &[&str]) -> Seen {
        Seen {
            vals: vals.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    #[test]
    fn a_first_value_joins_the_set_and_a_value_past_the_cap_counts_as_other() {
        let (update, condition, expr) = moved(None, Some("yes")).update(None);
        assert_eq!(
            update,
            "ADD vals :new_set, #new_count :one, #set_by :set_by"
        );
        assert_eq!(
            condition,
            "(attribute_not_exists(vals) OR contains(vals, :new) OR size(vals) < :new_room)"
        );
        assert_eq!(expr.names["#new_count"], count_attribute("yes"));
        let full: Vec<String> = (0..KEPT_VALUES).map(|n| n.to_string()).collect();
        let full = Seen { vals: full };
        let (update, condition, _) = moved(None, Some("yes")).update(Some(&full));
        assert_eq!(update, "ADD #other :other, #set_by :set_by");
        assert_eq!(
            condition,
            "(NOT contains(vals, :new) AND size(vals) >= :new_room)"
        );
        // A kept value still counts as itself, however full the set.
        let (update, _, _) = moved(None, Some("7")).update(Some(&full));
        assert!(update.starts_with("ADD vals :new_set"), "{update}");
    }

    #[test]
    fn a_long_value_joins_only_while_fewer_than_a_hundred_are_kept() {
        let long = "x".repeat(SHORT_VALUE_BYTES + 1);
        let hundred: Vec<String> = (0..KEPT_LONG_VALUES).map(|n| n.to_string()).collect();
        let hundred = Seen { vals: hundred };
        assert!(!hundred.has_room_for(&long));
        assert!(hundred.has_room_for("short"));
    }

    #[test]
    fn a_later_answer_moves_the_contact_from_its_earlier_value() {
        let (update, condition, expr) = moved(Some("no"), Some("yes")).update(Some(&seen(&["no"])));
        assert_eq!(
            update,
            "ADD vals :new_set, #new_count :one, #old_count :minus_one"
        );
        assert_eq!(
            condition,
            "(attribute_not_exists(vals) OR contains(vals, :new) OR size(vals) < :new_room) \
             AND contains(vals, :old)"
        );
        assert!(!expr.names.contains_key("#set_by"));
        // Its earlier value was never kept, and this one no longer sets the name.
        let (update, condition, expr) = moved(Some("no"), None).update(Some(&seen(&[])));
        assert_eq!(update, "ADD #other :other, #set_by :set_by");
        assert_eq!(condition, "NOT contains(vals, :old)");
        assert_eq!(expr.values[":other"], n(-1));
        assert!(!expr.values.contains_key(":one"));
    }
}

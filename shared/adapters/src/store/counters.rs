//! The task item's counters of what its contacts and calls did, each attribute named once: the
//! diagnostics counters of D19 (contacts waiting, final, skipped for a reason; attempts ended
//! for a reason) and the call counters of D9 (calls ended with each outcome, in `counters`).
//! Each moves in the same write as the contact state it counts.
//!
//! Where they are kept: on an item of the task's own ([`keys::task_counters`]) for tasks created
//! since, with `in_flight`, the idle and held-back marks and a copy of the status; on the task
//! item for older tasks ([`Task::counters_apart`]). Reads see one task either way ([`overlay`]).

use super::keys;
use super::{n, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::call::{Outcome, Reason, Skip};
use outbound_model::task::{CallCounters, Standing};
use outbound_model::{Id, Task, Tenant};

/// The key the counters of task `task` are written under: their own item, or the task item of
/// a task created before they had one.
pub fn key_of(tenant: &Tenant, task: &Id, apart: bool) -> (String, String) {
    if apart {
        keys::task_counters(tenant, task)
    } else {
        (keys::tenant(tenant), keys::task(task))
    }
}

/// [`key_of`] a task as read.
pub fn key_of_task(tenant: &Tenant, task: &Task) -> (String, String) {
    key_of(tenant, &task.id, task.counters_apart)
}

/// Attributes a task's calls move, kept on the counters item (besides the `dg_` and `res_`
/// counters and a copy of `status`).
const MOVED_BY_CALLS: [&str; 13] = [
    "in_flight",
    "talking",
    "counters",
    "awake",
    "idle_until",
    "idle_rules_at",
    "idle_contacts_added",
    "held_back_at",
    "no_agents_at",
    "last_call_at",
    "last_outcome_at",
    "busy_until",
    CONTACTS_ANSWERED,
];

/// Whether attribute `name` of a task is one its calls move, kept on the counters item when the
/// task keeps them apart.
pub fn moved_by_calls(name: &str) -> bool {
    MOVED_BY_CALLS.contains(&name) || name.starts_with("dg_")
}

/// A new task's item split in two when its counters are kept apart: the task item without them,
/// and the counters item, which holds a copy of the status for the claim's condition.
pub fn split(tenant: &Tenant, task: &Task, item: Item) -> (Item, Option<Item>) {
    if !task.counters_apart {
        return (item, None);
    }
    let (pk, sk) = keys::task_counters(tenant, &task.id);
    let (mut counters, item): (Item, Item) =
        item.into_iter().partition(|(name, _)| moved_by_calls(name));
    counters.insert(keys::PK.to_owned(), AttributeValue::S(pk));
    counters.insert(keys::SK.to_owned(), AttributeValue::S(sk));
    counters.insert("status".to_owned(), n(task.status.code()));
    (item, Some(counters))
}

/// The task item read with its counters item laid over it: every counter from the counters
/// item, the later of the two `updated_at`, the task item's own keys and status.
pub fn overlay(task: &mut Item, counters: Item) {
    for (name, value) in counters {
        match name.as_str() {
            keys::PK | keys::SK | "status" => {}
            "updated_at" => {
                let number = |value: &AttributeValue| {
                    value.as_n().ok().and_then(|raw| raw.parse::<i64>().ok())
                };
                let later = task
                    .get("updated_at")
                    .and_then(number)
                    .is_none_or(|own| number(&value).is_some_and(|theirs| theirs > own));
                if later {
                    task.insert(name, value);
                }
            }
            _ => {
                task.insert(name, value);
            }
        }
    }
}

/// Whether a task item keeps its counters apart ([`Task::counters_apart`]).
pub fn kept_apart(task: &Item) -> bool {
    super::flag_attr(task, "counters_apart")
}

/// Contacts attempted or skipped whose outcome is not final: waiting for their interval,
/// their window or the cap.
pub const CONTACTS_WAITING: &str = "dg_waiting";
/// Contacts whose outcome in the task is final.
pub const CONTACTS_FINAL: &str = "dg_final";

/// Contacts with an answered attempt in the task (D22): what a result's `missingCount` is
/// counted from.
pub const CONTACTS_ANSWERED: &str = "res_answered";

/// The counter of contacts standing at `standing`; none for those derived from the others
/// (not dialled) or kept by the claim and the outcome already (`in_flight`).
pub fn contacts_standing(standing: Standing) -> Option<&'static str> {
    match standing {
        Standing::Waiting => Some(CONTACTS_WAITING),
        Standing::Final => Some(CONTACTS_FINAL),
        Standing::NotDialled | Standing::InFlight => None,
    }
}

/// The counter of contacts whose current state is skipped for `skip` (D18, D19).
pub fn contacts_skipped(skip: Skip) -> String {
    format!("dg_skip_{}", skip.name())
}

/// The counter of attempts that ended for `reason` (D18, D19).
pub fn attempts_ended(reason: Reason) -> String {
    format!("dg_reason_{}", reason.name())
}

/// The field of the task's `counters` map that counts calls ended with `outcome` (D9).
pub fn calls_ended(outcome: Outcome) -> &'static str {
    CallCounters::field(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new task's counters go to their own item and come back from it on read, whatever the
    /// task item still holds.
    #[test]
    fn a_split_task_reads_back_whole() {
        let tenant = Tenant::parse("acme").unwrap();
        let mut task = Task::draft(
            outbound_model::Name::parse("name", "t").unwrap(),
            outbound_model::text::Description::default(),
            (Id::new(), 3),
            outbound_model::task::DialSettings::default(),
            outbound_model::Timestamp(5),
        );
        task.in_flight = 2;
        let item = crate::store::to_item(&task, [("pk", "T#acme".to_owned())]).unwrap();
        let (mut own, counters) = split(&tenant, &task, item);
        let mut counters = counters.expect("kept apart");
        assert!(!own.contains_key("in_flight") && !own.contains_key("counters"));
        assert_eq!(counters["status"], n(task.status.code()));
        assert_eq!(
            counters["pk"].as_s().unwrap(),
            &keys::task_counters(&tenant, &task.id).0
        );
        counters.insert("in_flight".into(), n(7));
        counters.insert("updated_at".into(), n(9));
        counters.insert("status".into(), n(3));
        overlay(&mut own, counters);
        let read: Task = crate::store::from_item(own).unwrap();
        assert_eq!((read.in_flight, read.updated_at.0), (7, 9));
        assert_eq!(read.status.code(), task.status.code());
    }

    /// The call counters are written by name and read back through serde: one spelling.
    #[test]
    fn each_outcome_counts_into_its_stored_field() {
        for outcome in [Outcome::Success, Outcome::Failed, Outcome::NoAnswer] {
            let field = calls_ended(outcome);
            let mut stored = serde_json::to_value(CallCounters::default()).unwrap();
            stored[field] = 7.into();
            let read: CallCounters = serde_json::from_value(stored).unwrap();
            let counted = match outcome {
                Outcome::Success => read.success,
                Outcome::Failed => read.failed,
                Outcome::NoAnswer => read.no_answer,
            };
            assert_eq!(counted, 7, "{field}");
        }
    }
}

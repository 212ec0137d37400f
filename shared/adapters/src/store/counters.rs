//! The task item's counters of what its contacts and calls did, each attribute named once: the
//! diagnostics counters of D19 (contacts waiting, final, skipped for a reason; attempts ended
//! for a reason) and the call counters of D9 (calls ended with each outcome, in `counters`).
//! Each moves in the same write as the contact state it counts.

use outbound_model::call::{Outcome, Reason, Skip};
use outbound_model::task::{CallCounters, Standing};

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

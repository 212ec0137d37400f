//! The dialing engine's reads and writes (D13). A call moves through three transactions, each
//! conditioned on what the one before left: the claim (the contact's attempt, a place in the
//! task's and the service's calls in flight, and one of this second's calls at the provider rate), the
//! placing (the provider's call id), and the outcome (the contact's state in the task, the task's
//! counters, the contact's status and call count, and the calls in flight given back). A claim
//! taken twice, an outcome recorded twice or a release after an outcome fails its condition and
//! changes nothing, so duplicated messages and overlapping runs place and count each call once.

mod claim;
mod outcome;
mod results;
mod scan;
mod skip;
mod sweep;

pub use claim::{Attempts, FrequencyClaim, Gate, GiveBack, CLAIM_CHECKED_AFTER_MILLIS};
pub use results::{FlowWrite, KEPT_LONG_VALUES, KEPT_VALUES, MAX_FLOW_VALUES, SHORT_VALUE_BYTES};
pub use scan::SourceNow;
pub use skip::{Skipped, SKIPS_IN_ONE};

use crate::store::{counters, keys};
use crate::store::{n, Actions, Expr};
use outbound_model::error::Error;
use outbound_model::task::{Standing, TaskContact};
use outbound_model::Tenant;
use outbound_model::{Id, Task, Timestamp};

/// A task found through the running-task index.
#[derive(Clone, Debug)]
pub struct RunningTask {
    pub tenant: Tenant,
    pub task: Task,
    /// Its contacts whose outcome is final (D19's counter), for its demand (D23).
    pub settled: u64,
    /// Its contacts attempted or skipped and waiting, due or not (D19's counter): the rest of
    /// those not final and not in flight were never dialled, and are due (D23).
    pub waiting: u64,
}

/// The caps a claim must stay under (D13).
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub per_task: u32,
    pub total: u32,
    pub rate_per_second: u32,
}

/// Why a claim was not taken.
#[derive(Debug)]
pub enum ClaimRefused {
    /// Another run claimed this attempt first, or the contact's state moved on.
    Taken,
    /// The task is no longer RUNNING: no new calls (D10, D13).
    TaskNotRunning,
    /// The task has its most calls in flight.
    TaskFull,
    /// The service has its most calls in flight.
    ServiceFull,
    /// This second's provider rate is used up.
    RateLimited,
    /// The number is on the tenant's do-not-call list (D16).
    DoNotCall,
    /// The number reached the tenant's frequency cap (D17); it may be called from then.
    Capped(Timestamp),
    /// Another run's claim of the same number moved its count of attempts first: try later.
    Contended,
    /// The caller ID the call would present is no longer the tenant's (D22, D28).
    CallerIdGone,
    /// DynamoDB did not answer: nothing was claimed.
    Store(Error),
}

/// What one step of the completion check found among the contacts it read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sweep {
    /// Contacts of the data source the task has no state for: never dialled.
    pub never_dialled: Vec<Id>,
    /// Contacts still in the data source whose outcome in the task is not final.
    pub unfinished: usize,
    /// The sort key of the last contact read, when there may be more after it.
    pub next: Option<String>,
}

/// The actions of a claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Claim {
    /// The contact's state in the task: a fresh one, or the attempt taken.
    Contact,
    /// The task's calls in flight, while it is RUNNING.
    Task,
    /// The service's calls in flight.
    Service,
    /// This second's slot of the provider rate.
    Rate,
    /// The absence of the number's do-not-call guards (D16).
    DoNotCall,
    /// The number's attempts across the tenant's tasks (D17).
    Frequency,
    /// The guard of the caller ID the call presents names the tenant (D22, D28).
    CallerId,
}

/// The actions of the writes that follow a claim: placing the call, its outcome, giving the
/// claim back, dropping an orphan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    /// The contact's state in the task, conditioned on the attempt being in flight.
    Contact,
    /// The task: its counters and calls in flight.
    Task,
    /// The service's calls in flight.
    Service,
    /// The contact in the data source: its status and call count.
    SourceContact,
    /// The call record, found by the provider's call id.
    Record,
    /// The outcome's event in the outbox (D20).
    Event,
    /// The contact's mark as failed or unanswered in the task, for an implicit recall (D12).
    Recallable,
    /// The task's counters of one result name, by its place among the call's moves (D22).
    Result(usize),
    /// The record of the callback the call made (D31).
    Callback,
    /// The record of the callback the call's flow asked for (D31).
    AskedCallback,
}

/// Moves of a task's diagnostic counters (D19), written by the same transaction that moves the
/// contacts they count: `ADD name :delta` for each counter that changes.
#[derive(Debug, Default)]
pub(crate) struct Deltas(std::collections::BTreeMap<String, i64>);

impl Deltas {
    pub(crate) fn add(&mut self, counter: impl Into<String>, delta: i64) -> &mut Self {
        *self.0.entry(counter.into()).or_default() += delta;
        self
    }

    /// One contact moving from `before` to `after` (`None`: no state, not dialled).
    pub(crate) fn moved(
        &mut self,
        before: Option<&TaskContact>,
        after: Option<&TaskContact>,
    ) -> &mut Self {
        let standing =
            |state: Option<&TaskContact>| state.map_or(Standing::NotDialled, TaskContact::class);
        if let Some(counter) = counters::contacts_standing(standing(before)) {
            self.add(counter, -1);
        }
        if let Some(counter) = counters::contacts_standing(standing(after)) {
            self.add(counter, 1);
        }
        if let Some(skip) = before.and_then(|state| state.skip) {
            self.add(counters::contacts_skipped(skip), -1);
        }
        if let Some(skip) = after.and_then(|state| state.skip) {
            self.add(counters::contacts_skipped(skip), 1);
        }
        self
    }

    /// `ADD` clauses (without the keyword) and their values, named `:d0`, `:d1`, ...; `None`
    /// when nothing moves.
    pub(crate) fn clause(&self, expr: Expr) -> (Option<String>, Expr) {
        let mut parts = Vec::new();
        let mut expr = expr;
        for (at, (counter, delta)) in self.0.iter().filter(|(_, d)| **d != 0).enumerate() {
            parts.push(format!("{counter} :d{at}"));
            expr = expr.value(&format!(":d{at}"), n(*delta));
        }
        ((!parts.is_empty()).then(|| parts.join(", ")), expr)
    }
}

/// A claim that could not be built or sent: nothing was claimed.
fn not_claimed<T>(result: Result<T, Error>) -> Result<T, ClaimRefused> {
    result.map_err(ClaimRefused::Store)
}

/// The update of a task's counters item that wakes it: a run that marked it idle before reads
/// it again (D23).
pub(crate) const WAKE: &str = "REMOVE idle_until ADD awake :one";

impl<L> Actions<'_, L> {
    /// The task's side of a change of its contacts' standing that wakes it (a recall, a
    /// callback set or cancelled, D12, D31): `ADD revision` on the task item under `condition`
    /// (whose values hold `:one`), so a completion that read it before fails; the wake and the
    /// counters `moved` on its counters item, or on the task item for a task that keeps its
    /// counters there ([`Task::counters_apart`] false).
    pub(crate) fn task_woken(
        self,
        (task_label, counters_label): (L, L),
        (tenant, task): (&Tenant, &Task),
        moved: &Deltas,
        (condition, expr): (&str, Expr),
    ) -> Result<Self, Error> {
        let with_counts =
            |counts: Option<String>| counts.map(|c| format!(", {c}")).unwrap_or_default();
        let task_key = (keys::tenant(tenant), keys::task(&task.id));
        if !task.counters_apart {
            let (counts, expr) = moved.clause(expr);
            let update = format!("{WAKE}, revision :one{}", with_counts(counts));
            return self.update(
                task_label,
                task_key.0,
                task_key.1,
                &update,
                Some(condition),
                expr,
            );
        }
        let (counts, counts_expr) = moved.clause(Expr::default().value(":one", n(1)));
        let (counters_pk, counters_sk) = keys::task_counters(tenant, &task.id);
        self.update(
            task_label,
            task_key.0,
            task_key.1,
            "ADD revision :one",
            Some(condition),
            expr,
        )?
        .update(
            counters_label,
            counters_pk,
            counters_sk,
            &format!("{WAKE}{}", with_counts(counts)),
            Some("attribute_exists(pk)"),
            counts_expr,
        )
    }

    /// Gives back one of the service's calls in flight (D13): with an outcome, a release, or
    /// the end of a deleted task's call.
    fn give_back_service_place(self, label: L, shard: u32) -> Result<Self, Error> {
        self.update(
            label,
            keys::dialer(shard),
            keys::CAPACITY.to_owned(),
            "ADD in_flight :minus_one",
            None,
            Expr::default().value(":minus_one", n(-1)),
        )
    }
}

/// Why an outcome was not recorded as it was sent.
#[derive(Debug)]
pub enum RecordFailure {
    /// It was recorded.
    None,
    /// That attempt is not in flight: recorded before, or never claimed.
    NotInFlight,
    /// A recall changed the contact's state during the call: record again from this state.
    StateChanged(Box<TaskContact>),
    /// The task was deleted during the call.
    TaskGone,
    /// The contact was deleted from the data source during the call.
    ContactGone,
    /// The call's flow reported more since the outcome read its record (D29): record again
    /// with these results, the record holding `flow_writes` reports.
    ReportsArrived {
        results: outbound_model::telephony::Results,
        flow_writes: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_contact_partitions_name_their_tenant_and_task() {
        let tenant = Tenant::parse("acme:eu").unwrap();
        let id = Id::new();
        let (t, i) = keys::parse_task_contacts(&keys::task_contacts(&tenant, &id)).unwrap();
        assert_eq!((t.as_str(), i), ("acme:eu", id));
        assert!(keys::parse_task_contacts("T#acme#DS#x").is_none());
    }
}

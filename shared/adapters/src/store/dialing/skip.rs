//! Contacts not called when their turn came (D18): each skip recorded on the contact's state in
//! the task, final or waiting in the waiting index until its `until`, a run's skips together with
//! the task's counters in one transaction (D19). Never an attempt.

use crate::store::keys::{self, PK, SK};
use crate::store::{counters, n, s, to_item, Actions, Expr, Store};
use aws_sdk_dynamodb::types::AttributeValue;
use outbound_model::call::Skip;
use outbound_model::callback::CallbackStatus;
use outbound_model::error::Error;
use outbound_model::task::Due;
use outbound_model::task::TaskContact;
use outbound_model::{Task, Tenant, Timestamp};

use super::Deltas;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Contact,
    Task,
    Callback,
}

/// One contact a run skipped: the state it read, why, and until when it waits (D18).
#[derive(Clone, Debug)]
pub struct Skipped {
    pub due: Due,
    pub skip: Skip,
    pub until: Option<Timestamp>,
    /// For a contact parked outside its window: the rules time it was judged under (D24), so
    /// a later change of the rules finds it ([`keys::parked_order`]).
    pub parked_under: Option<Timestamp>,
}

/// The most actions a transaction of skips holds beside the task (DynamoDB takes 100): one a
/// skip, two for a final skip of a callback ([`Skipped::actions`]).
pub const SKIPS_IN_ONE: usize = 99;

impl Skipped {
    /// The callback this final skip settles as missed (D31), if it is one.
    fn missed_callback(&self) -> Option<&outbound_model::Id> {
        let state = self.due.state.as_ref()?;
        let callback = state.callback.as_ref()?;
        self.skip.is_final().then_some(&callback.id)
    }

    /// The actions its write takes in a transaction of skips.
    pub fn actions(&self) -> usize {
        1 + usize::from(self.missed_callback().is_some())
    }
}

impl Store {
    /// Records a run's skips (at most [`SKIPS_IN_ONE`]) in one transaction with the task's
    /// counters (D19), each contact as the run read it. When one contact moved on meanwhile
    /// (another run claimed or skipped it), each is written alone, so the others are still
    /// recorded. Answers how many were written.
    #[tracing::instrument(skip_all, fields(task = %task.id, count = skipped.len()))]
    pub async fn skip_contacts(
        &self,
        tenant: &Tenant,
        task: &Task,
        skipped: &[Skipped],
        now: Timestamp,
    ) -> Result<usize, Error> {
        debug_assert!(skipped.len() <= SKIPS_IN_ONE);
        if self.skip_together(tenant, task, skipped, now).await? {
            return Ok(skipped.len());
        }
        if skipped.len() == 1 {
            return Ok(0);
        }
        let mut written = 0;
        for one in skipped {
            written += usize::from(
                self.skip_together(tenant, task, std::slice::from_ref(one), now)
                    .await?,
            );
        }
        Ok(written)
    }

    /// One transaction of `skipped` and the task's counters; false when a contact's condition
    /// failed and nothing was written.
    async fn skip_together(
        &self,
        tenant: &Tenant,
        task: &Task,
        skipped: &[Skipped],
        now: Timestamp,
    ) -> Result<bool, Error> {
        let mut actions = Actions::new(&self.table);
        let mut moved = Deltas::default();
        for one in skipped {
            let Skipped {
                due,
                skip,
                until,
                parked_under,
            } = one;
            let (skip, until) = (*skip, *until);
            let before = due.state.clone();
            let base = before.clone().unwrap_or_else(|| {
                TaskContact::undialled(
                    due.contact_id.clone(),
                    u32::from(task.settings.max_dial_count),
                    task.settings.priority,
                    now,
                )
            });
            let final_skip = skip.is_final();
            let after = TaskContact {
                skip: Some(skip),
                done: final_skip,
                next_attempt_at: if final_skip {
                    None
                } else {
                    until.or(Some(now))
                },
                updated_at: now,
                ..base
            };
            let pk = keys::task_contacts(tenant, &task.id);
            let sk = keys::contact(&due.contact_id);
            let waiting = after.next_attempt_at.map(|at| {
                let order = match parked_under {
                    Some(rules_at) => keys::parked_order(rules_at.0, at.0),
                    None => keys::waiting_order(after.recalled.then_some(after.priority), at.0),
                };
                (keys::waiting(tenant, &task.id), order)
            });
            actions = match &before {
                // A new state: the whole item, if no run wrote one meanwhile.
                None => {
                    let mut item = to_item(&after, [(PK, pk), (SK, sk)])?;
                    if let Some((wait_pk, wait_sk)) = waiting {
                        item.insert(keys::GSI1_PK.to_owned(), s(wait_pk));
                        item.insert(keys::GSI1_SK.to_owned(), s(wait_sk));
                    }
                    actions.put(
                        Part::Contact,
                        item,
                        Some(("attribute_not_exists(pk)", Expr::default())),
                    )?
                }
                // The state as the run read it: only the skip and where it waits change.
                Some(state) => {
                    let mut expr = Expr::default()
                        .value(":skip", s(skip.name()))
                        .value(":done", AttributeValue::Bool(final_skip))
                        .value(":now", n(now.0))
                        .value(":attempts", n(state.attempts))
                        .value(":seen", n(state.updated_at.0))
                        .value(":false", AttributeValue::Bool(false));
                    let update = match (waiting, after.next_attempt_at) {
                        (Some((wait_pk, wait_sk)), Some(at)) => {
                            expr = expr
                                .value(":next", n(at.0))
                                .value(":wait_pk", s(wait_pk))
                                .value(":wait_sk", s(wait_sk));
                            "SET skip = :skip, done = :done, updated_at = :now, \
                             next_attempt_at = :next, gsi1pk = :wait_pk, gsi1sk = :wait_sk"
                        }
                        _ if one.missed_callback().is_some() => {
                            "SET skip = :skip, done = :done, updated_at = :now \
                             REMOVE next_attempt_at, gsi1pk, gsi1sk, callback"
                        }
                        _ => {
                            "SET skip = :skip, done = :done, updated_at = :now \
                             REMOVE next_attempt_at, gsi1pk, gsi1sk"
                        }
                    };
                    actions.update(
                        Part::Contact,
                        pk,
                        sk,
                        update,
                        Some(
                            "attribute_not_exists(in_call) AND attempts = :attempts \
                             AND updated_at = :seen AND done = :false",
                        ),
                        expr,
                    )?
                }
            };
            if let Some(callback) = one.missed_callback() {
                // Its number listed, or no window ever open for it (D31): it will not be made.
                actions = actions.update(
                    Part::Callback,
                    keys::task_contacts(tenant, &task.id),
                    keys::callback(callback),
                    "SET #status = :status, reason = :reason",
                    None,
                    Expr::default()
                        .name("#status", "status")
                        .value(":status", s(CallbackStatus::Missed.name()))
                        .value(":reason", s(skip.name())),
                )?;
            }
            moved.moved(before.as_ref(), Some(&after));
        }
        let (counters, expr) = moved.clause(Expr::default());
        if let Some(counters) = counters {
            let (counters_pk, counters_sk) = counters::key_of_task(tenant, task);
            actions = actions.update(
                Part::Task,
                counters_pk,
                counters_sk,
                &format!("ADD {counters}"),
                Some("attribute_exists(pk)"),
                expr,
            )?;
        }
        match self.transact("skip contacts", actions).await {
            Ok(()) => Ok(true),
            Err(failure) => failure.condition().map(|_| false),
        }
    }
}

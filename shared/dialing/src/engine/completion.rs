//! The completion check (D10, D13): a task completes once every contact of its data source has
//! a final outcome and no call is in flight.

use super::Engine;
use outbound_adapters::telephony::provider::Provider;
use outbound_model::error::Error;
use outbound_model::task::SweepMark;
use outbound_model::Task;
use outbound_model::Tenant;

/// What the completion check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Completion {
    Completed,
    /// Not yet: more to read, contacts queued, a recall being applied, or a race.
    NotYet,
    /// Every contact is final but those waiting for an outcome (in doubt, D28): nothing to
    /// dial until one comes.
    OutcomesPending,
}

impl<P: Provider> Engine<P> {
    /// Completes a task when every contact of its data source has a final outcome and nothing is
    /// in flight (D10, D13). `contacts_added` is the data source's count as the run read it: the
    /// completion is conditioned on it, so a contact added since refuses it. Answers what it
    /// found.
    pub(super) async fn complete_if_done(
        &self,
        tenant: &Tenant,
        task: &Task,
        contacts_added: u64,
    ) -> Result<Completion, Error> {
        // A recall being applied in chunks reopens contacts the check may already have read,
        // under the revision the check would save with its bookmark: no check (and no bookmark)
        // until every chunk is applied (D12).
        if task.pending_recall.is_some() || self.store.any_waiting(tenant, &task.id).await? {
            return Ok(Completion::NotYet);
        }
        // The check reads a bounded page of contacts a run, resuming where the last run
        // stopped while nothing was recalled or added since (D13).
        let resume = task
            .sweep
            .as_ref()
            .filter(|mark| mark.revision == task.revision && mark.contacts_added == contacts_added);
        let after = resume.map(|mark| mark.after.as_str());
        let sweep = self
            .store
            .sweep_step(tenant, task, after, self.config.sweep_page)
            .await?;
        if !sweep.never_dialled.is_empty() {
            self.store
                .queue_never_dialled(tenant, task, &sweep.never_dialled, self.clock.now())
                .await?;
            return Ok(Completion::NotYet);
        }
        if sweep.unfinished > 0 {
            // Nothing waits for a retry: what is left waits for its outcome (D28).
            return Ok(Completion::OutcomesPending);
        }
        if let Some(after) = sweep.next {
            let mark = SweepMark {
                after,
                revision: task.revision,
                contacts_added,
            };
            self.store.save_sweep(tenant, &task.id, &mark).await?;
            return Ok(Completion::NotYet);
        }
        if after.is_none() && task.sweep.is_some() {
            tracing::info!(task = %task.id, "completion check started over");
        }
        match self.store.complete_idle(tenant, task, contacts_added).await {
            Ok(_) => {
                tracing::info!(task = %task.id, "task completed");
                Ok(Completion::Completed)
            }
            // A call was claimed, a recall came, a contact was added, or the task left RUNNING
            // meanwhile.
            Err(Error::NotAllowed(_)) | Err(Error::NotFound(_)) | Err(Error::Conflict(_)) => {
                Ok(Completion::NotYet)
            }
            Err(error) => Err(error),
        }
    }
}

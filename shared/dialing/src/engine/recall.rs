//! A committed recall applied to every contact it names (D12), in groups, at most once each;
//! once applied (or gone with its task), its tenant's recall slot is given back (D32).

use super::Engine;
use outbound_adapters::store::slots::JobKind;
use outbound_adapters::telephony::provider::Provider;
use outbound_model::error::Error;
use outbound_model::job::{DialJob, RecallManifest};
use outbound_model::Id;
use outbound_model::Tenant;

impl<P: Provider> Engine<P> {
    /// Applies a committed recall (D12): every contact it names, at most once each, then lets
    /// the task complete again. Safe to run any number of times.
    #[tracing::instrument(skip(self), fields(tenant = tenant.as_str()))]
    pub async fn apply_recall(
        &self,
        tenant: &Tenant,
        task_id: &Id,
        recall: &Id,
    ) -> Result<(), Error> {
        let task = match self.store.task(tenant, task_id).await {
            Ok(task) => task,
            Err(Error::NotFound(_)) => return self.give_back_slot(tenant, recall).await,
            Err(error) => return Err(error),
        };
        if task.pending_recall.as_ref() != Some(recall) {
            // Applied already (a job sent again), or ended with its task: its slot too, unless
            // the run that finished it died before giving the slot back.
            return self.give_back_slot(tenant, recall).await;
        }
        let key = outbound_adapters::blob::recall_key(tenant, task_id, recall);
        let Some(bytes) = self.blob.get(&key, 64 * 1024 * 1024).await? else {
            tracing::error!(%key, "recall list is gone; the recall ends as it stands");
            return self.finish(tenant, task_id, recall).await;
        };
        let manifest: RecallManifest =
            serde_json::from_slice(&bytes).map_err(|e| Error::internal("decode recall list", e))?;
        // One bounded chunk a job, from where the last job stopped; the rest goes to the next
        // job through the dial queue, so no job's work grows with the recall (D12).
        let from = usize::try_from(task.pending_recall_applied)
            .unwrap_or(usize::MAX)
            .min(manifest.ids.len());
        let to = (from + self.config.recall_chunk).min(manifest.ids.len());
        let applied = self
            .store
            .apply_recall(
                tenant,
                &task,
                recall,
                &manifest.ids[from..to],
                manifest.priority,
                manifest.at,
            )
            .await?;
        tracing::info!(
            applied,
            from,
            to,
            of = manifest.ids.len(),
            "recall chunk applied"
        );
        if to == manifest.ids.len() {
            return self.finish(tenant, task_id, recall).await;
        }
        self.store
            .advance_recall(tenant, task_id, recall, to as u64, self.clock.now())
            .await?;
        let next = DialJob::Recall {
            tenant: tenant.clone(),
            task_id: task_id.clone(),
            recall_id: recall.clone(),
        };
        if let Err(error) = self.dial_jobs.send(&next, 0).await {
            // The tick sends it again a minute after the last chunk; it resumes where this stopped.
            tracing::warn!(%error, "next recall job not queued");
        }
        Ok(())
    }

    /// Marks the recall applied, then gives back its slot.
    async fn finish(&self, tenant: &Tenant, task_id: &Id, recall: &Id) -> Result<(), Error> {
        self.store.finish_recall(tenant, task_id, recall).await?;
        self.give_back_slot(tenant, recall).await
    }

    /// Gives back the tenant's recall slot `recall` holds, if it still holds one.
    async fn give_back_slot(&self, tenant: &Tenant, recall: &Id) -> Result<(), Error> {
        self.store
            .release_job_slot(tenant, JobKind::Recall, recall)
            .await
    }
}

//! Export jobs (D8): a data source or task with more contacts than a request may export is
//! exported in the background. The API stores the job's record (PROCESSING) and then queues
//! it; the exporter function claims the record, builds the file with the same bounded-memory
//! code as the direct exports ([`export::build`]), stores it under `exports/{tenant}/...` and
//! records the outcome; the status endpoint hands out a presigned download once it SUCCEEDED.
//!
//! Never a PROCESSING record without a job: if queueing fails the record is marked FAILED and
//! the request answers 503; a job that keeps failing is marked FAILED after
//! [`MAX_BUILD_ATTEMPTS`] builds, before its queue gives up on the message.

use super::export::{self, OutcomeFilter, Rows, DOWNLOAD_URL_TTL};
use chrono_tz::Tz;
use outbound_adapters::blob::{self, Blob};
use outbound_adapters::queue::Queue;
use outbound_adapters::store::export::{ExportSettlement, ExportStart};
use outbound_adapters::store::keys;
use outbound_adapters::store::slots::{slots_full, JobKind};
use outbound_adapters::store::Store;
use outbound_files as files;
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::export::{ExportJob, ExportMessage, ExportStatus, ExportSubject};
use outbound_model::Tenant;
use outbound_model::{Id, Timestamp};

/// Builds tried before a job is given up as FAILED (its queue's maxReceiveCount is 5).
pub const MAX_BUILD_ATTEMPTS: u32 = 3;

/// Starts an export job: checks that its data source or task exists (404 as the direct
/// exports answer), stores the record and queues the job. While a job of the same subject and
/// format runs, that job is the answer, to concurrent requests too; a tenant runs at most `cap`
/// jobs at once (409 beyond).
pub async fn start(
    store: &Store,
    queue: &Queue<ExportMessage>,
    tenant: &Tenant,
    subject: ExportSubject,
    format: ExportFormat,
    cap: u32,
) -> Result<ExportJob, Error> {
    match &subject {
        ExportSubject::DataSource { data_source_id } => {
            store.data_source(tenant, data_source_id).await?;
        }
        ExportSubject::Task { task_id, .. } => {
            store.task(tenant, task_id).await?;
        }
    }
    let job = ExportJob::new(subject, format, Timestamp::now());
    let job = match store_job(store, tenant, job, cap).await? {
        Stored::New(job) => job,
        Stored::Running(running) => return Ok(running),
    };
    let message = ExportMessage {
        tenant: tenant.clone(),
        id: job.id.clone(),
    };
    if let Err(error) = queue.send(&message, 0).await {
        let failed =
            ExportSettlement::Failed("the export could not be queued; request it again".into());
        match store
            .settle_export(tenant, &job, None, failed, Timestamp::now())
            .await
        {
            Ok(_) => {}
            Err(also) => {
                tracing::error!(export = %job.id, error = %also, "unqueued export job not marked FAILED")
            }
        }
        release(store, tenant, &job).await;
        return Err(error);
    }
    tracing::info!(export = %job.id, "export job queued");
    Ok(job)
}

/// Rounds of [`store_job`]: each one that stores nothing lost to a request that changed the
/// subject's key or took the slot meanwhile, which the next round reads.
const START_ROUNDS: u32 = 5;

/// What [`store_job`] answers.
enum Stored {
    /// The job asked for, stored, to be queued.
    New(ExportJob),
    /// The running job of the same subject and format.
    Running(ExportJob),
}

/// Stores `job` unless a job of its subject and format runs, which is then the answer (D8).
///
/// The subject's key, the tenant's slot and the record are written by one transaction
/// ([`Store::start_export`]), so a key read consistently names a record a consistent read finds:
/// of concurrent requests for one subject, one stores its job and every other one reads that
/// job and answers it, never a second job and never a refusal. A holder found ended (or
/// missing) is replaced. Past [`START_ROUNDS`] of lost races, 503: the request may be sent again.
async fn store_job(
    store: &Store,
    tenant: &Tenant,
    job: ExportJob,
    cap: u32,
) -> Result<Stored, Error> {
    let key = (
        keys::tenant(tenant),
        keys::exporting(&job.subject, &job.format),
    );
    for _ in 0..START_ROUNDS {
        let now = job.created_at;
        let mut replace = None;
        if let Some(holder) = store.holder(key.clone(), now).await? {
            match running(store, tenant, &holder).await? {
                Some(running) => return Ok(Stored::Running(running)),
                None => replace = Some(holder),
            }
        }
        let Some(slot) = store
            .free_job_slot(tenant, JobKind::Export, cap, now)
            .await?
        else {
            // Every slot is held. A job of this subject stored since the key was read holds one
            // of them, and its key now: that job is the answer, not the cap.
            if let Some(holder) = store.holder(key.clone(), now).await? {
                if let Some(running) = running(store, tenant, &holder).await? {
                    return Ok(Stored::Running(running));
                }
            }
            return Err(slots_full(JobKind::Export, cap));
        };
        match store
            .start_export(tenant, &job, slot, replace.as_ref())
            .await?
        {
            ExportStart::Started => return Ok(Stored::New(job)),
            // Another request stored its job (read in the next round) or took the slot.
            ExportStart::SubjectHeld(_) | ExportStart::SlotTaken => continue,
        }
    }
    Err(Error::unavailable(
        "start export job",
        "the subject's key or the tenant's slots changed in every round",
    ))
}

/// The job `id` of the tenant if it is still PROCESSING; `None` when it has ended or is gone.
async fn running(store: &Store, tenant: &Tenant, id: &Id) -> Result<Option<ExportJob>, Error> {
    match store.export_job(tenant, id).await {
        Ok(job) if job.status == ExportStatus::Processing => Ok(Some(job)),
        Ok(_) | Err(Error::NotFound(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Gives back what a job held while it ran: its tenant's slot and its subject's key. Best
/// effort: what is not given back lapses within the hour ([`outbound_adapters::store::slots::SLOT_LEASE_MILLIS`]).
async fn release(store: &Store, tenant: &Tenant, job: &ExportJob) {
    let subject = store.release_held(
        keys::tenant(tenant),
        keys::exporting(&job.subject, &job.format),
        &job.id,
    );
    let slot = store.release_job_slot(tenant, JobKind::Export, &job.id);
    let (subject, slot) = tokio::join!(subject, slot);
    if let Err(error) = subject.and(slot) {
        tracing::warn!(%error, export = %job.id, "export job's slot not given back; it lapses");
    }
}

/// An export job and, once it SUCCEEDED, a presigned download of its file. Another tenant's
/// job, and one whose file has expired, is 404 (D3).
pub async fn status(
    store: &Store,
    blob: &Blob,
    tenant: &Tenant,
    id: &Id,
) -> Result<(ExportJob, Option<String>), Error> {
    let job = store.export_job(tenant, id).await?;
    if job.expired(Timestamp::now()) {
        return Err(Error::NotFound(format!("export {id} not found")));
    }
    let url = match (&job.status, &job.object_key, &job.file_name) {
        (ExportStatus::Succeeded, Some(key), Some(file_name)) => {
            Some(blob.presign_get(key, file_name, DOWNLOAD_URL_TTL).await?)
        }
        _ => None,
    };
    Ok((job, url))
}

/// Runs one delivery of an export job. Answers `Err` only for what is worth a redelivery; a
/// job already settled, or one that is refused, changes nothing more and is `Ok`.
#[tracing::instrument(skip(store, blob, zone))]
pub async fn run(
    store: &Store,
    blob: &Blob,
    zone: Tz,
    message: &ExportMessage,
) -> Result<(), Error> {
    let tenant = &message.tenant;
    let Some(job) = store
        .claim_export(tenant, &message.id, Timestamp::now())
        .await?
    else {
        return match store.export_job(tenant, &message.id).await {
            // Another delivery is building it: try again once its claim may have gone stale.
            Ok(job) if job.status == ExportStatus::Processing => Err(Error::internal(
                "run export job",
                "export is being built by another delivery",
            )),
            // Already SUCCEEDED or FAILED: a redelivery changes nothing.
            Ok(_) => Ok(()),
            Err(Error::NotFound(_)) => {
                tracing::warn!("export job without a record; ignored");
                Ok(())
            }
            Err(error) => Err(error),
        };
    };
    let claim = job.claimed_at;
    let settle = |settlement: ExportSettlement| {
        let (tenant, job) = (tenant, &job);
        async move {
            let ends = !matches!(settlement, ExportSettlement::Released);
            let settled = store
                .settle_export(tenant, job, claim, settlement, Timestamp::now())
                .await?;
            if !settled {
                tracing::warn!("export job was taken over meanwhile; its outcome is the other's");
            } else if ends {
                release(store, tenant, job).await;
            }
            Ok::<_, Error>(())
        }
    };
    if job.attempts > MAX_BUILD_ATTEMPTS {
        let message = format!(
            "the export could not be built in {MAX_BUILD_ATTEMPTS} attempts; request it again"
        );
        return settle(ExportSettlement::Failed(message)).await;
    }
    match build(store, blob, zone, tenant, &job).await {
        Ok(built) => {
            tracing::info!(rows = built.row_count, "export job built");
            settle(ExportSettlement::Succeeded {
                file_name: built.file_name,
                row_count: built.row_count,
                object_key: built.object_key,
            })
            .await
        }
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, cause = ?error, attempt = job.attempts, "export job failed");
            if job.attempts >= MAX_BUILD_ATTEMPTS {
                let message = format!(
                    "the export could not be built in {MAX_BUILD_ATTEMPTS} attempts; request it again"
                );
                return settle(ExportSettlement::Failed(message)).await;
            }
            // Free to be claimed again at once by the redelivery.
            settle(ExportSettlement::Released).await?;
            Err(error)
        }
        Err(refused) => {
            tracing::info!(error = %refused, "export job refused");
            settle(ExportSettlement::Failed(refused.client_message())).await
        }
    }
}

/// What a build stored.
struct Built {
    file_name: String,
    row_count: u64,
    object_key: String,
}

/// Writes the job's file and stores it at `exports/{tenant}/{exportId}/{fileName}`.
async fn build(
    store: &Store,
    blob: &Blob,
    zone: Tz,
    tenant: &Tenant,
    job: &ExportJob,
) -> Result<Built, Error> {
    let format = job.export_format();
    let now = Timestamp::now();
    let (file_name, built) = match &job.subject {
        ExportSubject::DataSource { data_source_id } => {
            // Gone before the job ran: refused at once, without reading what is left of it.
            store.data_source(tenant, data_source_id).await?;
            let file_name = files::contacts_file_name(format, now, zone);
            let built =
                export::build(store, tenant, data_source_id, format, zone, Rows::Contacts).await?;
            (file_name, built)
        }
        ExportSubject::Task {
            task_id,
            outcome_filter,
        } => {
            let task = store.task(tenant, task_id).await?;
            store.data_source(tenant, &task.data_source_id).await?;
            let filter = OutcomeFilter::from_code(i64::from(*outcome_filter))?;
            let file_name = files::task_contacts_file_name(format, task_id, now, zone);
            let rows = Rows::Task {
                task: &task,
                filter,
            };
            let built =
                export::build(store, tenant, &task.data_source_id, format, zone, rows).await?;
            (file_name, built)
        }
    };
    let object_key = blob::export_key(tenant, &job.id, &file_name);
    blob.put_file(&object_key, built.file.path(), format.content_type())
        .await?;
    tracing::info!(key = %object_key, size = built.size, rows = built.rows, "export file stored");
    Ok(Built {
        file_name,
        row_count: built.rows,
        object_key,
    })
}

//! Export (D8): a data source's contacts, or a task's contacts with their outcome in the task,
//! written row by row to a temporary file, stored in S3 under the tenant's prefix, and answered
//! inline when small or as a short-lived presigned download when too large for a response.
//! Above the configured number of contacts the direct exports answer 413 and an export job
//! ([`super::export_job`]) builds the same file in the background with [`build`].

use chrono_tz::Tz;
use outbound_adapters::blob::{self, Blob};
use outbound_adapters::store::export::TaskCell;
use outbound_adapters::store::slots::JobKind;
use outbound_adapters::store::Store;
use outbound_app::App;
use outbound_files::{self as files, ContactSheetWriter, ExportColumns, ExportRow};
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::Tenant;
use outbound_model::{Id, Task, Timestamp};
use std::collections::BTreeSet;
use std::io::Write;
use std::time::Duration;

/// How long a presigned download of a large export stays valid.
pub const DOWNLOAD_URL_TTL: Duration = Duration::from_secs(10 * 60);

/// A finished export.
#[derive(Debug)]
pub struct ExportFile {
    pub file_name: String,
    pub content_type: &'static str,
    pub body: ExportBody,
}

#[derive(Debug)]
pub enum ExportBody {
    /// Small enough to be the response itself.
    Inline(Vec<u8>),
    /// A presigned GET of the stored file.
    Download(String),
}

/// Where an export goes and how it is shown.
pub struct ExportTarget<'a> {
    pub blob: &'a Blob,
    pub format: ExportFormat,
    pub zone: Tz,
    /// Largest file answered inline; larger ones are answered with a download URL.
    pub inline_max_bytes: u64,
    /// Most contacts exported within a request; more are 413, to be exported by a job.
    pub direct_max_contacts: u64,
    /// Most direct exports of one tenant built at once (`TENANT_MAX_DIRECT_EXPORTS`, D26).
    pub direct_slots: u32,
}

impl<'a> ExportTarget<'a> {
    /// Where `app` sends exports in `format`.
    pub fn of(app: &'a App, format: ExportFormat) -> Self {
        ExportTarget {
            blob: &app.blob,
            format,
            zone: app.zone(),
            inline_max_bytes: app.config.export_inline_max_bytes,
            direct_max_contacts: app.config.export_job_threshold,
            direct_slots: app.config.tenant_limits.direct_exports,
        }
    }
}

/// Task export `status` filter (D8), with the model's other export types.
pub use outbound_model::export::OutcomeFilter;

/// Every contact of a data source, with its own status and call count.
pub async fn contacts(
    store: &Store,
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    source: &Id,
) -> Result<ExportFile, Error> {
    let head = store.data_source(tenant, source).await?;
    let job_path = format!("/api/dataSource/{source}/contact/exportJob");
    refuse_large("dataSource", head.contact_count, target, &job_path)?;
    let file_name = files::contacts_file_name(target.format, Timestamp::now(), target.zone);
    in_slot(store, target, tenant, async {
        let built = build(
            store,
            tenant,
            source,
            target.format,
            target.zone,
            Rows::Contacts,
        )
        .await?;
        deliver(target, tenant, file_name, built).await
    })
    .await
}

/// The contacts of a task's data source with their latest outcome and attempts in the task.
pub async fn task_contacts(
    store: &Store,
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    task: &Task,
    filter: OutcomeFilter,
) -> Result<ExportFile, Error> {
    let head = store.data_source(tenant, &task.data_source_id).await?;
    let job_path = format!("/api/task/{}/exportJob", task.id);
    refuse_large("task", head.contact_count, target, &job_path)?;
    let file_name =
        files::task_contacts_file_name(target.format, &task.id, Timestamp::now(), target.zone);
    let rows = Rows::Task { task, filter };
    in_slot(store, target, tenant, async {
        let built = build(
            store,
            tenant,
            &task.data_source_id,
            target.format,
            target.zone,
            rows,
        )
        .await?;
        deliver(target, tenant, file_name, built).await
    })
    .await
}

/// Runs a direct export holding one of its tenant's `direct_slots` slots (D26), given back when
/// it ends; 409 naming the limit when every one is held. A function that dies while building
/// leaves its slot to lapse
/// ([`outbound_adapters::store::slots::REQUEST_SLOT_LEASE_MILLIS`]).
async fn in_slot<T>(
    store: &Store,
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    export: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    let holder = Id::new();
    let slot = store
        .take_request_slot(
            tenant,
            JobKind::DirectExport,
            &holder,
            target.direct_slots,
            Timestamp::now(),
        )
        .await?;
    let exported = export.await;
    if let Err(error) = store
        .release_slot(tenant, JobKind::DirectExport, slot, &holder)
        .await
    {
        tracing::warn!(%error, slot, "direct export's slot not given back; it lapses");
    }
    exported
}

/// 413 for more contacts than a request may export (D8), naming the job endpoint to use.
fn refuse_large(
    kind: &str,
    count: u64,
    target: &ExportTarget<'_>,
    job_path: &str,
) -> Result<(), Error> {
    let max = target.direct_max_contacts;
    if count <= max {
        return Ok(());
    }
    Err(Error::TooLarge(format!(
        "{kind} has {count} contacts, more than {max} exported directly; use POST {job_path}"
    )))
}

/// What the rows of an export show besides the contact.
#[derive(Clone, Copy, Debug)]
pub enum Rows<'a> {
    /// Each contact's own status and call count.
    Contacts,
    /// Each contact's latest outcome and attempts in `task` (no state: not dialled, 0), and
    /// what its calls learnt (D22), only those `filter` admits.
    Task {
        task: &'a Task,
        filter: OutcomeFilter,
    },
}

/// An export file written to local disk.
#[derive(Debug)]
pub struct BuiltFile {
    pub file: tempfile::NamedTempFile,
    /// Bytes.
    pub size: u64,
    /// Data rows, the title row not counted.
    pub rows: u64,
}

/// Writes the export of data source `source` to a temporary file in bounded memory, in two
/// passes over its contacts, a Query page at a time: the first gathers the custom field names
/// for the title row, the second writes the rows. A task's states are read alongside the second
/// pass with a second ascending Query and matched in contact id order (a merge join), so neither
/// partition is ever held in memory. A data source that is gone is 404.
pub async fn build(
    store: &Store,
    tenant: &Tenant,
    source: &Id,
    format: ExportFormat,
    zone: Tz,
    rows: Rows<'_>,
) -> Result<BuiltFile, Error> {
    let mut custom = BTreeSet::new();
    store
        .for_each_contact(tenant, source, |contact| {
            for (name, _) in contact.fields.iter() {
                if !custom.contains(name) {
                    custom.insert(name.to_owned());
                }
            }
            Ok(())
        })
        .await?;
    let temp =
        tempfile::NamedTempFile::new().map_err(|e| Error::internal("create export file", e))?;
    let out = std::io::BufWriter::new(
        temp.reopen()
            .map_err(|e| Error::internal("open export file", e))?,
    );
    let columns = match rows {
        Rows::Task { task, .. } => {
            ExportColumns::new(custom).with_task_columns(&task.settings.result_attributes)
        }
        Rows::Contacts => ExportColumns::new(custom),
    };
    let mut writer = ContactSheetWriter::new(format, columns, out)?;
    let mut contacts = store.contact_pages(tenant, source).await?;
    let mut states = match rows {
        Rows::Task { task, .. } => Some(store.task_states(tenant, &task.id)),
        Rows::Contacts => None,
    };
    let mut written = 0u64;
    while let Some(page) = contacts.next().await? {
        if let (Some(states), Some(last)) = (states.as_mut(), page.last()) {
            states.read_through(&last.id).await?;
        }
        for contact in &page {
            let cell = match (rows, states.as_mut()) {
                (Rows::Task { filter, .. }, Some(states)) => {
                    let cell = states.take(&contact.id).unwrap_or_default();
                    if !filter.admits(cell.outcome) {
                        continue;
                    }
                    cell
                }
                _ => TaskCell {
                    outcome: contact.status,
                    attempts: contact.call_count,
                    ..TaskCell::default()
                },
            };
            let create_time = contact.created_at.display(zone);
            let update_time = contact.updated_at.display(zone);
            let attempted = cell.attempts > 0;
            let callback_at = cell.callback_at.map(|at| at.display(zone));
            writer.write(&ExportRow {
                status: cell.outcome,
                call_count: cell.attempts,
                last_reason: cell.last_reason.as_deref(),
                skip: cell.skip.as_deref(),
                caller_id: cell.caller_id.as_deref(),
                message_left: attempted.then_some(cell.message_left),
                results: Some(&cell.results),
                callback_at: callback_at.as_deref(),
                ..ExportRow::of_contact(contact, &create_time, &update_time)
            })?;
            written += 1;
        }
    }
    if contacts.head().is_none() {
        return Err(Error::NotFound(format!("dataSource {source} not found")));
    }
    writer
        .finish()?
        .flush()
        .map_err(|e| Error::internal("write export file", e))?;
    let size = temp
        .as_file()
        .metadata()
        .map_err(|e| Error::internal("size export file", e))?
        .len();
    Ok(BuiltFile {
        file: temp,
        size,
        rows: written,
    })
}

/// Stores a direct export's file and answers it inline when small, else as a presigned download.
async fn deliver(
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    file_name: String,
    built: BuiltFile,
) -> Result<ExportFile, Error> {
    let content_type = target.format.content_type();
    let key = blob::export_key(tenant, &Id::new(), &file_name);
    target
        .blob
        .put_file(&key, built.file.path(), content_type)
        .await?;
    let body = if built.size <= target.inline_max_bytes {
        ExportBody::Inline(
            std::fs::read(built.file.path()).map_err(|e| Error::internal("read export file", e))?,
        )
    } else {
        ExportBody::Download(
            target
                .blob
                .presign_get(&key, &file_name, DOWNLOAD_URL_TTL)
                .await?,
        )
    };
    tracing::info!(%key, size = built.size, rows = built.rows, inline = matches!(body, ExportBody::Inline(_)), "export written");
    Ok(ExportFile {
        file_name,
        content_type,
        body,
    })
}

//! Export (D8): a data source's contacts, or a task's contacts with their outcome in the task,
//! written row by row to a temporary file, stored in S3 under the tenant's prefix, and answered
//! inline when small or as a short-lived presigned download when too large for a response.

use crate::auth::Tenant;
use crate::blob::{self, Blob};
use crate::error::Error;
use crate::files::{self, ContactSheetWriter, ExportColumns, ExportFormat, ExportRow};
use crate::model::contact::status;
use crate::model::{Contact, Id, Task, Timestamp};
use crate::store::Store;
use chrono_tz::Tz;
use std::collections::{BTreeSet, HashMap};
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
}

/// Task export `status` filter (D8): absent or 0 all, 1 success, 2 failed or no answer,
/// 3 not dialled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeFilter {
    All,
    Success,
    Unsuccessful,
    NotDialled,
}

impl OutcomeFilter {
    pub fn parse(raw: Option<&str>) -> Result<Self, Error> {
        match raw.map(str::trim) {
            None | Some("") | Some("0") => Ok(OutcomeFilter::All),
            Some("1") => Ok(OutcomeFilter::Success),
            Some("2") => Ok(OutcomeFilter::Unsuccessful),
            Some("3") => Ok(OutcomeFilter::NotDialled),
            Some(_) => Err(Error::invalid(
                "status must be 0 (all), 1 (success), 2 (failed or no answer) or 3 (not dialled)",
            )),
        }
    }

    fn admits(self, outcome: u8) -> bool {
        match self {
            OutcomeFilter::All => true,
            OutcomeFilter::Success => outcome == status::SUCCESS,
            OutcomeFilter::Unsuccessful => {
                outcome == status::FAILED || outcome == status::NO_ANSWER
            }
            OutcomeFilter::NotDialled => outcome == status::NOT_DIALLED,
        }
    }
}

/// Every contact of a data source, with its own status and call count.
pub async fn contacts(
    store: &Store,
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    source: &Id,
) -> Result<ExportFile, Error> {
    let file_name = files::contacts_file_name(target.format, Timestamp::now(), target.zone);
    export(store, target, tenant, source, file_name, |contact| {
        Some((contact.status, contact.call_count))
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
    let states: HashMap<Id, (u8, u32)> = store
        .task_contacts(tenant, &task.id)
        .await?
        .into_iter()
        .map(|state| (state.contact_id, (state.last_outcome, state.attempts)))
        .collect();
    let file_name =
        files::task_contacts_file_name(target.format, &task.id, Timestamp::now(), target.zone);
    export(
        store,
        target,
        tenant,
        &task.data_source_id,
        file_name,
        |contact| {
            let (outcome, attempts) = states
                .get(&contact.id)
                .copied()
                .unwrap_or((status::NOT_DIALLED, 0));
            filter.admits(outcome).then_some((outcome, attempts))
        },
    )
    .await
}

/// Two passes over the contacts in bounded memory: the first gathers the custom field names for
/// the title row, the second writes the rows `row_values` admits (status, call count).
async fn export(
    store: &Store,
    target: &ExportTarget<'_>,
    tenant: &Tenant,
    source: &Id,
    file_name: String,
    mut row_values: impl FnMut(&Contact) -> Option<(u8, u32)>,
) -> Result<ExportFile, Error> {
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
    let mut writer = ContactSheetWriter::new(target.format, ExportColumns::new(custom), out)?;
    store
        .for_each_contact(tenant, source, |contact| {
            let Some((status, call_count)) = row_values(&contact) else {
                return Ok(());
            };
            let create_time = contact.created_at.display(target.zone);
            let update_time = contact.updated_at.display(target.zone);
            writer.write(&ExportRow {
                status,
                call_count,
                ..ExportRow::of_contact(&contact, &create_time, &update_time)
            })
        })
        .await?;
    writer
        .finish()?
        .flush()
        .map_err(|e| Error::internal("write export file", e))?;
    let size = temp
        .as_file()
        .metadata()
        .map_err(|e| Error::internal("size export file", e))?
        .len();
    let content_type = target.format.content_type();
    let key = blob::export_key(tenant, &Id::new(), &file_name);
    target
        .blob
        .put_file(&key, temp.path(), content_type)
        .await?;
    let body = if size <= target.inline_max_bytes {
        ExportBody::Inline(
            std::fs::read(temp.path()).map_err(|e| Error::internal("read export file", e))?,
        )
    } else {
        ExportBody::Download(
            target
                .blob
                .presign_get(&key, &file_name, DOWNLOAD_URL_TTL)
                .await?,
        )
    };
    tracing::info!(%key, size, inline = matches!(body, ExportBody::Inline(_)), "export written");
    Ok(ExportFile {
        file_name,
        content_type,
        body,
    })
}

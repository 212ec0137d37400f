//! Bulk import (D8): a file posted to the API is imported within the request; a large one goes
//! straight to S3 with a presigned URL and its upload event is imported by the import function.
//! Both paths store the file under the tenant's prefix, read it with [`outbound_files`], store the
//! rows with [`Store::import_contacts`] and keep the report for the status endpoint. A posted
//! file refused as a whole (400, 413, 415) is answered before anything is stored; an uploaded one
//! is already in S3, and its import is recorded as FAILED with the refusal's message.

use bytes::Bytes;
use outbound_adapters::blob::{self, Blob};
use outbound_adapters::store::import::{ImportEnd, RowOutcome};
use outbound_adapters::store::slots::JobKind;
use outbound_adapters::store::Store;
use outbound_files::{self as files, reason, ParsedFile};
use outbound_model::error::Error;
use outbound_model::import::RowFailure;
use outbound_model::import::{Import, ImportReport, ImportStatus};
use outbound_model::Tenant;
use outbound_model::{Id, Timestamp};
use std::time::Duration;

/// How long a presigned upload URL stays valid.
pub const UPLOAD_URL_TTL: Duration = Duration::from_secs(15 * 60);
/// Longest file name kept for an import.
pub const MAX_FILE_NAME_CHARS: usize = 255;

/// A presigned upload handed to a client.
pub struct UploadTicket {
    pub import: Import,
    pub url: String,
    pub expires_at: Timestamp,
}

/// Checks a client's file name: 1-255 characters after trimming.
pub fn file_name(raw: &str) -> Result<String, Error> {
    let name = raw.trim();
    if name.is_empty() || name.chars().count() > MAX_FILE_NAME_CHARS {
        return Err(Error::invalid(format!(
            "fileName must be 1-{MAX_FILE_NAME_CHARS} characters"
        )));
    }
    Ok(name.to_owned())
}

fn new_import(source: &Id, file_name: String, status: ImportStatus, now: Timestamp) -> Import {
    Import {
        id: Id::new(),
        data_source_id: source.clone(),
        file_name,
        status,
        claimed_at: (status == ImportStatus::Processing).then_some(now),
        error: None,
        created_at: now,
        updated_at: now,
    }
}

/// Creates an import waiting for its file and a presigned PUT for it (15 minutes), signed for
/// exactly `size` bytes.
pub async fn request_upload(
    store: &Store,
    blob: &Blob,
    tenant: &Tenant,
    source: &Id,
    file_name: String,
    size: u64,
    cap: u32,
) -> Result<UploadTicket, Error> {
    store.data_source(tenant, source).await?;
    let now = Timestamp::now();
    let import = new_import(source, file_name, ImportStatus::WaitingUpload, now);
    create(store, tenant, &import, cap).await?;
    let url = blob
        .presign_put(
            &blob::upload_key(tenant, source, &import.id),
            size,
            UPLOAD_URL_TTL,
        )
        .await?;
    let expires_at = Timestamp(now.0 + UPLOAD_URL_TTL.as_millis() as i64);
    Ok(UploadTicket {
        import,
        url,
        expires_at,
    })
}

/// Imports a file posted to the API, within the request.
pub async fn import_posted(
    store: &Store,
    blob: &Blob,
    tenant: &Tenant,
    source: &Id,
    file_name: String,
    bytes: Bytes,
    cap: u32,
) -> Result<(Import, ImportReport), Error> {
    store.data_source(tenant, source).await?;
    // A file refused as a whole is answered before anything is stored: bad input changes nothing.
    let parsed = files::read_contacts(&bytes, Some(&file_name))?;
    let import = new_import(
        source,
        file_name,
        ImportStatus::Processing,
        Timestamp::now(),
    );
    create(store, tenant, &import, cap).await?;
    let stored = async {
        blob.put(
            &blob::posted_key(tenant, source, &import.id),
            bytes.clone(),
            "application/octet-stream",
        )
        .await?;
        run(store, blob, tenant, &import, parsed).await
    };
    match stored.await {
        Ok(report) => Ok((import, report)),
        Err(error) if error.is_retryable() => {
            // Never left PROCESSING: the record says it failed, and posting the file again
            // stores no contact twice (D8).
            let failed = Error::invalid(
                "the import was interrupted; rows stored before it stay, post the file again",
            );
            if let Err(also) = record_refusal(store, tenant, &import, &failed).await {
                tracing::error!(error = %also, import = %import.id, "interrupted import not recorded as failed");
            }
            Err(error)
        }
        Err(refused) => Err(refused),
    }
}

/// Imports the file behind an upload event. Answers `Err` only for failures worth a retry;
/// a refused file is recorded as a FAILED import.
#[tracing::instrument(skip(store, blob))]
pub async fn process_upload(store: &Store, blob: &Blob, key: &str) -> Result<(), Error> {
    let Some((tenant, source, id)) = blob::parse_upload_key(key) else {
        tracing::warn!("not an upload key; ignored");
        return Ok(());
    };
    let Some(import) = store
        .claim_import(&tenant, &source, &id, Timestamp::now())
        .await?
    else {
        return match store.import(&tenant, &source, &id).await {
            // Another delivery is processing it: try again once its claim may have gone stale.
            Ok(import) if import.status == ImportStatus::Processing => Err(Error::internal(
                "process upload",
                "import is being processed by another delivery",
            )),
            Ok(_) => Ok(()),
            Err(Error::NotFound(_)) => {
                tracing::warn!("upload without an import record; ignored");
                Ok(())
            }
            Err(error) => Err(error),
        };
    };
    let bytes = match blob.get(key, files::MAX_UPLOAD_BYTES as u64).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            let gone = Error::invalid("the uploaded file is gone");
            return record_refusal(store, &tenant, &import, &gone).await;
        }
        Err(error) if error.is_retryable() => return Err(error),
        Err(refused) => return record_refusal(store, &tenant, &import, &refused).await,
    };
    let parsed = match files::read_contacts(&bytes, Some(&import.file_name)) {
        Ok(parsed) => parsed,
        Err(refused) => return record_refusal(store, &tenant, &import, &refused).await,
    };
    match run(store, blob, &tenant, &import, parsed).await {
        Ok(_) => Ok(()),
        Err(error) if error.is_retryable() => {
            tracing::warn!(%error, "import interrupted");
            // Leave it claimable again at once for the redelivery.
            let waiting = store
                .finish_import(&tenant, &import, ImportEnd::Retry, Timestamp::now())
                .await;
            if let Err(error) = waiting {
                tracing::error!(%error, "import could not be released for a retry");
            }
            Err(Error::internal(
                "process upload",
                "import failed; will be retried",
            ))
        }
        // `run` has recorded the refusal.
        Err(_) => Ok(()),
    }
}

/// Stores a new import, holding one of its tenant's `cap` import slots until it ends (409 when
/// the tenant already runs that many).
async fn create(store: &Store, tenant: &Tenant, import: &Import, cap: u32) -> Result<(), Error> {
    store
        .take_job_slot(tenant, JobKind::Import, &import.id, cap, import.created_at)
        .await?;
    if let Err(error) = store.create_import(tenant, import).await {
        give_back_slot(store, tenant, import).await;
        return Err(error);
    }
    Ok(())
}

/// Records the end of an import (SUCCEEDED with its report, or FAILED) and gives back its slot.
async fn end(
    store: &Store,
    tenant: &Tenant,
    import: &Import,
    end: ImportEnd<'_>,
) -> Result<(), Error> {
    store
        .finish_import(tenant, import, end, Timestamp::now())
        .await?;
    give_back_slot(store, tenant, import).await;
    Ok(())
}

/// Best effort: a slot not given back lapses within the hour.
async fn give_back_slot(store: &Store, tenant: &Tenant, import: &Import) {
    if let Err(error) = store
        .release_job_slot(tenant, JobKind::Import, &import.id)
        .await
    {
        tracing::warn!(%error, import = %import.id, "import's slot not given back; it lapses");
    }
}

/// Records a refused file as a FAILED import with the refusal's message.
async fn record_refusal(
    store: &Store,
    tenant: &Tenant,
    import: &Import,
    refusal: &Error,
) -> Result<(), Error> {
    let message = refusal.client_message();
    end(store, tenant, import, ImportEnd::Failed(&message)).await
}

/// Stores the rows of a file read without refusal, and keeps its report. A data source deleted
/// meanwhile is recorded as a FAILED import and its error answered.
async fn run(
    store: &Store,
    blob: &Blob,
    tenant: &Tenant,
    import: &Import,
    parsed: ParsedFile,
) -> Result<ImportReport, Error> {
    let result = store_rows(store, tenant, import, parsed).await;
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            if !error.is_retryable() {
                record_refusal(store, tenant, import, &error).await?;
            }
            return Err(error);
        }
    };
    let json =
        serde_json::to_vec(&report).map_err(|e| Error::internal("encode import report", e))?;
    blob.put(
        &blob::result_key(tenant, &import.data_source_id, &import.id),
        json,
        "application/json",
    )
    .await?;
    end(store, tenant, import, ImportEnd::Succeeded(&report)).await?;
    tracing::info!(
        import = %import.id,
        rows = report.import_count,
        stored = report.success_count,
        refused = report.fail_count,
        "import done"
    );
    outbound_telemetry::metrics(
        &[],
        &[
            (
                "ImportRows",
                report.import_count as f64,
                outbound_telemetry::Unit::Count,
            ),
            (
                "ImportRowsFailed",
                report.fail_count as f64,
                outbound_telemetry::Unit::Count,
            ),
        ],
    );
    Ok(report)
}

async fn store_rows(
    store: &Store,
    tenant: &Tenant,
    import: &Import,
    parsed: ParsedFile,
) -> Result<ImportReport, Error> {
    let outcomes = store
        .import_contacts(
            tenant,
            &import.data_source_id,
            &import.id,
            &parsed.rows,
            Timestamp::now(),
        )
        .await?;
    let mut details = parsed.failures;
    for (row, outcome) in parsed.rows.iter().zip(&outcomes) {
        if *outcome == RowOutcome::AlreadyExists {
            details.push(RowFailure::new(
                row.row,
                &row.phone_as_given,
                reason::ALREADY_EXISTS,
            ));
        }
    }
    details.sort_by_key(|failure| failure.row);
    Ok(ImportReport {
        import_count: parsed.import_count,
        success_count: parsed.import_count - details.len(),
        fail_count: details.len(),
        details,
    })
}

/// An import and, once it succeeded, its report. An import of a deleted data source is 404.
pub async fn status(
    store: &Store,
    blob: &Blob,
    tenant: &Tenant,
    source: &Id,
    id: &Id,
) -> Result<(Import, Option<ImportReport>), Error> {
    store.data_source(tenant, source).await?;
    let import = store.import(tenant, source, id).await?;
    if import.status != ImportStatus::Succeeded {
        return Ok((import, None));
    }
    let key = blob::result_key(tenant, source, id);
    let Some(bytes) = blob.get(&key, 64 * 1024 * 1024).await? else {
        // Reports expire with the bucket's lifecycle rule; the import record stays.
        tracing::warn!(%key, "import report has expired");
        return Ok((import, None));
    };
    let report =
        serde_json::from_slice(&bytes).map_err(|e| Error::internal("decode import report", e))?;
    Ok((import, Some(report)))
}

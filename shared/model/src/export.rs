//! Export jobs (D8): the record of one export built in the background, for a data source or a
//! task too large to be exported within a request.

use super::{Id, Tenant, Timestamp};
use crate::error::Error;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// The export `format` parameter (D8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    /// An `.xlsx` workbook.
    Excel,
}

impl ExportFormat {
    /// `csv` or `excel`; absent means `excel`. Anything else is 400.
    pub fn parse(raw: Option<&str>) -> Result<Self, Error> {
        match raw {
            None | Some("excel") => Ok(ExportFormat::Excel),
            Some("csv") => Ok(ExportFormat::Csv),
            Some(_) => Err(Error::invalid("format must be csv or excel")),
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Excel => "xlsx",
        }
    }

    /// The `Content-Type` of the file.
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Csv => "text/csv; charset=utf-8",
            ExportFormat::Excel => {
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
            }
        }
    }
}

/// The message of an export job on the export queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportMessage {
    pub tenant: Tenant,
    pub id: Id,
}

/// Where an export job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExportStatus {
    /// Queued or being built.
    Processing,
    /// The file is stored; it can be downloaded.
    Succeeded,
    /// Refused (the data source or task is gone, ...) or not built in its attempts; `error` says why.
    Failed,
}

/// What an export job exports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ExportSubject {
    /// Every contact of a data source, with its own status and call count.
    #[serde(rename_all = "camelCase")]
    DataSource { data_source_id: Id },
    /// The contacts of a task's data source with their outcome in the task; `outcome_filter` is
    /// the `status` filter of the task export (0 all, 1 success, 2 failed or no answer, 3 not
    /// dialled).
    #[serde(rename_all = "camelCase")]
    Task { task_id: Id, outcome_filter: u8 },
}

/// A stored export job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportJob {
    pub id: Id,
    pub subject: ExportSubject,
    /// `csv` or `excel`.
    pub format: String,
    pub status: ExportStatus,
    /// The file's name (D8: `contacts_<time>` or `task_contacts_<taskId>_<time>`), once built.
    pub file_name: Option<String>,
    /// Data rows in the file, once built.
    pub row_count: Option<u64>,
    /// Where the file is stored, once built: `exports/{tenant}/{exportId}/{fileName}`.
    pub object_key: Option<String>,
    /// When a worker took the job; a claim older than the stale limit may be taken over.
    /// Absent, not NULL, while unclaimed: the store's conditions test `attribute_not_exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<Timestamp>,
    /// Builds started, so a job that keeps failing ends FAILED instead of PROCESSING for ever.
    #[serde(default)]
    pub attempts: u32,
    pub error: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Epoch seconds after which the record is gone (DynamoDB TTL), as its file is (2 days).
    pub expires_at: i64,
}

/// How long an export job and its file are kept: the bucket expires `exports/` after 2 days.
pub const EXPORT_RETENTION_SECONDS: i64 = 2 * 24 * 60 * 60;

/// The `format` of an export as stored.
pub fn format_name(format: ExportFormat) -> &'static str {
    match format {
        ExportFormat::Csv => "csv",
        ExportFormat::Excel => "excel",
    }
}

impl ExportJob {
    /// A new job, PROCESSING from the start: it is queued right after it is stored.
    pub fn new(subject: ExportSubject, format: ExportFormat, now: Timestamp) -> Self {
        ExportJob {
            id: Id::new(),
            subject,
            format: format_name(format).to_owned(),
            status: ExportStatus::Processing,
            file_name: None,
            row_count: None,
            object_key: None,
            claimed_at: None,
            attempts: 0,
            error: None,
            created_at: now,
            updated_at: now,
            expires_at: now.0 / 1000 + EXPORT_RETENTION_SECONDS,
        }
    }

    /// The stored format.
    pub fn export_format(&self) -> ExportFormat {
        ExportFormat::parse(Some(&self.format)).unwrap_or(ExportFormat::Excel)
    }

    /// Whether the record has outlived its file (DynamoDB deletes expired items only eventually).
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires_at <= now.0 / 1000
    }

    /// The shape of `GET /api/export/{exportId}`; `download_url` only when SUCCEEDED.
    pub fn view(&self, download_url: Option<String>, zone: Tz) -> ExportView {
        ExportView {
            export_id: self.id.clone(),
            status: self.status,
            file_name: self.file_name.clone(),
            row_count: self.row_count,
            download_url,
            create_time: self.created_at.display(zone),
            update_time: self.updated_at.display(zone),
            error: self.error.clone(),
        }
    }
}

/// `GET /api/export/{exportId}` (D8).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ExportView {
    pub export_id: Id,
    pub status: ExportStatus,
    pub file_name: Option<String>,
    pub row_count: Option<u64>,
    /// A presigned download, valid 10 minutes; only when SUCCEEDED.
    pub download_url: Option<String>,
    pub create_time: String,
    pub update_time: String,
    /// Why the job failed, when FAILED.
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_job_is_processing_and_expires_with_its_file() {
        let source = Id::new();
        let job = ExportJob::new(
            ExportSubject::DataSource {
                data_source_id: source.clone(),
            },
            ExportFormat::Csv,
            Timestamp(1_700_000_000_000),
        );
        assert_eq!(job.status, ExportStatus::Processing);
        assert_eq!(job.export_format(), ExportFormat::Csv);
        assert_eq!(job.expires_at, 1_700_000_000 + 2 * 86_400);
        assert!(!job.expired(Timestamp(1_700_000_000_000)));
        assert!(job.expired(Timestamp((1_700_000_000 + 2 * 86_400) * 1000)));
        let view = serde_json::to_value(job.view(None, Tz::UTC)).unwrap();
        assert_eq!(view["status"], "PROCESSING");
        assert_eq!(view["downloadUrl"], serde_json::Value::Null);
        assert_eq!(view["createTime"], "2023-11-14 22:13:20");
        let item: std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> =
            serde_dynamo::to_item(&job).unwrap();
        assert!(!item.contains_key("claimed_at"), "unclaimed: no attribute");
        assert_eq!(
            item["subject"].as_m().unwrap()["kind"].as_s().unwrap(),
            "dataSource"
        );
        let back: ExportJob = serde_dynamo::from_item(item).unwrap();
        assert_eq!(back, job);
    }
}

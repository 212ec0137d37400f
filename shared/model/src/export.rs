//! Export jobs (D8): the record of one export built in the background, for a data source or a
//! task too large to be exported within a request.

use super::contact::status;
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
    pub const ALL: [ExportFormat; 2] = [ExportFormat::Csv, ExportFormat::Excel];

    /// `csv` or `excel`; absent means `excel`. Anything else is 400.
    pub fn parse(raw: Option<&str>) -> Result<Self, Error> {
        match raw {
            None => Ok(ExportFormat::Excel),
            Some(raw) => ExportFormat::ALL
                .into_iter()
                .find(|format| format.name() == raw)
                .ok_or_else(ExportFormat::refused),
        }
    }

    /// The 400 of a `format` that is none of them: `format must be csv or excel`.
    pub fn refused() -> Error {
        let names = ExportFormat::ALL.map(ExportFormat::name);
        Error::invalid(format!("format must be {}", names.join(" or ")))
    }

    /// The `format` parameter's value, and the job's stored `format`: `csv` or `excel`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Excel => "excel",
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

/// The schema of the `format` parameter: the [`ExportFormat::name`] of each format.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ExportFormat {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::schema::named(
            "The format of an exported file (D8): CSV (UTF-8), or an `.xlsx` workbook.",
            ExportFormat::ALL.map(ExportFormat::name),
        )
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ExportFormat {}

/// The task export's `status` filter (D8): which of the task's contacts it holds, by their
/// outcome in the task. Its codes are `status` and [`ExportSubject::Task`]'s `outcome_filter`;
/// each one's name (`ALL`, ...) is its variant's, in the contract's `x-enum-varnames`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum OutcomeFilter {
    All = 0,
    Success = 1,
    /// Failed or no answer.
    Unsuccessful = 2,
    NotDialled = 3,
}

impl OutcomeFilter {
    pub const ALL: [OutcomeFilter; 4] = [
        OutcomeFilter::All,
        OutcomeFilter::Success,
        OutcomeFilter::Unsuccessful,
        OutcomeFilter::NotDialled,
    ];

    /// The filter of a `status` parameter: absent or blank means all.
    pub fn parse(raw: Option<&str>) -> Result<Self, Error> {
        match raw.map(str::trim) {
            None | Some("") => Ok(OutcomeFilter::All),
            Some(raw) => OutcomeFilter::ALL
                .into_iter()
                .find(|filter| filter.code().to_string() == raw)
                .ok_or_else(OutcomeFilter::refused),
        }
    }

    /// The filter of a code; an unknown code is 400 as for [`Self::parse`].
    pub fn from_code(code: i64) -> Result<Self, Error> {
        OutcomeFilter::ALL
            .into_iter()
            .find(|filter| i64::from(filter.code()) == code)
            .ok_or_else(OutcomeFilter::refused)
    }

    /// The 400 of a `status` that is not a filter code: `status must be 0 (all), 1 (success),
    /// 2 (failed or no answer) or 3 (not dialled)`.
    pub fn refused() -> Error {
        let codes: Vec<String> = OutcomeFilter::ALL
            .into_iter()
            .map(|filter| format!("{} ({})", filter.code(), filter.words()))
            .collect();
        let (last, first) = codes.split_last().expect("filters");
        Error::invalid(format!("status must be {} or {last}", first.join(", ")))
    }

    /// The filter's code, as the `status` parameter gives it.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The filter's name (`UNSUCCESSFUL`), from its variant.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The contacts it holds, in words.
    pub fn words(self) -> &'static str {
        match self {
            OutcomeFilter::All => "all",
            OutcomeFilter::Success => "success",
            OutcomeFilter::Unsuccessful => "failed or no answer",
            OutcomeFilter::NotDialled => "not dialled",
        }
    }

    /// Whether a contact whose outcome in the task is `outcome` (a [`status`] code) is exported.
    pub fn admits(self, outcome: u8) -> bool {
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

/// The schema of the `status` filter: its codes, each named (`ALL`, ...), and what each holds.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for OutcomeFilter {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let codes = OutcomeFilter::ALL.map(|filter| (filter.code(), filter.name()));
        let words = OutcomeFilter::ALL.map(|filter| (filter.code(), filter.words()));
        let description = format!(
            "Which of a task's contacts its export holds, by their outcome in the task (D8): {}.",
            crate::schema::code_list(&words)
        );
        crate::schema::coded(description, &codes)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for OutcomeFilter {}

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
    /// the code of the task export's `status` filter ([`OutcomeFilter`]).
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

impl ExportJob {
    /// A new job, PROCESSING from the start: it is queued right after it is stored.
    pub fn new(subject: ExportSubject, format: ExportFormat, now: Timestamp) -> Self {
        ExportJob {
            id: Id::new(),
            subject,
            format: format.name().to_owned(),
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
    fn outcome_filters_are_read_from_their_codes() {
        for filter in OutcomeFilter::ALL {
            let code = filter.code();
            assert_eq!(
                OutcomeFilter::parse(Some(&code.to_string())).unwrap(),
                filter
            );
            assert_eq!(OutcomeFilter::from_code(i64::from(code)).unwrap(), filter);
        }
        assert_eq!(OutcomeFilter::parse(None).unwrap(), OutcomeFilter::All);
        assert_eq!(OutcomeFilter::parse(Some(" ")).unwrap(), OutcomeFilter::All);
        assert_eq!(
            OutcomeFilter::parse(Some(" 2 ")).unwrap(),
            OutcomeFilter::Unsuccessful
        );
        let refused =
            "status must be 0 (all), 1 (success), 2 (failed or no answer) or 3 (not dialled)";
        for raw in ["4", "01", "+1", "-1", "all"] {
            let error = OutcomeFilter::parse(Some(raw)).unwrap_err();
            assert_eq!(error.to_string(), refused, "{raw}");
        }
        assert_eq!(
            OutcomeFilter::from_code(4).unwrap_err().to_string(),
            refused
        );
        let names = OutcomeFilter::ALL.map(OutcomeFilter::name);
        assert_eq!(names, ["ALL", "SUCCESS", "UNSUCCESSFUL", "NOT_DIALLED"]);
        assert_eq!(
            OutcomeFilter::ALL.map(OutcomeFilter::code),
            [0, 1, 2, 3],
            "the codes of the task export's `status`"
        );
    }

    #[test]
    fn formats_are_read_by_name() {
        assert_eq!(ExportFormat::parse(None).unwrap(), ExportFormat::Excel);
        for format in ExportFormat::ALL {
            assert_eq!(ExportFormat::parse(Some(format.name())).unwrap(), format);
        }
        for raw in ["CSV", " csv", "xlsx", ""] {
            let error = ExportFormat::parse(Some(raw)).unwrap_err();
            assert_eq!(error.to_string(), "format must be csv or excel", "{raw}");
        }
    }

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

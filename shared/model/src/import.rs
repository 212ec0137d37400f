//! Import records (D8): one per uploaded file, with its state and, once done, its report.

use super::{Id, Timestamp};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Where an import is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ImportStatus {
    /// A presigned upload URL was handed out; no file yet.
    WaitingUpload,
    /// The file arrived and is being read and stored.
    Processing,
    Succeeded,
    /// The file as a whole was refused (type, size, no phone column, ...); nothing was stored.
    Failed,
}

/// A stored import.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Import {
    pub id: Id,
    pub data_source_id: Id,
    pub file_name: String,
    pub status: ImportStatus,
    /// When processing was last claimed; a claim older than the stale limit may be taken over.
    pub claimed_at: Option<Timestamp>,
    pub error: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The import result record (D8): counts and one entry per refused row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImportReport {
    pub import_count: usize,
    pub success_count: usize,
    pub fail_count: usize,
    pub details: Vec<RowFailure>,
}

impl Import {
    /// The shape of `GET .../contact/import/{importId}`.
    pub fn view(&self, report: Option<ImportReport>, zone: Tz) -> ImportView {
        ImportView {
            import_id: self.id.clone(),
            status: self.status,
            file_name: self.file_name.clone(),
            create_time: self.created_at.display(zone),
            update_time: self.updated_at.display(zone),
            result: report,
            error: self.error.clone(),
        }
    }
}

/// `GET /api/dataSource/{id}/contact/import/{importId}` (D8).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ImportView {
    pub import_id: Id,
    pub status: ImportStatus,
    pub file_name: String,
    pub create_time: String,
    pub update_time: String,
    /// The report, once SUCCEEDED.
    pub result: Option<ImportReport>,
    /// Why the file was refused as a whole, when FAILED.
    pub error: Option<String>,
}

/// A refused data row, shaped as an entry of the import result's `details` (D8).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RowFailure {
    /// Line number in the file, title row = 1. For CSV, the line a record starts on (a quoted
    /// value may span lines); for `.xlsx`, the sheet's row number. Both count from the top of the
    /// file, so when blank lines come before the title row the numbers still match what an editor
    /// shows.
    pub row: u64,
    /// The phone cell as given, cut to [`RowFailure::MAX_PHONE_CHARS`] characters.
    #[serde(rename = "phoneNumber")]
    pub phone_number: String,
    /// One of the D8 reasons: [`reason`] or a field error's reason.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub reason: Cow<'static, str>,
}

impl RowFailure {
    /// Longest phone text echoed back; a report should not carry whole megabytes of a bad cell.
    pub const MAX_PHONE_CHARS: usize = 100;

    pub fn new(row: u64, phone_as_given: &str, reason: impl Into<Cow<'static, str>>) -> Self {
        let phone_number = match phone_as_given.char_indices().nth(Self::MAX_PHONE_CHARS) {
            Some((cut, _)) => phone_as_given[..cut].to_owned(),
            None => phone_as_given.to_owned(),
        };
        RowFailure {
            row,
            phone_number,
            reason: reason.into(),
        }
    }
}

/// A valid data row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedRow {
    /// Line number in the file (title row = 1), as in [`RowFailure::row`].
    pub row: u64,
    pub phone: crate::Phone,
    /// The phone cell as given, for the report should the number already exist (D8). Compact:
    /// held inline unless longer than 24 bytes.
    pub phone_as_given: compact_str::CompactString,
    pub fields: crate::ContactFields,
}

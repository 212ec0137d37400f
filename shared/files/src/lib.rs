//! Contact files (D8): reading an uploaded CSV or `.xlsx` into validated rows, and writing
//! contacts out as CSV or `.xlsx` with bounded memory. Pure code: bytes in, rows out, no AWS.
//!
//! Reading: [`read_contacts`] sniffs the type from the content (`sniff`), maps the title row
//! (`titles`: a title that is neither a field, an alias, an ignored column nor a valid custom
//! name refuses the file with 400 naming the column; an empty title ignores its column), and
//! validates every data row the same way for both formats (`rows`).
//! Writing: [`export::ContactSheetWriter`] takes one row at a time.
//!
//! Limits, checked before anything large is materialised:
//! - an upload over [`MAX_UPLOAD_BYTES`]: 413;
//! - an `.xlsx` whose parts declare more than [`MAX_UNCOMPRESSED_BYTES`] in total, or a part with a
//!   compression ratio no real workbook has: 413 ("zip bomb"). The zip reader refuses to inflate a
//!   part past its declared size, so the declared sizes bound what is decompressed;
//! - more than [`MAX_DATA_ROWS`] data rows: 413. For `.xlsx` the sheet's declared
//!   `<dimension>` is checked first, so a sheet declaring more than `MAX_DATA_ROWS + 1` rows is
//!   refused before any row is read, even when some of those rows would be blank;
//! - more than [`MAX_COLUMNS`] columns in the title row (or declared by the sheet): 413.

mod formula;
mod read_csv;
mod read_xlsx;
mod rows;
mod sniff;
mod titles;

pub mod export;

pub use export::{
    contacts_file_name, task_contacts_file_name, ContactSheetWriter, ExportColumns, ExportRow,
};
pub use outbound_model::import::ParsedRow;
pub use rows::{reason, ParsedFile};
pub use sniff::FileKind;

use outbound_model::error::Error;

/// The largest upload read at all (D8).
pub const MAX_UPLOAD_BYTES: usize = 20 * 1024 * 1024;
/// The most an `.xlsx` may decompress to, all parts together (D8).
pub const MAX_UNCOMPRESSED_BYTES: u64 = 256 * 1024 * 1024;
/// The most data rows one file may hold (D8); blank rows do not count.
pub const MAX_DATA_ROWS: usize = 10_000;
/// The most columns a file may have. A contact has at most 4 + 30 fields plus the 7 read-only
/// columns of an export, so anything near this is not a contact list.
pub const MAX_COLUMNS: usize = 256;

/// Reads an uploaded contact file: CSV or `.xlsx`, decided by content. `file_name` only
/// sharpens the message when the type is refused.
///
/// File-level problems are errors (400, 413, 415) and nothing should be stored; row-level
/// problems are [`RowFailure`]s beside the valid rows.
pub fn read_contacts(bytes: &[u8], file_name: Option<&str>) -> Result<ParsedFile, Error> {
    if bytes.len() > MAX_UPLOAD_BYTES {
        return Err(Error::TooLarge("file is larger than 20 MiB".into()));
    }
    match sniff::sniff(bytes, file_name)? {
        FileKind::Csv => read_csv::read(bytes),
        FileKind::Xlsx => read_xlsx::read(bytes),
    }
}

fn too_many_rows() -> Error {
    Error::TooLarge(format!("file has more than {MAX_DATA_ROWS} rows"))
}

fn too_many_columns() -> Error {
    Error::TooLarge(format!("file has more than {MAX_COLUMNS} columns"))
}

#[cfg(test)]
mod tests;

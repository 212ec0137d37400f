//! `.xlsx` import (D8): the first worksheet, streamed cell by cell, after the archive and the
//! sheet's declared size have been checked.
//!
//! Defences, in the order they run, each before the thing it guards is allocated:
//! 1. the zip central directory (sizes only, nothing inflated): more than [`MAX_PARTS`] parts, a
//!    total declared size past [`MAX_UNCOMPRESSED_BYTES`], or a part declaring a ratio deflate cannot
//!    honestly reach, is 413, and so is a shared-strings part over 64 MiB (calamine loads it
//!    whole). The zip reader stops any part that inflates past its declared size, so the declared
//!    sizes are a real bound on what calamine can decompress;
//! 2. the worksheet's `<dimension ref=...>`: more than `MAX_DATA_ROWS + 1` rows or [`MAX_COLUMNS`]
//!    columns is 413;
//! 3. while streaming, the row collector stops at `MAX_DATA_ROWS + 1` data rows, and cells right
//!    of the last titled column are never stored, so a sheet without a dimension (or lying in it)
//!    costs time bounded by the size limit but no memory.

use super::rows::{Cells, Collector};
use super::{
    too_many_columns, too_many_rows, FileKind, ParsedFile, MAX_COLUMNS, MAX_DATA_ROWS,
    MAX_UNCOMPRESSED_BYTES,
};
use calamine::{DataRef, Dimensions, ExcelDateTime, Reader, SheetType, Xlsx};
use outbound_model::error::Error;
use std::fmt::Write as _;
use std::io::Cursor;
use zip::ZipArchive;

/// More parts than any contact workbook has; each costs memory when the directory is read.
const MAX_PARTS: usize = 10_000;
/// Deflate tops out near 1032:1; a part declaring more is lying about its size.
const MAX_RATIO: u64 = 1_000;
/// Parts smaller than this cannot hurt whatever their ratio.
const RATIO_FLOOR: u64 = 1024 * 1024;
const WORKBOOK_PART: &[u8] = b"xl/workbook.xml";
/// calamine holds every shared string in memory before the first row is read; more text than
/// this is not a contact list (10,000 rows of five long fields are a few MiB).
const MAX_SHARED_STRINGS_BYTES: u64 = 64 * 1024 * 1024;
const SHARED_STRINGS_PART: &[u8] = b"xl/sharedStrings.xml";

pub(crate) fn read(bytes: &[u8]) -> Result<ParsedFile, Error> {
    check_archive(bytes)?;
    let mut workbook: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(unreadable)?;
    let sheet = workbook
        .sheets_metadata()
        .iter()
        .find(|sheet| sheet.typ == SheetType::WorkSheet)
        .map(|sheet| sheet.name.clone())
        .ok_or_else(|| Error::invalid("workbook has no worksheet"))?;
    let mut reader = workbook
        .worksheet_cells_reader(&sheet)
        .map_err(unreadable)?;
    let dimensions = reader.dimensions();
    check_dimensions(dimensions)?;

    let declared_rows = dimensions.end.0.saturating_sub(dimensions.start.0) as usize;
    let mut collector = Collector::new(FileKind::Xlsx, declared_rows);
    let mut row = RowBuffer::default();
    let mut current = None;
    while let Some(cell) = reader.next_cell().map_err(unreadable)? {
        let (row_index, column) = cell.get_position();
        if current != Some(row_index) {
            if let Some(done) = current {
                collector.push(u64::from(done) + 1, &row)?;
                row.clear();
            }
            current = Some(row_index);
        }
        let titled = collector.titles().map(|titles| titles.len());
        row.put(column as usize, titled, cell.get_value())?;
    }
    if let Some(done) = current {
        collector.push(u64::from(done) + 1, &row)?;
    }
    collector.finish()
}

/// Step 1 of the defences, on the central directory only.
fn check_archive(bytes: &[u8]) -> Result<(), Error> {
    let archive = ZipArchive::new(Cursor::new(bytes)).map_err(|_| {
        Error::invalid("file is not a readable .xlsx workbook: the zip archive is damaged")
    })?;
    if archive.len() > MAX_PARTS {
        return Err(zip_bomb());
    }
    let mut total: u64 = 0;
    let mut has_workbook = false;
    for index in 0..archive.len() {
        let part = archive.by_index_data(index).map_err(|_| {
            Error::invalid("file is not a readable .xlsx workbook: the zip archive is damaged")
        })?;
        has_workbook |= part.name_raw().eq_ignore_ascii_case(WORKBOOK_PART);
        let size = part.size();
        if size > MAX_SHARED_STRINGS_BYTES
            && part.name_raw().eq_ignore_ascii_case(SHARED_STRINGS_PART)
        {
            return Err(Error::TooLarge(
                "xlsx shared strings are larger than 64 MiB".into(),
            ));
        }
        total = total.saturating_add(size);
        if total > MAX_UNCOMPRESSED_BYTES
            || (size > RATIO_FLOOR && size / part.compressed_size().max(1) > MAX_RATIO)
        {
            return Err(zip_bomb());
        }
    }
    if !has_workbook {
        return Err(Error::UnsupportedType(
            "zip archive is not an Excel workbook: upload a UTF-8 CSV or an .xlsx file".into(),
        ));
    }
    Ok(())
}

fn zip_bomb() -> Error {
    Error::TooLarge("xlsx decompresses to more than 256 MiB (zip bomb)".into())
}

fn unreadable(error: calamine::XlsxError) -> Error {
    Error::invalid(format!("xlsx file could not be read: {error}"))
}

/// Step 2 of the defences: the size the sheet says it has.
fn check_dimensions(dimensions: Dimensions) -> Result<(), Error> {
    let span = |start: u32, end: u32| u64::from(end.saturating_sub(start)) + 1;
    if span(dimensions.start.1, dimensions.end.1) > MAX_COLUMNS as u64 {
        return Err(too_many_columns());
    }
    if span(dimensions.start.0, dimensions.end.0) > MAX_DATA_ROWS as u64 + 1 {
        return Err(too_many_rows());
    }
    Ok(())
}

/// The cells of the row being read, as text. The strings are reused from row to row.
#[derive(Default)]
struct RowBuffer {
    cells: Vec<String>,
    width: usize,
    has_content: bool,
}

impl RowBuffer {
    /// Stores the cell in `column` when a title covers it (`titled` columns; `None` while the
    /// title row itself may be being read). A cell right of that is only noted as content, so the
    /// row does not count as blank; in the title row it means too many columns.
    fn put(
        &mut self,
        column: usize,
        titled: Option<usize>,
        value: &DataRef<'_>,
    ) -> Result<(), Error> {
        if column >= titled.unwrap_or(MAX_COLUMNS) {
            if has_text(value) {
                if titled.is_none() {
                    return Err(too_many_columns());
                }
                self.has_content = true;
            }
            return Ok(());
        }
        if column >= self.cells.len() {
            self.cells.resize_with(column + 1, String::new);
        }
        self.width = self.width.max(column + 1);
        if let Some(slot) = self.cells.get_mut(column) {
            slot.clear();
            write_text(value, slot);
            self.has_content |= !slot.trim_start().is_empty();
        }
        Ok(())
    }

    fn clear(&mut self) {
        for cell in self.cells.iter_mut().take(self.width) {
            cell.clear();
        }
        self.width = 0;
        self.has_content = false;
    }
}

impl Cells for RowBuffer {
    fn width(&self) -> usize {
        self.width
    }

    fn cell(&self, index: usize) -> &str {
        match self.cells.get(index) {
            Some(text) if index < self.width => text,
            _ => "",
        }
    }

    fn is_blank(&self) -> bool {
        !self.has_content
    }
}

fn has_text(value: &DataRef<'_>) -> bool {
    match value {
        DataRef::Empty => false,
        DataRef::String(text) => !text.trim_start().is_empty(),
        DataRef::SharedString(text) => !text.trim_start().is_empty(),
        _ => true,
    }
}

/// A cell as the text a person sees: numbers without a trailing `.0` (a phone typed as a number
/// must come back as its digits), booleans as `TRUE`/`FALSE`, dates as `YYYY-MM-DD[ HH:MM:SS]`.
fn write_text(value: &DataRef<'_>, out: &mut String) {
    // Writing into a String cannot fail, so the fmt::Results below are ignored.
    match value {
        DataRef::Empty => {}
        DataRef::String(text) | DataRef::DateTimeIso(text) | DataRef::DurationIso(text) => {
            out.push_str(text)
        }
        DataRef::SharedString(text) => out.push_str(text),
        DataRef::Int(number) => {
            let _ = write!(out, "{number}");
        }
        // Display of f64 never uses an exponent and drops a zero fraction: 13800138000.0 -> "13800138000".
        DataRef::Float(number) => {
            let _ = write!(out, "{number}");
        }
        DataRef::Bool(flag) => out.push_str(if *flag { "TRUE" } else { "FALSE" }),
        DataRef::DateTime(date) => write_date(date, out),
        DataRef::Error(error) => {
            let _ = write!(out, "{error}");
        }
    }
}

fn write_date(date: &ExcelDateTime, out: &mut String) {
    if date.is_duration() {
        let _ = write!(out, "{}", date.as_f64());
        return;
    }
    let (year, month, day, hour, minute, second, _) = date.to_ymd_hms_milli();
    let serial = date.as_f64();
    if serial < 1.0 {
        let _ = write!(out, "{hour:02}:{minute:02}:{second:02}");
    } else if serial.fract() == 0.0 {
        let _ = write!(out, "{year:04}-{month:02}-{day:02}");
    } else {
        let _ = write!(
            out,
            "{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use calamine::ExcelDateTimeType;

    fn text(value: DataRef<'_>) -> String {
        let mut out = String::new();
        write_text(&value, &mut out);
        out
    }

    #[test]
    fn cell_text() {
        assert_eq!(text(DataRef::Float(13800138000.0)), "13800138000");
        assert_eq!(text(DataRef::Float(99.5)), "99.5");
        assert_eq!(text(DataRef::Float(-0.25)), "-0.25");
        assert_eq!(text(DataRef::Float(1e20)), "100000000000000000000");
        assert_eq!(text(DataRef::Int(42)), "42");
        assert_eq!(text(DataRef::Bool(true)), "TRUE");
        assert_eq!(text(DataRef::SharedString("x")), "x");
        let date = |serial| {
            DataRef::DateTime(ExcelDateTime::new(
                serial,
                ExcelDateTimeType::DateTime,
                false,
            ))
        };
        assert_eq!(text(date(45943.0)), "2025-10-13");
        assert_eq!(text(date(45943.5)), "2025-10-13 12:00:00");
        assert_eq!(text(date(0.75)), "18:00:00");
    }

    #[test]
    fn dimensions_are_checked_before_reading() {
        let dims = |end: (u32, u32)| Dimensions { start: (0, 0), end };
        assert!(check_dimensions(dims((10_000, 4))).is_ok());
        assert_eq!(
            check_dimensions(dims((10_001, 4))).unwrap_err().to_string(),
            "file has more than 10000 rows"
        );
        assert_eq!(
            check_dimensions(dims((5, 999_999)))
                .unwrap_err()
                .status_code(),
            413
        );
    }
}

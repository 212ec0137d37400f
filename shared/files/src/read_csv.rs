//! CSV import (D8): RFC 4180 quoting, comma separated, UTF-8 with or without a BOM, rows of any
//! length. Records are read as bytes and checked for UTF-8 once per record, so a file in another
//! encoding is refused with the line it goes wrong on.

use super::rows::{Cells, Collector};
use super::{FileKind, ParsedFile};
use csv::{ByteRecord, Position, ReaderBuilder};
use outbound_model::error::Error;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

pub(crate) fn read(bytes: &[u8]) -> Result<ParsedFile, Error> {
    let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    let mut reader = ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body);
    let mut record = ByteRecord::new();
    // A sizing guess only: real rows are rarely shorter than 16 bytes.
    let mut collector = Collector::new(FileKind::Csv, body.len() / 16);
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(error) => {
                let line = error.position().map_or(0, |p| p.line());
                return Err(Error::invalid(format!(
                    "file is not valid CSV at line {line}"
                )));
            }
        }
        let line = record.position().map_or(0, |p| start_line(body, p));
        let text = record_text(&record, line)?;
        collector.push(
            line,
            &CsvRow {
                text,
                record: &record,
            },
        )?;
    }
    collector.finish()
}

/// The line a record starts on, title row = 1 (a quoted value may span several lines).
///
/// csv gives the reader's position after the previous record, which sits before that record's
/// line feed and before any empty lines the reader skips; those are counted here.
fn start_line(body: &[u8], position: &Position) -> u64 {
    let from = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let skipped = body
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'\r' || b == b'\n')
        .filter(|&&b| b == b'\n')
        .count();
    position.line() + skipped as u64
}

/// All of a record's fields as one `str`, after checking that every field is UTF-8 on its own.
fn record_text(record: &ByteRecord, line: u64) -> Result<&str, Error> {
    let bytes = record.as_slice();
    let text = match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => text,
        // The vectorised check only says no; std's says where, for the message.
        Err(_) => std::str::from_utf8(bytes).map_err(|e| not_utf8(bytes, e.valid_up_to(), line))?,
    };
    // The fields are stored back to back, so two fields may decode together while each alone
    // splits a character.
    for index in 0..record.len() {
        if let Some(range) = record.range(index) {
            for edge in [range.start, range.end] {
                if !text.is_char_boundary(edge) {
                    return Err(not_utf8(bytes, edge, line));
                }
            }
        }
    }
    Ok(text)
}

/// The 400 for bytes that are not UTF-8, naming the line of the first bad byte.
fn not_utf8(record: &[u8], offset: usize, record_line: u64) -> Error {
    let newlines = record[..offset.min(record.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u64;
    Error::invalid(format!(
        "file is not valid UTF-8 at line {}: save the CSV as UTF-8",
        record_line + newlines
    ))
}

struct CsvRow<'a> {
    text: &'a str,
    record: &'a ByteRecord,
}

impl Cells for CsvRow<'_> {
    fn width(&self) -> usize {
        self.record.len()
    }

    fn cell(&self, index: usize) -> &str {
        self.record
            .range(index)
            .and_then(|range| self.text.get(range))
            .unwrap_or("")
    }

    fn is_blank(&self) -> bool {
        // The fields sit back to back without separators, so all are blank when their sum is.
        self.text.trim_start().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> ParsedFile {
        read(text.as_bytes()).unwrap()
    }

    fn message(bytes: &[u8]) -> String {
        read(bytes).unwrap_err().to_string()
    }

    #[test]
    fn quoted_commas_and_newlines_keep_the_starting_line() {
        let file = read_str(
            "phoneNumber,address,note\r\n\
             13800138000,\"Road 1, Block 2\",plain\r\n\
             \"13800138001\",\"line one\nline two\",x\r\n\
             13800138002,\"say \"\"hi\"\"\",y\r\n",
        );
        assert_eq!(file.import_count, 3);
        let rows: Vec<_> = file.rows.iter().map(|r| r.row).collect();
        assert_eq!(rows, [2, 3, 5]);
        assert_eq!(file.rows[0].fields.get("address"), Some("Road 1, Block 2"));
        assert_eq!(
            file.rows[1].fields.get("address"),
            Some("line one\nline two")
        );
        assert_eq!(file.rows[2].fields.get("address"), Some("say \"hi\""));
    }

    #[test]
    fn bom_and_chinese_titles() {
        let file =
            read("\u{feff}手机号,客户姓名,地址,订单金额\n13800138000,张三,北京,99.5\n".as_bytes())
                .unwrap();
        let row = &file.rows[0];
        assert_eq!(row.phone.as_str(), "13800138000");
        assert_eq!(row.fields.get("customerName"), Some("张三"));
        assert_eq!(row.fields.get("address"), Some("北京"));
        assert_eq!(row.fields.get("orderAmount"), Some("99.5"));
    }

    #[test]
    fn rows_may_be_short_or_long_and_blank_rows_do_not_count() {
        let file = read_str("phone,name\n12345\n,\n\n  ,  \n12346,b,extra\n");
        assert_eq!(file.import_count, 2);
        assert_eq!(file.rows[1].row, 6);
        assert_eq!(file.rows[1].fields.iter().count(), 1);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        assert_eq!(
            message(b"phone,name\n12345,a\n12346,\"x\ny\xFF\"\n"),
            "file is not valid UTF-8 at line 4: save the CSV as UTF-8"
        );
        // GBK "手机" in the title row.
        assert_eq!(
            message(b"\xCA\xD6\xBB\xFA,name\n"),
            "file is not valid UTF-8 at line 1: save the CSV as UTF-8"
        );
        // "中" split by the separator: each half alone is not UTF-8.
        assert_eq!(
            message(b"phone,name\n12345,\xE4\xB8,\xAD\n"),
            "file is not valid UTF-8 at line 2: save the CSV as UTF-8"
        );
    }

    #[test]
    fn file_level_refusals() {
        assert_eq!(
            message(b"name,address\nx,y\n"),
            "file has no phoneNumber column"
        );
        assert_eq!(message(b""), "file is empty");
        assert_eq!(message(b"\xEF\xBB\xBF\n\n"), "file is empty");
    }
}

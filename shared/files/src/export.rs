//! Contact export (D8): the format choice, file names and content types, and a writer that takes
//! contacts one at a time with memory that does not grow with the number of rows.
//!
//! Columns are `id`, `phoneNumber`, the known fields, the custom fields the caller lists, then
//! `status`, `callCount`, `createTime`, `updateTime`, and in a task's export `lastReason` and
//! `skipReason` (D18), `callerId`, `messageLeft` and one `result.<name>` per result attribute of
//! the task (D22); titles are the field names, so a contact export imports back unchanged. A CSV
//! cell a spreadsheet could take for a formula, and that is no number or phone number, gets a
//! leading `'`; an `.xlsx` text cell is a string cell, which a spreadsheet never runs, written as
//! it is (D27).
//!
//! CSV is UTF-8 with a BOM and CRLF line ends, written through to the output as rows arrive.
//! `.xlsx` uses rust_xlsxwriter's constant-memory mode: each row goes to a temporary file (in the
//! system temp dir, `/tmp` on Lambda) and the workbook is assembled into the output at
//! [`ContactSheetWriter::finish`].

use super::formula;
use chrono_tz::Tz;
use outbound_model::contact::{KNOWN_FIELDS, PHONE_FIELD, READ_ONLY_FIELDS};
use outbound_model::error::Error;
use outbound_model::export::ExportFormat;
use outbound_model::telephony::Results;
use outbound_model::{Contact, ContactFields, Id, Timestamp};
use rust_xlsxwriter::{Workbook, XlsxError};
use std::fmt::Write as _;
use std::io::Write;

/// `contacts_<YYYYMMDDHHMMSS>.csv|.xlsx`, the time in `zone`.
pub fn contacts_file_name(format: ExportFormat, at: Timestamp, zone: Tz) -> String {
    format!("contacts_{}.{}", at.compact(zone), format.extension())
}

/// `task_contacts_<taskId>_<YYYYMMDDHHMMSS>.csv|.xlsx`, the time in `zone`.
pub fn task_contacts_file_name(
    format: ExportFormat,
    task_id: &Id,
    at: Timestamp,
    zone: Tz,
) -> String {
    format!(
        "task_contacts_{}_{}.{}",
        task_id.as_str(),
        at.compact(zone),
        format.extension()
    )
}

const LEADING: [&str; 2] = ["id", PHONE_FIELD];
const TRAILING: [&str; 4] = ["status", "callCount", "createTime", "updateTime"];
/// A task export's columns after the contact's (D18, D22), before its result columns.
const TASK_COLUMNS: [&str; 5] = [
    "lastReason",
    "skipReason",
    "callerId",
    "messageLeft",
    "callbackAt",
];
/// The title of a task's result column: `result.<name>` (D22).
const RESULT_PREFIX: &str = "result.";
/// The most data rows a worksheet holds (Excel's 1,048,576 rows, less the title row).
const MAX_XLSX_ROWS: u32 = 1_048_575;

/// The columns of an export: the fixed ones around the custom field names the caller lists.
#[derive(Clone, Debug, Default)]
pub struct ExportColumns {
    custom: Vec<String>,
    task: bool,
    /// A task's `result.<name>` titles, in its order of result attributes.
    results: Vec<String>,
}

impl ExportColumns {
    /// `custom` in the order they should appear. Names of fixed columns and repeats are dropped,
    /// since a title row naming a field twice would not import again.
    pub fn new<I, S>(custom: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut names: Vec<String> = Vec::new();
        for name in custom {
            let name = name.into();
            let fixed = LEADING.contains(&name.as_str())
                || TRAILING.contains(&name.as_str())
                || TASK_COLUMNS.contains(&name.as_str())
                || READ_ONLY_FIELDS.contains(&name.as_str())
                || KNOWN_FIELDS.iter().any(|(known, _)| *known == name);
            if !fixed && !names.contains(&name) {
                names.push(name);
            }
        }
        ExportColumns {
            custom: names,
            task: false,
            results: Vec::new(),
        }
    }

    /// The same columns with a task's last: `lastReason`, `skipReason`, `callerId`,
    /// `messageLeft`, `callbackAt`, and `result.<name>` for each of `result_names`.
    pub fn with_task_columns<S: AsRef<str>>(mut self, result_names: &[S]) -> Self {
        self.task = true;
        self.results = result_names
            .iter()
            .map(|name| format!("{RESULT_PREFIX}{}", name.as_ref()))
            .collect();
        let results = &self.results;
        self.custom.retain(|name| !results.contains(name));
        self
    }

    /// The title row.
    pub fn titles(&self) -> impl Iterator<Item = &str> {
        LEADING
            .into_iter()
            .chain(KNOWN_FIELDS.iter().map(|(name, _)| *name))
            .chain(self.custom.iter().map(String::as_str))
            .chain(TRAILING)
            .chain(TASK_COLUMNS.into_iter().filter(|_| self.task))
            .chain(self.results.iter().map(String::as_str))
    }

    /// The cells of `row`, in title order.
    fn cells<'r>(&'r self, row: &'r ExportRow<'r>) -> impl Iterator<Item = Value<'r>> {
        let field = |name: &str| Value::Text(row.fields.get(name).unwrap_or(""));
        [Value::Text(row.id), Value::Text(row.phone)]
            .into_iter()
            .chain(KNOWN_FIELDS.iter().map(move |(name, _)| field(name)))
            .chain(self.custom.iter().map(move |name| field(name)))
            .chain([
                Value::Number(u32::from(row.status)),
                Value::Number(row.call_count),
                Value::Text(row.create_time),
                Value::Text(row.update_time),
            ])
            .chain(
                [
                    row.last_reason,
                    row.skip,
                    row.caller_id,
                    row.message_left
                        .map(|left| if left { "true" } else { "false" }),
                    row.callback_at,
                ]
                .into_iter()
                .filter(|_| self.task)
                .map(|text| Value::Text(text.unwrap_or(""))),
            )
            .chain(self.results.iter().map(move |title| {
                let name = &title[RESULT_PREFIX.len()..];
                let value = row.results.and_then(|results| results.get(name));
                Value::Text(value.map_or("", String::as_str))
            }))
    }
}

/// One exported row. The contact export takes status and call count from the contact; a task
/// export passes the task's own values. Times come formatted in the service zone (D4).
#[derive(Clone, Copy, Debug)]
pub struct ExportRow<'a> {
    pub id: &'a str,
    pub phone: &'a str,
    pub fields: &'a ContactFields,
    pub status: u8,
    pub call_count: u32,
    pub create_time: &'a str,
    pub update_time: &'a str,
    /// A task export's `lastReason` and `skipReason` (D18).
    pub last_reason: Option<&'a str>,
    pub skip: Option<&'a str>,
    /// A task export's `callerId` and `messageLeft` (`None` when never attempted), and the
    /// results of the latest answered attempt (D22).
    pub caller_id: Option<&'a str>,
    pub message_left: Option<bool>,
    pub results: Option<&'a Results>,
    /// A task export's `callbackAt`: the contact's latest callback (D31), in the service zone.
    pub callback_at: Option<&'a str>,
}

impl<'a> ExportRow<'a> {
    /// The row of a contact export: the contact's own status and call count.
    pub fn of_contact(contact: &'a Contact, create_time: &'a str, update_time: &'a str) -> Self {
        ExportRow {
            id: contact.id.as_str(),
            phone: contact.phone.as_str(),
            fields: &contact.fields,
            status: contact.status,
            call_count: contact.call_count,
            create_time,
            update_time,
            last_reason: None,
            skip: None,
            caller_id: None,
            message_left: None,
            results: None,
            callback_at: None,
        }
    }
}

#[derive(Clone, Copy)]
enum Value<'a> {
    Text(&'a str),
    Number(u32),
}

/// Writes contacts to a CSV or `.xlsx` file one row at a time. Call [`Self::finish`] to complete
/// the file; dropping the writer leaves it incomplete.
pub struct ContactSheetWriter<W: Write + Send> {
    columns: ExportColumns,
    sink: Sink<W>,
    rows: u32,
    /// Reused for guarded and numeric CSV cells, so a row allocates nothing.
    scratch: String,
}

enum Sink<W: Write + Send> {
    Csv(Box<csv::Writer<W>>),
    Xlsx { workbook: Box<Workbook>, out: W },
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl<W: Write + Send> ContactSheetWriter<W> {
    /// Starts a file in `format` on `out` and writes the title row.
    pub fn new(format: ExportFormat, columns: ExportColumns, mut out: W) -> Result<Self, Error> {
        let sink = match format {
            ExportFormat::Csv => {
                out.write_all(UTF8_BOM).map_err(write_failed)?;
                let writer = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::CRLF)
                    .from_writer(out);
                Sink::Csv(Box::new(writer))
            }
            ExportFormat::Excel => {
                let mut workbook = Box::new(Workbook::new());
                workbook
                    .add_worksheet_with_constant_memory()
                    .and_then(|sheet| sheet.set_name("contacts"))
                    .map_err(xlsx_failed)?;
                Sink::Xlsx { workbook, out }
            }
        };
        let mut writer = ContactSheetWriter {
            columns,
            sink,
            rows: 0,
            scratch: String::new(),
        };
        writer.write_titles()?;
        Ok(writer)
    }

    /// Data rows written so far.
    pub fn rows_written(&self) -> u32 {
        self.rows
    }

    /// Appends one contact.
    pub fn write(&mut self, row: &ExportRow<'_>) -> Result<(), Error> {
        let ContactSheetWriter {
            columns,
            sink,
            rows,
            scratch,
        } = self;
        match sink {
            Sink::Csv(writer) => {
                for value in columns.cells(row) {
                    let field = match value {
                        Value::Text(text) => guarded(text, scratch),
                        Value::Number(number) => {
                            scratch.clear();
                            let _ = write!(scratch, "{number}"); // a String never fails
                            scratch.as_str()
                        }
                    };
                    writer.write_field(field).map_err(csv_failed)?;
                }
                writer.write_record(None::<&[u8]>).map_err(csv_failed)?;
            }
            Sink::Xlsx { workbook, .. } => {
                if *rows >= MAX_XLSX_ROWS {
                    return Err(Error::TooLarge(format!(
                        "an excel export holds at most {MAX_XLSX_ROWS} contacts: use format=csv"
                    )));
                }
                let sheet = workbook.worksheet_from_index(0).map_err(xlsx_failed)?;
                let line = *rows + 1;
                for (column, value) in (0u16..).zip(columns.cells(row)) {
                    match value {
                        Value::Text("") => {}
                        // A string cell is never run: its text is written as it is (D27).
                        Value::Text(text) => {
                            sheet
                                .write_string(line, column, text)
                                .map_err(xlsx_failed)?;
                        }
                        Value::Number(number) => {
                            sheet
                                .write_number(line, column, f64::from(number))
                                .map_err(xlsx_failed)?;
                        }
                    }
                }
            }
        }
        *rows += 1;
        Ok(())
    }

    /// Completes the file and hands back the output, flushed.
    pub fn finish(self) -> Result<W, Error> {
        let mut out = match self.sink {
            Sink::Csv(writer) => writer
                .into_inner()
                .map_err(|e| write_failed(e.into_error()))?,
            Sink::Xlsx {
                mut workbook,
                mut out,
            } => {
                workbook.save_to_writer(&mut out).map_err(xlsx_failed)?;
                out
            }
        };
        out.flush().map_err(write_failed)?;
        Ok(out)
    }

    fn write_titles(&mut self) -> Result<(), Error> {
        match &mut self.sink {
            Sink::Csv(writer) => writer
                .write_record(self.columns.titles())
                .map_err(csv_failed),
            Sink::Xlsx { workbook, .. } => {
                let sheet = workbook.worksheet_from_index(0).map_err(xlsx_failed)?;
                for (column, title) in (0u16..).zip(self.columns.titles()) {
                    sheet.write_string(0, column, title).map_err(xlsx_failed)?;
                }
                Ok(())
            }
        }
    }
}

/// `text`, or `'` + `text` in `scratch` when a spreadsheet could read it as a formula (D27).
fn guarded<'s>(text: &'s str, scratch: &'s mut String) -> &'s str {
    if formula::needs_guard(text) {
        scratch.clear();
        scratch.push('\'');
        scratch.push_str(text);
        scratch
    } else {
        text
    }
}

fn write_failed(error: std::io::Error) -> Error {
    Error::internal("write export file", error)
}

fn csv_failed(error: csv::Error) -> Error {
    Error::internal("write export csv", error)
}

fn xlsx_failed(error: XlsxError) -> Error {
    Error::internal("write export xlsx", error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_and_types() {
        assert_eq!(ExportFormat::parse(None).unwrap(), ExportFormat::Excel);
        assert_eq!(ExportFormat::parse(Some("csv")).unwrap(), ExportFormat::Csv);
        assert_eq!(
            ExportFormat::parse(Some("excel")).unwrap(),
            ExportFormat::Excel
        );
        for bad in ["xlsx", "CSV", ""] {
            let error = ExportFormat::parse(Some(bad)).unwrap_err();
            assert_eq!(error.to_string(), "format must be csv or excel");
            assert_eq!(error.status_code(), 400);
        }
        let at = Timestamp(1_700_000_000_000);
        let zone = chrono_tz::Asia::Shanghai;
        assert_eq!(
            contacts_file_name(ExportFormat::Csv, at, zone),
            "contacts_20231115061320.csv"
        );
        let task = Id::parse("01HF0000000000000000000000").unwrap();
        assert_eq!(
            task_contacts_file_name(ExportFormat::Excel, &task, at, Tz::UTC),
            "task_contacts_01HF0000000000000000000000_20231114221320.xlsx"
        );
        assert_eq!(ExportFormat::Csv.content_type(), "text/csv; charset=utf-8");
        assert_eq!(
            ExportFormat::Excel.content_type(),
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        );
    }

    #[test]
    fn a_task_export_ends_with_the_reason_caller_and_result_columns() {
        let columns = ExportColumns::new(["lastReason", "note", "result.amount", "callerId"])
            .with_task_columns(&["outcome", "amount"]);
        let titles: Vec<_> = columns.titles().collect();
        assert_eq!(
            titles[titles.len() - 8..],
            [
                "updateTime",
                "lastReason",
                "skipReason",
                "callerId",
                "messageLeft",
                "callbackAt",
                "result.outcome",
                "result.amount"
            ]
        );
        assert!(titles.contains(&"note"));
        assert_eq!(titles.iter().filter(|t| **t == "result.amount").count(), 1);
        let mut writer = ContactSheetWriter::new(ExportFormat::Csv, columns, Vec::new()).unwrap();
        let fields = ContactFields::default();
        let skipped = ExportRow {
            id: "01HF0000000000000000000000",
            phone: "2125550101",
            fields: &fields,
            status: 0,
            call_count: 0,
            create_time: "t0",
            update_time: "t1",
            last_reason: None,
            skip: Some("DNC"),
            caller_id: None,
            message_left: None,
            results: None,
            callback_at: None,
        };
        writer.write(&skipped).unwrap();
        let results: Results = [("amount".to_owned(), "=1+2".to_owned())].into();
        writer
            .write(&ExportRow {
                status: 1,
                call_count: 1,
                last_reason: Some("ANSWERED"),
                skip: None,
                caller_id: Some("+12125550100"),
                message_left: Some(false),
                results: Some(&results),
                ..skipped
            })
            .unwrap();
        let text = String::from_utf8(writer.finish().unwrap()).unwrap();
        // The caller ID is a phone number, written as it is; a result that reads as a formula
        // is guarded (D27).
        assert!(
            text.ends_with(
                ",0,0,t0,t1,,DNC,,,,,\r\n\
                 01HF0000000000000000000000,2125550101,,,,,1,1,t0,t1,ANSWERED,,+12125550100,false,,,'=1+2\r\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn columns_drop_fixed_names_and_repeats() {
        let columns = ExportColumns::new(["vip", "status", "customerName", "vip", "note"]);
        let titles: Vec<_> = columns.titles().collect();
        assert_eq!(
            titles,
            [
                "id",
                "phoneNumber",
                "customerName",
                "address",
                "orderAmount",
                "vip",
                "note",
                "status",
                "callCount",
                "createTime",
                "updateTime"
            ]
        );
    }

    #[test]
    fn csv_has_a_bom_crlf_and_guarded_cells() {
        let mut fields = ContactFields::default();
        fields.set("customerName", "=cmd|' /C calc'!A0").unwrap();
        fields.set("note", "a, \"b\"").unwrap();
        let mut writer =
            ContactSheetWriter::new(ExportFormat::Csv, ExportColumns::new(["note"]), Vec::new())
                .unwrap();
        writer
            .write(&ExportRow {
                id: "01HF0000000000000000000000",
                phone: "+8613800138000",
                fields: &fields,
                status: 1,
                call_count: 2,
                create_time: "2024-01-02 03:04:05",
                update_time: "2024-01-02 03:04:06",
                last_reason: None,
                skip: None,
                caller_id: None,
                message_left: None,
                results: None,
                callback_at: None,
            })
            .unwrap();
        assert_eq!(writer.rows_written(), 1);
        let bytes = writer.finish().unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            "\u{feff}id,phoneNumber,customerName,address,orderAmount,note,status,callCount,createTime,updateTime\r\n\
             01HF0000000000000000000000,+8613800138000,'=cmd|' /C calc'!A0,,,\"a, \"\"b\"\"\",1,2,2024-01-02 03:04:05,2024-01-02 03:04:06\r\n"
        );
    }
}

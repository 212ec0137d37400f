//! Data rows (D7, D8): turning each row of a file into a valid contact or a failure with its
//! reason, the same way for every file type. Readers hand rows over through [`Cells`].
//!
//! A row's checks run in this order, the first failing one giving the reason: the phone number,
//! each field's length, the custom field count, then duplicates. A row that failed for another
//! reason does not claim its number, so a later valid row with that number is still imported.

use super::titles::Titles;
use super::{formula, too_many_rows, FileKind, MAX_DATA_ROWS};
use hashbrown::{DefaultHashBuilder, HashTable};
use outbound_model::contact::MAX_CUSTOM_FIELDS;
use outbound_model::error::Error;
use outbound_model::import::{ParsedRow, RowFailure};
use outbound_model::{ContactFields, Phone};
use std::hash::BuildHasher;

/// The reasons of D8 that are not [`outbound_model::contact::FieldError::reason`]s.
pub mod reason {
    pub const INVALID_PHONE: &str = "invalid phoneNumber";
    pub const DUPLICATE_IN_FILE: &str = "duplicate in file";
    /// Decided by the import against stored contacts, not by the file reader.
    pub const ALREADY_EXISTS: &str = "already exists";
}

/// Everything an import learned from a file.
#[derive(Debug)]
pub struct ParsedFile {
    pub kind: FileKind,
    /// Data rows read: blank rows and the title row excluded. Always `rows + failures`.
    pub import_count: usize,
    /// Valid rows in file order, each number once.
    pub rows: Vec<ParsedRow>,
    /// Refused rows in file order.
    pub failures: Vec<RowFailure>,
}

/// One row of a file as the reader sees it.
pub(crate) trait Cells {
    /// Number of cells, trailing empty ones included.
    fn width(&self) -> usize;
    /// The text of cell `index`; empty past the end.
    fn cell(&self, index: usize) -> &str;
    /// Whether every cell is empty after trimming.
    fn is_blank(&self) -> bool {
        (0..self.width()).all(|index| self.cell(index).trim_start().is_empty())
    }
}

/// Collects the rows of one file: the first non-blank row is the title row, the others are data.
pub(crate) struct Collector {
    kind: FileKind,
    titles: Option<Titles>,
    import_count: usize,
    valid: UniqueRows,
    failures: Vec<RowFailure>,
}

impl Collector {
    /// `expected_rows` is a guess used to size the buffers once; it is capped at the row limit.
    pub(crate) fn new(kind: FileKind, expected_rows: usize) -> Self {
        Collector {
            kind,
            titles: None,
            import_count: 0,
            valid: UniqueRows::with_capacity(expected_rows.min(MAX_DATA_ROWS)),
            failures: Vec::new(),
        }
    }

    /// The title row, once seen.
    pub(crate) fn titles(&self) -> Option<&Titles> {
        self.titles.as_ref()
    }

    /// Takes the row on `line`. Fails only for the whole file: bad titles, or too many rows.
    pub(crate) fn push(&mut self, line: u64, cells: &impl Cells) -> Result<(), Error> {
        if cells.is_blank() {
            return Ok(());
        }
        let Some(titles) = &self.titles else {
            let titles = Titles::parse((0..cells.width()).map(|index| cells.cell(index)))?;
            self.titles = Some(titles);
            return Ok(());
        };
        if self.import_count == MAX_DATA_ROWS {
            return Err(too_many_rows());
        }
        self.import_count += 1;
        let phone_cell = cells.cell(titles.phone());
        let outcome = validate(titles, cells).and_then(|(phone, fields)| {
            let row = ParsedRow {
                row: line,
                phone,
                phone_as_given: phone_cell.into(),
                fields,
            };
            if self.valid.insert(row) {
                Ok(())
            } else {
                Err(reason::DUPLICATE_IN_FILE)
            }
        });
        if let Err(why) = outcome {
            self.failures.push(RowFailure::new(line, phone_cell, why));
        }
        Ok(())
    }

    /// The result; 400 when the file had no title row at all.
    pub(crate) fn finish(self) -> Result<ParsedFile, Error> {
        if self.titles.is_none() {
            return Err(Error::invalid("file is empty"));
        }
        Ok(ParsedFile {
            kind: self.kind,
            import_count: self.import_count,
            rows: self.valid.rows,
            failures: self.failures,
        })
    }
}

/// Valid rows with distinct numbers, and an index of those numbers that holds no copy of them.
struct UniqueRows {
    rows: Vec<ParsedRow>,
    /// Positions in `rows`, hashed by phone number.
    positions: HashTable<u32>,
    /// Randomly seeded, so a crafted file cannot aim at collisions.
    hasher: DefaultHashBuilder,
}

impl UniqueRows {
    fn with_capacity(capacity: usize) -> Self {
        UniqueRows {
            rows: Vec::with_capacity(capacity),
            positions: HashTable::with_capacity(capacity),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// Adds `row` unless a row with its number is there already; false then.
    fn insert(&mut self, row: ParsedRow) -> bool {
        let UniqueRows {
            rows,
            positions,
            hasher,
        } = self;
        let hash = hasher.hash_one(row.phone.as_str());
        let same_number = |&at: &u32| rows.get(at as usize).is_some_and(|r| r.phone == row.phone);
        if positions.find(hash, same_number).is_some() {
            return false;
        }
        let rehash = |&at: &u32| {
            rows.get(at as usize)
                .map_or(0, |r| hasher.hash_one(r.phone.as_str()))
        };
        // Rows are capped at MAX_DATA_ROWS, so a position always fits in u32.
        positions.insert_unique(hash, rows.len() as u32, rehash);
        rows.push(row);
        true
    }
}

/// The D7 checks of one data row, before duplicates.
fn validate(titles: &Titles, cells: &impl Cells) -> Result<(Phone, ContactFields), &'static str> {
    let phone = Phone::parse(formula::unguard(cells.cell(titles.phone())))
        .map_err(|_| reason::INVALID_PHONE)?;
    let mut fields = ContactFields::with_capacity(titles.field_count());
    for (index, name) in titles.fields() {
        let value = formula::unguard(cells.cell(index));
        if !value.is_empty() {
            fields.set_field(name, value).map_err(|e| e.reason())?;
        }
    }
    if titles.custom_count() > MAX_CUSTOM_FIELDS {
        fields.check_count().map_err(|e| e.reason())?;
    }
    Ok((phone, fields))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::reasons;

    struct Row<'a>(&'a [&'a str]);

    impl Cells for Row<'_> {
        fn width(&self) -> usize {
            self.0.len()
        }
        fn cell(&self, index: usize) -> &str {
            self.0.get(index).copied().unwrap_or("")
        }
    }

    fn collect(rows: &[&[&str]]) -> Result<ParsedFile, Error> {
        let mut collector = Collector::new(FileKind::Csv, rows.len());
        for (index, cells) in rows.iter().enumerate() {
            collector.push(index as u64 + 1, &Row(cells))?;
        }
        collector.finish()
    }

    #[test]
    fn first_valid_occurrence_wins() {
        let long = "x".repeat(101);
        let file = collect(&[
            &["phone", "name"],
            &["13800138000", &long],
            &["138-0013-8000", "A"],
            &["13800138000", "B"],
            &["12", "C"],
            &["", "D"],
        ])
        .unwrap();
        assert_eq!(file.import_count, 5);
        assert_eq!(file.rows.len(), 1);
        assert_eq!(file.rows[0].row, 3);
        assert_eq!(file.rows[0].phone_as_given, "138-0013-8000");
        assert_eq!(file.rows[0].fields.get("customerName"), Some("A"));
        assert_eq!(
            reasons(&file),
            [
                (2, "13800138000", "field too long"),
                (4, "13800138000", "duplicate in file"),
                (5, "12", "invalid phoneNumber"),
                (6, "", "invalid phoneNumber"),
            ]
        );
    }

    #[test]
    fn blank_rows_are_skipped_and_titles_may_follow_them() {
        let file = collect(&[&[" ", ""], &["phone"], &["", " "], &["12345"], &[]]).unwrap();
        assert_eq!(file.import_count, 1);
        assert_eq!(file.rows[0].row, 4);
        assert_eq!(collect(&[&[" "]]).unwrap_err().to_string(), "file is empty");
    }

    #[test]
    fn too_many_custom_fields() {
        let titles: Vec<String> = (0..31).map(|i| format!("f{i}")).collect();
        let mut header = vec!["phone"];
        header.extend(titles.iter().map(String::as_str));
        let mut full = vec!["12345"];
        full.extend(std::iter::repeat_n("v", 31));
        let mut sparse = vec!["12346", ""];
        sparse.extend(std::iter::repeat_n("v", 30));
        let file = collect(&[&header, &full, &sparse]).unwrap();
        assert_eq!(reasons(&file), [(2, "12345", "too many fields")]);
        assert_eq!(file.rows.len(), 1);
    }

    #[test]
    fn formula_guard_is_undone_on_every_cell() {
        let file = collect(&[&["phone", "note"], &["'+8613800138000", "'=SUM(A1)"]]).unwrap();
        assert_eq!(file.rows[0].phone.as_str(), "+8613800138000");
        assert_eq!(file.rows[0].fields.get("note"), Some("=SUM(A1)"));
    }

    #[test]
    fn failure_serialises_as_a_details_entry() {
        let failure = RowFailure::new(3, "abc", reason::INVALID_PHONE);
        assert_eq!(
            serde_json::to_string(&failure).unwrap(),
            r#"{"row":3,"phoneNumber":"abc","reason":"invalid phoneNumber"}"#
        );
        let back: RowFailure =
            serde_json::from_str(r#"{"row":3,"phoneNumber":"abc","reason":"invalid phoneNumber"}"#)
                .unwrap();
        assert_eq!(back, failure);
        let long = "9".repeat(500);
        assert_eq!(
            RowFailure::new(1, &long, reason::INVALID_PHONE)
                .phone_number
                .len(),
            RowFailure::MAX_PHONE_CHARS
        );
    }
}

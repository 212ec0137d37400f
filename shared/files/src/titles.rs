//! The title row (D8): which field each column fills, shared by the CSV and `.xlsx` readers.
//!
//! Titles are trimmed and matched to field names case-insensitively (the phone, the known fields
//! and D15's `timeZone`), then to the aliases of D8.
//! Read-only columns (`id`, `status`, ...) and columns with an empty title are ignored. Any other
//! title must be a valid custom field name (D7); one that is not refuses the whole file with a 400
//! naming the column, because every row would fail the same way and the fix is in the title row.
//! A refusal never quotes a title: in a file without a title row it is data (a phone number).

use super::{too_many_columns, MAX_COLUMNS};
use outbound_model::contact::{
    FieldName, KNOWN_FIELDS, PHONE_FIELD, READ_ONLY_FIELDS, TIME_ZONE_FIELD,
};
use outbound_model::error::Error;
use outbound_model::Phone;

/// What one column of the file fills.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Column {
    Phone,
    /// A known field (canonical name) or a custom one (the title as written).
    Field(FieldName),
    Ignored,
}

/// The meaning of every column, by position.
#[derive(Debug)]
pub(crate) struct Titles {
    /// Number of columns in the title row, ignored ones included.
    width: usize,
    phone: usize,
    /// `(position, name)` of the field columns, sorted by name.
    fields: Vec<(usize, FieldName)>,
    custom: usize,
}

const ALIASES: [(&str, &str); 11] = [
    ("phone", PHONE_FIELD),
    ("mobile", PHONE_FIELD),
    ("手机号", PHONE_FIELD),
    ("电话", PHONE_FIELD),
    ("手机号码", PHONE_FIELD),
    ("name", "customerName"),
    ("姓名", "customerName"),
    ("客户姓名", "customerName"),
    ("地址", "address"),
    ("订单金额", "orderAmount"),
    ("amount", "orderAmount"),
];

impl Titles {
    /// Maps a title row. Fails with 400 when there is no phone column, a title repeats a field,
    /// or a title is not a usable field name; with 413 past [`MAX_COLUMNS`].
    pub(crate) fn parse<'a>(titles: impl IntoIterator<Item = &'a str>) -> Result<Self, Error> {
        let mut columns = Vec::new();
        let mut phone = None;
        for (index, raw) in titles.into_iter().enumerate() {
            if index >= MAX_COLUMNS {
                return Err(too_many_columns());
            }
            let column = column_for(raw.trim(), index)?;
            let earlier = match &column {
                Column::Phone => phone.replace(index),
                Column::Field(name) => columns
                    .iter()
                    .position(|seen| matches!(seen, Column::Field(other) if other == name)),
                Column::Ignored => None,
            };
            if let Some(earlier) = earlier {
                return Err(Error::invalid(format!(
                    "column {} repeats the title of column {}",
                    index + 1,
                    earlier + 1
                )));
            }
            columns.push(column);
        }
        let phone =
            phone.ok_or_else(|| Error::invalid(format!("file has no {PHONE_FIELD} column")))?;
        let width = columns.len();
        let mut fields: Vec<(usize, FieldName)> = columns
            .into_iter()
            .enumerate()
            .filter_map(|(index, column)| match column {
                Column::Field(name) => Some((index, name)),
                _ => None,
            })
            .collect();
        fields.sort_by(|(_, a), (_, b)| a.as_str().cmp(b.as_str()));
        let custom = fields.iter().filter(|(_, name)| name.is_custom()).count();
        Ok(Titles {
            width,
            phone,
            fields,
            custom,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.width
    }

    /// How many columns fill a field other than the phone.
    pub(crate) fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// How many columns hold custom fields: a row can only have too many when this is over the limit.
    pub(crate) fn custom_count(&self) -> usize {
        self.custom
    }

    /// The position of the phone column.
    pub(crate) fn phone(&self) -> usize {
        self.phone
    }

    /// `(position, field name)` of every column that fills a field other than the phone, in name
    /// order (the order [`outbound_model::ContactFields`] keeps them in).
    pub(crate) fn fields(&self) -> impl Iterator<Item = (usize, &FieldName)> {
        self.fields.iter().map(|(index, name)| (*index, name))
    }
}

fn column_for(title: &str, index: usize) -> Result<Column, Error> {
    if title.is_empty()
        || READ_ONLY_FIELDS
            .iter()
            .any(|f| f.eq_ignore_ascii_case(title))
    {
        return Ok(Column::Ignored);
    }
    let canonical = [PHONE_FIELD, TIME_ZONE_FIELD]
        .into_iter()
        .chain(KNOWN_FIELDS.iter().map(|(name, _)| *name))
        .find(|name| name.eq_ignore_ascii_case(title))
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(alias, _)| alias.eq_ignore_ascii_case(title))
                .map(|(_, field)| *field)
        });
    match canonical {
        Some(PHONE_FIELD) => Ok(Column::Phone),
        Some(known) => FieldName::parse(known)
            .map(Column::Field)
            .map_err(Error::from),
        None => FieldName::parse(title)
            .map(Column::Field)
            .map_err(|_| not_a_title(title, index)),
    }
}

/// The 400 of a title that is no field name. It says what is wrong and where, never what the
/// cell holds: a file without a title row has data there, a phone number or a name.
fn not_a_title(title: &str, index: usize) -> Error {
    let column = index + 1;
    if Phone::parse(title).is_ok() {
        return Error::invalid(format!(
            "file has no title row: column {column} of the first row holds a phone number; \
             put a row of titles (phoneNumber, customerName, ...) first"
        ));
    }
    Error::invalid(format!(
        "column {column} title is not a field name: use phoneNumber, customerName, address, \
         orderAmount, timeZone, or a custom name of letters, digits and _ starting with a letter, \
         at most 64 characters"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(titles: &[&str]) -> Result<Titles, Error> {
        Titles::parse(titles.iter().copied())
    }

    #[test]
    fn names_aliases_and_case() {
        let titles = parse(&[
            " 手机号 ",
            "NAME",
            "地址",
            "Amount",
            "vip_level",
            "STATUS",
            "",
            "Id",
        ])
        .unwrap();
        assert_eq!(titles.phone(), 0);
        assert_eq!(titles.len(), 8);
        assert_eq!(titles.custom_count(), 1);
        let fields: Vec<_> = titles
            .fields()
            .map(|(index, name)| (index, name.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                (2, "address"),
                (1, "customerName"),
                (3, "orderAmount"),
                (4, "vip_level")
            ]
        );
        for alias in [
            "phone",
            "Mobile",
            "电话",
            "手机号码",
            "phonenumber",
            "PhoneNumber",
        ] {
            assert_eq!(parse(&[alias]).unwrap().phone(), 0, "{alias}");
        }
    }

    #[test]
    fn the_time_zone_title_is_the_field_in_any_case() {
        for title in ["timeZone", "TimeZone", "TIMEZONE", " timezone "] {
            let titles = parse(&["phone", title]).unwrap();
            let fields: Vec<_> = titles.fields().map(|(_, name)| name.as_str()).collect();
            assert_eq!(fields, [TIME_ZONE_FIELD], "{title:?}");
        }
        assert_eq!(
            parse(&["phone", "timezone", "TimeZone"])
                .unwrap_err()
                .to_string(),
            "column 3 repeats the title of column 2"
        );
    }

    #[test]
    fn refusals() {
        let message = |titles: &[&str]| parse(titles).unwrap_err().to_string();
        assert_eq!(
            message(&["name", "address"]),
            "file has no phoneNumber column"
        );
        assert_eq!(message(&[]), "file has no phoneNumber column");
        assert_eq!(
            message(&["phone", "mobile"]),
            "column 2 repeats the title of column 1"
        );
        assert_eq!(
            message(&["phone", "姓名", "address", "customername"]),
            "column 4 repeats the title of column 2"
        );
        let not_a_name = "title is not a field name: use phoneNumber, customerName, address, \
             orderAmount, timeZone, or a custom name of letters, digits and _ starting with a \
             letter, at most 64 characters";
        assert_eq!(
            message(&["phone", "备注"]),
            format!("column 2 {not_a_name}")
        );
        assert_eq!(message(&["phone", "1st"]), format!("column 2 {not_a_name}"));
        let wide: Vec<String> = (0..=MAX_COLUMNS).map(|i| format!("c{i}")).collect();
        let error = Titles::parse(wide.iter().map(String::as_str)).unwrap_err();
        assert_eq!(error.status_code(), 413);
    }

    /// A file without a title row has data where the titles should be: the refusal says so and
    /// where, and quotes none of it.
    #[test]
    fn a_refusal_never_quotes_the_cell() {
        let message = |titles: &[&str]| parse(titles).unwrap_err().to_string();
        assert_eq!(
            message(&["+1 212 736 3100", "Ada Lovelace"]),
            "file has no title row: column 1 of the first row holds a phone number; \
             put a row of titles (phoneNumber, customerName, ...) first"
        );
        assert_eq!(
            message(&["Ada Lovelace", "13800138000"]),
            format!(
                "column 1 {}",
                "title is not a field name: use phoneNumber, customerName, address, orderAmount, \
                 timeZone, or a custom name of letters, digits and _ starting with a letter, at \
                 most 64 characters"
            )
        );
        for titles in [
            &["+1 212 736 3100", "Ada Lovelace"][..],
            &["Ada Lovelace", "13800138000"],
            &["phone", "vip", "vip"],
            &["phone", "ada@example.com"],
        ] {
            let message = message(titles);
            for cell in titles.iter().filter(|cell| **cell != "phone") {
                assert!(!message.contains(cell), "{message} quotes {cell}");
            }
            assert!(!message.contains("2127363100"), "{message}");
        }
    }

    #[test]
    fn custom_names_are_case_sensitive_and_ignored_columns_may_repeat() {
        let titles = parse(&["phone", "vip", "Vip", "id", "ID", "", ""]).unwrap();
        assert_eq!(titles.fields().count(), 2);
    }
}

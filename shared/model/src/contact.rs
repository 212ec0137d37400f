//! Contacts (D7): the phone number, the known fields, custom fields, and their rules.

use super::numbers::{e164, Country};
use super::{text, Id, Phone, Timestamp};
use crate::error::Error;
use chrono_tz::Tz;
use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The known string fields and the most characters each may hold.
pub const KNOWN_FIELDS: [(&str, usize); 3] = [
    ("customerName", 100),
    ("address", 500),
    ("orderAmount", 100),
];
/// The reserved field that names the zone a contact is called in (D15): any field's rules, and
/// its value must be an IANA zone name. Stored, shown, imported and exported like a custom
/// field, so the export's fixed columns stay those of D8.
pub const TIME_ZONE_FIELD: &str = "timeZone";
/// Fields a client may send but never set (D6, D8): ignored on input, never custom fields.
pub const READ_ONLY_FIELDS: [&str; 12] = [
    "id",
    "e164",
    "lastReason",
    "skipReason",
    "contactId",
    "dataSourceId",
    "status",
    "callCount",
    "contactCount",
    "successCount",
    "createTime",
    "updateTime",
];
pub const PHONE_FIELD: &str = "phoneNumber";
pub const MAX_CUSTOM_FIELDS: usize = 30;
pub const MAX_CUSTOM_CHARS: usize = 1000;

/// Why a contact's fields are refused. The import report uses [`FieldError::reason`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    #[error("{field} must be at most {max} characters")]
    TooLong { field: String, max: usize },
    #[error("too many custom fields: at most {MAX_CUSTOM_FIELDS}")]
    TooMany,
    #[error("invalid field name {0:?}: letters, digits and _, starting with a letter, at most 64")]
    BadName(String),
    #[error("{0} must be a string")]
    NotString(String),
    #[error("timeZone must be an IANA time zone name, e.g. America/New_York")]
    BadZone,
}

impl FieldError {
    /// The short reason of D8 for an import report row.
    pub fn reason(&self) -> &'static str {
        match self {
            FieldError::TooLong { .. } => "field too long",
            FieldError::TooMany => "too many fields",
            FieldError::BadName(_) => "invalid field name",
            FieldError::NotString(_) => "invalid field value",
            FieldError::BadZone => "invalid timeZone",
        }
    }
}

impl From<FieldError> for Error {
    fn from(error: FieldError) -> Self {
        Error::invalid(error.to_string())
    }
}

/// A field name that passed the D7 rules: a known field, or a custom name of ASCII letters,
/// digits and `_`, starting with a letter, at most 64 characters, that is neither the phone nor
/// a read-only name. Carries the most characters its values may hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldName {
    name: CompactString,
    max_chars: usize,
    custom: bool,
}

impl FieldName {
    pub fn parse(name: &str) -> Result<Self, FieldError> {
        let (max_chars, custom) = match KNOWN_FIELDS.iter().find(|(known, _)| *known == name) {
            Some((_, max)) => (*max, false),
            None if is_custom_name(name) => (MAX_CUSTOM_CHARS, true),
            None => return Err(FieldError::BadName(name.to_owned())),
        };
        Ok(FieldName {
            name: name.into(),
            max_chars,
            custom,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// Whether the name counts against [`MAX_CUSTOM_FIELDS`].
    pub fn is_custom(&self) -> bool {
        self.custom
    }
}

/// Every field of a contact except its phone number: the known ones and up to 30 custom ones.
/// Values are trimmed; an empty value is no value. Serialised as a map from name to value.
///
/// Held as one vector sorted by name, of compact strings that keep most names and values inline:
/// a contact read from a file costs one allocation for its fields, not one per name and value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContactFields(Vec<(CompactString, CompactString)>);

impl ContactFields {
    /// Sets `name` to `value` after checking both. An empty value removes the field.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), FieldError> {
        self.set_field(&FieldName::parse(name)?, value)
    }

    /// Sets an already checked field name to `value` after checking the value's length. An empty
    /// value removes the field.
    pub fn set_field(&mut self, name: &FieldName, value: &str) -> Result<(), FieldError> {
        let value = text::trim(value);
        if name.as_str() == TIME_ZONE_FIELD
            && !value.is_empty()
            && value.parse::<chrono_tz::Tz>().is_err()
        {
            return Err(FieldError::BadZone);
        }
        // A character is at least one byte: only values longer in bytes need counting.
        if value.len() > name.max_chars && value.chars().count() > name.max_chars {
            return Err(FieldError::TooLong {
                field: name.as_str().to_owned(),
                max: name.max_chars,
            });
        }
        // Files set their fields in name order, so most calls append.
        let appends = self
            .0
            .last()
            .is_none_or(|(last, _)| last.as_str() < name.as_str());
        if appends {
            if !value.is_empty() {
                self.0.push((name.name.clone(), value.into()));
            }
            return Ok(());
        }
        match (self.position(name.as_str()), value.is_empty()) {
            (Ok(at), true) => {
                self.0.remove(at);
            }
            (Ok(at), false) => self.0[at].1 = value.into(),
            (Err(_), true) => {}
            (Err(at), false) => self.0.insert(at, (name.name.clone(), value.into())),
        }
        Ok(())
    }

    /// Fails when more custom fields are set than allowed.
    pub fn check_count(&self) -> Result<(), FieldError> {
        let custom = self
            .0
            .iter()
            .filter(|(name, _)| !KNOWN_FIELDS.iter().any(|(known, _)| known == name))
            .count();
        if custom > MAX_CUSTOM_FIELDS {
            Err(FieldError::TooMany)
        } else {
            Ok(())
        }
    }

    /// The names of the custom fields set, in name order.
    pub fn custom_names(&self) -> impl Iterator<Item = &str> {
        self.0
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(|name| !KNOWN_FIELDS.iter().any(|(known, _)| known == name))
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        let at = self.position(name).ok()?;
        Some(self.0[at].1.as_str())
    }

    /// `(name, value)` pairs, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Room for `count` fields, so filling them allocates once.
    pub fn with_capacity(count: usize) -> Self {
        ContactFields(Vec::with_capacity(count))
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(held, _)| held.as_str().cmp(name))
    }
}

impl Serialize for ContactFields {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for ContactFields {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<CompactString, CompactString>::deserialize(deserializer)?;
        Ok(ContactFields(map.into_iter().collect()))
    }
}

fn is_custom_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !READ_ONLY_FIELDS.contains(&name)
        && name != PHONE_FIELD
}

/// A contact body from the API, parsed: the phone number (if sent) and the fields to set.
#[derive(Debug, Default)]
pub struct ContactPatch {
    pub phone: Option<Phone>,
    /// `(name, value)` pairs in body order, already checked one by one.
    pub fields: Vec<(String, String)>,
}

impl ContactPatch {
    /// Parses a JSON object body. Read-only fields, and `null` like everywhere else in a body,
    /// are ignored; any other non-string value is 400.
    pub fn from_json(body: &Map<String, Value>) -> Result<Self, Error> {
        let mut patch = ContactPatch::default();
        let mut probe = ContactFields::default();
        for (name, value) in body {
            if READ_ONLY_FIELDS.contains(&name.as_str()) || value.is_null() {
                continue;
            }
            let Value::String(text) = value else {
                return Err(FieldError::NotString(name.clone()).into());
            };
            if name == PHONE_FIELD {
                patch.phone = Some(Phone::parse(text)?);
            } else {
                probe.set(name, text)?;
                patch.fields.push((name.clone(), text.clone()));
            }
        }
        Ok(patch)
    }

    /// Applies the fields to `base`, checking the custom field count of the result.
    pub fn apply_to(&self, mut base: ContactFields) -> Result<ContactFields, FieldError> {
        for (name, value) in &self.fields {
            base.set(name, value)?;
        }
        base.check_count()?;
        Ok(base)
    }
}

/// Latest outcome of a contact over every task that dialled it (D7): 0 before any, else the
/// code of its latest call's [`Outcome`](crate::call::Outcome), spelled there once.
pub mod status {
    use crate::call::Outcome;
    pub const NOT_DIALLED: u8 = 0;
    pub const SUCCESS: u8 = Outcome::Success as u8;
    pub const FAILED: u8 = Outcome::Failed as u8;
    pub const NO_ANSWER: u8 = Outcome::NoAnswer as u8;

    /// Every status with its name, in code order: `NOT_DIALLED`, then the outcomes' own.
    pub fn named() -> Vec<(u8, &'static str)> {
        std::iter::once((NOT_DIALLED, "NOT_DIALLED"))
            .chain(Outcome::ALL.map(|outcome| (outcome.code(), outcome.name())))
            .collect()
    }
}

/// The schema of a contact's status (D7): a code of [`status`], each named.
#[cfg(feature = "openapi")]
pub struct ContactStatus;

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for ContactStatus {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let codes = status::named();
        let description = format!(
            "The latest outcome of a contact over all tasks (D7): {}.",
            crate::schema::code_list(&codes)
        );
        crate::schema::coded(description, &codes)
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for ContactStatus {}

/// A stored contact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contact {
    pub id: Id,
    pub data_source_id: Id,
    pub phone: Phone,
    #[serde(default)]
    pub fields: ContactFields,
    #[serde(default)]
    pub status: u8,
    #[serde(default)]
    pub call_count: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Contact {
    /// The API shape: the fixed fields with the known and custom fields flattened beside them.
    /// `country` is the data source's default country, else the tenant's (D14).
    pub fn view(&self, zone: Tz, country: Option<Country>) -> ContactView {
        let known = |name: &str| self.fields.get(name).map(str::to_owned);
        ContactView {
            id: self.id.clone(),
            data_source_id: self.data_source_id.clone(),
            phone_number: self.phone.as_str().to_owned(),
            e164: e164(&self.phone, country),
            customer_name: known("customerName"),
            address: known("address"),
            order_amount: known("orderAmount"),
            custom: self
                .fields
                .iter()
                .filter(|(name, _)| !KNOWN_FIELDS.iter().any(|(known, _)| known == name))
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
            status: self.status,
            call_count: self.call_count,
            create_time: self.created_at.display(zone),
            update_time: self.updated_at.display(zone),
        }
    }
}

/// A contact as the API shows it: the fixed fields, the known ones (null when unset) and the
/// custom ones beside them (D6).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ContactView {
    pub id: Id,
    pub data_source_id: Id,
    /// Digits, as normalised on input.
    pub phone_number: String,
    /// The number in E.164 when it is valid, read in the data source's (else the tenant's)
    /// default country unless written with `+` (D14). Read-only.
    pub e164: Option<String>,
    pub customer_name: Option<String>,
    pub address: Option<String>,
    pub order_amount: Option<String>,
    /// Custom fields: up to 30, names of letters, digits and `_` starting with a letter.
    #[serde(flatten)]
    pub custom: std::collections::BTreeMap<String, String>,
    /// The latest outcome over all tasks (D7).
    #[cfg_attr(feature = "openapi", schema(value_type = ContactStatus))]
    pub status: u8,
    pub call_count: u32,
    pub create_time: String,
    pub update_time: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(body: Value) -> Result<ContactPatch, Error> {
        ContactPatch::from_json(body.as_object().unwrap())
    }

    #[test]
    fn statuses_are_not_dialled_then_the_outcomes() {
        assert_eq!(
            status::named(),
            [
                (0, "NOT_DIALLED"),
                (1, "SUCCESS"),
                (2, "FAILED"),
                (3, "NO_ANSWER")
            ]
        );
    }

    #[test]
    fn known_custom_and_read_only_fields() {
        let p = patch(
            json!({"phoneNumber": "138 0013 8000", "customerName": " Li ", "vip_level": "3",
            "status": 9, "id": "x", "callCount": "5"}),
        )
        .unwrap();
        assert_eq!(p.phone.as_ref().unwrap().as_str(), "13800138000");
        let fields = p.apply_to(ContactFields::default()).unwrap();
        assert_eq!(fields.get("customerName"), Some("Li"));
        assert_eq!(fields.get("vip_level"), Some("3"));
        assert_eq!(fields.get("status"), None);
        assert_eq!(fields.get("contactCount"), None);
        assert_eq!(fields.get("address"), None);
    }

    #[test]
    fn refusals_name_the_field() {
        let cases = [
            (json!({"phoneNumber": 138}), "phoneNumber must be a string"),
            (json!({"phoneNumber": "abc"}), "invalid phoneNumber"),
            (json!({"age": 3}), "age must be a string"),
            (json!({"customerName": "x".repeat(101)}), "customerName must be at most 100 characters"),
            (json!({"note": "x".repeat(1001)}), "note must be at most 1000 characters"),
            (json!({"1bad": "x"}), "invalid field name \"1bad\": letters, digits and _, starting with a letter, at most 64"),
        ];
        for (body, message) in cases {
            assert_eq!(patch(body).unwrap_err().to_string(), message);
        }
    }

    #[test]
    fn thirty_custom_fields_at_most() {
        let mut body = Map::new();
        for i in 0..30 {
            body.insert(format!("f{i}"), json!("v"));
        }
        body.insert("customerName".into(), json!("known fields do not count"));
        let p = ContactPatch::from_json(&body).unwrap();
        assert!(p.apply_to(ContactFields::default()).is_ok());
        body.insert("f30".into(), json!("v"));
        let p = ContactPatch::from_json(&body).unwrap();
        assert_eq!(
            p.apply_to(ContactFields::default()),
            Err(FieldError::TooMany)
        );
    }

    #[test]
    fn fields_stay_sorted_whatever_order_they_are_set_in() {
        let mut fields = ContactFields::default();
        for (name, value) in [
            ("zeta", "1"),
            ("address", "a"),
            ("mid", "m"),
            ("address", "b"),
            ("zeta", " "),
            ("alpha", ""),
        ] {
            fields.set(name, value).unwrap();
        }
        let pairs: Vec<_> = fields.iter().collect();
        assert_eq!(pairs, [("address", "b"), ("mid", "m")]);
        assert_eq!(fields.get("mid"), Some("m"));
        assert_eq!(fields.get("zeta"), None);
        let json = serde_json::to_string(&fields).unwrap();
        assert_eq!(json, r#"{"address":"b","mid":"m"}"#);
        assert_eq!(
            serde_json::from_str::<ContactFields>(&json).unwrap(),
            fields
        );
    }

    #[test]
    fn the_time_zone_field_takes_only_zone_names() {
        let fields = patch(json!({"timeZone": " America/Chicago "}))
            .unwrap()
            .apply_to(ContactFields::default())
            .unwrap();
        assert_eq!(fields.get(TIME_ZONE_FIELD), Some("America/Chicago"));
        assert_eq!(
            patch(json!({"timeZone": "Chicago"}))
                .unwrap_err()
                .to_string(),
            "timeZone must be an IANA time zone name, e.g. America/New_York"
        );
        assert_eq!(FieldError::BadZone.reason(), "invalid timeZone");
        // `e164` is worked out, never set (D14).
        let ignored = patch(json!({"e164": "+1"})).unwrap();
        assert!(ignored.fields.is_empty());
    }

    #[test]
    fn empty_value_clears_a_field() {
        let base = patch(json!({"address": "a"}))
            .unwrap()
            .apply_to(ContactFields::default())
            .unwrap();
        let cleared = patch(json!({"address": "  "}))
            .unwrap()
            .apply_to(base)
            .unwrap();
        assert_eq!(cleared.get("address"), None);
    }
}

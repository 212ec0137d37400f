//! Names and descriptions (D6): trimmed, counted in characters.

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// `value` without surrounding white space, as `str::trim`, but answered at once for the usual
/// value that starts and ends with a visible ASCII character: imports trim every cell.
pub fn trim(value: &str) -> &str {
    match value.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => value,
        _ => value.trim(),
    }
}

/// A record name: trimmed, 1-100 characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Name(String);

impl Name {
    pub const MAX_CHARS: usize = 100;

    /// `field` names the input in the error message (`dataSourceName`, `taskName`).
    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(Error::invalid(format!("{field} is empty")));
        }
        if trimmed.chars().count() > Self::MAX_CHARS {
            return Err(Error::invalid(format!(
                "{field} must be 1-{} characters",
                Self::MAX_CHARS
            )));
        }
        Ok(Name(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The fuzzy name filter of the lists (D5): `fragment`, already lowercased, is a substring
    /// of the name, ignoring case.
    pub fn contains_lowercase(&self, fragment: &str) -> bool {
        self.0.to_lowercase().contains(fragment)
    }
}

/// An optional description: trimmed, at most 500 characters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(transparent)]
pub struct Description(String);

impl Description {
    pub const MAX_CHARS: usize = 500;

    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        let trimmed = raw.trim();
        if trimmed.chars().count() > Self::MAX_CHARS {
            return Err(Error::invalid(format!(
                "{field} must be at most {} characters",
                Self::MAX_CHARS
            )));
        }
        Ok(Description(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_matches_str_trim() {
        for value in [
            "",
            " ",
            "a",
            " a",
            "a ",
            "\u{3000}客户\u{3000}",
            "a\u{a0}",
            "\u{2028}b",
            "号",
            "a b",
            "\t1\r\n",
            "x\u{85}",
        ] {
            assert_eq!(trim(value), value.trim(), "{value:?}");
        }
    }

    #[test]
    fn names_are_trimmed_and_counted_in_characters() {
        assert_eq!(Name::parse("n", "  a  ").unwrap().as_str(), "a");
        assert_eq!(
            Name::parse("n", "   ").unwrap_err().to_string(),
            "n is empty"
        );
        assert!(Name::parse("n", &"名".repeat(100)).is_ok());
        assert_eq!(
            Name::parse("n", &"a".repeat(101)).unwrap_err().to_string(),
            "n must be 1-100 characters"
        );
    }

    #[test]
    fn descriptions_are_bounded() {
        assert!(Description::parse("d", &"x".repeat(500)).is_ok());
        assert!(Description::parse("d", &"x".repeat(501)).is_err());
        assert_eq!(Description::parse("d", "").unwrap().as_str(), "");
    }
}

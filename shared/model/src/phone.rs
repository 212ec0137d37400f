//! Phone numbers (D7): normalised once, compared and stored only in normal form.

use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A normalised phone number: an optional leading `+`, then 5-20 ASCII digits. At most 21
/// bytes, so it is held inline: parsing a file's numbers allocates nothing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(CompactString);

const MIN_DIGITS: usize = 5;
const MAX_DIGITS: usize = 20;

/// The one reason a phone number is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid phoneNumber")]
pub struct InvalidPhone;

/// A refused number in a request: 400 with the one message of D7.
impl From<InvalidPhone> for crate::error::Error {
    fn from(error: InvalidPhone) -> Self {
        crate::error::Error::invalid(error.to_string())
    }
}

impl Phone {
    /// Drops surrounding space and the separators space, `-`, `.`, `(`, `)`; keeps one leading `+`.
    pub fn parse(raw: &str) -> Result<Self, InvalidPhone> {
        let trimmed = super::text::trim(raw);
        let digits_from = usize::from(trimmed.starts_with('+'));
        let mut buffer = [b'+'; 1 + MAX_DIGITS];
        let normal = &mut buffer[..digits_from + MAX_DIGITS];
        let mut len = digits_from;
        for byte in trimmed.bytes().skip(digits_from) {
            match byte {
                // Past MAX_DIGITS there is no room left: refused without reading further.
                b'0'..=b'9' => {
                    *normal.get_mut(len).ok_or(InvalidPhone)? = byte;
                    len += 1;
                }
                b' ' | b'-' | b'.' | b'(' | b')' => {}
                _ => return Err(InvalidPhone),
            }
        }
        if len - digits_from < MIN_DIGITS {
            return Err(InvalidPhone);
        }
        let text = std::str::from_utf8(&normal[..len]).map_err(|_| InvalidPhone)?;
        Ok(Phone(CompactString::new(text)))
    }

    /// The substring a fuzzy `phoneNumber` filter looks for: the query with separators removed.
    pub fn filter_fragment(raw: &str) -> String {
        raw.trim()
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
            .collect()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as E.164 writes it, with its leading `+` (a number stored without one is
    /// read as international).
    pub fn e164(&self) -> String {
        match self.0.strip_prefix('+') {
            Some(_) => self.0.to_string(),
            None => format!("+{}", self.0),
        }
    }
}

impl fmt::Display for Phone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Phone {
    type Error = InvalidPhone;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Phone::parse(&value)
    }
}

impl From<Phone> for String {
    fn from(phone: Phone) -> Self {
        phone.0.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_separators_and_keeps_plus() {
        let cases = [
            ("13800138000", "13800138000"),
            (" +86 138-0013.8000 ", "+8613800138000"),
            ("(010) 1234-5678", "01012345678"),
            ("12345", "12345"),
            ("+12345678901234567890", "+12345678901234567890"),
        ];
        for (raw, normal) in cases {
            assert_eq!(Phone::parse(raw).unwrap().as_str(), normal, "{raw}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for raw in [
            "",
            "   ",
            "1234",
            "123456789012345678901",
            "+123456789012345678901",
            "1-2-3-4-5-6-7-8-9-0-1-2-3-4-5-6-7-8-9-0-1",
            "++12345",
            "12+345",
            "1234a5",
            "+",
            "１２３４５",
            "123_456",
            "+-",
        ] {
            assert_eq!(Phone::parse(raw), Err(InvalidPhone), "{raw:?}");
        }
    }

    #[test]
    fn filter_fragment_drops_separators() {
        assert_eq!(Phone::filter_fragment(" 138-00 "), "13800");
        assert_eq!(Phone::filter_fragment("+86"), "+86");
    }
}

//! Phone numbers (D7): normalised once, compared and stored only in normal form.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A normalised phone number: an optional leading `+`, then 5-20 ASCII digits.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

/// The one reason a phone number is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid phoneNumber")]
pub struct InvalidPhone;

impl Phone {
    /// Drops surrounding space and the separators space, `-`, `.`, `(`, `)`; keeps one leading `+`.
    pub fn parse(raw: &str) -> Result<Self, InvalidPhone> {
        let trimmed = raw.trim();
        let (plus, rest) = match trimmed.strip_prefix('+') {
            Some(rest) => ("+", rest),
            None => ("", trimmed),
        };
        let mut digits = String::with_capacity(rest.len() + 1);
        digits.push_str(plus);
        for c in rest.chars() {
            match c {
                '0'..='9' => digits.push(c),
                ' ' | '-' | '.' | '(' | ')' => {}
                _ => return Err(InvalidPhone),
            }
        }
        let count = digits.len() - plus.len();
        if (5..=20).contains(&count) {
            Ok(Phone(digits))
        } else {
            Err(InvalidPhone)
        }
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
        phone.0
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

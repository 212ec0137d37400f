//! The formula guard of D27 (amending D8): a CSV cell that a spreadsheet could take for a
//! formula gets a leading `'`, unless it is a plain number or a phone number, which a spreadsheet
//! cannot run and which must keep its data (`+12127363100` stays as it is). `.xlsx` cells are
//! typed (text is a string cell, never run) and are never prefixed. Imported cells lose a guard
//! again, so an export imports back unchanged, old exports (whose numbers were guarded) included.

/// The first characters that make a spreadsheet read a cell as a formula.
const TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether `value` must be written to a CSV with a leading `'`: it starts with a trigger and is
/// not [`number_like`].
pub(crate) fn needs_guard(value: &str) -> bool {
    value.starts_with(TRIGGERS) && !number_like(value)
}

/// A plain number or a phone number: an optional leading `+` or `-`, then digits, spaces, dots,
/// dashes and parentheses, with at least one digit. No letter, so no function a formula could
/// call.
fn number_like(value: &str) -> bool {
    let rest = value.strip_prefix(['+', '-']).unwrap_or(value);
    rest.bytes().any(|b| b.is_ascii_digit())
        && rest
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b' ' | b'.' | b'-' | b'(' | b')'))
}

/// `value` with an export's guard removed: a leading `'` followed by a trigger character.
pub(crate) fn unguard(value: &str) -> &str {
    match value.strip_prefix('\'') {
        Some(rest) if rest.starts_with(TRIGGERS) => rest,
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_formula_starts_that_are_no_number() {
        for value in [
            "=1+1",
            "=HYPERLINK(\"http://x\")",
            "+A1",
            "-A1",
            "-5 units",
            "@SUM(A1)",
            "\tx",
            "\t123",
            "\r123",
            "+",
            "-",
            "+ ",
            "+1e5",
            "+1,234",
            "=123",
        ] {
            assert!(needs_guard(value), "{value:?}");
        }
    }

    #[test]
    fn numbers_and_phone_numbers_keep_their_data() {
        for value in [
            "+12127363100",
            "+8613800138000",
            "-5",
            "-12.50",
            "+12.50",
            "+1 (212) 736-3100",
            "+44 20.7946.0958",
            "-(5)",
            "",
            "13800138000",
            "a=b",
            " =1",
            "'=1",
            "李",
        ] {
            assert!(!needs_guard(value), "{value:?}");
        }
    }

    #[test]
    fn unguard_drops_only_the_exports_quote() {
        // Exports before D27 guarded phone numbers too: they import as they were.
        assert_eq!(unguard("'+8613800138000"), "+8613800138000");
        assert_eq!(unguard("'-5"), "-5");
        assert_eq!(unguard("'=1"), "=1");
        assert_eq!(unguard("'\tx"), "\tx");
        assert_eq!(unguard("'quoted'"), "'quoted'");
        assert_eq!(unguard("'"), "'");
        assert_eq!(unguard("''=1"), "''=1");
        assert_eq!(unguard("=1"), "=1");
        assert_eq!(unguard("+12127363100"), "+12127363100");
    }
}

//! The formula guard of D8: exported cells that a spreadsheet could take for a formula get a
//! leading `'`, and imported cells lose it again, so an export imports back unchanged.

/// The first characters that make a spreadsheet read a cell as a formula.
const TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether `value` must be written with a leading `'`.
pub(crate) fn needs_guard(value: &str) -> bool {
    value.starts_with(TRIGGERS)
}

/// `value` with the export's guard removed: a leading `'` followed by a trigger character.
pub(crate) fn unguard(value: &str) -> &str {
    match value.strip_prefix('\'') {
        Some(rest) if needs_guard(rest) => rest,
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_only_formula_starts() {
        for value in ["=1+1", "+8613800138000", "-5", "@SUM(A1)", "\tx", "\rx"] {
            assert!(needs_guard(value), "{value:?}");
        }
        for value in ["", "13800138000", "a=b", " =1", "'=1", "李"] {
            assert!(!needs_guard(value), "{value:?}");
        }
    }

    #[test]
    fn unguard_drops_only_the_exports_quote() {
        assert_eq!(unguard("'+8613800138000"), "+8613800138000");
        assert_eq!(unguard("'=1"), "=1");
        assert_eq!(unguard("'\tx"), "\tx");
        assert_eq!(unguard("'quoted'"), "'quoted'");
        assert_eq!(unguard("'"), "'");
        assert_eq!(unguard("''=1"), "''=1");
        assert_eq!(unguard("=1"), "=1");
    }
}

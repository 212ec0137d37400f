//! The tenant (D3): who a record belongs to. Parsed once, at the edge (the token's claim) or
//! when a stored or queued record is decoded, and trusted everywhere after.

use serde::{Deserialize, Serialize};

/// A tenant id. Holds only values safe to embed in storage keys.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Tenant(String);

/// A value that cannot be a tenant id. Where it came from decides what it means: a token's
/// claim is 403 (`auth`), a stored or queued record is a broken invariant (500).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a valid tenant id")]
pub struct InvalidTenant;

impl Tenant {
    /// Accepts 1-128 characters of letters, digits, `-`, `_`, `.`, `@` and `:`.
    pub fn parse(value: &str) -> Result<Self, InvalidTenant> {
        let ok = (1..=128).contains(&value.len())
            && value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.@:".contains(c));
        if ok {
            Ok(Tenant(value.to_owned()))
        } else {
            Err(InvalidTenant)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Tenant {
    type Error = InvalidTenant;
    fn try_from(value: String) -> Result<Self, InvalidTenant> {
        Tenant::parse(&value)
    }
}

impl From<Tenant> for String {
    fn from(tenant: Tenant) -> String {
        tenant.0
    }
}

impl std::fmt::Display for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_separators_and_empty_values_are_refused() {
        assert_eq!(Tenant::parse("a#b"), Err(InvalidTenant));
        assert_eq!(Tenant::parse(""), Err(InvalidTenant));
        assert_eq!(Tenant::parse(&"a".repeat(129)), Err(InvalidTenant));
        assert_eq!(Tenant::parse("acme:eu").unwrap().as_str(), "acme:eu");
    }

    #[test]
    fn a_queued_tenant_is_checked_when_decoded() {
        let tenant: Tenant = serde_json::from_str(r#""acme""#).unwrap();
        assert_eq!(serde_json::to_string(&tenant).unwrap(), r#""acme""#);
        assert!(serde_json::from_str::<Tenant>(r#""a#b""#).is_err());
    }
}

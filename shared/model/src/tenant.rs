//! The tenant (D3): who a record belongs to, and the [`Actor`] (D25): who made a change, the
//! `sub` of the request's token. Each is parsed once, at the edge (the token's claims) or when a
//! stored or queued record is decoded, and trusted everywhere after.

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

/// Who made a change (D25): the `sub` claim of the request's token, as the issuer wrote it (a
/// Cognito user's or app client's id). Audit events carry it; it is never a phone number or a
/// name a client sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "String")]
pub struct Actor(String);

/// A `sub` claim that cannot name an actor: empty, longer than [`Actor::MAX_CHARS`], or holding
/// a control character.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a valid sub claim")]
pub struct InvalidActor;

impl Actor {
    /// The longest `sub` accepted, in characters.
    pub const MAX_CHARS: usize = 256;

    pub fn parse(value: &str) -> Result<Self, InvalidActor> {
        let chars = value.chars().count();
        if (1..=Self::MAX_CHARS).contains(&chars) && !value.chars().any(char::is_control) {
            Ok(Actor(value.to_owned()))
        } else {
            Err(InvalidActor)
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Actor> for String {
    fn from(actor: Actor) -> String {
        actor.0
    }
}

impl std::fmt::Display for Actor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actor_is_a_short_printable_sub() {
        let sub = "4f1c2e3a-9b8d-4c7e-a6f5-0123456789ab";
        assert_eq!(Actor::parse(sub).unwrap().as_str(), sub);
        assert_eq!(
            serde_json::to_string(&Actor::parse("dev-acme").unwrap()).unwrap(),
            r#""dev-acme""#
        );
        assert_eq!(Actor::parse(""), Err(InvalidActor));
        assert_eq!(Actor::parse("a\nb"), Err(InvalidActor));
        assert_eq!(Actor::parse(&"a".repeat(257)), Err(InvalidActor));
        assert!(
            Actor::parse(&"é".repeat(256)).is_ok(),
            "characters, not bytes"
        );
    }

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

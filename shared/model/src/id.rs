//! Record identifiers (D4): ULIDs, opaque to clients, unique, sorting by creation time.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A record id. Always a canonical 26-character ULID, so it is safe inside storage keys.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(try_from = "String", into = "String")]
pub struct Id(String);

impl Id {
    /// A fresh id, later than every id made before it in this process.
    pub fn new() -> Self {
        use std::sync::Mutex;
        if let Some(ulid) = crate::simulation::next_id() {
            return Id(ulid.to_string());
        }
        static GENERATOR: Mutex<Option<ulid::Generator>> = Mutex::new(None);
        let mut generator = GENERATOR
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let ulid = generator
            .get_or_insert_with(ulid::Generator::new)
            .generate()
            // Overflow needs 2^80 ids in one millisecond; fall back to a plain random one.
            .unwrap_or_else(|_| ulid::Ulid::new());
        Id(ulid.to_string())
    }

    /// Parses a client-sent id; `None` when it cannot be one of ours.
    pub fn parse(value: &str) -> Option<Self> {
        ulid::Ulid::from_string(value)
            .ok()
            .map(|ulid| ulid.to_string())
            .filter(|canonical| canonical == value)
            .map(Id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Id {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Id {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Id::parse(&value).ok_or_else(|| format!("{value:?} is not an id"))
    }
}

impl From<Id> for String {
    fn from(id: Id) -> Self {
        id.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_creation() {
        let ids: Vec<Id> = (0..1000).map(|_| Id::new()).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }

    #[test]
    fn parse_accepts_only_canonical_ulids() {
        let id = Id::new();
        assert_eq!(Id::parse(id.as_str()), Some(id.clone()));
        assert_eq!(Id::parse(&id.as_str().to_lowercase()), None);
        assert_eq!(Id::parse("DS#x"), None);
        assert_eq!(Id::parse(""), None);
    }
}

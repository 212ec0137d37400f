//! Timestamps (D4): stored as UTC milliseconds, shown as `YYYY-MM-DD HH:MM:SS` in the service zone.

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// An instant, milliseconds since the Unix epoch (UTC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn now() -> Self {
        Timestamp(crate::simulation::now().unwrap_or_else(|| Utc::now().timestamp_millis()))
    }

    /// `YYYY-MM-DD HH:MM:SS` in `zone`.
    pub fn display(self, zone: Tz) -> String {
        self.in_zone(zone).format("%Y-%m-%d %H:%M:%S").to_string()
    }

    /// `YYYYMMDDHHMMSS` in `zone`, for file names.
    pub fn compact(self, zone: Tz) -> String {
        self.in_zone(zone).format("%Y%m%d%H%M%S").to_string()
    }

    /// RFC 3339 in UTC with milliseconds (`2025-11-24T16:00:00.123Z`), for other systems (D20).
    pub fn rfc3339(self) -> String {
        self.in_zone(Tz::UTC)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }

    /// An instant sent as RFC 3339 with its offset (`2026-12-01T15:00:00+01:00`, or `Z`), as
    /// D31's times are: 400 naming `field` for anything else.
    pub fn parse_rfc3339(field: &str, raw: &str) -> Result<Self, crate::Error> {
        chrono::DateTime::parse_from_rfc3339(raw.trim())
            .map(|at| Timestamp(at.timestamp_millis()))
            .map_err(|_| {
                crate::Error::invalid(format!(
                    "{field} must be an RFC 3339 time with its offset, e.g. 2026-12-01T15:00:00+01:00"
                ))
            })
    }

    fn in_zone(self, zone: Tz) -> chrono::DateTime<Tz> {
        zone.timestamp_millis_opt(self.0)
            .single()
            .unwrap_or_else(|| Utc.timestamp_millis_opt(0).unwrap().with_timezone(&zone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_in_the_service_zone() {
        let t = Timestamp(1_700_000_000_000); // 2023-11-14 22:13:20 UTC
        assert_eq!(t.display(Tz::UTC), "2023-11-14 22:13:20");
        assert_eq!(t.display(chrono_tz::Asia::Shanghai), "2023-11-15 06:13:20");
        assert_eq!(t.compact(Tz::UTC), "20231114221320");
    }

    #[test]
    fn rfc3339_needs_its_offset() {
        let at = Timestamp::parse_rfc3339("at", "2023-11-15T06:13:20+08:00").unwrap();
        assert_eq!(at, Timestamp(1_700_000_000_000));
        assert_eq!(at.rfc3339(), "2023-11-14T22:13:20.000Z");
        for bad in ["2023-11-15T06:13:20", "2023-11-15", "tomorrow", ""] {
            let error = Timestamp::parse_rfc3339("at", bad).unwrap_err();
            assert!(
                error.to_string().starts_with("at must be an RFC 3339 time"),
                "{bad}"
            );
        }
    }
}

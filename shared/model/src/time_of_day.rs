//! Times of day (D9, D14, D15): a wall-clock `HH:MM` and a daily window of two of them, read
//! in whatever zone the caller applies. Tasks and tenant settings both hold them; neither owns
//! them.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `HH:MM`, 00:00-23:59, stored as minutes after midnight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClockTime(u16);

impl ClockTime {
    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        let invalid = || Error::invalid(format!("{field} must be HH:MM from 00:00 to 23:59"));
        let bytes = raw.as_bytes();
        if bytes.len() != 5 || bytes[2] != b':' {
            return Err(invalid());
        }
        let number = |part: &str| {
            part.parse::<u16>()
                .ok()
                .filter(|_| part.bytes().all(|b| b.is_ascii_digit()))
        };
        let (hours, minutes) = (number(&raw[..2]), number(&raw[3..]));
        match (hours, minutes) {
            (Some(h), Some(m)) if h < 24 && m < 60 => Ok(ClockTime(h * 60 + m)),
            _ => Err(invalid()),
        }
    }

    /// Minutes after midnight.
    pub fn minutes(self) -> u16 {
        self.0
    }
}

impl fmt::Display for ClockTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.0 / 60, self.0 % 60)
    }
}

/// The daily dialing window: start strictly before end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DailyWindow {
    pub start: ClockTime,
    pub end: ClockTime,
}

impl DailyWindow {
    /// Both or neither (D9); `None` means all day.
    pub fn from_parts(
        start: Option<ClockTime>,
        end: Option<ClockTime>,
    ) -> Result<Option<Self>, Error> {
        match (start, end) {
            (None, None) => Ok(None),
            (Some(start), Some(end)) if start < end => Ok(Some(DailyWindow { start, end })),
            (Some(_), Some(_)) => Err(Error::invalid("dailyStartTime must be before dailyEndTime")),
            _ => Err(Error::invalid(
                "dailyStartTime and dailyEndTime must be given together",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_and_windows() {
        assert_eq!(ClockTime::parse("f", "00:00").unwrap().minutes(), 0);
        assert_eq!(ClockTime::parse("f", "23:59").unwrap().to_string(), "23:59");
        for bad in [
            "24:00", "9:00", "09:60", "0900", "09:0a", "+9:00", " 9:00", "",
        ] {
            assert!(ClockTime::parse("f", bad).is_err(), "{bad}");
        }
        let t = |s| Some(ClockTime::parse("f", s).unwrap());
        assert!(DailyWindow::from_parts(t("09:00"), t("18:00"))
            .unwrap()
            .is_some());
        assert!(DailyWindow::from_parts(t("18:00"), t("09:00")).is_err());
        assert!(DailyWindow::from_parts(t("09:00"), t("09:00")).is_err());
        assert!(DailyWindow::from_parts(t("09:00"), None).is_err());
        assert_eq!(DailyWindow::from_parts(None, None).unwrap(), None);
    }
}

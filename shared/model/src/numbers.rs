//! Numbers in E.164 and where they ring (D14, D15): a contact's number as written (D7) read with
//! libphonenumber's metadata in its default country, and the time zones libphonenumber's
//! time-zone map gives for it.

use super::Phone;
use crate::error::Error;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An ISO 3166-1 alpha-2 country that has a calling code in libphonenumber's metadata: the
/// country of the numbers written without `+` (D14).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Country(phonenumber::country::Id);

impl Country {
    /// `field` names the request field in the refusal.
    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        let code = raw.trim();
        let known = (code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase()))
            .then(|| phonenumber::country::Id::from_str(code).ok())
            .flatten();
        known.map(Country).ok_or_else(|| {
            Error::invalid(format!(
                "{field} must be an ISO 3166-1 alpha-2 country code in capitals, e.g. US"
            ))
        })
    }

    pub fn as_str(&self) -> &str {
        self.0.as_ref()
    }
}

impl fmt::Display for Country {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl TryFrom<String> for Country {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Country::parse("country", &value).map_err(|e| e.to_string())
    }
}

impl From<Country> for String {
    fn from(country: Country) -> Self {
        country.as_str().to_owned()
    }
}

/// The number in E.164 (`+` and up to 15 digits) when libphonenumber finds it valid: written
/// with `+`, or else read in `country` (D14). `None`: not a valid number, or no country to read
/// a national number in.
pub fn e164(phone: &Phone, country: Option<Country>) -> Option<String> {
    let raw = phone.as_str();
    let region = if raw.starts_with('+') {
        None
    } else {
        Some(country?.0)
    };
    let number = phonenumber::parse(region, raw).ok()?;
    number
        .is_valid()
        .then(|| number.format().mode(phonenumber::Mode::E164).to_string())
}

/// The national significant number of a number in E.164, the digits it has in its own country
/// however it was written (`+12125550100`: `2125550100`; `+8613800000001`: `13800000001`);
/// `None` when libphonenumber cannot read it.
pub fn national_number(e164: &str) -> Option<String> {
    let number = phonenumber::parse(None, e164).ok()?;
    Some(number.national().to_string())
}

/// The time zones libphonenumber's map gives for a number in E.164, longest prefix first; empty
/// when the map knows none (D15).
pub fn zones_of(e164: &str) -> Vec<Tz> {
    let Ok(number) = namba::parse(e164) else {
        return Vec::new();
    };
    let Some(zones) = namba::TimeZones::for_number(&number) else {
        return Vec::new();
    };
    let mut found: Vec<Tz> = zones
        .iter()
        .filter_map(|name| name.parse::<Tz>().ok())
        // The map's "Etc/Unknown" is no zone at all.
        .filter(|zone| zone.name() != "Etc/Unknown")
        .collect();
    found.sort_by_key(|zone| zone.name());
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phone(raw: &str) -> Phone {
        Phone::parse(raw).unwrap()
    }

    fn us() -> Option<Country> {
        Some(Country::parse("c", "US").unwrap())
    }

    #[test]
    fn numbers_with_plus_need_no_country_and_others_read_in_it() {
        assert_eq!(
            e164(&phone("+1 212 555 0123"), None).as_deref(),
            Some("+12125550123")
        );
        assert_eq!(
            e164(&phone("(212) 555-0123"), us()).as_deref(),
            Some("+12125550123")
        );
        let cn = Some(Country::parse("c", "CN").unwrap());
        assert_eq!(
            e164(&phone("138 0013 8000"), cn).as_deref(),
            Some("+8613800138000")
        );
        assert_eq!(e164(&phone("2125550123"), None), None, "no country");
        assert_eq!(e164(&phone("12345"), us()), None, "not a valid number");
        assert_eq!(e164(&phone("+999 1234 5678"), None), None, "no such code");
    }

    #[test]
    fn a_national_number_is_its_digits_in_its_own_country() {
        assert_eq!(
            national_number("+12125550123").as_deref(),
            Some("2125550123")
        );
        assert_eq!(
            national_number("+8613800138000").as_deref(),
            Some("13800138000")
        );
        // Italy's fixed lines keep their leading zero.
        assert_eq!(
            national_number("+390612345678").as_deref(),
            Some("0612345678")
        );
        assert_eq!(national_number("not a number"), None);
    }

    #[test]
    fn countries_are_iso_codes_in_capitals() {
        assert_eq!(Country::parse("c", " GB ").unwrap().as_str(), "GB");
        for bad in ["us", "USA", "ZZ", "", "1"] {
            assert_eq!(
                Country::parse("defaultCountry", bad)
                    .unwrap_err()
                    .to_string(),
                "defaultCountry must be an ISO 3166-1 alpha-2 country code in capitals, e.g. US"
            );
        }
    }

    fn names(e164: &str) -> Vec<&'static str> {
        zones_of(e164).iter().map(|zone| zone.name()).collect()
    }

    #[test]
    fn zones_come_from_the_longest_prefix() {
        assert_eq!(names("+12125550123"), ["America/New_York"]);
        assert_eq!(names("+12135550123"), ["America/Los_Angeles"]);
        assert_eq!(names("+442079460000"), ["Europe/London"]);
        assert_eq!(names("+862161234567"), ["Asia/Shanghai"]);
        let toll_free = names("+18005550123");
        assert!(toll_free.len() > 3, "{toll_free:?}");
        assert!(
            toll_free.contains(&"America/New_York") && toll_free.contains(&"America/Los_Angeles")
        );
        assert!(
            names("+8821234567").is_empty(),
            "international networks ring nowhere"
        );
        assert!(names("not a number").is_empty());
    }
}

//! The do-not-call list (D16, D24): one entry per number a tenant must never call, matched by
//! the number's E.164 form, so a number never matches another country's with the same digits.

use super::numbers::{e164, Country};
use super::{Description, Id, Phone, Timestamp};
use crate::error::Error;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// A stored entry. Entries stored before D24 may lack `e164` (a number written without `+`
/// while the tenant had no default country): those are matched by their normal form until a
/// default country gives them one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DncEntry {
    pub id: Id,
    pub phone: Phone,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e164: Option<String>,
    /// The country a number written without `+` was read in (D24).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<Country>,
    #[serde(default)]
    pub reason: Description,
    pub created_at: Timestamp,
}

impl DncEntry {
    /// An entry for `phone` (D24): written with `+`, it is its own E.164 form; otherwise it is
    /// read in `country`, else in the tenant's `default_country`. Refused when neither makes it
    /// a valid number.
    pub fn new(
        phone: Phone,
        country: Option<Country>,
        default_country: Option<Country>,
        reason: Description,
    ) -> Result<Self, Error> {
        let (e164, country) = listed_e164(&phone, country, default_country)?;
        Ok(DncEntry {
            id: Id::new(),
            phone,
            e164: Some(e164),
            country,
            reason,
            created_at: Timestamp::now(),
        })
    }

    /// The key its guard is stored under: its E.164 form, or (stored before D24 without one)
    /// its normal form.
    pub fn guarded_number(&self) -> &str {
        lookup_key(&self.phone, self.e164.as_deref())
    }

    /// Every key a guard of this entry may be stored under: entries stored before D24 had one
    /// for each form of their number.
    pub fn possible_guards(&self) -> Vec<&str> {
        let mut forms = vec![self.guarded_number()];
        if self.phone.as_str() != forms[0] {
            forms.push(self.phone.as_str());
        }
        forms
    }

    pub fn view(&self, zone: Tz) -> DncView {
        DncView {
            phone_number: self.phone.as_str().to_owned(),
            e164: self.e164.clone(),
            country: self.country.map(|c| c.as_str().to_owned()),
            reason: (!self.reason.as_str().is_empty()).then(|| self.reason.as_str().to_owned()),
            create_time: self.created_at.display(zone),
        }
    }
}

/// `phone`'s E.164 form as a do-not-call entry reads it (D24), with the country it was read in
/// (none for a number written with `+`).
pub fn listed_e164(
    phone: &Phone,
    country: Option<Country>,
    default_country: Option<Country>,
) -> Result<(String, Option<Country>), Error> {
    if phone.as_str().starts_with('+') {
        return e164(phone, None)
            .map(|e164| (e164, None))
            .ok_or_else(|| Error::invalid(format!("phoneNumber {phone} is not a valid number")));
    }
    let Some(read_in) = country.or(default_country) else {
        return Err(Error::invalid(format!(
            "phoneNumber {phone} has no country: write it with + and its country code, send \
             country, or set the tenant's defaultCountry"
        )));
    };
    e164(phone, Some(read_in))
        .map(|e164| (e164, Some(read_in)))
        .ok_or_else(|| {
            Error::invalid(format!(
                "phoneNumber {phone} is not a valid number in {read_in}"
            ))
        })
}

/// The key a contact's number is looked up by on the list (D24): its E.164 form; a number with
/// none (no country to read it in) by its normal form, which only an entry stored the same way
/// can list.
pub fn lookup_key<'a>(phone: &'a Phone, e164: Option<&'a str>) -> &'a str {
    e164.unwrap_or(phone.as_str())
}

/// An entry as the API shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DncView {
    /// The number as listed, in normal form (D7).
    pub phone_number: String,
    /// Its E.164 form: what contacts are matched by (D24).
    pub e164: Option<String>,
    /// The country a number written without `+` was read in (D24).
    pub country: Option<String>,
    pub reason: Option<String>,
    pub create_time: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn country(code: &str) -> Option<Country> {
        Some(Country::parse("country", code).unwrap())
    }

    #[test]
    fn a_national_number_is_read_in_its_own_country_before_the_default() {
        let phone = Phone::parse("0612345678").unwrap();
        let (nl, _) = listed_e164(&phone, country("NL"), country("FR")).unwrap();
        let (fr, _) = listed_e164(&phone, None, country("FR")).unwrap();
        assert_eq!(nl, "+31612345678");
        assert_eq!(fr, "+33612345678");
    }

    #[test]
    fn a_number_without_a_country_or_valid_in_none_is_refused() {
        let phone = Phone::parse("0612345678").unwrap();
        assert!(listed_e164(&phone, None, None).is_err());
        assert!(listed_e164(&phone, country("US"), None).is_err());
        let plus = Phone::parse("+12127363100").unwrap();
        assert_eq!(
            listed_e164(&plus, country("GB"), None).unwrap(),
            ("+12127363100".to_owned(), None)
        );
    }
}

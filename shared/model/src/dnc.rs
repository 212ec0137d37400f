//! The do-not-call list (D16): one entry per number a tenant must never call, matched by the
//! number's normal form (D7) or its E.164 form (D14).

use super::{Description, Id, Phone, Timestamp};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// A stored entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DncEntry {
    pub id: Id,
    pub phone: Phone,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e164: Option<String>,
    #[serde(default)]
    pub reason: Description,
    pub created_at: Timestamp,
}

impl DncEntry {
    /// The forms of the number a contact is matched against, each at most once.
    pub fn numbers(&self) -> Vec<&str> {
        listed_forms(&self.phone, self.e164.as_deref())
    }

    pub fn view(&self, zone: Tz) -> DncView {
        DncView {
            phone_number: self.phone.as_str().to_owned(),
            e164: self.e164.clone(),
            reason: (!self.reason.as_str().is_empty()).then(|| self.reason.as_str().to_owned()),
            create_time: self.created_at.display(zone),
        }
    }
}

/// A number's normal form and, when it has one that differs, its E.164 form: the keys it is
/// listed under and looked up by (D16).
pub fn listed_forms<'a>(phone: &'a Phone, e164: Option<&'a str>) -> Vec<&'a str> {
    let mut forms = vec![phone.as_str()];
    if let Some(e164) = e164.filter(|e| *e != phone.as_str()) {
        forms.push(e164);
    }
    forms
}

/// An entry as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DncView {
    /// The number in normal form (D7).
    pub phone_number: String,
    /// Its E.164 form, when it has one in the tenant's default country (D14).
    pub e164: Option<String>,
    pub reason: Option<String>,
    pub create_time: String,
}

//! Data sources: a named contact list of one tenant.

use super::numbers::Country;
use super::{Description, Id, Name, Timestamp};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// A stored data source. `contact_count` is exact: it changes in the same write as its contacts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSource {
    pub id: Id,
    pub name: Name,
    #[serde(default)]
    pub description: Description,
    #[serde(default)]
    pub contact_count: u64,
    /// RUNNING or PAUSED tasks using it; while above zero it cannot be deleted (D11).
    #[serde(default)]
    pub active_tasks: u64,
    /// Contacts ever added (one by one or imported), never lowered: a task's completion is
    /// conditioned on it, so a contact added during the completion check stops it (D13).
    #[serde(default)]
    pub contacts_added: u64,
    /// The country of its numbers written without `+`, over the tenant's (D14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_country: Option<Country>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// When what decides its contacts' windows last changed (D24): its country, or a contact's
    /// number or `timeZone`. Contacts parked outside their window before then are judged again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_at: Option<Timestamp>,
}

impl DataSource {
    /// The API shape, the same for list, detail, add and update.
    pub fn view(&self, zone: Tz) -> DataSourceView {
        DataSourceView {
            id: self.id.clone(),
            data_source_name: self.name.clone(),
            data_source_desc: self.description.clone(),
            contact_count: self.contact_count,
            default_country: self.default_country.map(|c| c.as_str().to_owned()),
            create_time: self.created_at.display(zone),
            update_time: self.updated_at.display(zone),
        }
    }
}

/// A data source as the API shows it. Times are `yyyy-MM-dd HH:mm:ss` in the service's zone (D4).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DataSourceView {
    pub id: Id,
    pub data_source_name: Name,
    pub data_source_desc: Description,
    pub contact_count: u64,
    /// ISO 3166-1 alpha-2: the country of its numbers written without `+`; `null` uses the
    /// tenant's (D14).
    #[cfg_attr(feature = "openapi", schema(example = "US"))]
    pub default_country: Option<String>,
    pub create_time: String,
    pub update_time: String,
}

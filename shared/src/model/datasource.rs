//! Data sources: a named contact list of one tenant.

use super::{Description, Id, Name, Timestamp};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

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
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl DataSource {
    /// The API shape, the same for list, detail, add and update.
    pub fn view(&self, zone: Tz) -> Value {
        json!({
            "id": self.id,
            "dataSourceName": self.name,
            "dataSourceDesc": self.description,
            "contactCount": self.contact_count,
            "createTime": self.created_at.display(zone),
            "updateTime": self.updated_at.display(zone),
        })
    }
}

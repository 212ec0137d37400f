//! The key layout of the single table (see `docs/data-model.md`). Every key starts with the
//! tenant, so no read can reach another tenant's records.

use crate::auth::Tenant;
use crate::model::{Id, Phone};

/// Partition of a tenant's own records: data source and task names, tasks.
pub fn tenant(tenant: &Tenant) -> String {
    format!("T#{}", tenant.as_str())
}

/// Partition of one data source: its head record, contacts, phone guards and imports.
pub fn data_source(tenant: &Tenant, id: &Id) -> String {
    format!("T#{}#DS#{}", tenant.as_str(), id)
}

/// Partition of one task's per-contact dialing state.
pub fn task_contacts(tenant: &Tenant, id: &Id) -> String {
    format!("T#{}#TASK#{}", tenant.as_str(), id)
}

/// Sort key of a contact in its data source partition.
pub fn contact(id: &Id) -> String {
    format!("{CONTACT_PREFIX}{id}")
}

/// Contacts sort as `C#<ulid>`; the head sorts as `C~`, after every contact (`~` is above every
/// ULID character), so one descending Query over `C#`..`C~` meets the head first and then the
/// newest contacts: existence, `contactCount` and a page in a single call.
pub const CONTACT_PREFIX: &str = "C#";
pub const HEAD: &str = "C~";

/// Sort key of the item that makes a phone number unique within a data source.
pub fn phone(phone: &Phone) -> String {
    format!("P#{phone}")
}

/// Sort key of an import record in its data source partition.
pub fn import(id: &Id) -> String {
    format!("I#{id}")
}

/// Sort key (GSI1) of a data source within its tenant, and of a task in the tenant partition.
pub fn data_source_in_tenant(id: &Id) -> String {
    format!("{DATA_SOURCE_PREFIX}{id}")
}
pub const DATA_SOURCE_PREFIX: &str = "DS#";

pub fn task(id: &Id) -> String {
    format!("{TASK_PREFIX}{id}")
}
pub const TASK_PREFIX: &str = "TASK#";

/// Sort keys of the items that make names unique within a tenant.
pub fn data_source_name(name: &str) -> String {
    format!("DSNAME#{name}")
}
pub fn task_name(name: &str) -> String {
    format!("TASKNAME#{name}")
}

/// Attribute names of the keys.
pub const PK: &str = "pk";
pub const SK: &str = "sk";
pub const GSI1: &str = "gsi1";
pub const GSI1_PK: &str = "gsi1pk";
pub const GSI1_SK: &str = "gsi1sk";

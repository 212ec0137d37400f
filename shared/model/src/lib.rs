//! The domain layer, the lowest of the service: types that cannot hold invalid values (parsed
//! once at the edge, "parse, don't validate", and trusted everywhere after), the queue messages
//! they travel in, and the one [`Error`] every layer answers with. It knows no AWS service, no
//! file format and no HTTP.

pub mod call;
pub mod callback;
pub mod contact;
pub mod datasource;
pub mod diagnostics;
pub mod dnc;
pub mod error;
pub mod event;
pub mod export;
pub mod filter;
pub mod history;
pub mod id;
pub mod import;
pub mod job;
pub mod limits;
pub mod local_time;
pub mod numbers;
pub mod origin;
pub mod pacing;
pub mod page;
pub mod phone;
pub mod plan;
pub mod reclaim;
pub mod run_slice;
pub mod schedule;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod settings;
pub mod signature;
pub mod simulation;
pub mod task;
pub mod telephony;
pub mod tenant;
pub mod text;
pub mod time;
pub mod time_of_day;
pub mod transition;

pub use contact::{Contact, ContactFields};
pub use datasource::DataSource;
pub use error::{Error, Result};
pub use id::Id;
pub use page::{Page, PageRequest};
pub use phone::Phone;
pub use task::{Task, TaskStatus};
pub use tenant::{Actor, Tenant};
pub use text::{Description, Name};
pub use time::Timestamp;

/// Whether a counter is 0: serde's test for leaving it out of a stored item.
pub(crate) fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A whole number in an inclusive range, refused with a message naming the field.
pub fn in_range(field: &str, value: i64, min: i64, max: i64) -> Result<i64> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(error::Error::invalid(format!(
            "{field} must be an integer from {min} to {max}"
        )))
    }
}

//! One function per operation. A service function takes the tenant, a typed command and the
//! store; it knows nothing of HTTP or of the SDK.

pub mod callback;
pub mod compliance;
pub mod contact;
pub mod datasource;
pub mod export;
pub mod export_job;
pub mod import;
pub mod reclaim;
pub mod task;
pub mod telephony;

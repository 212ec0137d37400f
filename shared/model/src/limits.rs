//! Per-tenant limits (D26): how many records of each kind one tenant may hold, so no tenant
//! grows the service's costs or another tenant's latency without bound. Deployment settings;
//! a limit reached is 409 naming it, and nothing changes.

use crate::error::Error;

/// A tenant's limits on what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TenantLimits {
    /// `TENANT_MAX_DATA_SOURCES`.
    pub data_sources: u64,
    /// `TENANT_MAX_TASKS`.
    pub tasks: u64,
    /// `TENANT_MAX_DNC_ENTRIES`.
    pub dnc_entries: u64,
}

impl Default for TenantLimits {
    fn default() -> Self {
        TenantLimits {
            data_sources: 1_000,
            tasks: 10_000,
            dnc_entries: 1_000_000,
        }
    }
}

/// What a limit bounds, for its refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limited {
    DataSources,
    Tasks,
    DncEntries,
}

impl Limited {
    /// The limit of `self` in `limits`.
    pub fn of(self, limits: &TenantLimits) -> u64 {
        match self {
            Limited::DataSources => limits.data_sources,
            Limited::Tasks => limits.tasks,
            Limited::DncEntries => limits.dnc_entries,
        }
    }

    /// The refusal once the tenant holds `limit` of them (409, D26).
    pub fn reached(self, limit: u64) -> Error {
        let (what, setting) = match self {
            Limited::DataSources => ("data sources", "TENANT_MAX_DATA_SOURCES"),
            Limited::Tasks => ("tasks", "TENANT_MAX_TASKS"),
            Limited::DncEntries => ("do-not-call entries", "TENANT_MAX_DNC_ENTRIES"),
        };
        Error::LimitReached(format!(
            "tenant limit reached: at most {limit} {what} ({setting}); delete some first"
        ))
    }
}

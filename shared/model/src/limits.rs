//! Per-tenant limits (D26): how many records of each kind one tenant may hold, how many of its
//! tasks may run and how many of its direct exports may be built at once, and how fast it may
//! send requests, so no tenant grows the service's costs or another tenant's latency without
//! bound. Deployment settings; a limit reached is 409 naming it (the request rate: 429), and
//! nothing changes.

use crate::error::Error;

/// A tenant's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TenantLimits {
    /// `TENANT_MAX_DATA_SOURCES`.
    pub data_sources: u64,
    /// `TENANT_MAX_TASKS`.
    pub tasks: u64,
    /// `TENANT_MAX_DNC_ENTRIES`.
    pub dnc_entries: u64,
    /// `TENANT_MAX_RUNNING_TASKS`: tasks in state RUNNING at once.
    pub running_tasks: u64,
    /// `TENANT_MAX_DIRECT_EXPORTS`: direct (not job) exports being built at once.
    pub direct_exports: u32,
    /// `TENANT_RUNNING_RECALLS`: large recalls being applied at once (D32), whose jobs share
    /// the dial queue's workers with every tenant's calls.
    pub running_recalls: u32,
    /// `TENANT_REQUESTS_PER_SECOND` and `TENANT_REQUEST_BURST`.
    pub requests: RequestRate,
}

impl Default for TenantLimits {
    fn default() -> Self {
        TenantLimits {
            data_sources: 1_000,
            tasks: 10_000,
            dnc_entries: 1_000_000,
            running_tasks: 200,
            direct_exports: 4,
            running_recalls: 2,
            requests: RequestRate::default(),
        }
    }
}

/// How fast one tenant may send requests, over every function instance: `per_second` on
/// average, up to `burst` at once after a quiet spell (a token bucket of `burst` tokens
/// refilled at `per_second`), and at most `in_flight` running at once (D29).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestRate {
    pub per_second: u32,
    pub burst: u32,
    pub in_flight: u32,
}

impl Default for RequestRate {
    fn default() -> Self {
        RequestRate {
            per_second: 50,
            burst: 100,
            in_flight: 20,
        }
    }
}

/// The items of the table (read by its queries, found by its reads, written) one request
/// includes; each further [`ROWS_PER_REQUEST`] costs the tenant one more request (D32), so a
/// request that reads 10,000 contacts to filter them weighs as a hundred cheap ones.
pub const ROWS_PER_REQUEST: u64 = 100;

impl RequestRate {
    /// The requests beyond itself that a request which touched `rows` items costs the bucket
    /// (D32): one for each [`ROWS_PER_REQUEST`] beyond the first, at most half a burst, so a
    /// tenant that just imported a file or filtered a large list still has half its burst for
    /// the requests that follow (the console's reloads), while a run of expensive requests is
    /// held to about one per half a burst's intervals.
    pub fn surcharge(self, rows: u64) -> u32 {
        let extra = rows.saturating_sub(1) / ROWS_PER_REQUEST;
        u32::try_from(extra).unwrap_or(u32::MAX).min(self.burst / 2)
    }

    /// Microseconds between two requests at the steady rate (the bucket's refill of one token).
    pub fn interval_micros(self) -> i64 {
        1_000_000 / i64::from(self.per_second.max(1))
    }

    /// How far ahead of now the bucket's schedule may run: `burst - 1` intervals, so `burst`
    /// requests pass at once from a full bucket.
    pub fn tolerance_micros(self) -> i64 {
        self.interval_micros() * (i64::from(self.burst.max(1)) - 1)
    }

    /// The 429 of a request beyond the rate, to be sent again after `retry_after_secs`.
    pub fn exceeded(self, retry_after_secs: u64) -> Error {
        Error::TooManyRequests {
            message: format!(
                "too many requests: this tenant may send {} a second, {} at once \
                 (TENANT_REQUESTS_PER_SECOND, TENANT_REQUEST_BURST); try again after {} s",
                self.per_second, self.burst, retry_after_secs
            ),
            retry_after_secs,
        }
    }

    /// The 429 of a request while the tenant already has `in_flight` running (D29).
    pub fn crowded(self, retry_after_secs: u64) -> Error {
        Error::TooManyRequests {
            message: format!(
                "too many requests: this tenant may have {} running at once \
                 (TENANT_REQUESTS_IN_FLIGHT); try again after {} s",
                self.in_flight, retry_after_secs
            ),
            retry_after_secs,
        }
    }
}

/// What a limit bounds, for its refusal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limited {
    DataSources,
    Tasks,
    DncEntries,
    RunningTasks,
    DirectExports,
}

impl Limited {
    /// The limit of `self` in `limits`.
    pub fn of(self, limits: &TenantLimits) -> u64 {
        match self {
            Limited::DataSources => limits.data_sources,
            Limited::Tasks => limits.tasks,
            Limited::DncEntries => limits.dnc_entries,
            Limited::RunningTasks => limits.running_tasks,
            Limited::DirectExports => u64::from(limits.direct_exports),
        }
    }

    /// The refusal once the tenant holds (or runs) `limit` of them (409, D26).
    pub fn reached(self, limit: u64) -> Error {
        let (what, setting, remedy) = match self {
            Limited::DataSources => (
                "data sources",
                "TENANT_MAX_DATA_SOURCES",
                "delete some first",
            ),
            Limited::Tasks => ("tasks", "TENANT_MAX_TASKS", "delete some first"),
            Limited::DncEntries => (
                "do-not-call entries",
                "TENANT_MAX_DNC_ENTRIES",
                "delete some first",
            ),
            Limited::RunningTasks => (
                "RUNNING tasks",
                "TENANT_MAX_RUNNING_TASKS",
                "pause or stop one first",
            ),
            Limited::DirectExports => (
                "direct exports at once",
                "TENANT_MAX_DIRECT_EXPORTS",
                "try again when one has finished",
            ),
        };
        Error::LimitReached(format!(
            "tenant limit reached: at most {limit} {what} ({setting}); {remedy}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_rate_is_a_bucket_of_burst_tokens_refilled_per_second() {
        let rate = RequestRate::default();
        assert_eq!(rate.interval_micros(), 20_000);
        assert_eq!(rate.tolerance_micros(), 99 * 20_000);
        let one = RequestRate {
            per_second: 1,
            burst: 1,
            in_flight: 1,
        };
        assert_eq!(
            one.tolerance_micros(),
            0,
            "a burst of one waits every interval"
        );
    }

    #[test]
    fn a_request_costs_one_more_for_each_hundred_items_beyond_the_first_at_most_half_a_burst() {
        let rate = RequestRate::default();
        let costs = [0, 1, 100, 101, 250, 4_901, 10_000, u64::MAX].map(|rows| rate.surcharge(rows));
        assert_eq!(costs, [0, 0, 0, 1, 2, 49, 50, 50]);
        assert_eq!(rate.burst / 2, 50);
    }

    #[test]
    fn refusals_name_the_limit_and_its_setting() {
        let error = Limited::RunningTasks.reached(200);
        assert_eq!(error.status_code(), 409);
        assert_eq!(
            error.client_message(),
            "tenant limit reached: at most 200 RUNNING tasks (TENANT_MAX_RUNNING_TASKS); pause or stop one first"
        );
        let error = RequestRate::default().exceeded(1);
        assert_eq!(error.status_code(), 429);
        assert_eq!(
            error.client_message(),
            "too many requests: this tenant may send 50 a second, 100 at once \
             (TENANT_REQUESTS_PER_SECOND, TENANT_REQUEST_BURST); try again after 1 s"
        );
        assert_eq!(
            RequestRate::default().crowded(1).client_message(),
            "too many requests: this tenant may have 20 running at once \
             (TENANT_REQUESTS_IN_FLIGHT); try again after 1 s"
        );
    }
}

//! The request rate of each tenant (D26), held in the table so that every function instance
//! sees the same one: a token bucket of `burst` requests refilled at `per_second`, kept as one
//! item a tenant (`T#{tenant}#RATE` / `RATE`) in the form of the generic cell rate algorithm
//! (GCRA). The item holds one time, `tat` (microseconds since the epoch): when the tenant's
//! schedule of requests at the steady rate is next free. A request at `now` passes while `tat`
//! runs at most `tolerance` (`burst - 1` intervals) ahead of `now`, and moves it one interval on
//! from `max(tat, now)`; a refused request moves nothing and is told how long until one passes.
//!
//! DynamoDB has no `max` in an update, so the two sides of it are two conditional updates, each
//! one write: `ADD tat :interval` if `now < tat <= now + tolerance` (the tenant is busy), and
//! `SET tat = now + interval` if `tat <= now` (it was idle). The one sent first is the one the
//! last answer this process saw for the tenant points to; a failed condition answers the stored
//! `tat`, which says whether the other applies or the request is refused. So a request costs one
//! conditional write, two when this process guessed wrong (another instance moved the tenant's
//! schedule, or it went idle), and never a read. Each write also sets `expires_at` an hour past
//! the schedule, so a quiet tenant's item goes by itself.
//!
//! The limiter has its own client: no retries and a short timeout, because a request must never
//! wait on, or fail because of, its limiter. Its callers let the request through on any error.

use super::keys;
use super::{n, Expr, Item, Store, WriteFailure};
use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::limits::RequestRate;
use outbound_model::Tenant;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long one write of the limiter may take before the request goes on without it.
pub const LIMITER_TIMEOUT: Duration = Duration::from_secs(1);

/// Tenants whose last schedule one process remembers; past this it forgets them all (the
/// guess it keeps is only an optimisation).
const REMEMBERED_TENANTS: usize = 10_000;

/// What the limiter says of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// Beyond the tenant's rate: one request passes again after `retry_after_secs` (at least 1).
    Refused {
        retry_after_secs: u64,
    },
}

/// The shared request rate of every tenant; cheap to clone.
#[derive(Clone, Debug)]
pub struct RequestLimiter {
    store: Lazy<Store>,
    rate: RequestRate,
    /// The last `tat` this process saw per tenant: which write to send first.
    seen: Arc<Mutex<HashMap<String, i64>>>,
}

/// Which side of `max(tat, now)` a write is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// `tat` is ahead of now: the schedule moves on by one interval, within the tolerance.
    Busy,
    /// `tat` is now or past (or absent): the schedule starts again from now.
    Idle,
}

impl RequestLimiter {
    /// A limiter of `rate` over the table `table`, with a client of its own built from `sdk` on
    /// its first use (no retries, [`LIMITER_TIMEOUT`]). Its calls are not among the request's
    /// store calls ([`crate::aws::timing`]): the caller times the limiter as a whole.
    pub fn from_config(sdk: &aws_config::SdkConfig, table: String, rate: RequestRate) -> Self {
        let sdk = sdk.clone();
        let store = Lazy::new(move || {
            let config = aws_sdk_dynamodb::config::Builder::from(&sdk)
                .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
                .timeout_config(
                    aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
                        .operation_timeout(LIMITER_TIMEOUT)
                        .build(),
                )
                .build();
            Store::new(aws_sdk_dynamodb::Client::from_conf(config), table.clone())
        });
        RequestLimiter {
            store,
            rate,
            seen: Default::default(),
        }
    }

    /// A limiter of `rate` over `store`'s client and table (the measurements count its calls).
    pub fn over(store: Store, rate: RequestRate) -> Self {
        RequestLimiter {
            store: Lazy::new(move || store.clone()),
            rate,
            seen: Default::default(),
        }
    }

    pub fn rate(&self) -> RequestRate {
        self.rate
    }

    /// Takes one request of `tenant` at `now_micros` (microseconds since the epoch), or says how
    /// long until one passes. An error is the table's (missing, throttled, unreachable): the
    /// caller decides what a request does then.
    pub async fn admit(&self, tenant: &Tenant, now_micros: i64) -> Result<Admission, Error> {
        let key = keys::request_rate(tenant);
        let remembered = self.remembered(tenant);
        let mut side = match remembered {
            Some(tat) if tat > now_micros => Side::Busy,
            _ => Side::Idle,
        };
        // Each failed write says which side holds now; a third try only meets writes of other
        // instances racing this one, and the request then goes on.
        for _ in 0..3 {
            let written = self.write(&key, side, now_micros).await;
            let stored = match written {
                Ok(item) => {
                    if let Some(tat) = tat_of(&item) {
                        self.remember(tenant, tat);
                    }
                    return Ok(Admission::Admitted);
                }
                Err(WriteFailure::Other(error)) => return Err(error),
                Err(WriteFailure::Condition(condition)) => condition.stored(()).and_then(tat_of),
            };
            let tat = stored.unwrap_or(0);
            self.remember(tenant, tat);
            if tat <= now_micros {
                side = Side::Idle;
            } else if tat <= now_micros + self.rate.tolerance_micros() {
                side = Side::Busy;
            } else {
                let wait = tat - self.rate.tolerance_micros() - now_micros;
                let seconds = u64::try_from(wait).unwrap_or(0).div_ceil(1_000_000);
                return Ok(Admission::Refused {
                    retry_after_secs: seconds.max(1),
                });
            }
        }
        Ok(Admission::Admitted)
    }

    /// The conditional write of `side` at `now`.
    async fn write(
        &self,
        key: &(String, String),
        side: Side,
        now: i64,
    ) -> Result<Item, WriteFailure> {
        let interval = self.rate.interval_micros();
        let tolerance = self.rate.tolerance_micros();
        // An hour after the furthest the schedule can reach with this write.
        let expires = (now + tolerance + interval) / 1_000_000 + 3_600;
        let expr = Expr::default()
            .name("#tat", "tat")
            .value(":now", n(now))
            .value(":expires", n(expires));
        let (update, condition, expr) = match side {
            Side::Busy => (
                "ADD #tat :interval SET expires_at = :expires",
                "#tat > :now AND #tat <= :latest",
                expr.value(":interval", n(interval))
                    .value(":latest", n(now + tolerance)),
            ),
            Side::Idle => (
                "SET #tat = :next, expires_at = :expires",
                "attribute_not_exists(#tat) OR #tat <= :now",
                expr.value(":next", n(now + interval)),
            ),
        };
        self.store
            .get()
            .update_one("request rate", key.clone(), update, Some(condition), expr)
            .await
    }

    fn remembered(&self, tenant: &Tenant) -> Option<i64> {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.get(tenant.as_str()).copied()
    }

    fn remember(&self, tenant: &Tenant, tat: i64) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.len() >= REMEMBERED_TENANTS && !seen.contains_key(tenant.as_str()) {
            seen.clear();
        }
        seen.insert(tenant.as_str().to_owned(), tat);
    }
}

/// The stored schedule of a rate item.
fn tat_of(item: &Item) -> Option<i64> {
    item.get("tat")?.as_n().ok()?.parse().ok()
}

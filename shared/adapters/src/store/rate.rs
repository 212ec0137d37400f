//! The request rate and the requests in flight of each tenant (D26, D29), held in the table so
//! that every function instance sees the same ones, in one item a tenant (`T#{tenant}#RATE` /
//! `RATE`; an operator's own, `OPERATOR#{sub}#RATE`, for the operator's routes; one for every
//! verified token that names no tenant, `UNATTRIBUTED#RATE`).
//!
//! **Rate.** A token bucket of `burst` requests refilled at `per_second`, in the form of the
//! generic cell rate algorithm (GCRA): the item holds `tat` (microseconds since the epoch), when
//! the schedule of requests at the steady rate is next free. A request at `now` passes while
//! `tat` runs at most `tolerance` (`burst - 1` intervals) ahead of `now`, and moves it one
//! interval on from `max(tat, now)`. DynamoDB has no `max` in an update, so the two sides of it
//! are two conditional updates: `ADD tat :interval` if `now < tat <= now + tolerance` (busy), and
//! `SET tat = now + interval` if `tat <= now` (idle). The one sent first is the one the last
//! answer this process saw points to; a failed condition answers the stored item, which says
//! whether the other applies or the request is refused.
//!
//! **In flight.** At most `in_flight` requests of one tenant run at once: the item holds one
//! lease per place (`f0`, `f1`, ...: when the place is free again). The same write that takes
//! the rate takes a place whose lease has passed, for [`LEASE`]; the request gives it back when
//! it is answered ([`RequestLimiter::release`], one more write). A process killed mid-request
//! holds its place only until the lease runs out.
//!
//! **Cost.** A request that read or wrote many items costs more than one ([`RequestRate::surcharge`],
//! D32): the write that gives its place back also moves `tat` on by that many intervals from
//! `max(tat, now)`, on the same two sides ([`RequestLimiter::release_charging`]), so the
//! tenant's next requests wait for it. An expensive request is charged once it is answered,
//! when its cost is known.
//!
//! **Refusals cost no write.** `tat` only ever moves forward, so while the `tat` a process last
//! saw is beyond `now + tolerance` the request is refused there and then: a flood is refused by
//! each instance from memory after its first refusal. A refusal for places costs the one failed
//! conditional write that found them all taken, and the instance refuses for places from memory
//! for the next [`CROWDED_MEMORY`].
//!
//! **When the table fails** (missing, throttled, slower than its timeout, [`LIMITER_TIMEOUT`]
//! by default), the request
//! is refused ([`Admission::Unavailable`], 503 with `Retry-After`), never admitted: an instance
//! serves one request at a time, so limits each instance kept alone would bound nothing (D32).
//! The failure is the caller's to log and count ([`Decision::failure`]).
//!
//! The limiter has its own client: no retries and a short timeout, because a request must never
//! wait long on its limiter.

use super::keys;
use super::{n, Expr, Item, Store, WriteFailure};
use crate::aws::Lazy;
use outbound_model::error::Error;
use outbound_model::limits::RequestRate;
use outbound_model::{Actor, Tenant};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long one write of the limiter may take, by default, before the request is refused as
/// unavailable (`REQUEST_LIMITER_TIMEOUT_MS`).
pub const LIMITER_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a place in flight is held at most: longer than any request may run (API Gateway
/// gives up after 30 s).
pub const LEASE: Duration = Duration::from_secs(30);

/// How long a process refuses for places from memory once the table said all were taken: a
/// place given back meanwhile waits at most this long, and a tenant at its places costs at most
/// one failed write per instance in this time.
pub const CROWDED_MEMORY: Duration = Duration::from_millis(100);

/// Writes one admission may try: each failure answers the item, so the next picks a place that
/// was free then; only requests of one tenant arriving together make a try fail.
const TRIES: usize = 8;

/// Keys whose last answer one process remembers; past this it forgets them all (what it keeps
/// only saves writes).
const REMEMBERED: usize = 10_000;

/// Whose requests a limit counts.
#[derive(Clone, Copy, Debug)]
pub enum Limited<'a> {
    /// A tenant's requests, whoever sends them (D26).
    Tenant(&'a Tenant),
    /// One operator's requests of the operator's routes, apart from every tenant's (D29).
    Operator(&'a Actor),
    /// Every request whose verified token names no tenant (an ID token, a token without the
    /// tenant claim or the `sub` the operator's routes count by): refused by its route, but
    /// counted all the same (D32).
    Unattributed,
}

impl Limited<'_> {
    fn key(self) -> (String, String) {
        match self {
            Limited::Tenant(tenant) => keys::request_rate(tenant),
            Limited::Operator(actor) => keys::operator_rate(actor),
            Limited::Unattributed => keys::unattributed_rate(),
        }
    }
}

/// What the limiter says of one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The request may run; give the pass back when it is answered.
    Admitted(Pass),
    /// Beyond the rate: one request passes again after `retry_after_secs` (at least 1).
    OverRate { retry_after_secs: u64 },
    /// Every place in flight is taken; one is likely free after `retry_after_secs`.
    Crowded { retry_after_secs: u64 },
    /// The table could not say ([`Decision::failure`] says why): the request is refused, to
    /// be sent again in a moment (D32).
    Unavailable,
}

/// A place in flight a request holds until it is answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pass {
    key: (String, String),
    held: Held,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Held {
    /// Place `slot` of the item, leased until `until`.
    slot: usize,
    until: i64,
}

/// The limiter's answer and, when the table could not give it, why.
#[derive(Debug)]
pub struct Decision {
    pub admission: Admission,
    /// The table's error when it could not decide ([`Admission::Unavailable`]).
    pub failure: Option<Error>,
    /// Writes the decision cost (a failed conditional write counts).
    pub writes: u32,
}

/// The shared request limits of every tenant; cheap to clone.
#[derive(Clone, Debug)]
pub struct RequestLimiter {
    store: Lazy<Store>,
    rate: RequestRate,
    /// The last item this process saw per key.
    seen: Arc<Mutex<HashMap<(String, String), Seen>>>,
}

/// What one process last saw of a key's item.
#[derive(Clone, Debug, Default)]
struct Seen {
    tat: i64,
    /// The lease of each place, `0` when free.
    leases: Vec<i64>,
    /// Until when this process refuses for places from memory: a moment after the table said
    /// every place was taken.
    crowded_until: i64,
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
    /// its first use (no retries, `timeout` a call, its calls recorded for the
    /// least-privilege check). Its calls are not among the request's store calls
    /// ([`crate::aws::timing`]): the caller times the limiter as a whole.
    pub fn from_config(
        sdk: &aws_config::SdkConfig,
        table: String,
        rate: RequestRate,
        timeout: Duration,
    ) -> Self {
        let sdk = sdk.clone();
        let store = Lazy::new(move || {
            let config = aws_sdk_dynamodb::config::Builder::from(&sdk)
                .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::disabled())
                .timeout_config(
                    aws_sdk_dynamodb::config::timeout::TimeoutConfig::builder()
                        .operation_timeout(timeout)
                        .build(),
                );
            let config = match crate::aws::actions::interceptor(crate::aws::actions::dynamodb) {
                Some(log) => config.interceptor(log),
                None => config,
            };
            Store::new(
                aws_sdk_dynamodb::Client::from_conf(config.build()),
                table.clone(),
            )
        });
        RequestLimiter::with(store, rate)
    }

    /// A limiter of `rate` over `store`'s client and table (the measurements count its calls).
    pub fn over(store: Store, rate: RequestRate) -> Self {
        RequestLimiter::with(Lazy::new(move || store.clone()), rate)
    }

    fn with(store: Lazy<Store>, rate: RequestRate) -> Self {
        RequestLimiter {
            store,
            rate,
            seen: Default::default(),
        }
    }

    pub fn rate(&self) -> RequestRate {
        self.rate
    }

    /// Takes one request of `who` at `now_micros` (microseconds since the epoch): a rate token
    /// and a place in flight, or says how long until one passes.
    pub async fn admit(&self, who: Limited<'_>, now_micros: i64) -> Decision {
        let key = who.key();
        let seen = self.remembered(&key);
        let tolerance = self.rate.tolerance_micros();
        if seen.tat > now_micros + tolerance {
            return Decision {
                admission: self.over_rate(seen.tat, now_micros),
                failure: None,
                writes: 0,
            };
        }
        if seen.crowded_until > now_micros {
            return Decision {
                admission: Admission::Crowded {
                    retry_after_secs: 1,
                },
                failure: None,
                writes: 0,
            };
        }
        let mut side = if seen.tat > now_micros {
            Side::Busy
        } else {
            Side::Idle
        };
        let mut leases = seen.leases;
        let until = now_micros + i64::try_from(LEASE.as_micros()).unwrap_or(i64::MAX);
        let mut writes = 0;
        // Each failed write says which side holds now and which places are free; a try past
        // [`TRIES`] only meets other requests taking the same places at once, and is refused
        // for now.
        for attempt in 0..TRIES {
            // What this process remembers may be old (places are given back by others): the
            // first try takes the place whose lease ends first when none looks free.
            let slot = self.free_place(&leases, now_micros);
            let slot = match slot {
                Some(slot) => slot,
                None if attempt == 0 => soonest(&leases),
                None => {
                    self.remember_crowded(&key, now_micros);
                    return Decision {
                        admission: self.crowded(&leases, now_micros),
                        failure: None,
                        writes,
                    };
                }
            };
            writes += 1;
            let stored = match self.take(&key, side, slot, until, now_micros).await {
                Ok(item) => {
                    self.remember(&key, &item);
                    let pass = Pass {
                        key,
                        held: Held { slot, until },
                    };
                    return Decision {
                        admission: Admission::Admitted(pass),
                        failure: None,
                        writes,
                    };
                }
                Err(WriteFailure::Other(error)) => {
                    return Decision {
                        admission: Admission::Unavailable,
                        failure: Some(error),
                        writes,
                    }
                }
                Err(WriteFailure::Condition(condition)) => {
                    condition.stored(()).cloned().unwrap_or_default()
                }
            };
            let now_seen = self.remember(&key, &stored);
            if now_seen.tat > now_micros + tolerance {
                return Decision {
                    admission: self.over_rate(now_seen.tat, now_micros),
                    failure: None,
                    writes,
                };
            }
            side = if now_seen.tat > now_micros {
                Side::Busy
            } else {
                Side::Idle
            };
            leases = now_seen.leases;
        }
        Decision {
            admission: Admission::Crowded {
                retry_after_secs: 1,
            },
            failure: None,
            writes,
        }
    }

    /// Gives back the place `pass` holds and charges `surcharge` requests more to its bucket at
    /// `now_micros` (D32): one write, on the side of `max(tat, now)` this process last saw; a
    /// failed condition says which side holds, or that the place was taken again after its
    /// lease, and the next try charges without it. A failure is returned for the log: the place
    /// is left to its lease, and the charge is not made.
    pub async fn release_charging(
        &self,
        pass: Pass,
        surcharge: u32,
        now_micros: i64,
    ) -> Result<(), Error> {
        if surcharge == 0 {
            return self.release(pass).await;
        }
        let Pass { key, held } = pass;
        let mut held = Some(held);
        let extra = self.rate.interval_micros() * i64::from(surcharge);
        let mut side = match self.remembered(&key).tat > now_micros {
            true => Side::Busy,
            false => Side::Idle,
        };
        for _ in 0..TRIES {
            match self
                .charge(&key, held.as_ref(), side, extra, now_micros)
                .await
            {
                Ok(item) => {
                    self.remember(&key, &item);
                    return Ok(());
                }
                Err(WriteFailure::Other(error)) => return Err(error),
                Err(WriteFailure::Condition(condition)) => {
                    let stored = condition.stored(()).cloned().unwrap_or_default();
                    let ours = held.as_ref().is_some_and(|Held { slot, until }| {
                        stored.get(&place(*slot)).and_then(|v| v.as_n().ok())
                            == Some(&until.to_string())
                    });
                    if !ours {
                        held = None;
                    }
                    side = match self.remember(&key, &stored).tat > now_micros {
                        true => Side::Busy,
                        false => Side::Idle,
                    };
                }
            }
        }
        Err(Error::unavailable(
            "request rate",
            "the request's cost was not charged: its bucket kept changing",
        ))
    }

    /// The write that moves `tat` on by `extra` from `max(tat, now)` on `side`, giving back
    /// `held` when it is still this request's place.
    async fn charge(
        &self,
        key: &(String, String),
        held: Option<&Held>,
        side: Side,
        extra: i64,
        now: i64,
    ) -> Result<Item, WriteFailure> {
        let expr = Expr::default().name("#tat", "tat").value(":now", n(now));
        let (mut update, mut condition, mut expr) = match side {
            Side::Busy => (
                "ADD #tat :extra".to_owned(),
                "#tat > :now".to_owned(),
                expr.value(":extra", n(extra)),
            ),
            Side::Idle => (
                "SET #tat = :next".to_owned(),
                "(attribute_not_exists(#tat) OR #tat <= :now)".to_owned(),
                expr.value(":next", n(now + extra)),
            ),
        };
        if let Some(Held { slot, until }) = held {
            update.push_str(" REMOVE #place");
            condition.push_str(" AND #place = :until");
            expr = expr
                .name("#place", &place(*slot))
                .value(":until", n(*until));
        }
        self.store
            .get()
            .update_one("request rate", key.clone(), &update, Some(&condition), expr)
            .await
    }

    /// Gives back the place `pass` holds (one write; a failure only leaves it to its lease, and
    /// is returned for the log).
    pub async fn release(&self, pass: Pass) -> Result<(), Error> {
        let Pass {
            key,
            held: Held { slot, until },
        } = pass;
        let expr = Expr::default()
            .name("#place", &place(slot))
            .value(":until", n(until));
        let released = self
            .store
            .get()
            .update_one(
                "request in flight",
                key.clone(),
                "REMOVE #place",
                Some("#place = :until"),
                expr,
            )
            .await;
        match released {
            Ok(item) => {
                self.remember(&key, &item);
                Ok(())
            }
            // Taken again since its lease passed: not this request's place any more.
            Err(WriteFailure::Condition(_)) => Ok(()),
            Err(WriteFailure::Other(error)) => Err(error),
        }
    }

    /// A place whose lease has passed, as far as this process knows, drawn at random among
    /// them so that requests arriving together mostly take different ones.
    fn free_place(&self, leases: &[i64], now: i64) -> Option<usize> {
        let places = usize::try_from(self.rate.in_flight.max(1)).unwrap_or(1);
        let free: Vec<usize> = (0..places)
            .filter(|&slot| leases.get(slot).copied().unwrap_or(0) <= now)
            .collect();
        let at = outbound_model::simulation::random_below(free.len() as u64) as usize;
        free.get(at).copied()
    }

    fn over_rate(&self, tat: i64, now: i64) -> Admission {
        let wait = tat - self.rate.tolerance_micros() - now;
        Admission::OverRate {
            retry_after_secs: seconds(wait),
        }
    }

    fn crowded(&self, leases: &[i64], now: i64) -> Admission {
        let soonest = leases.iter().copied().filter(|&lease| lease > now).min();
        // Most requests are answered within a second; a held place frees at its lease at worst.
        let wait = soonest.map_or(0, |lease| (lease - now).min(1_000_000));
        Admission::Crowded {
            retry_after_secs: seconds(wait),
        }
    }

    /// The write that takes a rate token on `side` and place `slot` until `until`.
    async fn take(
        &self,
        key: &(String, String),
        side: Side,
        slot: usize,
        until: i64,
        now: i64,
    ) -> Result<Item, WriteFailure> {
        let interval = self.rate.interval_micros();
        let tolerance = self.rate.tolerance_micros();
        // An hour after the furthest the schedule or the lease can reach with this write.
        let expires = (now + tolerance + interval).max(until) / 1_000_000 + 3_600;
        let expr = Expr::default()
            .name("#tat", "tat")
            .name("#place", &place(slot))
            .value(":now", n(now))
            .value(":until", n(until))
            .value(":expires", n(expires));
        let free = "(attribute_not_exists(#place) OR #place <= :now)";
        let (update, condition, expr) = match side {
            Side::Busy => (
                "ADD #tat :interval SET #place = :until, expires_at = :expires",
                format!("#tat > :now AND #tat <= :latest AND {free}"),
                expr.value(":interval", n(interval))
                    .value(":latest", n(now + tolerance)),
            ),
            Side::Idle => (
                "SET #tat = :next, #place = :until, expires_at = :expires",
                format!("(attribute_not_exists(#tat) OR #tat <= :now) AND {free}"),
                expr.value(":next", n(now + interval)),
            ),
        };
        self.store
            .get()
            .update_one("request rate", key.clone(), update, Some(&condition), expr)
            .await
    }

    fn remembered(&self, key: &(String, String)) -> Seen {
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.get(key).cloned().unwrap_or_default()
    }

    fn seen_of(&self, item: &Item) -> Seen {
        let number = |name: &str| -> Option<i64> { item.get(name)?.as_n().ok()?.parse().ok() };
        let places = usize::try_from(self.rate.in_flight).unwrap_or(0);
        Seen {
            tat: number("tat").unwrap_or(0),
            leases: (0..places)
                .map(|slot| number(&place(slot)).unwrap_or(0))
                .collect(),
            crowded_until: 0,
        }
    }

    /// Refuses for places from memory for [`CROWDED_MEMORY`] after `now`.
    fn remember_crowded(&self, key: &(String, String), now: i64) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(seen) = seen.get_mut(key) {
            let memory = i64::try_from(CROWDED_MEMORY.as_micros()).unwrap_or(0);
            seen.crowded_until = now + memory;
        }
    }

    /// Remembers what `item` says of `key`, and answers it.
    fn remember(&self, key: &(String, String), item: &Item) -> Seen {
        let now_seen = self.seen_of(item);
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.len() >= REMEMBERED && !seen.contains_key(key) {
            seen.clear();
        }
        seen.insert(key.clone(), now_seen.clone());
        now_seen
    }
}

/// The place whose lease ends first.
fn soonest(leases: &[i64]) -> usize {
    (0..leases.len())
        .min_by_key(|&slot| leases[slot])
        .unwrap_or(0)
}

/// The attribute of place `slot`.
fn place(slot: usize) -> String {
    format!("f{slot}")
}

/// Whole seconds (at least 1) of `micros`.
fn seconds(micros: i64) -> u64 {
    u64::try_from(micros)
        .unwrap_or(0)
        .div_ceil(1_000_000)
        .max(1)
}

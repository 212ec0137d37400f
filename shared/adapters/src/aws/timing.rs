//! How long each API request waits on AWS (DynamoDB, S3, SQS) and how many calls it makes, so
//! the service's own time shows apart from the store's: answered in the `Server-Timing` header
//! and the request's log line by the HTTP layer's request observer.
//!
//! [`StoreTimer`] is an SDK interceptor on every client the API builds ([`dynamodb`], [`s3`],
//! [`sqs`]). It times each attempt from `read_before_transmit` to `read_after_transmit`: from
//! the signed request handed to the HTTP client to the response head, i.e. the network and the
//! store's own work. Serializing, signing, reading the answered body off the socket and
//! deserializing stay out of it: they are CPU work of this process, paid against real AWS too.
//! Backoff between retries also counts as the service's own time.
//!
//! A call is one SDK operation (`read_before_execution`); its attempts beyond the first are its
//! retries, told apart because an overloaded store (moto at concurrency) answers with retries.
//!
//! It also counts the items each DynamoDB call read or wrote ([`rows`](super::rows)): what the
//! request cost the table, which the request limiter weighs (D32, [`rows_so_far`]).
//!
//! The time goes to the [`StoreWait`] of the request being served, held in a task-local that
//! [`StoreWait::scope`] sets around the handler. Calls outside a request (workers, the dialing
//! engine) find none and are not timed. A spawned task would lose the task-local; the handlers
//! run their calls in their own task. Concurrent calls of one request count once for the time
//! they overlap: the wait is the wall time during which at least one call was in flight, so the
//! service's own time (the handler's minus the wait) never goes negative.

use super::{actions, rows};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    AfterDeserializationInterceptorContextRef, BeforeDeserializationInterceptorContextRef,
    BeforeSerializationInterceptorContextRef, BeforeTransmitInterceptorContextRef,
    FinalizerInterceptorContextRef,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::{ConfigBag, Storable, StoreReplace};
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

tokio::task_local! {
    static CURRENT: Arc<StoreWait>;
}

/// The AWS calls of one request and the time it spent waiting on them.
#[derive(Debug, Default)]
pub struct StoreWait(Mutex<WaitState>);

#[derive(Debug, Default)]
struct WaitState {
    calls: u32,
    attempts: u32,
    in_flight: u32,
    /// When the calls now in flight began to overlap (set while `in_flight` > 0).
    since: Option<Instant>,
    waited: Duration,
    /// Items the calls read or wrote.
    rows: u64,
}

/// What [`StoreWait::total`] answers: the calls made, their retries and the time waited on them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waited {
    pub calls: u32,
    pub retries: u32,
    pub time: Duration,
}

impl StoreWait {
    /// Runs `future` (a request's handler) with this accumulator as the one its calls add to.
    pub fn scope<F: Future>(self: &Arc<Self>, future: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self.clone(), future)
    }

    /// The calls made so far and the time waited; a call still in flight (its request was
    /// dropped) counts up to now.
    pub fn total(&self) -> Waited {
        let state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let open = state.since.map_or(Duration::ZERO, |since| since.elapsed());
        Waited {
            calls: state.calls,
            retries: state.attempts.saturating_sub(state.calls),
            time: state.waited + open,
        }
    }

    /// The items the request's DynamoDB calls have read or written so far.
    pub fn rows(&self) -> u64 {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).rows
    }

    fn call(&self, rows: u64) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.calls += 1;
        state.rows = state.rows.saturating_add(rows);
    }

    fn read(&self, rows: u64) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.rows = state.rows.saturating_add(rows);
    }

    fn begin(&self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.attempts += 1;
        state.in_flight += 1;
        if state.in_flight == 1 {
            state.since = Some(Instant::now());
        }
    }

    fn end(&self) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.in_flight == 0 {
            if let Some(since) = state.since.take() {
                state.waited += since.elapsed();
            }
        }
    }
}

impl Waited {
    /// The `Server-Timing` value of a request that took `total` in the handler, `rate` of it
    /// in its tenant's request limiter (D26, whose client is not timed here):
    /// `store;dur=<ms>;desc="<n> calls", rate;dur=<ms>, app;dur=<ms>`, app being `total` minus
    /// the wait and the limiter; retries, when there were any, follow the calls
    /// (`desc="<n> calls, <r> retries"`); `rate` only when the limiter was asked.
    pub fn server_timing(&self, total: Duration, rate: Duration) -> String {
        let retries = match self.retries {
            0 => String::new(),
            r => format!(", {r} retries"),
        };
        let limiter = match rate.is_zero() {
            true => String::new(),
            false => format!(", rate;dur={:.3}", millis(rate)),
        };
        format!(
            "store;dur={:.3};desc=\"{} calls{retries}\"{limiter}, app;dur={:.3}",
            millis(self.time),
            self.calls,
            millis(total.saturating_sub(self.time).saturating_sub(rate)),
        )
    }
}

/// A `Server-Timing` value as [`Waited::server_timing`] writes it, read back by clients (the
/// HTTP suite, the latency benchmark).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServerTiming {
    pub store_ms: f64,
    pub store_calls: u32,
    pub store_retries: u32,
    /// The tenant's request limiter (D26); 0 when it was not asked.
    pub rate_ms: f64,
    pub app_ms: f64,
}

impl ServerTiming {
    /// Reads `value`; `None` unless it has both metrics, with their durations and call count.
    pub fn parse(value: &str) -> Option<ServerTiming> {
        let (mut store_ms, mut store_calls, mut store_retries, mut app_ms) = (None, None, 0, None);
        let mut rate_ms = 0.0;
        // A quoted desc may hold a comma: metrics split only outside quotes.
        let mut quoted = false;
        let metrics = value.split(|c| {
            quoted ^= c == '"';
            c == ',' && !quoted
        });
        for metric in metrics {
            let mut params = metric.trim().split(';');
            let name = params.next()?;
            for param in params {
                let (key, raw) = param.split_once('=')?;
                match (name, key) {
                    ("store", "dur") => store_ms = raw.parse().ok(),
                    ("app", "dur") => app_ms = raw.parse().ok(),
                    ("rate", "dur") => rate_ms = raw.parse().ok()?,
                    ("store", "desc") => {
                        let mut parts = raw.trim_matches('"').split(", ");
                        store_calls = parts.next()?.strip_suffix(" calls")?.parse().ok();
                        if let Some(retries) = parts.next() {
                            store_retries = retries.strip_suffix(" retries")?.parse().ok()?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Some(ServerTiming {
            store_ms: store_ms?,
            store_calls: store_calls?,
            store_retries,
            rate_ms,
            app_ms: app_ms?,
        })
    }
}

/// The items the current request's DynamoDB calls have read or written so far; `None` outside
/// a request ([`StoreWait::scope`]).
pub fn rows_so_far() -> Option<u64> {
    CURRENT.try_with(|wait| wait.rows()).ok()
}

/// A duration in fractional milliseconds.
pub fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The attempt in transmission, kept in the operation's config bag between the two hooks.
#[derive(Clone, Debug)]
struct Transmitting(Arc<StoreWait>);

impl Storable for Transmitting {
    type Storer = StoreReplace<Self>;
}

/// The interceptor that adds each attempt's time on the wire to the current request's
/// [`StoreWait`].
#[derive(Clone, Copy, Debug, Default)]
pub struct StoreTimer;

impl StoreTimer {
    fn finish(cfg: &mut ConfigBag) {
        if let Some(Transmitting(wait)) = cfg.load::<Transmitting>().cloned() {
            cfg.interceptor_state().unset::<Transmitting>();
            wait.end();
        }
    }
}

impl Intercept for StoreTimer {
    fn name(&self) -> &'static str {
        "StoreTimer"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Ok(wait) = CURRENT.try_with(Arc::clone) {
            wait.call(rows::written(context.input()));
        }
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let (Ok(wait), Ok(output)) = (CURRENT.try_with(Arc::clone), context.output_or_error()) {
            wait.read(rows::read(output));
        }
        Ok(())
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Ok(wait) = CURRENT.try_with(Arc::clone) {
            wait.begin();
            cfg.interceptor_state().store_put(Transmitting(wait));
        }
        Ok(())
    }

    fn read_after_transmit(
        &self,
        _context: &BeforeDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        Self::finish(cfg);
        Ok(())
    }

    /// A transmission that failed (no response) skips `read_after_transmit`; every attempt
    /// ends here.
    fn read_after_attempt(
        &self,
        _context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        Self::finish(cfg);
        Ok(())
    }
}

/// The DynamoDB client configuration of `sdk`, its calls timed (and recorded, [`actions`]).
pub fn dynamodb(sdk: &aws_config::SdkConfig) -> aws_sdk_dynamodb::config::Builder {
    let builder = aws_sdk_dynamodb::config::Builder::from(sdk).interceptor(StoreTimer);
    match actions::interceptor(actions::dynamodb) {
        Some(log) => builder.interceptor(log),
        None => builder,
    }
}

/// The S3 client configuration of `sdk`, its calls timed (and recorded, [`actions`]).
pub fn s3(sdk: &aws_config::SdkConfig) -> aws_sdk_s3::config::Builder {
    let builder = aws_sdk_s3::config::Builder::from(sdk).interceptor(StoreTimer);
    match actions::interceptor(actions::s3) {
        Some(log) => builder.interceptor(log),
        None => builder,
    }
}

/// The SQS client of `sdk`, its calls timed (and recorded, [`actions`]).
pub fn sqs(sdk: &aws_config::SdkConfig) -> aws_sdk_sqs::Client {
    let builder = aws_sdk_sqs::config::Builder::from(sdk).interceptor(StoreTimer);
    let builder = match actions::interceptor(actions::sqs) {
        Some(log) => builder.interceptor(log),
        None => builder,
    };
    aws_sdk_sqs::Client::from_conf(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_calls_count_once_for_their_overlap() {
        let wait = StoreWait::default();
        wait.call(1);
        wait.call(0);
        wait.read(40);
        wait.begin();
        wait.begin();
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let slept = started.elapsed();
        wait.end();
        wait.end();
        let total = wait.total();
        assert_eq!((total.calls, total.retries), (2, 0));
        assert_eq!(wait.rows(), 41, "a write's item and a read's forty");
        assert!(total.time >= slept);
        // Counted apart, the two calls would make at least twice the sleep.
        assert!(total.time < slept * 2, "{total:?} for {slept:?}");
    }

    #[test]
    fn app_time_is_the_rest_and_never_negative() {
        let waited = Waited {
            calls: 3,
            retries: 0,
            time: Duration::from_micros(2500),
        };
        let none = Duration::ZERO;
        assert_eq!(
            waited.server_timing(Duration::from_millis(4), none),
            "store;dur=2.500;desc=\"3 calls\", app;dur=1.500"
        );
        assert!(waited
            .server_timing(Duration::from_millis(1), none)
            .ends_with("app;dur=0.000"));
        assert_eq!(
            ServerTiming::parse(&waited.server_timing(Duration::from_millis(4), none)),
            Some(ServerTiming {
                store_ms: 2.5,
                store_calls: 3,
                store_retries: 0,
                rate_ms: 0.0,
                app_ms: 1.5,
            })
        );
        // The limiter's time shows apart, out of the service's own.
        let limited = waited.server_timing(Duration::from_millis(4), Duration::from_micros(500));
        assert_eq!(
            limited,
            "store;dur=2.500;desc=\"3 calls\", rate;dur=0.500, app;dur=1.000"
        );
        assert_eq!(
            ServerTiming::parse(&limited).map(|t| (t.rate_ms, t.app_ms)),
            Some((0.5, 1.0))
        );
        let retried = Waited {
            retries: 2,
            ..waited
        };
        let header = retried.server_timing(Duration::from_millis(4), none);
        assert_eq!(
            header,
            "store;dur=2.500;desc=\"3 calls, 2 retries\", app;dur=1.500"
        );
        assert_eq!(
            ServerTiming::parse(&header).map(|t| (t.store_calls, t.store_retries)),
            Some((3, 2))
        );
        assert_eq!(ServerTiming::parse("app;dur=1"), None);
    }
}

//! A fault-injecting HTTP proxy in front of a test's DynamoDB and moto (EventBridge's PutEvents).
//!
//! D1 says a throttled, over-capacity or unreachable dependency answers 503 with `Retry-After`,
//! and that nothing was changed. No emulator throttles, raises `TransactionConflict` under
//! contention or loses an answer after its write committed, so the tests put this proxy between
//! the store's DynamoDB client and the emulator: it forwards every request unchanged (method,
//! path, query, headers, body) to DynamoDB (an `X-Amz-Target` of DynamoDB or its streams) or to
//! moto (everything else), and hands the answer back, except the requests the current
//! [`FaultPlan`] picks, which it answers itself the way real DynamoDB does (JSON 1.0 protocol,
//! HTTP 400, `ThrottlingException`, a `TransactionCanceledException` whose reasons include a
//! `ThrottlingError` or a `TransactionConflict`), or forwards and then answers with an error as
//! if the answer had been lost (HTTP 500 `InternalServerError`, after the write committed).
//!
//! Why a proxy and not a stub client or an interceptor that fakes the error: the injected errors
//! arrive over HTTP as bytes, so they go through the SDK's real error parsing (`__type`,
//! `CancellationReasons`) and its real retry logic (standard mode retries throttling with
//! backoff, a cancelled transaction is not retried), and through every line of the store and the
//! HTTP layer that production runs. A request picked to fail before it is written never reaches
//! the emulator, so that fault really changes nothing stored; one picked to fail after its write
//! did change it, as a timeout whose write happened does; whatever the service shows afterwards
//! is what it did with the error.
//!
//! Requests are told apart by their `X-Amz-Target` header (`DynamoDB_20120810.PutItem`, ...).
//! SigV4: the SDK signs for the proxy's host, and neither emulator checks signatures, so the
//! headers are forwarded as they are (`host` and `content-length` dropped for reqwest to set).

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The prefix of every DynamoDB `X-Amz-Target`.
const TARGET_PREFIX: &str = "DynamoDB_20120810.";
/// The prefix of every DynamoDB Streams `X-Amz-Target` (forwarded to DynamoDB, never faulted).
const STREAMS_TARGET_PREFIX: &str = "DynamoDBStreams_20120810.";
/// The namespace of DynamoDB's error types in JSON 1.0 answers.
const ERROR_NAMESPACE: &str = "com.amazonaws.dynamodb.v20120810";
/// Largest request body the proxy reads (a 100-action transaction is well under this).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Which DynamoDB requests the proxy answers itself instead of forwarding them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultPlan {
    /// Forward everything.
    None,
    /// Throttle every DynamoDB request (`ThrottlingException`).
    All,
    /// Pick `percent` % of the DynamoDB requests, by a pseudo-random sequence from `seed` that is
    /// the same on every run (one draw per request, in the order they arrive). A picked request
    /// is throttled; a picked `TransactWriteItems` is answered, by a second draw, either with
    /// `ThrottlingException` or with a cancellation whose reasons include a `ThrottlingError`
    /// (DynamoDB answers both).
    Rate { percent: u8, seed: u64 },
    /// Cancel every `TransactWriteItems` with reasons `[None, ThrottlingError, None, ...]`;
    /// everything else passes.
    CancelTransactions,
    /// EventBridge is down: every `PutEvents` is answered HTTP 500 `InternalException` (the
    /// SDK retries it, then gives up); DynamoDB passes.
    EventsDown,
    /// EventBridge refuses part of each `PutEvents` (HTTP 200, `FailedEntryCount`): the entries
    /// at odd places are answered `ThrottlingException`, the others are put on the bus.
    RefuseOddEvents,
    /// EventBridge refuses every entry of this `DetailType` for good (HTTP 200,
    /// `FailedEntryCount`, per entry `ValidationException`, as for an entry too large or a
    /// detail it will not take), on every PutEvents; the other entries are put on the bus.
    RejectEventsOfKind(&'static str),
    /// Holds back every `TransactWriteItems` whose request holds `text` for `millis` before
    /// forwarding it: a write that read what it depends on, then lands after a write of another
    /// request that came later.
    DelayTransactionsHolding { text: &'static str, millis: u64 },
    /// Contention with another writer, as DynamoDB reports it: a picked `TransactWriteItems` is
    /// cancelled with a `TransactionConflict` reason, a picked single-item write
    /// (`PutItem`, `UpdateItem`, `DeleteItem`) answered `TransactionConflictException`. Picks
    /// `percent` % of those requests, by the sequence of `seed`; nothing else is touched.
    Conflicts { percent: u8, seed: u64 },
    /// The answer lost after the write committed: a picked write (`PutItem`, `UpdateItem`,
    /// `DeleteItem`, `TransactWriteItems`, `BatchWriteItem`) is forwarded, its write happens,
    /// and the proxy answers HTTP 500 `InternalServerError` in place of the emulator's answer,
    /// as a timeout whose write happened looks to the client. Picks `percent` % of the writes,
    /// by the sequence of `seed`; reads pass.
    LoseAnswersAfterCommit { percent: u8, seed: u64 },
}

/// The `X-Amz-Target` of EventBridge's PutEvents.
const PUT_EVENTS: &str = "AWSEvents.PutEvents";

/// What the proxy answers in place of the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Throttle,
    CancelTransaction,
    /// `TransactionConflictException`, or a cancellation with a `TransactionConflict` reason.
    Conflict,
    /// Forward, then answer `InternalServerError`.
    AfterCommit,
}

/// The writes [`FaultPlan::Conflicts`] and [`FaultPlan::LoseAnswersAfterCommit`] pick from.
const SINGLE_ITEM_WRITES: [&str; 3] = ["PutItem", "UpdateItem", "DeleteItem"];

/// A running proxy; cheap to clone, every clone sees and changes the same plan and counters.
#[derive(Clone)]
pub struct FaultProxy {
    url: String,
    shared: Arc<Shared>,
}

struct Shared {
    /// Where DynamoDB and DynamoDB Streams requests go.
    dynamodb: String,
    /// Where every other request goes (moto).
    upstream: String,
    client: reqwest::Client,
    /// The plan and the state of its pseudo-random sequence.
    plan: Mutex<(FaultPlan, XorShift)>,
    /// DynamoDB requests seen (forwarded or answered here).
    requests: AtomicUsize,
    /// Faults injected, in total and by operation.
    injected: AtomicUsize,
    by_operation: Mutex<BTreeMap<String, usize>>,
}

impl std::fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultProxy")
            .field("url", &self.url)
            .field("dynamodb", &self.shared.dynamodb)
            .field("upstream", &self.shared.upstream)
            .field("plan", &self.plan())
            .field("injected", &self.injected())
            .finish()
    }
}

impl FaultProxy {
    /// A proxy in front of the DynamoDB at `dynamodb` (`http://host:port`, a test's own) and of
    /// moto ([`outbound_local::moto_endpoint`]) for everything else, forwarding everything for
    /// now.
    pub async fn start(dynamodb: &str) -> FaultProxy {
        FaultProxy::start_to(dynamodb, outbound_local::moto_endpoint()).await
    }

    /// A proxy in front of `dynamodb` for DynamoDB and of `upstream` for every other service,
    /// forwarding everything for now.
    pub async fn start_to(dynamodb: &str, upstream: impl Into<String>) -> FaultProxy {
        let shared = Arc::new(Shared {
            dynamodb: dynamodb.trim_end_matches('/').to_owned(),
            upstream: upstream.into().trim_end_matches('/').to_owned(),
            client: reqwest::Client::new(),
            plan: Mutex::new((FaultPlan::None, XorShift::new(0))),
            requests: AtomicUsize::new(0),
            injected: AtomicUsize::new(0),
            by_operation: Mutex::new(BTreeMap::new()),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fault proxy");
        let url = format!("http://{}", listener.local_addr().expect("proxy address"));
        let router = Router::new().fallback(handle).with_state(shared.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        FaultProxy { url, shared }
    }

    /// Where the proxy listens (`http://127.0.0.1:<port>`), for a client's `endpoint_url`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Changes the plan from the next request on; a `Rate` plan starts its sequence from its seed.
    pub fn set_plan(&self, plan: FaultPlan) {
        let seed = match plan {
            FaultPlan::Rate { seed, .. }
            | FaultPlan::Conflicts { seed, .. }
            | FaultPlan::LoseAnswersAfterCommit { seed, .. } => seed,
            _ => 0,
        };
        *self.shared.plan.lock().unwrap() = (plan, XorShift::new(seed));
    }

    /// The current plan.
    pub fn plan(&self) -> FaultPlan {
        self.shared.plan.lock().unwrap().0
    }

    /// How many faults the proxy injected so far.
    pub fn injected(&self) -> usize {
        self.shared.injected.load(Ordering::SeqCst)
    }

    /// How many faults the proxy injected so far, by operation (`PutItem`, ...).
    pub fn injected_by_operation(&self) -> BTreeMap<String, usize> {
        self.shared.by_operation.lock().unwrap().clone()
    }

    /// How many DynamoDB requests reached the proxy so far (forwarded or faulted).
    pub fn requests(&self) -> usize {
        self.shared.requests.load(Ordering::SeqCst)
    }
}

impl Shared {
    /// The fault the plan picks for a request to `operation`, if any.
    fn pick(&self, operation: &str) -> Option<Fault> {
        let transaction = operation == "TransactWriteItems";
        // The writes that can meet a transaction in progress on their item.
        let item_write = transaction || SINGLE_ITEM_WRITES.contains(&operation);
        let write = item_write || operation == "BatchWriteItem";
        let mut guard = self.plan.lock().unwrap();
        let (plan, random) = &mut *guard;
        match *plan {
            FaultPlan::None
            | FaultPlan::EventsDown
            | FaultPlan::RefuseOddEvents
            | FaultPlan::RejectEventsOfKind(_)
            | FaultPlan::DelayTransactionsHolding { .. } => None,
            FaultPlan::All => Some(Fault::Throttle),
            FaultPlan::CancelTransactions => transaction.then_some(Fault::CancelTransaction),
            FaultPlan::Rate { percent, .. } => {
                if random.below(100) >= u64::from(percent) {
                    None
                } else if transaction && random.below(2) == 0 {
                    Some(Fault::CancelTransaction)
                } else {
                    Some(Fault::Throttle)
                }
            }
            FaultPlan::Conflicts { percent, .. } => {
                (item_write && random.below(100) < u64::from(percent)).then_some(Fault::Conflict)
            }
            FaultPlan::LoseAnswersAfterCommit { percent, .. } => {
                (write && random.below(100) < u64::from(percent)).then_some(Fault::AfterCommit)
            }
        }
    }

    /// How long to hold back a request to `operation` with `body` before forwarding it.
    fn delay(&self, operation: &str, body: &[u8]) -> Option<std::time::Duration> {
        let plan = self.plan.lock().unwrap().0;
        let FaultPlan::DelayTransactionsHolding { text, millis } = plan else {
            return None;
        };
        let holds = body
            .windows(text.len())
            .any(|window| window == text.as_bytes());
        (operation == "TransactWriteItems" && holds)
            .then(|| std::time::Duration::from_millis(millis))
    }

    fn count(&self, operation: &str) {
        self.injected.fetch_add(1, Ordering::SeqCst);
        *self
            .by_operation
            .lock()
            .unwrap()
            .entry(operation.to_owned())
            .or_default() += 1;
    }

    /// A PutEvents under [`FaultPlan::EventsDown`], [`FaultPlan::RefuseOddEvents`] or
    /// [`FaultPlan::RejectEventsOfKind`]; `None` to forward it as it is.
    async fn put_events(
        &self,
        parts: &axum::http::request::Parts,
        body: &Bytes,
    ) -> Option<Response> {
        let plan = self.plan.lock().unwrap().0;
        if !matches!(
            plan,
            FaultPlan::EventsDown | FaultPlan::RefuseOddEvents | FaultPlan::RejectEventsOfKind(_)
        ) {
            return None;
        }
        self.count("PutEvents");
        let json_response = |status: StatusCode, body: Value| {
            let mut response = Response::new(Body::from(body.to_string()));
            *response.status_mut() = status;
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-amz-json-1.1"),
            );
            response
        };
        if plan == FaultPlan::EventsDown {
            return Some(json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({"__type": "InternalException", "message": "injected outage"}),
            ));
        }
        let mut request: Value = serde_json::from_slice(body).ok()?;
        let entries = request["Entries"].as_array()?.clone();
        // The error code each entry is refused with, if it is.
        let refusals: Vec<Option<&str>> = entries
            .iter()
            .enumerate()
            .map(|(index, entry)| match plan {
                FaultPlan::RejectEventsOfKind(kind) => {
                    (entry["DetailType"] == kind).then_some("ValidationException")
                }
                _ => (index % 2 == 1).then_some("ThrottlingException"),
            })
            .collect();
        let kept: Vec<Value> = entries
            .iter()
            .zip(&refusals)
            .filter(|(_, refusal)| refusal.is_none())
            .map(|(entry, _)| entry.clone())
            .collect();
        let accepted: Vec<Value> = if kept.is_empty() {
            Vec::new()
        } else {
            request["Entries"] = Value::Array(kept);
            let forwarded = self
                .forward(parts.clone(), Bytes::from(request.to_string()))
                .await
                .ok()?;
            let forwarded = axum::body::to_bytes(forwarded.into_body(), MAX_BODY)
                .await
                .ok()?;
            let forwarded: Value = serde_json::from_slice(&forwarded).ok()?;
            forwarded["Entries"].as_array()?.clone()
        };
        let mut accepted = accepted.into_iter();
        let refused = refusals.iter().flatten().count();
        let results: Vec<Value> = refusals
            .iter()
            .map(|refusal| match refusal {
                None => accepted.next().unwrap_or(Value::Null),
                Some(code) => json!({"ErrorCode": code, "ErrorMessage": "injected refusal"}),
            })
            .collect();
        Some(json_response(
            StatusCode::OK,
            json!({"FailedEntryCount": refused, "Entries": results}),
        ))
    }

    /// Sends the request on to its service (DynamoDB, or moto) as it came, and its answer back
    /// as it came.
    async fn forward(
        &self,
        parts: axum::http::request::Parts,
        body: Bytes,
    ) -> Result<Response, reqwest::Error> {
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let to_dynamodb = target(&parts.headers).is_some_and(|target| {
            target.starts_with(TARGET_PREFIX) || target.starts_with(STREAMS_TARGET_PREFIX)
        });
        let upstream = if to_dynamodb {
            &self.dynamodb
        } else {
            &self.upstream
        };
        let mut headers = parts.headers;
        strip(&mut headers, &[header::HOST]);
        let answer = self
            .client
            .request(parts.method, format!("{upstream}{path}"))
            .headers(headers)
            .body(body)
            .send()
            .await?;
        let status = answer.status();
        let mut headers = answer.headers().clone();
        let body = answer.bytes().await?;
        strip(&mut headers, &[]);
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        Ok(response)
    }
}

/// Drops `extra`, `content-length` and the hop-by-hop headers: the side that sends sets them.
fn strip(headers: &mut HeaderMap, extra: &[HeaderName]) {
    let hop_by_hop = [
        header::CONTENT_LENGTH,
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::TE,
        header::TRAILER,
        header::UPGRADE,
        header::PROXY_AUTHORIZATION,
        HeaderName::from_static("keep-alive"),
        HeaderName::from_static("proxy-connection"),
    ];
    for name in hop_by_hop.iter().chain(extra) {
        headers.remove(name);
    }
}

/// The request's `X-Amz-Target` (`DynamoDB_20120810.PutItem`, ...), which names the service
/// and the operation.
fn target(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("x-amz-target")
        .and_then(|value| value.to_str().ok())
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(body) => body,
        Err(error) => {
            return (StatusCode::BAD_REQUEST, format!("unreadable body: {error}")).into_response()
        }
    };
    if target(&parts.headers) == Some(PUT_EVENTS) {
        if let Some(response) = shared.put_events(&parts, &body).await {
            return response;
        }
    }
    let operation = target(&parts.headers)
        .and_then(|target| target.strip_prefix(TARGET_PREFIX))
        .map(str::to_owned);
    if let Some(operation) = &operation {
        shared.requests.fetch_add(1, Ordering::SeqCst);
        if let Some(delay) = shared.delay(operation, &body) {
            shared.count(operation);
            tokio::time::sleep(delay).await;
        }
        if let Some(fault) = shared.pick(operation) {
            shared.count(operation);
            return match fault {
                Fault::Throttle => throttling(),
                Fault::CancelTransaction => cancelled(&body, THROTTLED),
                Fault::Conflict if operation == "TransactWriteItems" => {
                    cancelled(&body, CONFLICTED)
                }
                Fault::Conflict => conflict(),
                Fault::AfterCommit => match shared.forward(parts, body).await {
                    Ok(_) => answer_lost(),
                    Err(error) => unreachable_upstream(error),
                },
            };
        }
    }
    match shared.forward(parts, body).await {
        Ok(response) => response,
        Err(error) => unreachable_upstream(error),
    }
}

/// What a load balancer in front of an unreachable service answers.
fn unreachable_upstream(error: reqwest::Error) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        format!("fault proxy could not reach its upstream: {error}"),
    )
        .into_response()
}

/// What DynamoDB answers a single-item write that met a transaction in progress on its item.
fn conflict() -> Response {
    dynamodb_error(
        json!({"message": "Transaction is ongoing for the item"}),
        "TransactionConflictException",
    )
}

/// What the client sees of a write whose answer was lost: DynamoDB's HTTP 500, which the SDK
/// retries (and a retried conditional write then finds its own write in place).
fn answer_lost() -> Response {
    let mut response = dynamodb_error(
        json!({"message": "Internal server error"}),
        "InternalServerError",
    );
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response
}

/// A DynamoDB error answer: HTTP 400, JSON 1.0, `__type` naming the error.
fn dynamodb_error(mut body: Value, error: &str) -> Response {
    body["__type"] = json!(format!("{ERROR_NAMESPACE}#{error}"));
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-amz-json-1.0"),
    );
    let request_id = ulid::Ulid::new().to_string();
    headers.insert(
        "x-amzn-requestid",
        HeaderValue::from_str(&request_id).expect("a ULID is a header value"),
    );
    response
}

/// What DynamoDB answers a request over the table's or an index's capacity.
fn throttling() -> Response {
    dynamodb_error(
        json!({"message": "Rate of requests exceeds the allowed throughput."}),
        "ThrottlingException",
    )
}

/// The reason [`cancelled`] gives for an index over capacity.
const THROTTLED: (&str, &str) = (
    "ThrottlingError",
    "Throughput exceeds the current capacity for one or more global secondary indexes.",
);
/// The reason [`cancelled`] gives for another transaction on one of the items.
const CONFLICTED: (&str, &str) = ("TransactionConflict", "Transaction is ongoing for the item");

/// What DynamoDB answers a transaction it cancelled for `reason` (code, message), not for a
/// condition: one reason per action of the request's `TransactItems`, the second (or only) one
/// `reason`, the others `None`. No `ConditionalCheckFailed` among them.
fn cancelled(request: &[u8], reason: (&str, &str)) -> Response {
    let actions = serde_json::from_slice::<Value>(request)
        .ok()
        .and_then(|body| body["TransactItems"].as_array().map(Vec::len))
        .unwrap_or(0)
        .max(1);
    let picked = 1.min(actions - 1);
    let reasons: Vec<Value> = (0..actions)
        .map(|index| {
            if index == picked {
                json!({"Code": reason.0, "Message": reason.1})
            } else {
                json!({"Code": "None"})
            }
        })
        .collect();
    let codes: Vec<&str> = reasons
        .iter()
        .map(|reason| reason["Code"].as_str().unwrap_or_default())
        .collect();
    dynamodb_error(
        json!({
            "message": format!(
                "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                codes.join(", ")
            ),
            "CancellationReasons": reasons,
        }),
        "TransactionCanceledException",
    )
}

/// A small xorshift64* sequence: the same draws for the same seed on every run.
#[derive(Clone, Copy, Debug)]
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        // splitmix64 of the seed, so that small seeds start far apart; never zero.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        XorShift((z ^ (z >> 31)).max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A draw in `0..bound`.
    fn below(&mut self, bound: u64) -> u64 {
        (self.next() >> 32) % bound
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_sequence() {
        let draws = |seed| {
            let mut random = XorShift::new(seed);
            (0..50).map(|_| random.below(100)).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert_ne!(draws(7), draws(8));
        let picked = draws(7).iter().filter(|&&d| d < 30).count();
        assert!((5..=25).contains(&picked), "{picked} of 50 below 30");
    }

    #[tokio::test]
    async fn a_cancellation_has_one_reason_per_action() {
        let request = json!({"TransactItems": [{}, {}, {}]}).to_string();
        let response = cancelled(request.as_bytes(), THROTTLED);
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let body = axum::body::to_bytes(response.into_body(), MAX_BODY)
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            body["__type"],
            "com.amazonaws.dynamodb.v20120810#TransactionCanceledException"
        );
        let codes: Vec<&str> = body["CancellationReasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["Code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["None", "ThrottlingError", "None"]);
        assert!(body["message"]
            .as_str()
            .unwrap()
            .ends_with("[None, ThrottlingError, None]"));
    }
}

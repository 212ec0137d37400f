//! The wire: the embedded dynoxide database and the [`Mailbox`], and the SDK's HTTP client seam
//! answered in this process (no socket). The store and the request limiter reach the database
//! through the store's own seam ([`crate::dynamo`]); the service's other clients through the
//! HTTP seam: SQS sends go to the mailbox, the table's creation to the database as DynamoDB's
//! JSON. Each request first waits a latency drawn from the seed (virtual time), so the
//! seed picks how concurrent runs, handlers and ticks interleave; and while faults are on, the
//! seed throttles DynamoDB requests before they apply, answers a committed write with a server
//! error, and cancels transactions as conflicting ([`Wire::apply`], whichever seam). It keeps
//! every call outcome the store committed (the `CallCompleted` events its outbox took, D20), for
//! the end's per-attempt check.

use crate::mailbox::Mailbox;
use crate::provider::AttemptKey;
use crate::Seeded;
use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::{HttpRequest, HttpResponse};
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::body::SdkBody;
use dynoxide::actions;
use outbound_model::call::Reason;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often, in ten-thousandths, each DynamoDB fault strikes while faults are on.
#[derive(Clone, Copy, Debug, Default)]
pub struct DbFaults {
    /// Throttled before it applies (the SDK retries it).
    pub throttled: u32,
    /// A write applied, then answered with a server error (the timeout whose write happened).
    pub lost_after_commit: u32,
    /// A transaction cancelled as conflicting, nothing applied (the store retries it).
    pub conflict: u32,
}

/// A call's outcome as the store committed it: the `CallCompleted` event its outbox took in the
/// transaction that recorded the outcome (D20).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recorded {
    pub task_id: String,
    pub contact_id: String,
    pub attempt: u32,
    pub reason: Reason,
    pub duration_seconds: u64,
    /// Virtual milliseconds when it was committed.
    #[serde(skip)]
    pub at: i64,
}

impl Recorded {
    /// The attempt it is the outcome of: task, contact, attempt.
    pub fn attempt(&self) -> crate::provider::AttemptKey {
        (self.task_id.clone(), self.contact_id.clone(), self.attempt)
    }
}

/// The wire's state: the database, the mailbox, the seed's draws, the faults and the outcomes
/// committed.
#[derive(Clone)]
pub struct Wire {
    db: dynoxide::Database,
    mailbox: Arc<Mutex<Mailbox>>,
    pub(crate) seeded: Seeded,
    faults: Arc<Mutex<Option<DbFaults>>>,
    recorded: Arc<Mutex<Committed>>,
    /// Attempts of one request of the store's seam, the first included.
    pub(crate) attempts: u32,
}

/// The outcomes committed, and the transactions' idempotency tokens seen: a transaction sent
/// again with its token after its answer was lost is answered as committed without applying
/// again (DynamoDB's `ClientRequestToken`), so its outcomes count once.
#[derive(Default)]
struct Committed {
    /// Writes the database applied, of any kind.
    writes: u64,
    outcomes: Vec<Recorded>,
    tokens: std::collections::BTreeSet<String>,
    /// When each attempt was last claimed: its contact's state moved into a call.
    claims: BTreeMap<AttemptKey, i64>,
}

/// What a write commits that the promises read, were it to apply: its client request token,
/// the `CallCompleted` details it puts (the call outcomes), the attempts it claims.
#[derive(Default)]
pub(crate) struct Written {
    pub(crate) token: Option<String>,
    pub(crate) outcomes: Vec<String>,
    pub(crate) claims: Vec<AttemptKey>,
}

/// The database's faults held off ([`Wire::faults_held_off`]), put back when dropped.
pub struct FaultsHeldOff {
    wire: Wire,
    faults: Option<DbFaults>,
}

impl Drop for FaultsHeldOff {
    fn drop(&mut self) {
        self.wire.set_faults(self.faults);
    }
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Wire")
    }
}

impl Wire {
    pub fn new(mailbox: Arc<Mutex<Mailbox>>, seeded: Seeded) -> Wire {
        Wire {
            db: dynoxide::Database::memory().expect("an in-memory database opens"),
            mailbox,
            seeded,
            faults: Arc::new(Mutex::new(None)),
            recorded: Arc::default(),
            attempts: crate::dynamo::ATTEMPTS,
        }
    }

    /// The same database, each request through the store's seam tried once: the request
    /// limiter's client, which the service builds without retries.
    pub fn without_retries(&self) -> Wire {
        Wire {
            attempts: 1,
            ..self.clone()
        }
    }

    /// Every call outcome the store committed, in the order committed.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().unwrap().outcomes.clone()
    }

    /// When `attempt` was last claimed, if it was.
    pub fn last_claim(&self, attempt: &AttemptKey) -> Option<i64> {
        self.recorded.lock().unwrap().claims.get(attempt).copied()
    }

    /// How many writes the database has applied: while it stays the same, so does every item.
    pub fn writes(&self) -> u64 {
        self.recorded.lock().unwrap().writes
    }

    /// Holds the database's faults off until the answer is dropped, then puts back those on
    /// now: for the world's own writes, whose effect it must know.
    pub fn faults_held_off(&self) -> FaultsHeldOff {
        let faults = self.faults.lock().unwrap().take();
        FaultsHeldOff {
            wire: self.clone(),
            faults,
        }
    }

    /// Turns the database's faults on (`Some`) or off.
    pub fn set_faults(&self, faults: Option<DbFaults>) {
        *self.faults.lock().unwrap() = faults;
    }

    fn answer(&self, target: &str, body: &str) -> (u16, String) {
        if let Some(operation) = target.strip_prefix("DynamoDB_20120810.") {
            return self.dynamodb(operation, body);
        }
        if let Some(operation) = target.strip_prefix("AmazonSQS.") {
            return self.sqs(operation, body);
        }
        (400, error_body("UnknownOperationException", target))
    }

    /// A DynamoDB request that came through the SDK's HTTP seam (the table's creation),
    /// answered as DynamoDB's JSON. None records a call's outcome: the store's writes, which
    /// do, come through its own seam ([`crate::dynamo`]).
    fn dynamodb(&self, operation: &str, body: &str) -> (u16, String) {
        match self.apply(
            operation,
            |db| dispatch(db, operation, body),
            Written::default,
        ) {
            Ok(json) => (200, json),
            Err(Refused::Db(error)) => (error.status_code(), error.to_json()),
            Err(Refused::Conflict) => (400, conflict_body(body)),
            Err(refused) => (refused.status(), error_body(refused.code(), "simulated")),
        }
    }

    /// The latency a request waits before it applies, drawn from the seed: the seed picks how
    /// concurrent runs, handlers and ticks interleave.
    pub(crate) fn latency(&self) -> Duration {
        Duration::from_micros(self.seeded.below(4_000) + 200)
    }

    /// One attempt of DynamoDB request `operation`: the seed's faults, then `run` on the
    /// database. A write that applied is counted, and the call outcomes it committed kept
    /// (`written`: its client request token and the `CallCompleted` details it put).
    pub(crate) fn apply<O>(
        &self,
        operation: &str,
        run: impl FnOnce(&dynoxide::Database) -> Result<O, dynoxide::DynoxideError>,
        written: impl FnOnce() -> Written,
    ) -> Result<O, Refused> {
        let faults = *self.faults.lock().unwrap();
        let writes = matches!(
            operation,
            "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" | "TransactWriteItems"
        );
        if let Some(faults) = faults {
            if self.seeded.chance(faults.throttled) {
                self.seeded.note(&format!("throttled {operation}"));
                return Err(Refused::Throttled);
            }
            if operation == "TransactWriteItems" && self.seeded.chance(faults.conflict) {
                self.seeded.note("conflict");
                return Err(Refused::Conflict);
            }
        }
        let answer = run(&self.db).map_err(Refused::Db)?;
        if writes {
            let written = written();
            self.recorded
                .lock()
                .unwrap()
                .add(written, self.seeded.now_ms());
            if faults.is_some_and(|faults| self.seeded.chance(faults.lost_after_commit)) {
                self.seeded.note(&format!("lost answer {operation}"));
                return Err(Refused::LostAfterCommit);
            }
        }
        Ok(answer)
    }

    fn sqs(&self, operation: &str, body: &str) -> (u16, String) {
        let request: serde_json::Value = match serde_json::from_str(body) {
            Ok(value) => value,
            Err(error) => return (400, error_body("InvalidParameterValue", &error.to_string())),
        };
        let url = request["QueueUrl"].as_str().unwrap_or_default().to_owned();
        let mut mailbox = self.mailbox.lock().unwrap();
        match operation {
            "SendMessage" => {
                let delay = request["DelaySeconds"].as_u64().unwrap_or(0);
                let body = request["MessageBody"].as_str().unwrap_or_default();
                let id = mailbox.send(&url, body, delay, &self.seeded);
                (
                    200,
                    serde_json::json!({"MessageId": id.to_string()}).to_string(),
                )
            }
            "SendMessageBatch" => {
                let mut sent = Vec::new();
                for entry in request["Entries"].as_array().into_iter().flatten() {
                    let delay = entry["DelaySeconds"].as_u64().unwrap_or(0);
                    let body = entry["MessageBody"].as_str().unwrap_or_default();
                    let id = mailbox.send(&url, body, delay, &self.seeded);
                    sent.push(
                        serde_json::json!({"Id": entry["Id"], "MessageId": id.to_string(),
                        "MD5OfMessageBody": ""}),
                    );
                }
                (
                    200,
                    serde_json::json!({"Successful": sent, "Failed": []}).to_string(),
                )
            }
            other => (400, error_body("UnsupportedOperation", other)),
        }
    }
}

impl HttpConnector for Wire {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let wire = self.clone();
        let target = request
            .headers()
            .get("x-amz-target")
            .unwrap_or_default()
            .to_owned();
        let body = request
            .body()
            .bytes()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .unwrap_or_default();
        let latency = wire.latency();
        HttpConnectorFuture::new(async move {
            tokio::time::sleep(latency).await;
            let (status, json) = wire.answer(&target, &body);
            wire.seeded.note(&format!("{target} {status}"));
            let mut response = HttpResponse::new(
                status.try_into().expect("a valid status"),
                SdkBody::from(json),
            );
            response
                .headers_mut()
                .insert("content-type", "application/x-amz-json-1.0");
            Ok(response)
        })
    }
}

impl HttpClient for Wire {
    fn http_connector(
        &self,
        _settings: &HttpConnectorSettings,
        _components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        SharedHttpConnector::new(self.clone())
    }
}

impl Committed {
    /// A write applied: the call outcomes among the `CallCompleted` details it put and the
    /// attempts it claimed, unless its client request token was seen before (a transaction
    /// sent again after its answer was lost, which DynamoDB answers as committed without
    /// applying again).
    fn add(&mut self, written: Written, at: i64) {
        self.writes += 1;
        if let Some(token) = written.token {
            if !self.tokens.insert(token) {
                return;
            }
        }
        self.claims
            .extend(written.claims.into_iter().map(|attempt| (attempt, at)));
        let outcomes = (written.outcomes.iter())
            .filter_map(|detail| serde_json::from_str::<Recorded>(detail).ok())
            .map(|outcome| Recorded { at, ..outcome });
        self.outcomes.extend(outcomes);
    }
}

/// Why a DynamoDB request was not answered with its output.
#[derive(Debug)]
pub enum Refused {
    /// Throttled by the seed before it applied (the SDK tries it again).
    Throttled,
    /// A transaction the seed cancelled as conflicting, nothing applied.
    Conflict,
    /// A write that applied, answered with a server error (the SDK tries it again).
    LostAfterCommit,
    /// The database's own answer: a failed condition, a cancelled transaction, a bad request.
    Db(dynoxide::DynoxideError),
}

impl Refused {
    pub fn status(&self) -> u16 {
        match self {
            Refused::Throttled | Refused::Conflict => 400,
            Refused::LostAfterCommit => 500,
            Refused::Db(error) => error.status_code(),
        }
    }

    /// The error code DynamoDB names it by.
    pub fn code(&self) -> &str {
        match self {
            Refused::Throttled => "ProvisionedThroughputExceededException",
            Refused::Conflict => "TransactionCanceledException",
            Refused::LostAfterCommit => "InternalServerError",
            Refused::Db(error) => {
                let kind = error.error_type();
                kind.rsplit_once('#').map_or(kind, |(_, code)| code)
            }
        }
    }

    pub fn message(&self) -> String {
        match self {
            Refused::Db(error) => error.to_string(),
            Refused::Conflict => "Transaction cancelled, please refer cancellation \
                                     reasons for specific reasons"
                .to_owned(),
            _ => "simulated".to_owned(),
        }
    }

    /// Whether the SDK's standard retry tries it again: throttled, or a server error.
    pub fn retried(&self) -> bool {
        self.status() >= 500
            || matches!(
                self.code(),
                "ProvisionedThroughputExceededException"
                    | "ThrottlingException"
                    | "RequestLimitExceeded"
                    | "TransactionInProgressException"
            )
    }
}

fn error_body(kind: &str, message: &str) -> String {
    serde_json::json!({"__type": format!("com.amazonaws.dynamodb.v20120810#{kind}"), "message": message})
        .to_string()
}

/// A transaction cancelled as conflicting: one reason per action, each `TransactionConflict`.
fn conflict_body(request: &str) -> String {
    let actions = serde_json::from_str::<serde_json::Value>(request)
        .ok()
        .and_then(|value| value["TransactItems"].as_array().map(Vec::len))
        .unwrap_or(1);
    let reasons: Vec<serde_json::Value> = (0..actions)
        .map(|_| serde_json::json!({"Code": "TransactionConflict", "Message": "simulated"}))
        .collect();
    serde_json::json!({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons",
        "CancellationReasons": reasons,
    })
    .to_string()
}

/// One DynamoDB operation of those the service uses, on `db`.
fn dispatch(
    db: &dynoxide::Database,
    operation: &str,
    body: &str,
) -> Result<String, dynoxide::DynoxideError> {
    fn read<T: serde::de::DeserializeOwned>(body: &str) -> Result<T, dynoxide::DynoxideError> {
        serde_json::from_str(body)
            .map_err(|error| dynoxide::DynoxideError::ValidationException(error.to_string()))
    }
    fn write<T: serde::Serialize>(value: &T) -> Result<String, dynoxide::DynoxideError> {
        serde_json::to_string(value)
            .map_err(|error| dynoxide::DynoxideError::InternalServerError(error.to_string()))
    }
    match operation {
        "CreateTable" => {
            write(&db.create_table(read::<actions::create_table::CreateTableRequest>(body)?)?)
        }
        "DescribeTable" => {
            write(&db.describe_table(read::<actions::describe_table::DescribeTableRequest>(body)?)?)
        }
        "UpdateTimeToLive" => write(&db.update_time_to_live(read::<
            actions::update_time_to_live::UpdateTimeToLiveRequest,
        >(body)?)?),
        "PutItem" => write(&db.put_item(read::<actions::put_item::PutItemRequest>(body)?)?),
        "GetItem" => write(&db.get_item(read::<actions::get_item::GetItemRequest>(body)?)?),
        "DeleteItem" => {
            write(&db.delete_item(read::<actions::delete_item::DeleteItemRequest>(body)?)?)
        }
        "UpdateItem" => {
            write(&db.update_item(read::<actions::update_item::UpdateItemRequest>(body)?)?)
        }
        "Query" => write(&db.query(read::<actions::query::QueryRequest>(body)?)?),
        "Scan" => write(&db.scan(read::<actions::scan::ScanRequest>(body)?)?),
        "BatchGetItem" => {
            write(&db.batch_get_item(read::<actions::batch_get_item::BatchGetItemRequest>(body)?)?)
        }
        "BatchWriteItem" => write(&db.batch_write_item(read::<
            actions::batch_write_item::BatchWriteItemRequest,
        >(body)?)?),
        "TransactWriteItems" => write(&db.transact_write_items(read::<
            actions::transact_write_items::TransactWriteItemsRequest,
        >(body)?)?),
        "TransactGetItems" => write(&db.transact_get_items(read::<
            actions::transact_get_items::TransactGetItemsRequest,
        >(body)?)?),
        other => Err(dynoxide::DynoxideError::ValidationException(format!(
            "the simulation's wire does not serve {other}"
        ))),
    }
}

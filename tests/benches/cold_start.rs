//! Cold-start benchmark (`make bench`, `make bench-cold-start`): how long each of the ten
//! function binaries takes from `exec` to its first request for an event
//! (`GET /2018-06-01/runtime/invocation/next`), the span Lambda reports as Init Duration:
//! loader, configuration read, SDK clients built, runtime started. The binaries are built
//! beforehand by `make bench-functions` as `make package` builds them (fixed-address
//! executables, functions/link.rs), with the bench profile.
//!
//! A minimal Lambda Runtime API stand-in (HTTP/1.1 on 127.0.0.1, one listener per spawn so no
//! run can answer another's request) answers the first `/next` with one event, holds later ones
//! open as an idle sandbox would, and accepts `/response` and `/error`. Each binary is spawned
//! `COLD_START_RUNS` times (default 20) with the environment a deployed function has (that of
//! `template.yaml`, plus the variables Lambda itself sets, and nothing else: no `HOME`, as in
//! Lambda), and killed once it asks for an event. The binaries take turns run by run, so a
//! burst of load on the machine falls on all of them alike.
//!
//! Records, per `make bench` run, the median of its spawns as `cold_start_ms.<binary>` (the
//! functions and `hello`, a `lambda_runtime` echo built with the same profile), and
//! `cold_start_ratio_vs_hello`: the slowest function's median over hello's.
//!
//! No AWS endpoint is reachable here: a function that reached the network at start (instance
//! metadata, a credentials endpoint) would show as a slow or failed start, not pass unnoticed.
//! The one AWS call a function makes at start, reading its key from Secrets Manager by ARN
//! (D32: the API functions' page-token key, the dialing functions' call-signing key), is
//! answered by the same stand-in (`AWS_ENDPOINT_URL_SECRETS_MANAGER`): its client, request and
//! signing are measured; the TLS handshake and the round trip to Secrets Manager that a deployed
//! function adds are not.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::{get, post};
use axum::Router;
use outbound_local::FUNCTIONS;
use outbound_tests::bench::record;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const HELLO: &str = "hello-lambda";

/// Longest wait for a binary's first `/next`; a start that blocks on the network ends here.
const START_LIMIT: Duration = Duration::from_secs(10);

/// The event every sandbox gets first; hello echoes it, which checks the stand-in's protocol.
const EVENT: &str = r#"{"coldStart":true}"#;

/// What the stand-in saw, in order.
#[derive(Debug)]
enum Seen {
    Next(Instant),
    Response(String),
    Error(String),
}

#[derive(Clone)]
struct Sandbox {
    seen: mpsc::Sender<Seen>,
    answered: Arc<AtomicBool>,
}

const PREFIX: &str = "/2018-06-01/runtime";

fn runtime_api(sandbox: Sandbox) -> Router {
    Router::new()
        .route(&format!("{PREFIX}/invocation/next"), get(next))
        .route(
            &format!("{PREFIX}/invocation/{{id}}/response"),
            post(|State(s): State<Sandbox>, body: String| async move {
                drop(s.seen.send(Seen::Response(body)));
                StatusCode::ACCEPTED
            }),
        )
        .route(&format!("{PREFIX}/invocation/{{id}}/error"), post(error))
        .route(&format!("{PREFIX}/init/error"), post(error))
        .route("/", post(secret_value))
        .with_state(sandbox)
}

/// The key of every secret the stand-in is asked for (Secrets Manager's GetSecretValue).
const SECRET_KEY: &str = "cold-start-secret-key-0123456789abcdef0123456789";

/// Secrets Manager's GetSecretValue (JSON 1.1 over `POST /`), answered with [`SECRET_KEY`] for
/// whatever ARN is asked; any other operation is refused.
async fn secret_value(headers: HeaderMap, body: String) -> (StatusCode, HeaderMap, String) {
    let mut answer = HeaderMap::new();
    answer.insert(
        "content-type",
        HeaderValue::from_static("application/x-amz-json-1.1"),
    );
    let target = headers.get("x-amz-target").and_then(|v| v.to_str().ok());
    if target != Some("secretsmanager.GetSecretValue") {
        return (StatusCode::BAD_REQUEST, answer, String::new());
    }
    let asked: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let arn = asked["SecretId"].as_str().unwrap_or_default();
    let secret = serde_json::json!({
        "ARN": arn,
        "Name": arn.rsplit(':').next().unwrap_or(arn),
        "SecretString": SECRET_KEY,
        "VersionId": "00000000-0000-0000-0000-000000000000",
        "VersionStages": ["AWSCURRENT"],
        "CreatedDate": 1_767_225_600,
    });
    (StatusCode::OK, answer, secret.to_string())
}

/// The first `/next` gets the event; later ones wait, as they do in a sandbox with no traffic.
async fn next(State(sandbox): State<Sandbox>) -> (HeaderMap, String) {
    drop(sandbox.seen.send(Seen::Next(Instant::now())));
    if sandbox.answered.swap(true, Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let mut headers = HeaderMap::new();
    let deadline = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        + Duration::from_secs(30);
    let values = [
        ("lambda-runtime-aws-request-id", "cold-start-1".to_owned()),
        (
            "lambda-runtime-deadline-ms",
            deadline.as_millis().to_string(),
        ),
        (
            "lambda-runtime-invoked-function-arn",
            "arn:aws:lambda:us-east-1:123456789012:function:cold-start".to_owned(),
        ),
        (
            "lambda-runtime-trace-id",
            "Root=1-00000000-000000000000000000000000;Sampled=0".to_owned(),
        ),
        ("content-type", "application/json".to_owned()),
    ];
    for (name, value) in values {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(name, value);
        }
    }
    (headers, EVENT.to_owned())
}

async fn error(State(sandbox): State<Sandbox>, body: String) -> StatusCode {
    drop(sandbox.seen.send(Seen::Error(body)));
    StatusCode::ACCEPTED
}

/// `COLD_START_BIN_DIR` if set (to compare builds), else `target/<profile>/` of this build: the
/// bench itself runs from its `deps/` folder.
fn binaries_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("COLD_START_BIN_DIR") {
        return Ok(dir.into());
    }
    let exe = std::env::current_exe()?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| "the bench binary has no target folder".into())
}

/// What a deployed function's process sees: `template.yaml`'s variables, the queue URLs of every
/// function (each reads only its own), and what Lambda sets itself.
fn lambda_environment(binary: &str, port: u16) -> Vec<(&'static str, String)> {
    let queue =
        |name: &str| format!("https://sqs.us-east-1.amazonaws.com/123456789012/outbound-{name}");
    let mut environment = vec![
        ("AWS_LAMBDA_RUNTIME_API", format!("127.0.0.1:{port}")),
        ("AWS_LAMBDA_FUNCTION_NAME", format!("outbound-{binary}")),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512".into()),
        (
            "AWS_LAMBDA_LOG_GROUP_NAME",
            format!("/aws/lambda/outbound-{binary}"),
        ),
        (
            "AWS_LAMBDA_LOG_STREAM_NAME",
            "2026/01/01/[$LATEST]0123456789abcdef".into(),
        ),
        ("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand".into()),
        ("AWS_EXECUTION_ENV", "AWS_Lambda_provided.al2023".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_DEFAULT_REGION", "us-east-1".into()),
        ("AWS_ACCESS_KEY_ID", "ASIAEXAMPLEEXAMPLE00".into()),
        (
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        ),
        (
            "AWS_SESSION_TOKEN",
            "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN".into(),
        ),
        ("AWS_XRAY_DAEMON_ADDRESS", "169.254.79.129:2000".into()),
        ("AWS_XRAY_CONTEXT_MISSING", "LOG_ERROR".into()),
        ("LAMBDA_TASK_ROOT", "/var/task".into()),
        ("LAMBDA_RUNTIME_DIR", "/var/runtime".into()),
        ("_HANDLER", "bootstrap".into()),
        ("LANG", "en_US.UTF-8".into()),
        ("TZ", ":UTC".into()),
        ("PATH", "/usr/local/bin:/usr/bin/:/bin:/opt/bin".into()),
        ("TABLE_NAME", "outbound-Table-EXAMPLE".into()),
        ("BUCKET_NAME", "outbound-bucket-example".into()),
        ("RECLAIM_QUEUE_URL", queue("reclaim")),
        ("EXPORT_QUEUE_URL", queue("export")),
        ("DIAL_QUEUE_URL", queue("dial")),
        ("CALL_EVENTS_QUEUE_URL", queue("call-events")),
        ("EXPORT_JOB_THRESHOLD", "50000".into()),
        ("EVENT_BUS_NAME", "outbound-events".into()),
        ("EVENT_DEAD_LETTER_QUEUE_URL", queue("event-dead-letters")),
        ("SERVICE_TIME_ZONE", "UTC".into()),
        ("AUTH_MODE", "apigateway".into()),
        ("TENANT_CLAIM", "tenant_id".into()),
        // Where the key of a function that has one is read (D32): this stand-in.
        (
            "AWS_ENDPOINT_URL_SECRETS_MANAGER",
            format!("http://127.0.0.1:{port}"),
        ),
        ("RUST_LOG", "info".into()),
        ("DIAL_PROVIDER", "simulated".into()),
        ("DIAL_RATE_PER_SECOND", "2".into()),
        ("DIAL_MAX_IN_FLIGHT_PER_TASK", "10".into()),
        ("DIAL_MAX_IN_FLIGHT", "10".into()),
        ("DIAL_RECONCILE_AFTER_SECONDS", "600".into()),
        ("DIAL_RUNS_PER_TICK", "4".into()),
        ("CONNECT_INSTANCE_ID", String::new()),
        ("CONNECT_CONTACT_FLOW_ID", String::new()),
        ("CONNECT_SOURCE_PHONE_NUMBER", String::new()),
    ];
    let secret =
        |name: &str| format!("arn:aws:secretsmanager:us-east-1:123456789012:secret:{name}");
    // The key a function's environment names by its secret's ARN, as template.yaml gives them.
    let key = match binary {
        "datasource-api" | "task-api" => {
            Some(("PAGE_TOKEN_SECRET_ARN", secret("PageTokenSecret-AbCdEf")))
        }
        "dialer-tick" | "dialer" | "call-events" | "flow-results" => Some((
            "CALL_SIGNING_SECRET_ARN",
            secret("CallSigningSecret-AbCdEf"),
        )),
        _ => None,
    };
    environment.extend(key);
    environment
}

/// Kills the child when dropped, so no failed run leaves one behind.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        drop(self.0.kill());
        drop(self.0.wait());
    }
}

/// One cold start of `binary`: milliseconds from spawn to its first `/next`. With `echo`, also
/// waits for its answer to the event and checks that it is the event.
fn cold_start(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
    binary: &str,
    echo: bool,
) -> Result<f64> {
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let port = listener.local_addr()?.port();
    let (sender, seen) = mpsc::channel();
    let sandbox = Sandbox {
        seen: sender,
        answered: Arc::new(AtomicBool::new(false)),
    };
    let server = runtime.spawn(async move { axum::serve(listener, runtime_api(sandbox)).await });
    let result = spawn_and_wait(dir, binary, port, &seen, echo);
    server.abort();
    result
}

/// Spawns `binary` against the stand-in on `port` and times it to the first `/next` in `seen`.
fn spawn_and_wait(
    dir: &Path,
    binary: &str,
    port: u16,
    seen: &mpsc::Receiver<Seen>,
    echo: bool,
) -> Result<f64> {
    let mut command = Command::new(dir.join(binary));
    command
        .env_clear()
        .envs(lambda_environment(binary, port))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let mut child = Running(command.spawn().map_err(|e| format!("{binary}: {e}"))?);
    let ms = match seen.recv_timeout(START_LIMIT) {
        Ok(Seen::Next(at)) => at.duration_since(started).as_secs_f64() * 1000.0,
        Ok(other) => return Err(format!("{binary}: {other:?} before asking for an event").into()),
        Err(_) => {
            let status = child.0.try_wait()?;
            return Err(format!(
                "{binary}: no request for an event within {START_LIMIT:?} (exit: {status:?})"
            )
            .into());
        }
    };
    if echo {
        match seen.recv_timeout(START_LIMIT) {
            Ok(Seen::Response(body)) if body == EVENT => {}
            Ok(Seen::Error(body)) => return Err(format!("{binary}: reported {body}").into()),
            other => return Err(format!("{binary}: answered {other:?}, not the event").into()),
        }
    }
    Ok(ms)
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    let middle = samples.len() / 2;
    if samples.len().is_multiple_of(2) {
        (samples[middle - 1] + samples[middle]) / 2.0
    } else {
        samples[middle]
    }
}

fn main() -> Result<()> {
    let runs: usize = match std::env::var("COLD_START_RUNS") {
        Ok(raw) => raw
            .parse()
            .map_err(|_| format!("COLD_START_RUNS {raw:?} is not a count"))?,
        Err(_) => 20,
    }
    .max(1);
    let dir = binaries_dir()?;
    // `COLD_START_FUNCTIONS=dialer,task-api` measures those alone (beside hello), to compare
    // builds without building all ten; `make bench` measures all of them.
    let only = std::env::var("COLD_START_FUNCTIONS").ok();
    let chosen = |name: &&str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|one| one.trim() == *name))
    };
    let binaries: Vec<&str> = std::iter::once(HELLO)
        .chain(FUNCTIONS.into_iter().filter(chosen))
        .collect();
    for binary in &binaries {
        if !dir.join(binary).is_file() {
            return Err(format!(
                "{} is missing: build it first (make bench-functions)",
                dir.join(binary).display()
            )
            .into());
        }
    }
    let runtime = tokio::runtime::Runtime::new()?;
    // One start each first, to warm the page cache and check the stand-in with hello's echo.
    for binary in &binaries {
        cold_start(&runtime, &dir, binary, *binary == HELLO)?;
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); binaries.len()];
    for _ in 0..runs {
        for (binary, samples) in binaries.iter().zip(&mut samples) {
            samples.push(cold_start(&runtime, &dir, binary, false)?);
        }
    }
    let medians: Vec<f64> = samples.into_iter().map(median).collect();
    let hello = medians[0];
    record("cold_start_ms.hello", hello);
    let mut worst = 0.0_f64;
    for (binary, ms) in binaries.iter().zip(&medians).skip(1) {
        record(&format!("cold_start_ms.{binary}"), *ms);
        worst = worst.max(*ms);
    }
    record("cold_start_ratio_vs_hello", worst / hello);
    Ok(())
}

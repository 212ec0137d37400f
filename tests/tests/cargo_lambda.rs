//! The functions' own `main`s under `cargo lambda` (README, "Running a function under cargo
//! lambda"): `cargo lambda watch` (the pinned cargo-lambda of `.venv`) serves its runtime
//! emulator on a free loopback port with the env file `make run` would write for this test's
//! own stack (`outbound_local::lambda_env`), builds and starts each function with `cargo run`
//! on its first invocation, and `cargo lambda invoke` sends it the recorded events of
//! `tests/events/`, as the README tells users to. Each function reads its key at cold start
//! from this test's secrets on moto, by the ARN the file names, as in AWS (D32).
//!
//! - datasource-api, sent API Gateway HTTP API events (payload 2.0) carrying the JWT
//!   authorizer's claims: the exact envelope, status and request id AWS would answer, the data
//!   source stored under the claims' tenant, and then listed;
//! - dialer, sent an SQS batch of a dial and a reconcile job of a task that does not exist:
//!   both acknowledged, `{"batchItemFailures":[]}`;
//! - flow-results, sent Amazon Connect's ContactFlowEvent of a call the stack has no record of:
//!   the flat object of strings Connect takes, `{"recorded":"false"}` (D22).
//!
//! `cargo run` resolves the workspace's features as `cargo test --workspace` does, so after
//! `make test` has built the workspace only the three small function crates are compiled and
//! linked (about 10-30 s each). Everything started is stopped at the end, on failure too.

use outbound_local::lambda_env;
use outbound_local::provision;
use outbound_model::Tenant;
use outbound_tests::stack::{unique, Stack};
use serde_json::{json, Value};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// An invocation that builds its function first (`cargo run`, compile and link).
const COLD: Duration = Duration::from_secs(420);
/// An invocation of a function already running.
const WARM: Duration = Duration::from_secs(30);
/// How long the emulator may take to listen, and to stop.
const START: Duration = Duration::from_secs(30);

/// The pinned cargo-lambda (`scripts/requirements.txt`, installed by `scripts/stack.sh setup`).
fn cargo_lambda() -> PathBuf {
    let path = root().join(".venv/bin/cargo-lambda");
    assert!(
        path.is_file(),
        "{} is missing: `scripts/stack.sh setup` installs it (make test does)",
        path.display()
    );
    path
}

/// Variables `cargo test` sets for a test (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`, ...), as a
/// prefix or a whole name. Build scripts ask to rerun when some of them change (ring's asks for
/// `CARGO_PKG_NAME`), so a `cargo run` seeing the test's values would rebuild ring and the AWS
/// SDK above it, and the next `cargo test` would rebuild them back.
const SET_BY_CARGO_TEST: [&str; 13] = [
    "CARGO",
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_PKG_",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_BIN_EXE_",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "CARGO_CFG_",
    "OUT_DIR",
];

/// A command of the pinned cargo-lambda, run in the repository with the environment of the
/// shell that ran `cargo test`: without what `cargo test` added, without the caller's AWS
/// settings (the env file holds every one the functions need) and without proxies
/// (everything is on loopback).
fn command(args: &[&str]) -> Command {
    let mut command = Command::new(cargo_lambda());
    command.arg("lambda").args(args).current_dir(root());
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let by_cargo = SET_BY_CARGO_TEST
            .iter()
            .any(|set| name == *set || (set.ends_with('_') && name.starts_with(set)));
        let aws = name.starts_with("AWS_") && !name.starts_with("AWS_LC_");
        if by_cargo || aws || name.to_ascii_lowercase().ends_with("_proxy") {
            command.env_remove(name.as_ref());
        }
    }
    command
}

/// A free loopback port.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// The fields of `/proc/<pid>/stat` after the command name (which, in parentheses, may hold
/// blanks): the parent's id is the second, the start time the twentieth.
fn stat(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields = stat.rsplit_once(')')?.1.split_whitespace();
    Some(fields.map(str::to_owned).collect())
}

/// The start time of process `pid`, which tells it from a later process given the same id;
/// `None` once it has ended.
fn started_at(pid: u32) -> Option<String> {
    stat(pid)?.get(19).cloned()
}

/// The processes whose parent is `pid`, each with its start time.
fn children(pid: u32) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|child| {
            let fields = stat(child)?;
            (fields.get(1)? == &pid.to_string()).then_some(())?;
            Some((child, fields.get(19)?.clone()))
        })
        .collect()
}

/// `cargo lambda watch` on a loopback port, with its output in a file; stopped when dropped.
struct Watch {
    child: Child,
    port: u16,
    log: PathBuf,
    scratch: PathBuf,
}

impl Watch {
    /// Starts the emulator with `env_file` and waits until it listens.
    fn start(env_file: &Path, scratch: &Path) -> Watch {
        let port = free_port();
        let log = scratch.join("watch.log");
        let output = std::fs::File::create(&log).expect("the emulator's log");
        let child = command(&[
            "watch",
            "--invoke-address",
            "127.0.0.1",
            "--invoke-port",
            &port.to_string(),
            // Nothing to reload: a file changed during the test must not restart a function.
            "--ignore-changes",
            "--env-file",
            env_file.to_str().expect("a UTF-8 path"),
        ])
        .stdin(Stdio::null())
        .stdout(output.try_clone().expect("the emulator's log"))
        .stderr(output)
        .spawn()
        .expect("cargo lambda watch starts");
        let mut watch = Watch {
            child,
            port,
            log,
            scratch: scratch.to_owned(),
        };
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = watch.child.try_wait() {
                watch.fail(&format!(
                    "cargo lambda watch ended ({status}) before listening"
                ));
            }
            if started.elapsed() > START {
                watch.fail(&format!("cargo lambda watch not listening after {START:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        watch
    }

    /// `cargo lambda invoke <function> --data-file tests/events/<event>`: the function's answer.
    fn invoke(&self, function: &str, event: &str, limit: Duration) -> Value {
        let data = root().join("tests/events").join(event);
        let out = self.scratch.join(format!("{function}-{event}.out"));
        let err = self.scratch.join(format!("{function}-{event}.err"));
        let mut invoke = command(&[
            "invoke",
            "--invoke-address",
            "127.0.0.1",
            "--invoke-port",
            &self.port.to_string(),
            function,
            "--data-file",
            data.to_str().expect("a UTF-8 path"),
        ])
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("the answer's file"))
        .stderr(std::fs::File::create(&err).expect("the error's file"))
        .spawn()
        .expect("cargo lambda invoke starts");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = invoke.try_wait().expect("cargo lambda invoke runs") {
                break status;
            }
            if started.elapsed() > limit {
                drop(invoke.kill());
                drop(invoke.wait());
                self.fail(&format!(
                    "{function} did not answer {event} within {limit:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let answer = std::fs::read_to_string(&out).unwrap_or_default();
        if !status.success() {
            let error = std::fs::read_to_string(&err).unwrap_or_default();
            self.fail(&format!(
                "cargo lambda invoke {function} {event}: {status}\n{answer}{error}"
            ));
        }
        serde_json::from_str(&answer)
            .unwrap_or_else(|e| self.fail(&format!("{function} answered {answer:?}: {e}")))
    }

    /// Panics with `message` and the end of the emulator's output (the functions' logs too).
    fn fail(&self, message: &str) -> ! {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        panic!("{message}\n--- the end of {}:\n{tail}", self.log.display());
    }
}

impl Drop for Watch {
    /// SIGTERM: cargo-lambda stops the functions it started (each in its own process group),
    /// then itself. Whatever of them is still there afterwards (after a SIGKILL of an emulator
    /// that would not stop) is killed by its id.
    fn drop(&mut self) {
        let pid = self.child.id();
        let started = children(pid);
        drop(
            Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status(),
        );
        let deadline = Instant::now() + START;
        while !matches!(self.child.try_wait(), Ok(Some(_)) | Err(_)) {
            if Instant::now() > deadline {
                drop(self.child.kill());
                drop(self.child.wait());
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        for (child, start) in started {
            if started_at(child).as_ref() == Some(&start) {
                drop(
                    Command::new("kill")
                        .args(["-KILL", &child.to_string()])
                        .status(),
                );
            }
        }
    }
}

/// A folder for the env file, the answers and the logs: removed after a test that passed,
/// kept (and named) after one that failed.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the env file and logs are kept in {}", self.0.display());
        } else {
            drop(std::fs::remove_dir_all(&self.0));
        }
    }
}

/// The body of an API Gateway answer, read as JSON, after checking its status and headers.
fn body(answer: &Value, status: u16, request_id: &str) -> Value {
    assert_eq!(answer["statusCode"], status, "{answer}");
    assert_eq!(answer["isBase64Encoded"], false, "{answer}");
    assert_eq!(
        answer["headers"]["content-type"], "application/json",
        "{answer}"
    );
    assert_eq!(
        answer["headers"]["x-request-id"], request_id,
        "API Gateway's request id: {answer}"
    );
    serde_json::from_str(answer["body"].as_str().expect("a body")).expect("a JSON body")
}

#[tokio::test]
async fn functions_answer_recorded_events_under_cargo_lambda() {
    let stack = Stack::provision().await;
    let events = provision::ensure_events(&stack.sdk, &stack.resources.table, &unique("bus"))
        .await
        .expect("the bus on moto");
    let scratch = Scratch(std::env::temp_dir().join(unique("outbound-cargo-lambda")));
    let secrets = provision::ensure_secrets(&stack.sdk, &unique("secrets"))
        .await
        .expect("the secrets on moto");
    let env_file = scratch.0.join("lambda.env");
    lambda_env::write(
        &env_file,
        &lambda_env::variables(&stack.resources, &events, &secrets, stack.dynamodb.url()),
    )
    .expect("the env file");
    let watch = Watch::start(&env_file, &scratch.0);

    // The data source API, as API Gateway's HTTP API calls it: the tenant is the authorizer's
    // tenant_id claim (acme), the request id API Gateway's.
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/events/datasource-add.json")).unwrap(),
    )
    .unwrap();
    let request_id = recorded["requestContext"]["requestId"].as_str().unwrap();
    let added = watch.invoke("datasource-api", "datasource-add.json", COLD);
    let added = body(&added, 200, request_id);
    let data = &added["data"];
    let id = data["id"].as_str().expect("an id");
    assert_eq!(
        ulid::Ulid::from_string(id)
            .map(|u| u.to_string())
            .as_deref(),
        Ok(id),
        "a canonical ULID"
    );
    let created = data["createTime"].as_str().expect("a creation time");
    assert!(
        chrono::NaiveDateTime::parse_from_str(created, "%Y-%m-%d %H:%M:%S").is_ok(),
        "{created}"
    );
    assert_eq!(
        added,
        json!({
            "code": 0,
            "message": "success",
            "data": {
                "id": id,
                "dataSourceName": "Event leads",
                "dataSourceDesc": "sent through API Gateway",
                "contactCount": 0,
                "defaultCountry": null,
                "createTime": created,
                "updateTime": created,
            },
        })
    );
    let stored = stack
        .store
        .data_sources(&Tenant::parse("acme").unwrap())
        .await
        .expect("the tenant's data sources");
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].id.as_str(), stored[0].name.as_str()),
        (id, "Event leads")
    );
    let listed = watch.invoke("datasource-api", "datasource-list.json", WARM);
    assert_eq!(
        body(&listed, 200, request_id),
        json!({
            "code": 0,
            "message": "success",
            "data": {"total": 1, "rows": [data], "nextToken": null},
        })
    );

    // The dialer, sent its queue's batch: a dial and a reconcile job of a task that does not
    // exist are acknowledged, none is handed back for redelivery.
    let batch = watch.invoke("dialer", "dialer-sqs-jobs.json", COLD);
    assert_eq!(batch, json!({"batchItemFailures": []}));

    // The flow-results function, as an Amazon Connect flow calls it: no record of that call
    // here, so nothing is recorded, and Connect is answered all the same.
    let answer = watch.invoke("flow-results", "connect-flow-results.json", COLD);
    assert_eq!(answer, json!({"recorded": "false"}));
}

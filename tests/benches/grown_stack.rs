//! The local stack as its data grows (`make bench`): a stack run as `make run` runs it (the
//! API, the queue pollers, the dialer's tick every 2 s, the reclaim sweep and the events' stream
//! pump, all on the one moto), measured fresh and again after it holds 100,000 contacts (ten
//! 10,000-row CSV files imported the presigned way, through the pollers) and 100 finished tasks
//! (each published over a data source of 5 contacts, run until COMPLETED, the last few stopped).
//! Records, for `<when>` `fresh` and `grown`:
//! - `grown_stack.contact_add_ms.<when>.<c>.p50` and `.p99`: `POST .../contact/add` at
//!   concurrency 1 and 16 (`REQUESTS` each), the wall time the client saw;
//! - `grown_stack.moto_busy_pct.<when>`: moto's CPU time over `IDLE` of the stack left alone,
//!   as a share of that time (the periodic work's cost, which every request waits behind on
//!   moto's one thread);
//! - `grown_stack.load_contacts_s` and `.finish_tasks_s`: how long loading took.
//!
//! moto's pid is read from `.local/moto.pid` (`scripts/stack.sh`); without it the busy
//! share is not recorded.

use futures::stream::{self, StreamExt};
use outbound_adapters::aws::timing::millis;
use outbound_local::{local_config, local_jwt};
use outbound_tests::bench::{percentile_ms, record};
use outbound_tests::stack::Stack;
use serde_json::{json, Value};
use std::error::Error;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const REQUESTS: usize = 200;
const CONCURRENCY: [usize; 2] = [1, 16];
const FILES: u64 = 10;
const ROWS: u64 = 10_000;
const TASKS: usize = 100;
const IDLE: Duration = Duration::from_secs(20);
const TICK: Duration = Duration::from_secs(2);

struct Bench {
    stack: Stack,
    base: String,
    token: String,
    http: reqwest::Client,
}

#[tokio::main]
async fn main() -> Result<()> {
    let bench = Bench::start().await?;
    bench.measure("fresh").await?;
    let started = Instant::now();
    bench.load_contacts().await?;
    record(
        "grown_stack.load_contacts_s",
        started.elapsed().as_secs_f64().round(),
    );
    let started = Instant::now();
    bench.finish_tasks().await?;
    record(
        "grown_stack.finish_tasks_s",
        started.elapsed().as_secs_f64().round(),
    );
    bench.measure("grown").await?;
    bench.stack.remove_table().await?;
    Ok(())
}

impl Bench {
    /// A fresh stack of its own, served and worked as `make run` does.
    async fn start() -> Result<Bench> {
        let stack = Stack::provision().await;
        let mut config = local_config(&stack.resources);
        config.dialing.simulated.delay = Duration::ZERO;
        config.dialing.rate_per_second = 100;
        // What is measured is the stack's answer, not the tenant's request rate (D26): on a
        // DynamoDB that keeps up, 16 clients send more than the default 50 a second.
        config.tenant_limits.requests.per_second = 100_000;
        config.tenant_limits.requests.burst = 100_000;
        let token = local_jwt(&config).issue("grown", 3600);
        let app = stack.app(config);
        let engine = outbound_dialing::engine::Engine::from_app(&app)?;
        outbound_local::spawn_workers(
            &app,
            std::sync::Arc::new(engine),
            &stack.resources,
            &stack.sdk,
            TICK,
        );
        let events = outbound_local::provision::ensure_events(
            &stack.sdk,
            &stack.resources.table,
            &format!("{}-events", stack.resources.table),
        )
        .await
        .map_err(|error| error.to_string())?;
        outbound_local::events::spawn(
            &stack.sdk,
            &events,
            outbound_local::events::EventLog::default(),
        );
        let base = outbound_local::serve_on_loopback(app).await?;
        Ok(Bench {
            stack,
            base,
            token,
            http: reqwest::Client::new(),
        })
    }

    /// One API call that must succeed; answers its `data`.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await?.json().await?;
        if answer["code"] != 0 {
            return Err(format!("{path}: {answer}").into());
        }
        Ok(answer["data"].clone())
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    async fn get(&self, path: &str) -> Result<Value> {
        self.call(reqwest::Method::GET, path, None).await
    }

    async fn data_source(&self, name: &str) -> Result<String> {
        let added = self
            .post("/api/dataSource/add", json!({ "dataSourceName": name }))
            .await?;
        Ok(added["id"].as_str().ok_or("no id")?.to_owned())
    }

    /// Contact adds into a new data source at each concurrency, and moto's idle share.
    async fn measure(&self, when: &str) -> Result<()> {
        let source = self.data_source(&format!("adds {when}")).await?;
        let path = format!("/api/dataSource/{source}/contact/add");
        for concurrency in CONCURRENCY {
            let walls: Vec<f64> = stream::iter((0..REQUESTS).map(|i| {
                let phone = format!("+1415{concurrency:02}{i:05}");
                let path = &path;
                async move {
                    let started = Instant::now();
                    self.post(path, json!({ "phoneNumber": phone })).await?;
                    Ok::<_, Box<dyn Error>>(millis(started.elapsed()))
                }
            }))
            .buffer_unordered(concurrency)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_>>()?;
            for p in [50, 99] {
                let key = format!("grown_stack.contact_add_ms.{when}.c{concurrency}.p{p}");
                record(&key, percentile_ms(&walls, p));
            }
        }
        if let Some(busy) = moto_busy(IDLE).await {
            record(&format!("grown_stack.moto_busy_pct.{when}"), busy);
        }
        Ok(())
    }

    /// 100,000 contacts: ten CSV files uploaded the presigned way, each imported by the
    /// import poller from its S3 notification.
    async fn load_contacts(&self) -> Result<()> {
        let source = self.data_source("grown 100k").await?;
        for file in 0..FILES {
            let mut text = String::from("phoneNumber,customerName,city\n");
            for row in 0..ROWS {
                let n = file * ROWS + row;
                text.push_str(&format!("+8613{n:09},Customer {n},City {}\n", n % 50));
            }
            let ticket = self
                .post(
                    &format!("/api/dataSource/{source}/contact/importUrl"),
                    json!({ "fileName": format!("part{file}.csv"), "fileSize": text.len() }),
                )
                .await?;
            let upload_url = ticket["uploadUrl"].as_str().ok_or("no uploadUrl")?;
            let put = self.http.put(upload_url).body(text).send().await?;
            if !put.status().is_success() {
                return Err(format!("PUT failed: {}", put.status()).into());
            }
            let import = ticket["importId"].as_str().ok_or("no importId")?;
            let status = format!("/api/dataSource/{source}/contact/import/{import}");
            self.until(Duration::from_secs(600), || async {
                let state = self.get(&status).await?;
                match state["status"].as_str() {
                    Some("SUCCEEDED") => Ok(true),
                    Some("FAILED") => Err(format!("import failed: {state}").into()),
                    _ => Ok(false),
                }
            })
            .await?;
        }
        let detail = self
            .get(&format!("/api/dataSource/detail/{source}"))
            .await?;
        if detail["contactCount"] != FILES * ROWS {
            return Err(format!("expected {} contacts: {detail}", FILES * ROWS).into());
        }
        Ok(())
    }

    /// `TASKS` tasks, each over its own 5 contacts, published and dialled to the end; those
    /// still running after two minutes are stopped.
    async fn finish_tasks(&self) -> Result<()> {
        let source = self.data_source("grown tasks").await?;
        for i in 0..5 {
            let path = format!("/api/dataSource/{source}/contact/add");
            self.post(&path, json!({ "phoneNumber": format!("+1650555{i:04}") }))
                .await?;
        }
        let mut ids = Vec::new();
        for i in 0..TASKS {
            let task = self
                .post(
                    "/api/task/add",
                    json!({ "taskName": format!("grown {i}"), "dataSourceId": source }),
                )
                .await?;
            let id = task["id"].as_str().ok_or("no task id")?.to_owned();
            self.post("/api/task/publish", json!({ "id": id })).await?;
            ids.push(id);
        }
        // Task status codes (D10): 3 STOPPED, 4 COMPLETED, 5 FAILED, 6 CLOSED.
        let finished = |state: &Value| matches!(state["status"].as_u64(), Some(3..=6));
        let _ = self
            .until(Duration::from_secs(120), || async {
                for id in &ids {
                    if !finished(&self.get(&format!("/api/task/detail/{id}")).await?) {
                        return Ok(false);
                    }
                }
                Ok(true)
            })
            .await;
        let mut stopped = 0;
        for id in &ids {
            let detail = format!("/api/task/detail/{id}");
            if !finished(&self.get(&detail).await?) {
                // It may complete between the read and the stop, which then answers 405.
                match self.post("/api/task/stop", json!({ "id": id })).await {
                    Ok(_) => stopped += 1,
                    Err(_) if finished(&self.get(&detail).await?) => {}
                    Err(error) => return Err(error),
                }
            }
        }
        eprintln!("{TASKS} tasks finished, {stopped} of them stopped");
        Ok(())
    }

    /// Asks `done` every second until it says so, or fails after `most`.
    async fn until<F, Fut>(&self, most: Duration, done: F) -> Result<()>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<bool>>,
    {
        let started = Instant::now();
        while !done().await? {
            if started.elapsed() > most {
                return Err(format!("not done after {most:?}").into());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        Ok(())
    }
}

/// moto's share of one core over `window`, in percent, from its process's CPU time.
async fn moto_busy(window: Duration) -> Option<f64> {
    let pid_file = concat!(env!("CARGO_MANIFEST_DIR"), "/../.local/moto.pid");
    let pid = std::fs::read_to_string(pid_file).ok()?.trim().to_owned();
    let cpu_ticks = || -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // After the command's closing parenthesis: fields 14 and 15 are utime and stime.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    };
    let before = cpu_ticks()?;
    tokio::time::sleep(window).await;
    let used = cpu_ticks()? - before;
    // Linux counts CPU time in clock ticks of 1/100 s.
    Some((used as f64 / window.as_secs_f64()).round())
}

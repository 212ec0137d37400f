//! API latency benchmark against the local stand-ins (`make bench`, release build): the API
//! served in process on a random port, a tenant seeded with data sources, one of 1,000 contacts,
//! and tasks; then each main endpoint called through real HTTP, `REQUESTS` times at concurrency
//! 1 and 16. Records, per endpoint (`<e>`) and concurrency (`c1`, `c16`):
//! - `api_latency_ms.<e>.<c>.p50` and `.p99`: the wall time the client saw;
//! - `api_own_ms.<e>.<c>.p50` and `.p99`: the service's own time, the `app` of the answer's
//!   `Server-Timing` (the handler's time minus the time waiting on AWS, see
//!   `outbound_adapters::aws::timing`);
//! - `api_store_calls.<e>`: the AWS calls each request made (all DynamoDB on these endpoints),
//!   retries not counted (they are printed when there are any).
//!
//! moto is single-threaded Python, not DynamoDB: the wall times are mostly moto's, and at
//! concurrency 16 mostly its queue. The own times are this service's cost, and the call counts
//! are what AWS would see.

use futures::stream::{self, StreamExt};
use outbound_adapters::aws::timing::{millis, ServerTiming};
use outbound_local::{local_config, local_jwt};
use outbound_tests::bench::{percentile_ms, record};
use outbound_tests::stack::Stack;
use reqwest::{Method, RequestBuilder};
use serde_json::{json, Value};
use std::error::Error;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Requests per endpoint and concurrency.
const REQUESTS: usize = 200;
const CONCURRENCY: [usize; 2] = [1, 16];
const DATA_SOURCES: usize = 20;
const CONTACTS: usize = 1_000;
const TASKS: usize = 20;

struct Bench {
    stack: Stack,
    base: String,
    token: String,
    http: reqwest::Client,
}

/// One answered request.
struct Sample {
    wall: Duration,
    timing: ServerTiming,
    data: Value,
}

/// What the seeding left for the endpoints to work on.
struct Seeded {
    /// The data source of `CONTACTS` contacts, which the tasks dial.
    contacts_source: String,
    /// An empty data source that `contact add` fills.
    added_to: String,
    task: String,
}

#[tokio::main]
async fn main() -> Result<()> {
    let bench = Bench::start().await?;
    let seeded = bench.seed().await?;
    let reads: [(&str, String); 6] = [
        ("datasource_list", "/api/dataSource/list".into()),
        (
            "datasource_detail",
            format!("/api/dataSource/detail/{}", seeded.contacts_source),
        ),
        (
            "contacts_page1",
            format!("/api/dataSource/{}/contacts", seeded.contacts_source),
        ),
        ("task_list", "/api/task/list".into()),
        ("task_detail", format!("/api/task/detail/{}", seeded.task)),
        ("task_stat", format!("/api/task/{}/stat", seeded.task)),
    ];
    for concurrency in CONCURRENCY {
        let c = format!("c{concurrency}");
        for (endpoint, path) in &reads {
            let requests = (0..REQUESTS).map(|_| bench.request(Method::GET, path));
            bench.measure(endpoint, &c, requests).await?;
        }
        let adds = (0..REQUESTS).map(|i| {
            bench.post(
                "/api/dataSource/add",
                json!({ "dataSourceName": format!("added {c} {i}") }),
            )
        });
        bench.measure("datasource_add", &c, adds).await?;
        let contact_add = format!("/api/dataSource/{}/contact/add", seeded.added_to);
        let adds = (0..REQUESTS).map(|i| {
            let phone = format!("139{concurrency:02}{i:06}");
            bench.post(&contact_add, json!({ "phoneNumber": phone }))
        });
        bench.measure("contact_add", &c, adds).await?;
        // The tasks added here are the ones published, paused and resumed next.
        let adds = (0..REQUESTS).map(|i| {
            bench.post(
                "/api/task/add",
                json!({
                    "taskName": format!("added {c} {i}"),
                    "dataSourceId": seeded.contacts_source,
                }),
            )
        });
        let added = bench.measure("task_add", &c, adds).await?;
        let ids: Vec<Value> = added.into_iter().map(|s| s.data["id"].clone()).collect();
        for (endpoint, path) in [
            ("task_publish", "/api/task/publish"),
            ("task_pause", "/api/task/pause"),
            ("task_resume", "/api/task/resume"),
        ] {
            let changes = ids.iter().map(|id| bench.post(path, json!({ "id": id })));
            bench.measure(endpoint, &c, changes).await?;
        }
    }
    bench.stack.remove_table().await?;
    Ok(())
}

impl Bench {
    async fn start() -> Result<Bench> {
        let stack = Stack::provision().await;
        let config = local_config(&stack.resources);
        let token = local_jwt(&config).issue("bench", 3600);
        let app = stack.app(config);
        let base = outbound_local::serve_on_loopback(app).await?;
        Ok(Bench {
            stack,
            base,
            token,
            http: reqwest::Client::new(),
        })
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    fn post(&self, path: &str, body: Value) -> RequestBuilder {
        self.request(Method::POST, path).json(&body)
    }

    /// Sends one request; an answer that is not a success is an error.
    async fn send(&self, request: RequestBuilder) -> Result<Sample> {
        let started = Instant::now();
        let response = request.send().await?;
        let header = response
            .headers()
            .get("server-timing")
            .and_then(|value| value.to_str().ok())
            .and_then(ServerTiming::parse);
        let body: Value = response.json().await?;
        let wall = started.elapsed();
        if body["code"] != 0 {
            return Err(format!("API refused: {body}").into());
        }
        let timing = header.ok_or("no readable Server-Timing")?;
        Ok(Sample {
            wall,
            timing,
            data: body["data"].clone(),
        })
    }

    /// Sends `requests`, `concurrency` at a time; answers them as they complete.
    async fn send_all(
        &self,
        concurrency: usize,
        requests: impl Iterator<Item = RequestBuilder>,
    ) -> Result<Vec<Sample>> {
        stream::iter(requests.map(|request| self.send(request)))
            .buffer_unordered(concurrency)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// Runs `requests` at the concurrency named by `c` and records their figures.
    async fn measure(
        &self,
        endpoint: &str,
        c: &str,
        requests: impl Iterator<Item = RequestBuilder>,
    ) -> Result<Vec<Sample>> {
        let concurrency = c.trim_start_matches('c').parse()?;
        let samples = self.send_all(concurrency, requests).await?;
        let walls: Vec<f64> = samples.iter().map(|s| millis(s.wall)).collect();
        let own: Vec<f64> = samples.iter().map(|s| s.timing.app_ms).collect();
        for (figure, values) in [("api_latency_ms", &walls), ("api_own_ms", &own)] {
            for p in [50, 99] {
                record(
                    &format!("{figure}.{endpoint}.{c}.p{p}"),
                    percentile_ms(values, p),
                );
            }
        }
        let calls: Vec<u32> = samples.iter().map(|s| s.timing.store_calls).collect();
        let (fewest, most) = (
            calls.iter().min().copied().unwrap_or(0),
            calls.iter().max().copied().unwrap_or(0),
        );
        if fewest != most {
            eprintln!("{endpoint} {c}: {fewest} to {most} store calls a request");
        }
        let retries: u32 = samples.iter().map(|s| s.timing.store_retries).sum();
        if retries > 0 {
            eprintln!("{endpoint} {c}: {retries} retries of store calls in {REQUESTS} requests");
        }
        if concurrency == 1 {
            record(&format!("api_store_calls.{endpoint}"), f64::from(most));
        }
        Ok(samples)
    }

    /// A tenant with `DATA_SOURCES` data sources (one of `CONTACTS` contacts, one empty for
    /// `contact add`) and `TASKS` tasks, all made through the API.
    async fn seed(&self) -> Result<Seeded> {
        let sources = (0..DATA_SOURCES).map(|i| {
            self.post(
                "/api/dataSource/add",
                json!({ "dataSourceName": format!("seeded {i}") }),
            )
        });
        let sources = self.send_all(16, sources).await?;
        let id = |sample: &Sample| sample.data["id"].as_str().map(str::to_owned);
        let contacts_source = sources.first().and_then(id).ok_or("no data source")?;
        let added_to = sources.last().and_then(id).ok_or("no data source")?;
        let contact_add = format!("/api/dataSource/{contacts_source}/contact/add");
        let contacts = (0..CONTACTS)
            .map(|i| self.post(&contact_add, json!({ "phoneNumber": format!("138{i:08}") })));
        self.send_all(16, contacts).await?;
        let tasks = (0..TASKS).map(|i| {
            self.post(
                "/api/task/add",
                json!({ "taskName": format!("seeded {i}"), "dataSourceId": contacts_source }),
            )
        });
        let tasks = self.send_all(16, tasks).await?;
        let task = tasks.first().and_then(id).ok_or("no task")?;
        Ok(Seeded {
            contacts_source,
            added_to,
            task,
        })
    }
}

//! End-to-end import benchmark against the local stand-ins (`make bench`, release build): the
//! 10,000-row files the file benchmark wrote to `BENCH_DIR` (`contacts.csv`, `contacts.xlsx`),
//! each imported into a new data source through the HTTP API, once posted as multipart and once
//! the presigned way (upload URL, PUT to S3, the upload notification handed to the import
//! handler). Records for each (`import.<figure>.<csv|xlsx>_<posted|presigned>`): the wall time,
//! the DynamoDB requests, the write requests and write capacity units (WCU, see
//! [`outbound_tests::capacity`]) per 1,000 rows, and the partition keys they land on: a data
//! source's contacts and phone guards are spread over its contact shards (`CONTACT_SHARDS`,
//! default 8) and its counter is on the first; DynamoDB takes at most 1,000 WCU a second on one
//! key. `busiest_key_wcu` is what the busiest key took for the whole file and `keys` how many
//! keys were written; `modelled_s_at_partition_limit` is the busiest key's units ÷ 1,000 (the
//! least time DynamoDB needs for the file) and `modelled_s_at_pace` ÷ `IMPORT_WCU_PER_SECOND`
//! (800, the pace the import keeps on each key); `partition_wcu_per_s` is what the busiest key
//! was asked for at the measured rate and `partition_wcu_share` that ÷ 1,000.
//! `wcu_per_transaction` is the largest transaction.
//!
//! `BENCH_IMPORT=100k` instead imports 100,000 rows into one data source the presigned way, as
//! ten files (`import.presigned_100k_*`).
//!
//! moto is not DynamoDB: the times say what the code costs against a single-threaded local
//! stand-in, not what AWS would take. The request and unit counts are what AWS would see.

use outbound_local::{local_config, local_jwt, poller};
use outbound_tests::bench::record;
use outbound_tests::capacity::{sizes_for, wcus_by_partition, WriteRequest, WriteTotals};
use outbound_tests::stack::Stack;
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const ROWS: u64 = 10_000;
/// Write capacity of one DynamoDB partition, per second.
const PARTITION_WCU_PER_S: f64 = 1000.0;

/// The two ways a file is imported.
#[derive(Clone, Copy)]
enum Way {
    Posted,
    Presigned,
}

struct Bench {
    stack: Stack,
    app: outbound_app::App,
    base: String,
    token: String,
    http: reqwest::Client,
}

#[tokio::main]
async fn main() -> Result<()> {
    let dir = std::env::var_os("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("outbound-bench"));
    let bench = Bench::start().await?;
    if std::env::var("BENCH_IMPORT").as_deref() == Ok("100k") {
        bench.hundred_thousand().await?;
        bench.stack.remove_table().await?;
        return Ok(());
    }
    for ext in ["csv", "xlsx"] {
        let bytes = std::fs::read(dir.join(format!("contacts.{ext}")))
            .map_err(|e| format!("{e}: run the file benchmark first (make bench)"))?;
        for (way, name) in [(Way::Posted, "posted"), (Way::Presigned, "presigned")] {
            bench
                .import(way, &format!("{ext}_{name}"), ext, bytes.clone())
                .await?;
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
        let base = outbound_local::serve_on_loopback(app.clone()).await?;
        Ok(Bench {
            stack,
            app,
            base,
            token,
            http: reqwest::Client::new(),
        })
    }

    /// 100,000 rows into one data source the presigned way, as ten 10,000-row CSV files of 10
    /// columns (a file holds at most 10,000), one after another: `import.presigned_100k_s` end
    /// to end, `import.presigned_100k_rows_per_s`, and the busiest key's WCU.
    async fn hundred_thousand(&self) -> Result<()> {
        let source = self.data_source("bench 100k").await?;
        self.stack.calls.writes().take();
        let started = Instant::now();
        for file in 0..10u64 {
            let mut text = String::from(
                "phoneNumber,customerName,address,orderAmount,city,plan,segment,agent,note,source\n",
            );
            for row in 0..ROWS {
                let n = file * ROWS + row;
                text.push_str(&format!(
                    "+8613{n:09},Customer {n},Road {n},{}.50,City {},gold,s{},a{},note {n},web\n",
                    n % 1000,
                    n % 50,
                    n % 7,
                    n % 20
                ));
            }
            let report = self
                .upload(&source, &format!("part{file}.csv"), text.into_bytes())
                .await?;
            if report["successCount"] != ROWS {
                return Err(format!("file {file}: {report}").into());
            }
        }
        let elapsed = started.elapsed();
        let writes = self.stack.calls.writes().take();
        let client = aws_sdk_dynamodb::Client::new(&self.stack.sdk);
        let stored = sizes_for(&client, &self.stack.resources.table, &writes).await?;
        let partition = format!("#DS#{source}");
        let busiest = wcus_by_partition(&writes, &stored)
            .into_iter()
            .find(|(pk, _)| pk.contains(&partition))
            .map_or(0, |(_, wcus)| wcus);
        record("import.presigned_100k_s", elapsed.as_secs_f64());
        record(
            "import.presigned_100k_rows_per_s",
            (100_000.0 / elapsed.as_secs_f64()).round(),
        );
        record("import.presigned_100k_busiest_key_wcu", busiest as f64);
        record(
            "import.presigned_100k_modelled_s_at_pace",
            busiest as f64
                / f64::from(outbound_adapters::store::write_cost::DEFAULT_IMPORT_WCU_PER_SECOND),
        );
        Ok(())
    }

    /// Imports `bytes` into a new data source the `way` given and records the figures of
    /// `variant`.
    async fn import(&self, way: Way, variant: &str, ext: &str, bytes: Vec<u8>) -> Result<()> {
        let file_name = format!("contacts.{ext}");
        let source = self.data_source(&format!("bench {variant}")).await?;
        self.stack.calls.take();
        self.stack.calls.writes().take();
        let started = Instant::now();
        let report = match way {
            Way::Posted => self.post_file(&source, &file_name, bytes).await?,
            Way::Presigned => self.upload(&source, &file_name, bytes).await?,
        };
        let elapsed = started.elapsed();
        let calls = self.stack.calls.take();
        let writes = self.stack.calls.writes().take();
        self.check(&source, &report).await?;
        record(
            &format!("import.end_to_end_s.{variant}"),
            elapsed.as_secs_f64(),
        );
        record(&format!("import.dynamodb_requests.{variant}"), calls as f64);
        self.record_capacity(variant, &source, &writes, elapsed)
            .await
    }

    /// The write figures of one import: per 1,000 rows, and against one partition.
    async fn record_capacity(
        &self,
        variant: &str,
        source: &str,
        writes: &[WriteRequest],
        elapsed: Duration,
    ) -> Result<()> {
        let client = aws_sdk_dynamodb::Client::new(&self.stack.sdk);
        let stored = sizes_for(&client, &self.stack.resources.table, writes).await?;
        let per_1000_rows = 1000.0 / ROWS as f64;
        let all = WriteTotals::of(writes, &stored);
        // The rows' writes go to the data source's contact shards, `T#<tenant>#DS#<id>[#S<n>]`.
        let partition = format!("#DS#{source}");
        let of_source: Vec<(String, u64)> = wcus_by_partition(writes, &stored)
            .into_iter()
            .filter(|(pk, _)| pk.contains(&partition))
            .collect();
        let busiest = of_source.first().map_or(0, |(_, wcus)| *wcus);
        let largest = writes.iter().map(|w| w.wcus(&stored)).max().unwrap_or(0);
        let demanded = busiest as f64 / elapsed.as_secs_f64();
        let pace = f64::from(outbound_adapters::store::write_cost::DEFAULT_IMPORT_WCU_PER_SECOND);
        let key = |figure: &str| format!("import.{figure}.{variant}");
        record(&key("keys"), of_source.len() as f64);
        record(&key("busiest_key_wcu"), busiest as f64);
        record(
            &key("modelled_s_at_partition_limit"),
            busiest as f64 / PARTITION_WCU_PER_S,
        );
        record(&key("modelled_s_at_pace"), busiest as f64 / pace);
        record(
            &key("write_requests_per_1000_rows"),
            all.requests as f64 * per_1000_rows,
        );
        record(&key("wcu_per_1000_rows"), all.wcus as f64 * per_1000_rows);
        record(&key("wcu_per_transaction"), largest as f64);
        record(&key("partition_wcu_per_s"), demanded.round());
        record(&key("partition_wcu_share"), demanded / PARTITION_WCU_PER_S);
        Ok(())
    }

    async fn call(&self, request: reqwest::RequestBuilder) -> Result<Value> {
        let body: Value = request
            .bearer_auth(&self.token)
            .send()
            .await?
            .json()
            .await?;
        if body["code"] != 0 {
            return Err(format!("API refused: {body}").into());
        }
        Ok(body["data"].clone())
    }

    async fn data_source(&self, name: &str) -> Result<String> {
        let url = format!("{}/api/dataSource/add", self.base);
        let data = self
            .call(self.http.post(url).json(&json!({ "dataSourceName": name })))
            .await?;
        Ok(data["id"].as_str().ok_or("no id")?.to_owned())
    }

    async fn post_file(&self, source: &str, file_name: &str, bytes: Vec<u8>) -> Result<Value> {
        let url = format!("{}/api/dataSource/{source}/contact/batchImport", self.base);
        let part = Part::bytes(bytes).file_name(file_name.to_owned());
        self.call(
            self.http
                .post(url)
                .multipart(Form::new().part("file", part)),
        )
        .await
    }

    /// The presigned path: upload URL, PUT, then the upload notification through the same
    /// handler the import function runs. Answers the import's `result`.
    async fn upload(&self, source: &str, file_name: &str, bytes: Vec<u8>) -> Result<Value> {
        let url = format!("{}/api/dataSource/{source}/contact/importUrl", self.base);
        let ticket = self
            .call(
                self.http
                    .post(url)
                    .json(&json!({ "fileName": file_name, "fileSize": bytes.len() })),
            )
            .await?;
        let upload_url = ticket["uploadUrl"].as_str().ok_or("no uploadUrl")?;
        let put = self.http.put(upload_url).body(bytes).send().await?;
        if !put.status().is_success() {
            return Err(format!("PUT failed: {}", put.status()).into());
        }
        let app = self.app.clone();
        poller::drain(
            &aws_sdk_sqs::Client::new(&self.stack.sdk),
            &self.stack.resources.import_queue_url,
            move |body| {
                let app = app.clone();
                async move { outbound_workers::upload_message(&app, body).await }
            },
        )
        .await?;
        let import = ticket["importId"].as_str().ok_or("no importId")?;
        let url = format!(
            "{}/api/dataSource/{source}/contact/import/{import}",
            self.base
        );
        let status = self.call(self.http.get(url)).await?;
        if status["status"] != "SUCCEEDED" {
            return Err(format!("import did not succeed: {status}").into());
        }
        Ok(status["result"].clone())
    }

    /// Every row imported, and the data source counting them.
    async fn check(&self, source: &str, report: &Value) -> Result<()> {
        let url = format!("{}/api/dataSource/detail/{source}", self.base);
        let detail = self.call(self.http.get(url)).await?;
        if report["successCount"] != ROWS || detail["contactCount"] != ROWS {
            return Err(format!("expected {ROWS} contacts: {report} / {detail}").into());
        }
        Ok(())
    }
}

//! End-to-end import benchmark against the local stand-ins (`make bench`, release build): the
//! 10,000-row files the file benchmark wrote to `BENCH_DIR` (`contacts.csv`, `contacts.xlsx`),
//! each imported into a new data source through the HTTP API, once posted as multipart and once
//! the presigned way (upload URL, PUT to S3, the upload notification handed to the import
//! handler). Prints `name value` lines: wall time and DynamoDB requests of each import.
//!
//! moto is not DynamoDB: the times say what the code costs against a single-threaded local
//! stand-in, not what AWS would take. The request counts are the same as in AWS.

use outbound_local::stack::Stack;
use outbound_local::{local_config, local_jwt, poller};
use reqwest::multipart::{Form, Part};
use serde_json::{json, Value};
use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

const ROWS: u64 = 10_000;

struct Bench {
    stack: Stack,
    app: outbound::http::App,
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
    for (name, ext) in [("csv", "csv"), ("xlsx", "xlsx")] {
        let bytes = std::fs::read(dir.join(format!("contacts.{ext}")))
            .map_err(|e| format!("{e}: run the file benchmark first (make bench)"))?;
        let file_name = format!("contacts.{ext}");

        let source = bench.data_source(&format!("multipart {name}")).await?;
        bench.stack.calls.take();
        let started = Instant::now();
        let report = bench.post_file(&source, &file_name, bytes.clone()).await?;
        let elapsed = started.elapsed();
        let calls = bench.stack.calls.take();
        bench.check(&source, &report).await?;
        println!("import_multipart_{name}_ms {}", elapsed.as_millis());
        println!("import_multipart_{name}_dynamodb_requests {calls}");

        let source = bench.data_source(&format!("presigned {name}")).await?;
        bench.stack.calls.take();
        let started = Instant::now();
        let report = bench.upload(&source, &file_name, bytes).await?;
        let elapsed = started.elapsed();
        let calls = bench.stack.calls.take();
        bench.check(&source, &report).await?;
        println!("import_presigned_{name}_ms {}", elapsed.as_millis());
        println!("import_presigned_{name}_dynamodb_requests {calls}");
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let base = format!("http://{}", listener.local_addr()?);
        tokio::spawn(outbound_local::serve(listener, app.clone()));
        Ok(Bench {
            stack,
            app,
            base,
            token,
            http: reqwest::Client::new(),
        })
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
                async move { outbound::worker::upload_message(&app, body).await }
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

//! The harness: each test gets its own DynamoDB database, its own bucket and queues on the shared
//! moto, and the API served in process
//! on a random port with the same routers the Lambdas use.

use aws_sdk_dynamodb::types::AttributeValue;
use outbound_adapters::store::{keys, Item, Store};
use outbound_app::config::Config;
use outbound_app::App;
use outbound_auth::LocalJwt;
use outbound_local::calls::CallLog;
use outbound_local::{local_config, local_jwt, provision};
use outbound_model::reclaim::ReclaimJob;
use outbound_model::task::{CallCounters, TaskContact};
use outbound_model::Tenant;
use outbound_model::{DataSource, Id, Task, TaskStatus, Timestamp};
pub use outbound_tests::stack::{unique, CallCounter, Stack};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::future::Future;

/// A running API on its own table.
pub struct TestApi {
    pub base: String,
    pub http: reqwest::Client,
    pub jwt: LocalJwt,
    pub store: Store,
    pub calls: CallCounter,
    pub resources: provision::Resources,
    /// The test's DynamoDB, served while the API is.
    pub dynamodb: std::sync::Arc<outbound_local::dynamodb::StackDynamoDb>,
    pub sdk: aws_config::SdkConfig,
    /// The app the server runs, for feeding queue messages to the same handlers.
    pub app: App,
    /// The calls this test's dialing engines placed, served at `GET /local/calls` (D22).
    pub local_calls: CallLog,
}

/// Paging values that are refused on every list (D5), with the message each gets.
pub const BAD_PAGING: [(&str, &str); 9] = [
    ("pageNum=0", "pageNum must be an integer >= 1"),
    ("pageNum=-1", "pageNum must be an integer >= 1"),
    ("pageNum=abc", "pageNum must be an integer >= 1"),
    ("pageNum=1.5", "pageNum must be an integer >= 1"),
    ("pageSize=0", "pageSize must be an integer from 1 to 100"),
    ("pageSize=101", "pageSize must be an integer from 1 to 100"),
    ("pageSize=abc", "pageSize must be an integer from 1 to 100"),
    ("pageSize=1.5", "pageSize must be an integer from 1 to 100"),
    ("pageSize=-1", "pageSize must be an integer from 1 to 100"),
];

/// `body` with the fields of the object `extra` set on it.
pub fn with_fields(mut body: Value, extra: &Value) -> Value {
    for (field, value) in extra.as_object().cloned().unwrap_or_default() {
        body[field] = value;
    }
    body
}

/// Path of a contact operation (`add`, `update`, `delete`) of data source `source`.
pub fn contact_op(source: &str, op: &str) -> String {
    format!("/api/dataSource/{source}/contact/{op}")
}

/// Asserts that `value` is an id (a canonical ULID string) and answers it.
pub fn assert_id(value: &Value) -> &str {
    let id = value.as_str().unwrap_or_else(|| panic!("{value} is no id"));
    let parsed = ulid::Ulid::from_string(id).unwrap_or_else(|_| panic!("{id} is no ULID"));
    assert_eq!(parsed.to_string(), id, "ids are canonical ULIDs");
    id
}

/// Asserts that `value` is a `YYYY-MM-DD HH:MM:SS` timestamp (UTC, D4) within a minute of now.
pub fn assert_recent(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is no timestamp"));
    let at = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")
        .unwrap_or_else(|_| panic!("{text} is not YYYY-MM-DD HH:MM:SS"))
        .and_utc();
    let skew = (chrono::Utc::now() - at).num_seconds().abs();
    assert!(skew <= 60, "{text} is {skew} s away from now");
}

/// How many answers have HTTP status `code`.
pub fn count_status(answers: &[Answer], code: u16) -> usize {
    answers.iter().filter(|a| a.status.as_u16() == code).count()
}

impl TestApi {
    pub async fn start() -> TestApi {
        TestApi::start_with(|_| {}).await
    }

    /// A running API whose configuration `tweak` has changed first (a small export limit, ...).
    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> TestApi {
        TestApi::serve_stack(Stack::provision().await, tweak).await
    }

    /// Serves the API of `stack`, configured locally and then changed by `tweak`.
    async fn serve_stack(stack: Stack, tweak: impl FnOnce(&mut Config)) -> TestApi {
        let mut config = local_config(&stack.resources);
        // The test's client, the API and the emulator share the test's one thread: a limiter
        // write waits behind every request in flight, which AWS never makes it do (D32: a
        // write slower than its timeout is refused 503).
        config.limiter_timeout = std::time::Duration::from_secs(30);
        // The tests' one tenant sends as fast as the machine serves (hundreds of contacts added
        // a request at a time), past the deployment's 50 a second: the limiter's own tests
        // (request_rate.rs) set the limits they check.
        config.tenant_limits.requests.per_second = 100_000;
        config.tenant_limits.requests.burst = 100_000;
        tweak(&mut config);
        let jwt = local_jwt(&config);
        let app = stack.app(config);
        let local_calls = CallLog::default();
        let base = outbound_local::serve_on_loopback_with_calls(app.clone(), &local_calls)
            .await
            .unwrap();
        TestApi {
            base,
            http: reqwest::Client::new(),
            jwt,
            store: stack.store,
            calls: stack.calls,
            resources: stack.resources,
            dynamodb: stack.dynamodb,
            sdk: stack.sdk,
            app,
            local_calls,
        }
    }

    /// A valid token of an administrator of `tenant` (a member of `admins`, D32), as
    /// `make run`'s.
    pub fn token(&self, tenant: &str) -> String {
        self.jwt.issue_admin(tenant, 3600)
    }

    /// A valid token of a member of `tenant` in no group (D32).
    pub fn member_token(&self, tenant: &str) -> String {
        self.jwt.issue(tenant, 3600)
    }

    /// A request without an Authorization header.
    pub fn anonymous(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base))
    }

    /// A request as `tenant`.
    pub fn request(&self, tenant: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.anonymous(method, path).bearer_auth(self.token(tenant))
    }

    pub async fn send(&self, request: reqwest::RequestBuilder) -> Answer {
        Answer::from(request.send().await.unwrap()).await
    }

    pub async fn get(&self, tenant: &str, path: &str) -> Answer {
        self.send(self.request(tenant, Method::GET, path)).await
    }

    pub async fn post(&self, tenant: &str, path: &str, body: Value) -> Answer {
        self.send(self.request(tenant, Method::POST, path).json(&body))
            .await
    }

    /// A POST whose body is sent as given, labelled as JSON.
    pub async fn post_raw(
        &self,
        tenant: &str,
        path: &str,
        body: impl Into<reqwest::Body>,
    ) -> Answer {
        let request = self
            .request(tenant, Method::POST, path)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        self.send(request).await
    }

    /// `POST /api/dnc/batchImport` of a CSV file's text (D16).
    pub async fn import_dnc(&self, tenant: &str, csv: &str) -> Answer {
        let part = reqwest::multipart::Part::bytes(csv.as_bytes().to_vec()).file_name("dnc.csv");
        let form = reqwest::multipart::Form::new().part("file", part);
        self.send(
            self.request(tenant, Method::POST, "/api/dnc/batchImport")
                .multipart(form),
        )
        .await
    }

    /// `GET /api/dataSource/list?{query}`.
    pub async fn sources(&self, tenant: &str, query: &str) -> Answer {
        self.get(tenant, &format!("/api/dataSource/list?{query}"))
            .await
    }

    /// `GET /api/dataSource/detail/{id}`.
    pub async fn detail(&self, tenant: &str, id: &str) -> Answer {
        self.get(tenant, &format!("/api/dataSource/detail/{id}"))
            .await
    }

    /// `GET /api/dataSource/{source}/contacts?{query}`.
    pub async fn contacts(&self, tenant: &str, source: &str, query: &str) -> Answer {
        self.get(
            tenant,
            &format!("/api/dataSource/{source}/contacts?{query}"),
        )
        .await
    }

    /// Adds a data source and answers its id.
    pub async fn data_source(&self, tenant: &str, name: &str) -> String {
        let answer = self
            .post(
                tenant,
                "/api/dataSource/add",
                json!({"dataSourceName": name}),
            )
            .await;
        answer.ok()["id"].as_str().unwrap().to_owned()
    }

    /// Adds a contact and answers its id.
    pub async fn contact(&self, tenant: &str, source: &str, phone: &str) -> String {
        let answer = self
            .post(
                tenant,
                &contact_op(source, "add"),
                json!({"phoneNumber": phone}),
            )
            .await;
        answer.ok()["id"].as_str().unwrap().to_owned()
    }

    /// The `contactCount` of data source `source`.
    pub async fn contact_count(&self, tenant: &str, source: &str) -> u64 {
        let detail = self.detail(tenant, source).await;
        detail.ok()["contactCount"].as_u64().unwrap()
    }

    /// Every contact of `source`, newest first, read page by page.
    pub async fn all_contacts(&self, tenant: &str, source: &str) -> Vec<Value> {
        let mut rows = Vec::new();
        for page in 1.. {
            let answer = self
                .contacts(tenant, source, &format!("pageNum={page}&pageSize=100"))
                .await;
            let data = answer.ok();
            let found = data["rows"].as_array().unwrap();
            rows.extend(found.iter().cloned());
            if found.is_empty() || rows.len() as u64 >= data["total"].as_u64().unwrap() {
                break;
            }
        }
        rows
    }

    /// What an import can set on each contact of `source` (phone number and fields, no ids,
    /// times or call state; absent fields left out), sorted by phone number, to compare the
    /// contents of two data sources.
    pub async fn contact_fields(&self, tenant: &str, source: &str) -> Vec<Value> {
        const NOT_IMPORTED: [&str; 7] = [
            "id",
            "e164",
            "dataSourceId",
            "status",
            "callCount",
            "createTime",
            "updateTime",
        ];
        let mut shapes: Vec<Value> = self
            .all_contacts(tenant, source)
            .await
            .into_iter()
            .map(|contact| {
                let fields: serde_json::Map<String, Value> = contact
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(name, value)| {
                        !value.is_null() && !NOT_IMPORTED.contains(&name.as_str())
                    })
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect();
                Value::Object(fields)
            })
            .collect();
        shapes.sort_by_key(|shape| shape["phoneNumber"].as_str().unwrap().to_owned());
        shapes
    }

    /// Records that `contact` ended with `outcome` (D7 codes) after `attempts` calls in `task`.
    ///
    /// This stands in for the dialing engine, which is not part of the HTTP API: it writes the
    /// task's per-contact state (`TaskContact`, in the task_contacts partition) the way the engine
    /// does when a call ends, so that task exports and statistics have outcomes to show.
    pub async fn seed_outcome(
        &self,
        tenant: &str,
        task: &str,
        contact: &str,
        outcome: u8,
        attempts: u32,
    ) {
        let state = TaskContact {
            attempts,
            last_outcome: outcome,
            last_duration: if outcome == 1 { 42 } else { 0 },
            done: true,
            ..TaskContact::undialled(
                Id::parse(contact).unwrap(),
                attempts.max(3),
                3,
                Timestamp::now(),
            )
        };
        let mut item: Item = serde_dynamo::to_item(&state).unwrap();
        let tenant = Tenant::parse(tenant).unwrap();
        let task = Id::parse(task).unwrap();
        item.insert(
            keys::PK.into(),
            AttributeValue::S(keys::task_contacts(&tenant, &task)),
        );
        item.insert(
            keys::SK.into(),
            AttributeValue::S(keys::contact(&state.contact_id)),
        );
        self.dynamodb()
            .put_item()
            .table_name(&self.resources.table)
            .set_item(Some(item))
            .send()
            .await
            .expect("write the task contact state");
        self.seed_recall_mark(&tenant, &task, &state.contact_id, outcome)
            .await;
    }

    /// The recall mark (D12) the engine's outcome keeps beside a state whose latest outcome is
    /// failed (2) or no answer (3), and deletes otherwise.
    async fn seed_recall_mark(&self, tenant: &Tenant, task: &Id, contact: &Id, outcome: u8) {
        let pk = AttributeValue::S(keys::task_contacts(tenant, task));
        let sk = AttributeValue::S(keys::recallable(contact));
        let client = self.raw_dynamodb();
        if matches!(outcome, 2 | 3) {
            client
                .put_item()
                .table_name(&self.resources.table)
                .item(keys::PK, pk)
                .item(keys::SK, sk)
                .send()
                .await
                .expect("write the recall mark");
        } else {
            client
                .delete_item()
                .table_name(&self.resources.table)
                .key(keys::PK, pk)
                .key(keys::SK, sk)
                .send()
                .await
                .expect("delete the recall mark");
        }
    }

    /// Runs `request` and answers it with the number of DynamoDB calls it made.
    pub async fn counting(&self, request: impl Future<Output = Answer>) -> (Answer, usize) {
        self.calls.take();
        let answer = request.await;
        (answer, self.calls.take())
    }

    /// A DynamoDB client that is not counted, for reading stored state directly.
    pub fn dynamodb(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.sdk)
    }

    /// Every item of the table by (pk, sk): two equal snapshots prove nothing was written. The
    /// tenants' request-rate items (D26) are left out: every request moves its tenant's, the
    /// refused ones included, and they hold no record of the service.
    pub async fn snapshot(&self) -> BTreeMap<(String, String), Item> {
        let mut items = self.snapshot_with_rate().await;
        items.retain(|(pk, sk), _| !(pk.ends_with("#RATE") && sk == "RATE"));
        items
    }

    /// Every item of the table by (pk, sk), the request-rate items included.
    pub async fn snapshot_with_rate(&self) -> BTreeMap<(String, String), Item> {
        let items = self
            .dynamodb()
            .scan()
            .table_name(&self.resources.table)
            .into_paginator()
            .items()
            .send()
            .collect::<Result<Vec<_>, _>>()
            .await
            .expect("scan the table");
        let key = |item: &Item, name: &str| item[name].as_s().unwrap().clone();
        items
            .into_iter()
            .map(|item| ((key(&item, keys::PK), key(&item, keys::SK)), item))
            .collect()
    }

    /// Every object key in this test's bucket, sorted.
    pub async fn object_keys(&self) -> Vec<String> {
        let pages = aws_sdk_s3::Client::from_conf(
            aws_sdk_s3::config::Builder::from(&self.sdk)
                .force_path_style(true)
                .build(),
        )
        .list_objects_v2()
        .bucket(&self.resources.bucket)
        .into_paginator()
        .send()
        .collect::<Vec<_>>()
        .await;
        let mut keys = Vec::new();
        for page in pages {
            let page = page.expect("list the bucket");
            keys.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_owned)),
            );
        }
        keys.sort();
        keys
    }

    /// The number of items stored in the partitions of data source `id` of `tenant` (its
    /// contact shards): its head, imports, contacts and phone guards.
    pub async fn partition_len(&self, tenant: &str, id: &str) -> usize {
        let shards = outbound_adapters::store::shards::ContactShards::new(
            &Tenant::parse(tenant).unwrap(),
            &Id::parse(id).unwrap(),
            outbound_adapters::store::shards::DEFAULT_CONTACT_SHARDS,
        );
        let mut len = 0;
        for pk in shards.partitions() {
            let items = self
                .dynamodb()
                .query()
                .table_name(&self.resources.table)
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(":pk", AttributeValue::S(pk))
                .consistent_read(true)
                .into_paginator()
                .items()
                .send()
                .collect::<Result<Vec<_>, _>>()
                .await
                .expect("query the partition");
            len += items.len();
        }
        len
    }

    /// The jobs waiting on this test's reclaim queue (received, so each is seen once).
    pub async fn reclaim_jobs(&self) -> Vec<ReclaimJob> {
        let output = aws_sdk_sqs::Client::new(&self.sdk)
            .receive_message()
            .queue_url(&self.resources.reclaim_queue_url)
            .max_number_of_messages(10)
            .send()
            .await
            .expect("receive from the reclaim queue");
        output
            .messages()
            .iter()
            .map(|message| serde_json::from_str(message.body().unwrap()).unwrap())
            .collect()
    }
}

/// A response: status, headers and the JSON body.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Answer {
    pub async fn from(response: reqwest::Response) -> Answer {
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.unwrap();
        Answer::parse(status, headers, &bytes)
    }

    /// An answer from its parts; a body that is not JSON is kept as a string.
    pub fn parse(status: StatusCode, headers: reqwest::header::HeaderMap, body: &[u8]) -> Answer {
        let text = String::from_utf8_lossy(body);
        let body = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.into()));
        Answer {
            status,
            headers,
            body,
        }
    }

    /// The `data` of a success envelope; panics with the body otherwise.
    pub fn ok(&self) -> &Value {
        assert_eq!(self.status, StatusCode::OK, "{}", self.body);
        assert_eq!(self.body["code"], 0, "{}", self.body);
        assert_eq!(self.body["message"], "success");
        &self.body["data"]
    }

    /// Asserts an error envelope with `code` and exactly `message`.
    pub fn err(&self, code: u16, message: &str) {
        assert_eq!(self.status.as_u16(), code, "{}", self.body);
        assert_eq!(
            self.body,
            serde_json::json!({"code": code, "message": message, "data": null})
        );
    }

    /// Asserts an error envelope with `code`, whatever the message.
    pub fn code(&self, code: u16) -> &str {
        assert_eq!(self.status.as_u16(), code, "{}", self.body);
        assert_eq!(self.body["code"], code, "{}", self.body);
        assert_eq!(self.body["data"], Value::Null);
        self.body["message"].as_str().unwrap()
    }
}

impl TestApi {
    /// Hands every waiting upload notification to the import handler, as the import Lambda would.
    pub async fn drain_imports(&self) -> usize {
        let app = self.app.clone();
        outbound_local::poller::drain(
            &aws_sdk_sqs::Client::new(&self.sdk),
            &self.resources.import_queue_url,
            move |body| {
                let app = app.clone();
                async move { outbound_workers::upload_message(&app, body).await }
            },
        )
        .await
        .unwrap()
    }

    /// Posts `bytes` as the multipart `file` of a bulk import.
    pub async fn batch_import(
        &self,
        tenant: &str,
        source: &str,
        file_name: &str,
        bytes: Vec<u8>,
    ) -> Answer {
        let part = reqwest::multipart::Part::bytes(bytes).file_name(file_name.to_owned());
        let form = reqwest::multipart::Form::new().part("file", part);
        let response = self
            .request(
                tenant,
                Method::POST,
                &format!("/api/dataSource/{source}/contact/batchImport"),
            )
            .multipart(form)
            .send()
            .await
            .unwrap();
        Answer::from(response).await
    }

    /// `POST /api/dataSource/{source}/contact/importUrl` with `body`.
    pub async fn import_url(&self, tenant: &str, source: &str, body: Value) -> Answer {
        self.post(
            tenant,
            &format!("/api/dataSource/{source}/contact/importUrl"),
            body,
        )
        .await
    }

    /// `GET /api/dataSource/{source}/contact/import/{import}`.
    pub async fn import_status(&self, tenant: &str, source: &str, import: &str) -> Answer {
        self.get(
            tenant,
            &format!("/api/dataSource/{source}/contact/import/{import}"),
        )
        .await
    }

    /// Imports `bytes` the asynchronous way (D8): [`TestApi::upload`], then hands the upload
    /// notification to the import handler. Answers the import id.
    pub async fn upload_and_import(
        &self,
        tenant: &str,
        source: &str,
        file_name: &str,
        bytes: Vec<u8>,
    ) -> String {
        let import = self.upload(tenant, source, file_name, bytes).await;
        self.drain_imports().await;
        import
    }

    /// Asks for an upload URL and PUTs the file there; the notification waits on the import
    /// queue. Answers the import id.
    pub async fn upload(
        &self,
        tenant: &str,
        source: &str,
        file_name: &str,
        bytes: Vec<u8>,
    ) -> String {
        let body = json!({"fileName": file_name, "fileSize": bytes.len()});
        let ticket = self.import_url(tenant, source, body).await;
        let ticket = ticket.ok();
        let put = reqwest::Client::new()
            .put(ticket["uploadUrl"].as_str().unwrap())
            .body(bytes)
            .send()
            .await
            .unwrap();
        assert!(put.status().is_success(), "{}", put.text().await.unwrap());
        ticket["importId"].as_str().unwrap().to_owned()
    }

    /// Receives and deletes every message waiting on the queue at `url`: their bodies.
    pub async fn take_messages(&self, url: &str) -> Vec<String> {
        let sqs = aws_sdk_sqs::Client::new(&self.sdk);
        let mut bodies = Vec::new();
        loop {
            let received = sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .send()
                .await
                .unwrap();
            if received.messages().is_empty() {
                return bodies;
            }
            for message in received.messages() {
                bodies.push(message.body().unwrap().to_owned());
                sqs.delete_message()
                    .queue_url(url)
                    .receipt_handle(message.receipt_handle().unwrap())
                    .send()
                    .await
                    .unwrap();
            }
        }
    }

    /// Hands every waiting export job to the exporter's handler, as its Lambda would: the
    /// number handled.
    pub async fn drain_exports(&self) -> usize {
        let app = self.app.clone();
        outbound_local::poller::drain(
            &aws_sdk_sqs::Client::new(&self.sdk),
            &self.resources.export_queue_url,
            move |body| {
                let app = app.clone();
                async move { outbound_workers::export_message(&app, body).await }
            },
        )
        .await
        .unwrap()
    }

    /// A raw download: status, headers and bytes.
    pub async fn download(
        &self,
        tenant: &str,
        path: &str,
    ) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
        let response = self
            .request(tenant, Method::GET, path)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        (status, headers, response.bytes().await.unwrap().to_vec())
    }
}

/// The store's view of a tenant name.
/// The ids of the rows of a list page.
pub fn row_ids(page: &Value) -> Vec<String> {
    page["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["id"].as_str().unwrap().to_owned())
        .collect()
}

pub fn tenant(name: &str) -> Tenant {
    Tenant::parse(name).unwrap()
}

/// A record id as the API handed it out.
pub fn id(raw: &str) -> Id {
    Id::parse(raw).unwrap_or_else(|| panic!("{raw:?} is not an id"))
}

/// A phone number that is unique among the `n` contacts of one data source.
pub fn phone(n: usize) -> String {
    format!("1380000{n:04}")
}

/// The name of a state as the 405 messages show it (D10), written out independently of the code.
pub fn state_name(status: TaskStatus) -> &'static str {
    [
        "DRAFT",
        "RUNNING",
        "PAUSED",
        "STOPPED",
        "COMPLETED",
        "FAILED",
        "CLOSED",
    ][usize::from(status.code())]
}

/// A task on a fresh data source, as the tests set it up.
#[derive(Clone, Debug)]
pub struct TaskFixture {
    pub id: String,
    pub source: String,
    pub contacts: Vec<String>,
}

impl TestApi {
    /// Adds a data source with `count` contacts: its id and the contact ids, oldest first.
    pub async fn source_with_contacts(&self, tenant: &str, count: usize) -> (String, Vec<String>) {
        let source = self.data_source(tenant, &unique("Source")).await;
        let mut contacts = Vec::new();
        for n in 0..count {
            contacts.push(self.contact(tenant, &source, &phone(n)).await);
        }
        (source, contacts)
    }

    /// Sets `tenant`'s `defaultCountry`: the country its numbers written without `+` (such as
    /// [`phone`]'s, Chinese mobiles) are read in. Without one such a number has no E.164 form,
    /// and no provider is ever given it (D14).
    pub async fn numbers_read_in(&self, tenant: &str, country: &str) {
        let answer = self
            .post(
                tenant,
                "/api/settings/update",
                serde_json::json!({"defaultCountry": country}),
            )
            .await;
        assert_eq!(answer.ok()["defaultCountry"], country);
    }

    /// A data source of contacts with these numbers and extra fields: its id and contact ids.
    pub async fn source_of(
        &self,
        tenant: &str,
        contacts: &[(&str, Value)],
    ) -> (String, Vec<String>) {
        let source = self.data_source(tenant, &unique("Source")).await;
        let mut ids = Vec::new();
        for (phone, extra) in contacts {
            let body = with_fields(json!({"phoneNumber": phone}), extra);
            let answer = self.post(tenant, &contact_op(&source, "add"), body).await;
            ids.push(answer.ok()["id"].as_str().unwrap().to_owned());
        }
        (source, ids)
    }

    /// Adds a DRAFT task with `extra` body fields on `source` and answers its id.
    pub async fn task(&self, tenant: &str, name: &str, source: &str, extra: Value) -> String {
        let body = with_fields(json!({"taskName": name, "dataSourceId": source}), &extra);
        let answer = self.post(tenant, "/api/task/add", body).await;
        answer.ok()["id"].as_str().unwrap().to_owned()
    }

    /// Takes a DRAFT task into `state` the way tasks get there: publish, pause, stop and close
    /// over HTTP; COMPLETED and FAILED through the dialing engine's entry points.
    pub async fn drive(&self, tenant_name: &str, id_raw: &str, state: TaskStatus) {
        use outbound_service::task as engine;
        let body = serde_json::json!({"id": id_raw});
        let (owner, task) = (tenant(tenant_name), id(id_raw));
        if state == TaskStatus::Draft {
            return;
        }
        self.post(tenant_name, "/api/task/publish", body.clone())
            .await
            .ok();
        match state {
            TaskStatus::Draft | TaskStatus::Running => {}
            TaskStatus::Paused => {
                self.post(tenant_name, "/api/task/pause", body).await.ok();
            }
            TaskStatus::Stopped | TaskStatus::Closed => {
                self.post(tenant_name, "/api/task/stop", body.clone())
                    .await
                    .ok();
                if state == TaskStatus::Closed {
                    self.post(tenant_name, "/api/task/close", body).await.ok();
                }
            }
            TaskStatus::Completed => {
                engine::complete(&self.store, &owner, &task).await.unwrap();
            }
            TaskStatus::Failed => {
                engine::fail(&self.store, &owner, &task, "carrier refused".into())
                    .await
                    .unwrap();
            }
        }
        assert_eq!(self.stored_task(tenant_name, id_raw).await.status, state);
    }

    /// A task in `state` on a fresh data source with `contacts` contacts.
    pub async fn task_in(&self, tenant: &str, state: TaskStatus, contacts: usize) -> TaskFixture {
        let (source, contacts) = self.source_with_contacts(tenant, contacts).await;
        let id = self
            .task(tenant, &unique("Task"), &source, serde_json::json!({}))
            .await;
        self.drive(tenant, &id, state).await;
        TaskFixture {
            id,
            source,
            contacts,
        }
    }

    /// The stored task, read past the API.
    pub async fn stored_task(&self, tenant_name: &str, id_raw: &str) -> Task {
        self.store
            .task(&tenant(tenant_name), &id(id_raw))
            .await
            .unwrap()
    }

    /// The stored data source (with its `active_tasks`), read past the API.
    pub async fn stored_source(&self, tenant_name: &str, id_raw: &str) -> DataSource {
        self.store
            .data_source(&tenant(tenant_name), &id(id_raw))
            .await
            .unwrap()
    }

    /// The stored per-contact state of a task, keyed by contact id.
    pub async fn stored_task_contacts(
        &self,
        tenant_name: &str,
        task: &str,
    ) -> BTreeMap<String, TaskContact> {
        self.store
            .task_contacts(&tenant(tenant_name), &id(task))
            .await
            .unwrap()
            .into_iter()
            .map(|contact| (contact.contact_id.to_string(), contact))
            .collect()
    }

    /// Puts `items` past the API and its counters, to seed large data sets fast.
    pub async fn put_directly(&self, items: Vec<Item>) {
        outbound_tests::stack::put_items(&self.raw_dynamodb(), &self.resources.table, items)
            .await
            .expect("batch write");
    }

    /// A DynamoDB client that the call counter does not see.
    fn raw_dynamodb(&self) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::new(&self.sdk)
    }

    /// Stands in for the dialing engine, which does not exist yet: records that `contact` was
    /// dialled `attempts` times in `task`, the latest with `outcome` (D7 codes: 1 success,
    /// 2 failed, 3 no answer), the way the engine will store it (`TaskContact` under the task's
    /// contact partition).
    pub async fn seed_task_contact(
        &self,
        tenant_name: &str,
        task: &str,
        contact: &str,
        outcome: u8,
        attempts: u32,
    ) {
        let state = TaskContact {
            attempts,
            last_outcome: outcome,
            done: true,
            ..TaskContact::undialled(id(contact), attempts, 3, Timestamp::now())
        };
        let mut item: HashMap<String, AttributeValue> = serde_dynamo::to_item(&state).unwrap();
        let pk = keys::task_contacts(&tenant(tenant_name), &id(task));
        item.insert(keys::PK.into(), AttributeValue::S(pk));
        item.insert(
            keys::SK.into(),
            AttributeValue::S(keys::contact(&id(contact))),
        );
        self.raw_dynamodb()
            .put_item()
            .table_name(&self.resources.table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
        self.seed_recall_mark(&tenant(tenant_name), &id(task), &id(contact), outcome)
            .await;
    }

    /// Stands in for the operator's assignment of agent queues (D30): writes `tenant`'s queues
    /// (each named after its id) onto its settings item, past the API, keeping the rest.
    pub async fn seed_queues(&self, tenant_name: &str, queues: &[&str]) {
        let queues: Vec<outbound_model::telephony::AgentQueue> = queues
            .iter()
            .map(|id| outbound_model::telephony::AgentQueue::new("queues", id, id).unwrap())
            .collect();
        let values = HashMap::from([(
            ":queues".to_owned(),
            serde_dynamo::to_attribute_value(&queues).unwrap(),
        )]);
        self.set_settings(tenant_name, &["queues = :queues".to_owned()], values)
            .await;
    }

    /// `SET`s `set` on `tenant`'s settings item, past the API.
    async fn set_settings(
        &self,
        tenant_name: &str,
        set: &[String],
        values: HashMap<String, AttributeValue>,
    ) {
        self.raw_dynamodb()
            .update_item()
            .table_name(&self.resources.table)
            .key(
                keys::PK,
                AttributeValue::S(keys::tenant(&tenant(tenant_name))),
            )
            .key(keys::SK, AttributeValue::S(keys::SETTINGS.into()))
            .update_expression(format!("SET {}", set.join(", ")))
            .set_expression_attribute_values(Some(values))
            .send()
            .await
            .unwrap();
    }

    /// Stands in for the operator's assignment (D22): writes `tenant`'s caller IDs, its contact
    /// flows (each flow named by its id) and its defaults onto its settings item, past the API,
    /// keeping its other settings.
    pub async fn seed_telephony(
        &self,
        tenant_name: &str,
        (caller_ids, default_caller_id): (&[&str], Option<&str>),
        (flows, default_flow): (&[&str], Option<&str>),
    ) {
        let flows: Vec<outbound_model::telephony::ContactFlow> = flows
            .iter()
            .map(|id| outbound_model::telephony::ContactFlow::new("contactFlows", id, id).unwrap())
            .collect();
        let mut set = vec![
            "caller_ids = :ids".to_owned(),
            "contact_flows = :flows".to_owned(),
        ];
        let mut values = HashMap::from([
            (
                ":ids".to_owned(),
                serde_dynamo::to_attribute_value(caller_ids).unwrap(),
            ),
            (
                ":flows".to_owned(),
                serde_dynamo::to_attribute_value(&flows).unwrap(),
            ),
        ]);
        for (name, value) in [
            ("default_caller_id", default_caller_id),
            ("default_contact_flow_id", default_flow),
        ] {
            if let Some(value) = value {
                set.push(format!("{name} = :{name}"));
                values.insert(format!(":{name}"), AttributeValue::S(value.into()));
            }
        }
        self.set_settings(tenant_name, &set, values).await;
        // Each number's guard names its tenant, as the operator's assignment leaves it: what a
        // call's claim checks (D28).
        for number in caller_ids {
            let (pk, sk) = keys::caller_id(number);
            self.raw_dynamodb()
                .put_item()
                .table_name(&self.resources.table)
                .item(keys::PK, AttributeValue::S(pk))
                .item(keys::SK, AttributeValue::S(sk))
                .item("tenant", AttributeValue::S(tenant_name.to_owned()))
                .send()
                .await
                .unwrap();
        }
    }

    /// Stands in for the dialing engine's counters on the task record (calls, outcomes, seconds).
    pub async fn seed_counters(&self, tenant_name: &str, task: &str, counters: &CallCounters) {
        let value = serde_dynamo::to_attribute_value(counters).unwrap();
        self.seed_task_attribute(tenant_name, task, "counters", value)
            .await;
    }

    /// Sets one attribute of an existing task record as the engine would have left it (a rest,
    /// a recall's last progress, its counters).
    pub async fn seed_task_attribute(
        &self,
        tenant_name: &str,
        task: &str,
        name: &str,
        value: AttributeValue,
    ) {
        let (tenant, task) = (tenant(tenant_name), id(task));
        // What calls move is on the task's counters item, when it keeps them apart.
        let counted = outbound_adapters::store::counters::moved_by_calls(name)
            && self
                .stored_task(tenant_name, task.as_str())
                .await
                .counters_apart;
        let (pk, sk) = if counted {
            keys::task_counters(&tenant, &task)
        } else {
            (keys::tenant(&tenant), keys::task(&task))
        };
        self.raw_dynamodb()
            .update_item()
            .table_name(&self.resources.table)
            .key(keys::PK, AttributeValue::S(pk))
            .key(keys::SK, AttributeValue::S(sk))
            .update_expression("SET #name = :value")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_names("#name", name)
            .expression_attribute_values(":value", value)
            .send()
            .await
            .unwrap();
    }
}

impl TestApi {
    /// Like [`TestApi::start`], but the store's DynamoDB client goes through a fault-injecting
    /// proxy in front of the test's DynamoDB (`outbound_tests::faults`), so a test can throttle
    /// it at will (D1). Provisioning and the test's own reads ([`TestApi::snapshot`],
    /// [`TestApi::dynamodb`]) go straight to it; the call counter still counts the store's calls. The proxied client has
    /// a retry partition of its own, so the SDK's retry token bucket it drains is not the one the
    /// other tests' clients share.
    pub async fn start_with_faults() -> (TestApi, outbound_tests::faults::FaultProxy) {
        use aws_sdk_dynamodb::config::retry::RetryPartition;
        let stack = Stack::provision().await;
        let proxy = outbound_tests::faults::FaultProxy::start(stack.dynamodb.url()).await;
        let dynamodb = aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
                .interceptor(stack.calls.clone())
                .endpoint_url(proxy.url())
                .retry_partition(RetryPartition::new(unique("faults")))
                .build(),
        );
        let stack = Stack {
            store: Store::new(dynamodb, stack.resources.table.clone()),
            ..stack
        };
        (TestApi::serve_stack(stack, |_| {}).await, proxy)
    }
}

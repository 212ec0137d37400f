//! The harness: each test gets its own table on the shared moto, and the API served in process
//! on a random port with the same routers the Lambdas use.

use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;
use outbound::auth::LocalJwt;
use outbound::http::{App, AppParts};
use outbound::reclaim::ReclaimQueue;
use outbound::store::Store;
use outbound_local::{local_config, local_jwt, provision, sdk_config};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts DynamoDB operations (one per call, retries included in it).
#[derive(Clone, Debug, Default)]
pub struct CallCounter(Arc<AtomicUsize>);

impl Intercept for CallCounter {
    fn name(&self) -> &'static str {
        "CallCounter"
    }

    fn read_before_execution(
        &self,
        _context: &aws_sdk_dynamodb::config::interceptors::BeforeSerializationInterceptorContextRef<
            '_,
        >,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn read_after_execution(
        &self,
        _context: &aws_sdk_dynamodb::config::interceptors::FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _config: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        Ok(())
    }
}

impl CallCounter {
    pub fn take(&self) -> usize {
        self.0.swap(0, Ordering::SeqCst)
    }
}

/// A running API on its own table.
pub struct TestApi {
    pub base: String,
    pub http: reqwest::Client,
    pub jwt: LocalJwt,
    pub store: Store,
    pub calls: CallCounter,
    pub resources: provision::Resources,
    pub sdk: aws_config::SdkConfig,
}

/// A unique, short resource name.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", ulid::Ulid::new().to_string().to_lowercase())
}

impl TestApi {
    pub async fn start() -> TestApi {
        let sdk = sdk_config().await;
        let resources =
            provision::ensure(&sdk, &unique("t"), "outbound-test", "outbound-test-reclaim")
                .await
                .expect("moto is running (make test starts it)");
        let config = local_config(&resources);
        let jwt = local_jwt(&config);
        let calls = CallCounter::default();
        let dynamodb = aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&sdk)
                .interceptor(calls.clone())
                .build(),
        );
        let store = Store::new(dynamodb, resources.table.clone());
        let app = App::new(AppParts {
            store: store.clone(),
            reclaim: ReclaimQueue::new(
                aws_sdk_sqs::Client::new(&sdk),
                resources.reclaim_queue_url.clone(),
            ),
            config,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(outbound_local::serve(listener, app));
        TestApi {
            base,
            http: reqwest::Client::new(),
            jwt,
            store,
            calls,
            resources,
            sdk,
        }
    }

    /// A valid token for `tenant`.
    pub fn token(&self, tenant: &str) -> String {
        self.jwt.issue(tenant, 3600)
    }

    /// A request as `tenant`.
    pub fn request(&self, tenant: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(self.token(tenant))
    }

    pub async fn get(&self, tenant: &str, path: &str) -> Answer {
        Answer::from(
            self.request(tenant, Method::GET, path)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn post(&self, tenant: &str, path: &str, body: Value) -> Answer {
        Answer::from(
            self.request(tenant, Method::POST, path)
                .json(&body)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Adds a data source and answers its id.
    pub async fn data_source(&self, tenant: &str, name: &str) -> String {
        let answer = self
            .post(
                tenant,
                "/api/dataSource/add",
                serde_json::json!({"dataSourceName": name}),
            )
            .await;
        answer.ok()["id"].as_str().unwrap().to_owned()
    }

    /// Adds a contact and answers its id.
    pub async fn contact(&self, tenant: &str, source: &str, phone: &str) -> String {
        let answer = self
            .post(
                tenant,
                &format!("/api/dataSource/{source}/contact/add"),
                serde_json::json!({"phoneNumber": phone}),
            )
            .await;
        answer.ok()["id"].as_str().unwrap().to_owned()
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
        let text = response.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
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

//! What each function asks of AWS, written down for the least-privilege check
//! (`scripts/iam_check.py`, run by `make test`): it compares every action a function's code
//! performed under the test suite with what `template.yaml` lets that function's role do.
//!
//! Only when `AWS_ACTION_LOG` names a file. Then every SDK client the service builds (the
//! DynamoDB, S3 and SQS clients of [`super::timing`], the bus's [`super::eventbridge`], the
//! dialer's Amazon Connect client, the cold start's [`crate::secrets::SecretReader`]) carries an
//! [`ActionLog`], which appends to that file one JSON line per IAM action a request needs, once
//! per process for each function, action and resource:
//!
//! ```json
//! {"function":"exporter","action":"dynamodb:PutItem","resource":"table/t-01j..."}
//! ```
//!
//! The action is the one IAM evaluates, not the operation's name: each item of a
//! TransactWriteItems is its own `PutItem`, `UpdateItem`, `DeleteItem` or `ConditionCheckItem`
//! on its table, a SendMessageBatch is `sqs:SendMessage`, a presigned PUT is `s3:PutObject`
//! (the URL carries the function's authority). The resource is a kind and the name the request
//! used: `table/{name}` (and `/index/{name}`), `bucket/{name}/{first key segment}/*`,
//! `queue/{name}`, `event-bus/{name}`, `connect/{instance}`, `secret/{arn}`. Names are those of
//! the stack the request ran against; [`name_resources`] writes which variable gave which name,
//! so the check can tell which of the template's resources a name stands for.
//!
//! The function is the one whose entry point the request ran under: [`Function::scope`] is set
//! by each function's handler (the API's routers by path, as the HTTP API routes them; each
//! queue's handler; the tick; the event publisher), which the local stack and the tests call as
//! the Lambdas do. A request outside every scope (a test's own set-up) is not written. The read
//! of a function's secrets comes before its handler, at cold start: the test that reads them
//! does so in each reading function's scope (tests/api/secrets.rs). Without the variable no
//! client carries the interceptor, and a scope costs one task-local.

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::BeforeSerializationInterceptorContextRef;
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_types::config_bag::ConfigBag;
use std::collections::HashSet;
use std::future::Future;
use std::io::Write;
use std::sync::{Mutex, OnceLock, PoisonError};

pub use aws_smithy_runtime_api::client::interceptors::context::Input;

/// The variable naming the file the actions are appended to.
pub const ACTION_LOG: &str = "AWS_ACTION_LOG";

/// The service's functions, by the name of their binary (`template.yaml` names each function's
/// binary in its `BuildProperties`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    DataSourceApi,
    TaskApi,
    ContactImport,
    Exporter,
    Reclaim,
    DialerTick,
    Dialer,
    CallEvents,
    EventPublisher,
    FlowResults,
}

tokio::task_local! {
    static CURRENT: Function;
}

impl Function {
    pub const fn name(self) -> &'static str {
        match self {
            Function::DataSourceApi => "datasource-api",
            Function::TaskApi => "task-api",
            Function::ContactImport => "contact-import",
            Function::Exporter => "exporter",
            Function::Reclaim => "reclaim",
            Function::DialerTick => "dialer-tick",
            Function::Dialer => "dialer",
            Function::CallEvents => "call-events",
            Function::EventPublisher => "event-publisher",
            Function::FlowResults => "flow-results",
        }
    }

    /// Runs `future` as this function's code: the AWS requests it makes are this function's.
    pub fn scope<F: Future>(self, future: F) -> impl Future<Output = F::Output> {
        CURRENT.scope(self, future)
    }

    /// The function whose code is running, if any.
    pub fn current() -> Option<Function> {
        CURRENT.try_with(|function| *function).ok()
    }
}

/// One IAM action on one resource (see the module documentation for the resource's form), and
/// for DynamoDB the leading keys it names, as the template's `dynamodb:LeadingKeys` conditions
/// read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub action: String,
    pub resource: String,
    /// The partition key prefixes (each value up to and including its first `#`) of the items
    /// or the partition the request names; `None` for services without keys.
    pub keys: Option<Vec<String>>,
}

impl Access {
    pub fn new(action: impl Into<String>, resource: impl Into<String>) -> Access {
        Access {
            action: action.into(),
            resource: resource.into(),
            keys: None,
        }
    }

    /// The access with the leading key prefixes of `values` (each once, in order).
    pub fn keyed<'a>(mut self, values: impl IntoIterator<Item = &'a str>) -> Access {
        let mut keys: Vec<String> = Vec::new();
        for value in values {
            let prefix = match value.find('#') {
                Some(end) => &value[..=end],
                None => value,
            };
            if !keys.iter().any(|key| key == prefix) {
                keys.push(prefix.to_owned());
            }
        }
        self.keys = Some(keys);
        self
    }
}

/// What a request of one service needs: its operation's name and its input, to the accesses.
pub type Describe = fn(&str, &Input) -> Vec<Access>;

/// The file, and the lines this process has written to it.
struct Log {
    file: std::fs::File,
    written: HashSet<String>,
}

fn log() -> Option<&'static Mutex<Log>> {
    static LOG: OnceLock<Option<Mutex<Log>>> = OnceLock::new();
    LOG.get_or_init(|| {
        let path = std::env::var_os(ACTION_LOG).filter(|path| !path.is_empty())?;
        // Appended to by every test process at once: each line is one write of its own.
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .unwrap_or_else(|e| panic!("{ACTION_LOG}={}: {e}", path.to_string_lossy()));
        Some(Mutex::new(Log {
            file,
            written: HashSet::new(),
        }))
    })
    .as_ref()
}

fn write_line(line: String) {
    let Some(log) = log() else { return };
    let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
    if log.written.insert(line.clone()) {
        let result = log.file.write_all(format!("{line}\n").as_bytes());
        result.unwrap_or_else(|e| panic!("{ACTION_LOG}: {e}"));
    }
}

/// Writes which name each variable gave the resources of a stack (`TABLE_NAME`, `BUCKET_NAME`,
/// `DIAL_QUEUE_URL`, ...), as the functions read them: the check maps a recorded name to the
/// template's resource through the variable the template sets to it.
pub fn name_resources(names: &[(&str, &str)]) {
    if log().is_none() {
        return;
    }
    let names: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|(variable, name)| ((*variable).to_owned(), (*name).into()))
        .collect();
    write_line(serde_json::json!({ "names": names }).to_string());
}

/// Writes that `names` (a table's, a queue's...) name nothing on purpose: a test points a client
/// there to show what a failing dependency does, and the check leaves their requests out.
pub fn name_absent(names: &[&str]) {
    if log().is_none() {
        return;
    }
    write_line(serde_json::json!({ "absent": names }).to_string());
}

/// The interceptor that records a client's requests with `describe`; `None` (no interceptor)
/// unless `AWS_ACTION_LOG` is set.
pub fn interceptor(describe: Describe) -> Option<ActionLog> {
    log().map(|_| ActionLog(describe))
}

/// Records what each request of a function needs (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct ActionLog(Describe);

impl Intercept for ActionLog {
    fn name(&self) -> &'static str {
        "ActionLog"
    }

    fn read_before_execution(
        &self,
        context: &BeforeSerializationInterceptorContextRef<'_>,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(function) = Function::current() else {
            return Ok(());
        };
        let operation = cfg.load::<Metadata>().map_or("unknown", Metadata::name);
        for access in (self.0)(operation, context.input()) {
            let mut line = serde_json::json!({
                "function": function.name(),
                "action": access.action,
                "resource": access.resource,
            });
            if let Some(keys) = access.keys {
                line["keys"] = keys.into();
            }
            write_line(line.to_string());
        }
        Ok(())
    }
}

/// The last segment of a queue's URL, its name.
fn queue_name(url: Option<&str>) -> String {
    let url = url.unwrap_or_default();
    format!("queue/{}", url.rsplit('/').next().unwrap_or(url))
}

/// DynamoDB: the item actions of a transaction's items and of the single-item operations on
/// their table, a Query's or Scan's on its index, a batch's on each of its tables; each with
/// the leading keys it names (a Query the partition it reads, a Scan none).
pub fn dynamodb(operation: &str, input: &Input) -> Vec<Access> {
    use aws_sdk_dynamodb::operation as op;
    use aws_sdk_dynamodb::types::AttributeValue;
    use std::collections::HashMap;
    type Key = HashMap<String, AttributeValue>;
    let table = |name: &str| format!("table/{name}");
    let partition = |key: Option<&Key>| -> Vec<String> {
        key.and_then(|key| key.get("pk"))
            .and_then(|value| value.as_s().ok())
            .cloned()
            .into_iter()
            .collect()
    };
    let keyed = |action: &str, name: &str, keys: Vec<String>| {
        Access::new(format!("dynamodb:{action}"), table(name))
            .keyed(keys.iter().map(String::as_str))
    };
    let mut accesses: Vec<Access> = Vec::new();
    let mut add = |access: Access| {
        if !accesses.contains(&access) {
            accesses.push(access);
        }
    };
    if let Some(input) = input.downcast_ref::<op::transact_write_items::TransactWriteItemsInput>() {
        for item in input.transact_items() {
            let (action, name, key) = if let Some(put) = item.put() {
                ("PutItem", put.table_name(), Some(put.item()))
            } else if let Some(update) = item.update() {
                ("UpdateItem", update.table_name(), Some(update.key()))
            } else if let Some(delete) = item.delete() {
                ("DeleteItem", delete.table_name(), Some(delete.key()))
            } else if let Some(check) = item.condition_check() {
                ("ConditionCheckItem", check.table_name(), Some(check.key()))
            } else {
                continue;
            };
            add(keyed(action, name, partition(key)));
        }
    } else if let Some(input) =
        input.downcast_ref::<op::transact_get_items::TransactGetItemsInput>()
    {
        for get in input.transact_items().iter().filter_map(|item| item.get()) {
            add(keyed(
                "GetItem",
                get.table_name(),
                partition(Some(get.key())),
            ));
        }
    } else if let Some(input) = input.downcast_ref::<op::batch_write_item::BatchWriteItemInput>() {
        for (name, writes) in input.request_items().into_iter().flatten() {
            let keys = writes.iter().flat_map(|write| {
                let put = write.put_request().map(|put| put.item());
                let delete = write.delete_request().map(|delete| delete.key());
                partition(put.or(delete))
            });
            add(keyed("BatchWriteItem", name, keys.collect()));
        }
    } else if let Some(input) = input.downcast_ref::<op::batch_get_item::BatchGetItemInput>() {
        for (name, gets) in input.request_items().into_iter().flatten() {
            let keys = gets.keys().iter().flat_map(|key| partition(Some(key)));
            add(keyed("BatchGetItem", name, keys.collect()));
        }
    } else if let Some(input) = input.downcast_ref::<op::query::QueryInput>() {
        let name = match input.index_name() {
            Some(index) => format!("{}/index/{index}", input.table_name().unwrap_or_default()),
            None => input.table_name().unwrap_or_default().to_owned(),
        };
        // Every query of the store names its partition `:pk`.
        let values = input.expression_attribute_values();
        add(keyed("Query", &name, partition_value(values, ":pk")));
    } else if let Some(input) = input.downcast_ref::<op::scan::ScanInput>() {
        let name = match input.index_name() {
            Some(index) => format!("{}/index/{index}", input.table_name().unwrap_or_default()),
            None => input.table_name().unwrap_or_default().to_owned(),
        };
        add(keyed("Scan", &name, Vec::new()));
    } else if let Some(input) = input.downcast_ref::<op::get_item::GetItemInput>() {
        let name = input.table_name().unwrap_or_default();
        add(keyed("GetItem", name, partition(input.key())));
    } else if let Some(input) = input.downcast_ref::<op::put_item::PutItemInput>() {
        let name = input.table_name().unwrap_or_default();
        add(keyed("PutItem", name, partition(input.item())));
    } else if let Some(input) = input.downcast_ref::<op::update_item::UpdateItemInput>() {
        let name = input.table_name().unwrap_or_default();
        add(keyed("UpdateItem", name, partition(input.key())));
    } else if let Some(input) = input.downcast_ref::<op::delete_item::DeleteItemInput>() {
        let name = input.table_name().unwrap_or_default();
        add(keyed("DeleteItem", name, partition(input.key())));
    } else if let Some(input) = input.downcast_ref::<op::describe_table::DescribeTableInput>() {
        add(Access::new(
            "dynamodb:DescribeTable",
            table(input.table_name().unwrap_or_default()),
        ));
    } else {
        // An operation this list does not know: recorded on no resource the check can place.
        add(Access::new(format!("dynamodb:{operation}"), table("")));
    }
    accesses
}

/// The text value `name` of a request's expression values, as a list of none or one.
fn partition_value(
    values: Option<&std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>>,
    name: &str,
) -> Vec<String> {
    values
        .and_then(|values| values.get(name))
        .and_then(|value| value.as_s().ok())
        .cloned()
        .into_iter()
        .collect()
}

/// S3: object actions on the key's first segment (`uploads/`, `exports/`, ...), which is what
/// the template's statements grant by.
pub fn s3(operation: &str, input: &Input) -> Vec<Access> {
    use aws_sdk_s3::operation as op;
    let object = |action: &str, bucket: Option<&str>, key: Option<&str>| {
        let key = key.unwrap_or_default();
        let prefix = match key.split_once('/') {
            Some((first, _)) => format!("{first}/*"),
            None => key.to_owned(),
        };
        vec![Access::new(
            format!("s3:{action}"),
            format!("bucket/{}/{prefix}", bucket.unwrap_or_default()),
        )]
    };
    if let Some(input) = input.downcast_ref::<op::put_object::PutObjectInput>() {
        return object("PutObject", input.bucket(), input.key());
    }
    if let Some(input) = input.downcast_ref::<op::get_object::GetObjectInput>() {
        return object("GetObject", input.bucket(), input.key());
    }
    if let Some(input) = input.downcast_ref::<op::head_object::HeadObjectInput>() {
        return object("GetObject", input.bucket(), input.key());
    }
    if let Some(input) = input.downcast_ref::<op::delete_object::DeleteObjectInput>() {
        return object("DeleteObject", input.bucket(), input.key());
    }
    vec![Access::new(format!("s3:{operation}"), "bucket/")]
}

/// SQS: the queue a request names; a batch needs its single action.
pub fn sqs(operation: &str, input: &Input) -> Vec<Access> {
    use aws_sdk_sqs::operation as op;
    let (action, url) = if let Some(input) =
        input.downcast_ref::<op::send_message::SendMessageInput>()
    {
        ("SendMessage", input.queue_url())
    } else if let Some(input) =
        input.downcast_ref::<op::send_message_batch::SendMessageBatchInput>()
    {
        ("SendMessage", input.queue_url())
    } else if let Some(input) = input.downcast_ref::<op::receive_message::ReceiveMessageInput>() {
        ("ReceiveMessage", input.queue_url())
    } else if let Some(input) = input.downcast_ref::<op::delete_message::DeleteMessageInput>() {
        ("DeleteMessage", input.queue_url())
    } else if let Some(input) =
        input.downcast_ref::<op::delete_message_batch::DeleteMessageBatchInput>()
    {
        ("DeleteMessage", input.queue_url())
    } else if let Some(input) =
        input.downcast_ref::<op::get_queue_attributes::GetQueueAttributesInput>()
    {
        ("GetQueueAttributes", input.queue_url())
    } else {
        (operation, None)
    };
    vec![Access::new(format!("sqs:{action}"), queue_name(url))]
}

/// EventBridge: PutEvents on each bus its entries name (the account's default bus when none).
pub fn eventbridge(operation: &str, input: &Input) -> Vec<Access> {
    use aws_sdk_eventbridge::operation::put_events::PutEventsInput;
    let Some(input) = input.downcast_ref::<PutEventsInput>() else {
        return vec![Access::new(format!("events:{operation}"), "event-bus/")];
    };
    let mut accesses: Vec<Access> = Vec::new();
    for entry in input.entries() {
        let bus = entry.event_bus_name().unwrap_or("default");
        // A bus may be named by its ARN.
        let bus = bus.rsplit('/').next().unwrap_or(bus);
        let access = Access::new("events:PutEvents", format!("event-bus/{bus}"));
        if !accesses.contains(&access) {
            accesses.push(access);
        }
    }
    accesses
}

/// Secrets Manager: GetSecretValue on the secret it names, by the ARN the function's environment
/// gave it (D32).
pub fn secretsmanager(operation: &str, input: &Input) -> Vec<Access> {
    use aws_sdk_secretsmanager::operation::get_secret_value::GetSecretValueInput;
    match input.downcast_ref::<GetSecretValueInput>() {
        Some(input) => vec![Access::new(
            "secretsmanager:GetSecretValue",
            format!("secret/{}", input.secret_id().unwrap_or_default()),
        )],
        None => vec![Access::new(
            format!("secretsmanager:{operation}"),
            "secret/",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsInput;
    use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, TransactWriteItem, Update};

    #[test]
    fn a_secret_is_named_by_the_arn_it_was_read_by() {
        use aws_sdk_secretsmanager::operation::get_secret_value::GetSecretValueInput;
        let arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:outbound/key-AbCdEf";
        let input = GetSecretValueInput::builder()
            .secret_id(arn)
            .build()
            .unwrap();
        assert_eq!(
            secretsmanager("GetSecretValue", &Input::erase(input)),
            [Access::new(
                "secretsmanager:GetSecretValue",
                format!("secret/{arn}")
            )]
        );
    }

    #[test]
    fn a_transaction_needs_the_action_of_each_of_its_items() {
        let key = || AttributeValue::S("k".into());
        let put = Put::builder()
            .table_name("t")
            .item("pk", key())
            .build()
            .unwrap();
        let update = Update::builder()
            .table_name("t")
            .key("pk", key())
            .update_expression("SET a = :a")
            .build()
            .unwrap();
        let delete = Delete::builder()
            .table_name("t")
            .key("pk", key())
            .build()
            .unwrap();
        let input = TransactWriteItemsInput::builder()
            .transact_items(TransactWriteItem::builder().put(put.clone()).build())
            .transact_items(TransactWriteItem::builder().update(update).build())
            .transact_items(TransactWriteItem::builder().delete(delete).build())
            .transact_items(TransactWriteItem::builder().put(put).build())
            .build()
            .unwrap();
        let accesses = dynamodb("TransactWriteItems", &Input::erase(input));
        let actions: Vec<&str> = accesses.iter().map(|a| a.action.as_str()).collect();
        assert_eq!(
            actions,
            [
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:DeleteItem"
            ]
        );
        assert!(accesses.iter().all(|a| a.resource == "table/t"));
        assert!(accesses
            .iter()
            .all(|a| a.keys == Some(vec!["k".to_owned()])));
    }

    #[test]
    fn each_item_action_names_its_leading_key_prefix() {
        use aws_sdk_dynamodb::operation::query::QueryInput;
        let put = |pk: &str| {
            let put = Put::builder()
                .table_name("t")
                .item("pk", AttributeValue::S(pk.into()))
                .build()
                .unwrap();
            TransactWriteItem::builder().put(put).build()
        };
        let input = TransactWriteItemsInput::builder()
            .transact_items(put("T#acme#TASK#01"))
            .transact_items(put("CALL#c-1"))
            .transact_items(put("T#other#DS#02"))
            .build()
            .unwrap();
        let keys: Vec<_> = dynamodb("TransactWriteItems", &Input::erase(input))
            .into_iter()
            .map(|access| access.keys)
            .collect();
        assert_eq!(
            keys,
            [Some(vec!["T#".to_owned()]), Some(vec!["CALL#".to_owned()])],
            "one line per prefix"
        );
        let query = QueryInput::builder()
            .table_name("t")
            .index_name("gsi2")
            .key_condition_expression("gsi2pk = :pk")
            .expression_attribute_values(":pk", AttributeValue::S("INFLIGHT#3".into()))
            .build()
            .unwrap();
        let access = dynamodb("Query", &Input::erase(query));
        assert_eq!(access[0].resource, "table/t/index/gsi2");
        assert_eq!(access[0].keys, Some(vec!["INFLIGHT#".to_owned()]));
    }

    #[test]
    fn objects_are_named_by_their_keys_first_segment_and_queues_by_name() {
        let input = aws_sdk_s3::operation::put_object::PutObjectInput::builder()
            .bucket("b")
            .key("exports/acme/01J/file.csv")
            .build()
            .unwrap();
        assert_eq!(
            s3("PutObject", &Input::erase(input)),
            [Access::new("s3:PutObject", "bucket/b/exports/*")]
        );
        let input = aws_sdk_sqs::operation::send_message_batch::SendMessageBatchInput::builder()
            .queue_url("http://127.0.0.1:5000/123456789012/b-dial")
            .build()
            .unwrap();
        assert_eq!(
            sqs("SendMessageBatch", &Input::erase(input)),
            [Access::new("sqs:SendMessage", "queue/b-dial")]
        );
    }

    #[tokio::test]
    async fn a_scope_names_the_function_only_within_it() {
        assert_eq!(Function::current(), None);
        let inside = Function::Exporter.scope(async { Function::current() });
        assert_eq!(inside.await, Some(Function::Exporter));
        assert_eq!(Function::current(), None);
    }
}

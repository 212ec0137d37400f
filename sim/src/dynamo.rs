//! The store's seam answered in this process ([`InProcessDynamoDb`]): each request the store
//! sends, as the SDK's own input, waits the seed's latency, meets the seed's faults (throttled,
//! a transaction cancelled as conflicting, a write committed then answered with a server
//! error), is applied to the embedded dynoxide database, and is answered with the SDK's own
//! output or error. What the SDK's client would do around it is done here too: a throttled or
//! failing request is tried again, at most three attempts a second and two seconds apart, as the
//! SDK's standard retry without jitter does (its retry quota is not modelled); dynoxide honours a
//! transaction's client request token itself, and a transaction sent without one gets one here,
//! the same for each of its attempts, as the SDK gives it.
//!
//! The request limiter's requests come through this seam too, each tried once
//! ([`Wire::without_retries`]), as its client is built without retries.
//!
//! No serialising, signing or orchestrating: that is most of what a request costs through the
//! SDK's HTTP seam ([`crate::wire`]), which the service's other clients (SQS, the table's
//! creation) still take.

use crate::provider::AttemptKey;
use crate::wire::{Refused, Wire, Written};
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::{
    batch_get_item::{BatchGetItemError, BatchGetItemInput, BatchGetItemOutput},
    batch_write_item::{BatchWriteItemError, BatchWriteItemInput, BatchWriteItemOutput},
    delete_item::{DeleteItemError, DeleteItemInput, DeleteItemOutput},
    get_item::{GetItemError, GetItemInput, GetItemOutput},
    put_item::{PutItemError, PutItemInput, PutItemOutput},
    query::{QueryError, QueryInput, QueryOutput},
    transact_write_items::{
        TransactWriteItemsError, TransactWriteItemsInput, TransactWriteItemsOutput,
    },
    update_item::{UpdateItemError, UpdateItemInput, UpdateItemOutput},
};
use aws_sdk_dynamodb::types::{self as sdk, AttributeValue as Sdk};
use aws_smithy_types::body::SdkBody;
use dynoxide::actions;
use dynoxide::types::AttributeValue as Dx;
use dynoxide::DynoxideError;
use outbound_adapters::store::{Answer, InProcessDynamoDb};
use std::collections::HashMap;
use std::time::Duration;

/// Attempts of one request, the first included: the SDK's standard retry.
pub(crate) const ATTEMPTS: u32 = 3;

type SdkItem = HashMap<String, Sdk>;
type DxItem = HashMap<String, Dx>;

fn to_dx(value: &Sdk) -> Dx {
    match value {
        Sdk::S(s) => Dx::S(s.clone()),
        Sdk::N(n) => Dx::N(n.clone()),
        Sdk::B(b) => Dx::B(b.as_ref().to_vec()),
        Sdk::Bool(b) => Dx::BOOL(*b),
        Sdk::Null(b) => Dx::NULL(*b),
        Sdk::Ss(v) => Dx::SS(v.clone()),
        Sdk::Ns(v) => Dx::NS(v.clone()),
        Sdk::Bs(v) => Dx::BS(v.iter().map(|b| b.as_ref().to_vec()).collect()),
        Sdk::L(v) => Dx::L(v.iter().map(to_dx).collect()),
        Sdk::M(m) => Dx::M(dx_item(m)),
        // The store writes none of the SDK's future kinds.
        _ => Dx::NULL(true),
    }
}

fn to_sdk(value: Dx) -> Sdk {
    match value {
        Dx::S(s) => Sdk::S(s),
        Dx::N(n) => Sdk::N(n),
        Dx::B(b) => Sdk::B(b.into()),
        Dx::BOOL(b) => Sdk::Bool(b),
        Dx::NULL(b) => Sdk::Null(b),
        Dx::SS(v) => Sdk::Ss(v),
        Dx::NS(v) => Sdk::Ns(v),
        Dx::BS(v) => Sdk::Bs(v.into_iter().map(Into::into).collect()),
        Dx::L(v) => Sdk::L(v.into_iter().map(to_sdk).collect()),
        Dx::M(m) => Sdk::M(sdk_item(m)),
    }
}

fn dx_item(item: &SdkItem) -> DxItem {
    item.iter().map(|(k, v)| (k.clone(), to_dx(v))).collect()
}

fn sdk_item(item: DxItem) -> SdkItem {
    item.into_iter().map(|(k, v)| (k, to_sdk(v))).collect()
}

/// One of the SDK's enumerations (`ReturnValue`, `Select`, ...) as DynamoDB spells it.
fn named<T: AsRef<str>>(value: &Option<T>) -> Option<String> {
    value.as_ref().map(|value| value.as_ref().to_owned())
}

fn dx_values(values: &Option<SdkItem>) -> Option<DxItem> {
    values.as_ref().map(dx_item)
}

/// Items a JSON answer of dynoxide's holds (its unprocessed keys or items).
fn sdk_items_of(json: &serde_json::Value) -> Vec<SdkItem> {
    serde_json::from_value::<Vec<DxItem>>(json.clone())
        .unwrap_or_default()
        .into_iter()
        .map(sdk_item)
        .collect()
}

/// Why a request was refused, as the SDK's error of its operation: a failed condition typed as
/// the store reads it, anything else by its code.
trait FromRefused: Sized {
    /// `actions`: the request's actions (a transaction's, one per reason of its cancelling).
    fn from_refused(refused: &Refused, actions: usize) -> Self;
}

fn metadata(refused: &Refused) -> ErrorMetadata {
    ErrorMetadata::builder()
        .code(refused.code())
        .message(refused.message())
        .build()
}

macro_rules! generic_refusal {
    ($($error:ty),*) => {$(
        impl FromRefused for $error {
            fn from_refused(refused: &Refused, _actions: usize) -> Self {
                <$error>::generic(metadata(refused))
            }
        }
    )*};
}
generic_refusal!(
    GetItemError,
    QueryError,
    BatchGetItemError,
    BatchWriteItemError
);

macro_rules! conditional_refusal {
    ($($error:ident),*) => {$(
        impl FromRefused for $error {
            fn from_refused(refused: &Refused, _actions: usize) -> Self {
                match refused {
                    Refused::Db(DynoxideError::ConditionalCheckFailedException(message, item)) => {
                        $error::ConditionalCheckFailedException(
                            sdk::error::ConditionalCheckFailedException::builder()
                                .message(message)
                                .set_item(item.clone().map(sdk_item))
                                .meta(metadata(refused))
                                .build(),
                        )
                    }
                    _ => $error::generic(metadata(refused)),
                }
            }
        }
    )*};
}
conditional_refusal!(PutItemError, UpdateItemError, DeleteItemError);

impl FromRefused for TransactWriteItemsError {
    fn from_refused(refused: &Refused, actions: usize) -> Self {
        let reasons: Vec<sdk::CancellationReason> = match refused {
            Refused::Db(DynoxideError::TransactionCanceledException(_, reasons)) => (reasons
                .iter())
            .map(|reason| {
                sdk::CancellationReason::builder()
                    .code(&reason.code)
                    .set_message(reason.message.clone())
                    .set_item(reason.item.clone().map(sdk_item))
                    .build()
            })
            .collect(),
            Refused::Conflict => (0..actions)
                .map(|_| {
                    sdk::CancellationReason::builder()
                        .code("TransactionConflict")
                        .message("simulated")
                        .build()
                })
                .collect(),
            _ => return TransactWriteItemsError::generic(metadata(refused)),
        };
        TransactWriteItemsError::TransactionCanceledException(
            sdk::error::TransactionCanceledException::builder()
                .message(refused.message())
                .set_cancellation_reasons(Some(reasons))
                .meta(metadata(refused))
                .build(),
        )
    }
}

/// What the wire reads of a request besides applying it.
trait Request: Send + Sync + 'static {
    /// What it would commit that the promises read (call outcomes, claims), were it to apply.
    fn written(&self) -> Written {
        Written::default()
    }

    /// Its actions: a transaction's, one per reason of its cancelling.
    fn actions(&self) -> usize {
        1
    }
}

impl Request for GetItemInput {}
impl Request for UpdateItemInput {}
impl Request for DeleteItemInput {}
impl Request for QueryInput {}
impl Request for BatchGetItemInput {}
impl Request for BatchWriteItemInput {}

impl Request for PutItemInput {
    fn written(&self) -> Written {
        Written {
            outcomes: outcomes_in(self.item.iter()),
            ..Written::default()
        }
    }
}

impl Request for TransactWriteItemsInput {
    fn written(&self) -> Written {
        let actions = || self.transact_items.iter().flatten();
        let puts = actions().filter_map(|action| action.put.as_ref());
        Written {
            token: self.client_request_token.clone(),
            outcomes: outcomes_in(puts.map(|put| &put.item)),
            claims: actions().filter_map(claimed).collect(),
        }
    }

    fn actions(&self) -> usize {
        self.transact_items.as_ref().map_or(0, Vec::len)
    }
}

/// The attempt a transaction's action claims, if it does: a task contact's state put with a
/// call (`in_call`, its first attempt) or updated into one (`SET ... in_call = :attempt`).
fn claimed(action: &sdk::TransactWriteItem) -> Option<AttemptKey> {
    let text = |value: Option<&Sdk>| match value {
        Some(Sdk::S(text)) => Some(text.clone()),
        _ => None,
    };
    let number = |value: Option<&Sdk>| match value {
        Some(Sdk::N(number)) => number.parse::<u32>().ok(),
        _ => None,
    };
    let (key, attempt) = if let Some(put) = &action.put {
        (&put.item, number(put.item.get("in_call"))?)
    } else {
        let update = action.update.as_ref()?;
        if !update.update_expression.contains("in_call = :attempt") {
            return None;
        }
        let values = update.expression_attribute_values.as_ref()?;
        (&update.key, number(values.get(":attempt"))?)
    };
    let task = text(key.get("pk"))?.split_once("#TASK#")?.1.to_owned();
    let contact = text(key.get("sk"))?.strip_prefix("C#")?.to_owned();
    Some((task, contact, attempt))
}

/// The details of the `CallCompleted` events among `items` (the outbox's, D20).
fn outcomes_in<'a>(items: impl Iterator<Item = &'a SdkItem>) -> Vec<String> {
    items
        .filter(
            |item| matches!(item.get("event_type"), Some(Sdk::S(kind)) if kind == "CallCompleted"),
        )
        .filter_map(|item| match item.get("detail") {
            Some(Sdk::S(detail)) => Some(detail.clone()),
            _ => None,
        })
        .collect()
}

impl Wire {
    /// One request of the store: `apply` run on the database under the seed's latency and
    /// faults, tried again as the SDK would, answered as the SDK would.
    fn serve<I, O, E>(
        &self,
        operation: &'static str,
        input: I,
        apply: fn(&dynoxide::Database, &I) -> Result<O, DynoxideError>,
    ) -> Answer<O, E>
    where
        I: Request,
        O: Send + 'static,
        E: FromRefused + std::error::Error + Send + Sync + 'static,
    {
        let wire = self.clone();
        Box::pin(async move {
            let mut attempt = 0;
            loop {
                attempt += 1;
                tokio::time::sleep(wire.latency()).await;
                let answer = wire.apply(operation, |db| apply(db, &input), || input.written());
                let status = answer.as_ref().map_or_else(Refused::status, |_| 200);
                wire.seeded
                    .note(&format!("DynamoDB_20120810.{operation} {status}"));
                match answer {
                    Ok(output) => return Ok(output),
                    Err(refused) if refused.retried() && attempt < wire.attempts => {
                        tokio::time::sleep(Duration::from_secs(1 << (attempt - 1))).await;
                    }
                    Err(refused) => {
                        let raw = HttpResponse::new(
                            status.try_into().expect("a valid status"),
                            SdkBody::empty(),
                        );
                        return Err(SdkError::service_error(
                            E::from_refused(&refused, input.actions()),
                            raw,
                        ));
                    }
                }
            }
        })
    }
}

impl InProcessDynamoDb for Wire {
    fn get_item(&self, input: GetItemInput) -> Answer<GetItemOutput, GetItemError> {
        self.serve("GetItem", input, |db, input| {
            let answer = db.get_item(actions::get_item::GetItemRequest {
                table_name: input.table_name.clone().unwrap_or_default(),
                key: input.key.as_ref().map(dx_item).unwrap_or_default(),
                consistent_read: input.consistent_read,
                projection_expression: input.projection_expression.clone(),
                expression_attribute_names: input.expression_attribute_names.clone(),
                ..Default::default()
            })?;
            Ok(GetItemOutput::builder()
                .set_item(answer.item.map(sdk_item))
                .build())
        })
    }

    fn put_item(&self, input: PutItemInput) -> Answer<PutItemOutput, PutItemError> {
        self.serve("PutItem", input, |db, input| {
            let answer = db.put_item(actions::put_item::PutItemRequest {
                table_name: input.table_name.clone().unwrap_or_default(),
                item: input.item.as_ref().map(dx_item).unwrap_or_default(),
                return_values: named(&input.return_values),
                condition_expression: input.condition_expression.clone(),
                expression_attribute_names: input.expression_attribute_names.clone(),
                expression_attribute_values: dx_values(&input.expression_attribute_values),
                return_values_on_condition_check_failure: named(
                    &input.return_values_on_condition_check_failure,
                ),
                ..Default::default()
            })?;
            Ok(PutItemOutput::builder()
                .set_attributes(answer.attributes.map(sdk_item))
                .build())
        })
    }

    fn update_item(&self, input: UpdateItemInput) -> Answer<UpdateItemOutput, UpdateItemError> {
        self.serve("UpdateItem", input, |db, input| {
            let answer = db.update_item(actions::update_item::UpdateItemRequest {
                table_name: input.table_name.clone().unwrap_or_default(),
                key: input.key.as_ref().map(dx_item).unwrap_or_default(),
                update_expression: input.update_expression.clone(),
                condition_expression: input.condition_expression.clone(),
                expression_attribute_names: input.expression_attribute_names.clone(),
                expression_attribute_values: dx_values(&input.expression_attribute_values),
                return_values: named(&input.return_values),
                return_values_on_condition_check_failure: named(
                    &input.return_values_on_condition_check_failure,
                ),
                ..Default::default()
            })?;
            Ok(UpdateItemOutput::builder()
                .set_attributes(answer.attributes.map(sdk_item))
                .build())
        })
    }

    fn delete_item(&self, input: DeleteItemInput) -> Answer<DeleteItemOutput, DeleteItemError> {
        self.serve("DeleteItem", input, |db, input| {
            let answer = db.delete_item(actions::delete_item::DeleteItemRequest {
                table_name: input.table_name.clone().unwrap_or_default(),
                key: input.key.as_ref().map(dx_item).unwrap_or_default(),
                return_values: named(&input.return_values),
                condition_expression: input.condition_expression.clone(),
                expression_attribute_names: input.expression_attribute_names.clone(),
                expression_attribute_values: dx_values(&input.expression_attribute_values),
                return_values_on_condition_check_failure: named(
                    &input.return_values_on_condition_check_failure,
                ),
                ..Default::default()
            })?;
            Ok(DeleteItemOutput::builder()
                .set_attributes(answer.attributes.map(sdk_item))
                .build())
        })
    }

    fn query(&self, input: QueryInput) -> Answer<QueryOutput, QueryError> {
        self.serve("Query", input, |db, input| {
            let answer = db.query(actions::query::QueryRequest {
                table_name: input.table_name.clone().unwrap_or_default(),
                index_name: input.index_name.clone(),
                key_condition_expression: input.key_condition_expression.clone(),
                filter_expression: input.filter_expression.clone(),
                projection_expression: input.projection_expression.clone(),
                expression_attribute_names: input.expression_attribute_names.clone(),
                expression_attribute_values: dx_values(&input.expression_attribute_values),
                scan_index_forward: input.scan_index_forward.unwrap_or(true),
                limit: input.limit.and_then(|limit| usize::try_from(limit).ok()),
                exclusive_start_key: dx_values(&input.exclusive_start_key),
                select: named(&input.select),
                consistent_read: input.consistent_read,
                ..Default::default()
            })?;
            Ok(QueryOutput::builder()
                .set_items((answer.items).map(|items| items.into_iter().map(sdk_item).collect()))
                .count(i32::try_from(answer.count).unwrap_or(i32::MAX))
                .scanned_count(i32::try_from(answer.scanned_count).unwrap_or(i32::MAX))
                .set_last_evaluated_key(answer.last_evaluated_key.map(sdk_item))
                .build())
        })
    }

    fn batch_get_item(
        &self,
        input: BatchGetItemInput,
    ) -> Answer<BatchGetItemOutput, BatchGetItemError> {
        self.serve("BatchGetItem", input, |db, input| {
            let request_items = (input.request_items.iter().flatten())
                .map(|(table, wanted)| {
                    let wanted = actions::batch_get_item::KeysAndAttributes {
                        keys: wanted.keys.iter().map(dx_item).collect(),
                        projection_expression: wanted.projection_expression.clone(),
                        expression_attribute_names: wanted.expression_attribute_names.clone(),
                        consistent_read: wanted.consistent_read,
                        ..Default::default()
                    };
                    (table.clone(), wanted)
                })
                .collect();
            let answer = db.batch_get_item(actions::batch_get_item::BatchGetItemRequest {
                request_items,
                ..Default::default()
            })?;
            let responses = (answer.responses.into_iter())
                .map(|(table, items)| (table, items.into_iter().map(sdk_item).collect()))
                .collect();
            let mut unprocessed = HashMap::new();
            for (table, left) in answer.unprocessed_keys {
                let keys = sdk::KeysAndAttributes::builder()
                    .set_keys(Some(sdk_items_of(&left["Keys"])))
                    .set_projection_expression(
                        left["ProjectionExpression"].as_str().map(str::to_owned),
                    )
                    .consistent_read(true)
                    .build()
                    .map_err(|error| DynoxideError::InternalServerError(error.to_string()))?;
                unprocessed.insert(table, keys);
            }
            Ok(BatchGetItemOutput::builder()
                .set_responses(Some(responses))
                .set_unprocessed_keys(Some(unprocessed))
                .build())
        })
    }

    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> Answer<BatchWriteItemOutput, BatchWriteItemError> {
        self.serve("BatchWriteItem", input, |db, input| {
            use actions::batch_write_item::{DeleteRequest, PutRequest, WriteRequest};
            let request_items = (input.request_items.iter().flatten())
                .map(|(table, writes)| {
                    let writes = (writes.iter())
                        .map(|write| WriteRequest {
                            put_request: (write.put_request.as_ref()).map(|put| PutRequest {
                                item: dx_item(&put.item),
                            }),
                            delete_request: (write.delete_request.as_ref()).map(|delete| {
                                DeleteRequest {
                                    key: dx_item(&delete.key),
                                }
                            }),
                        })
                        .collect();
                    (table.clone(), writes)
                })
                .collect();
            let answer = db.batch_write_item(actions::batch_write_item::BatchWriteItemRequest {
                request_items,
                ..Default::default()
            })?;
            let mut unprocessed = HashMap::new();
            for (table, left) in answer.unprocessed_items {
                let writes = (left.as_array().into_iter().flatten())
                    .filter_map(|write| {
                        let put = sdk_items_of(&serde_json::json!([write["PutRequest"]["Item"]]));
                        let delete =
                            sdk_items_of(&serde_json::json!([write["DeleteRequest"]["Key"]]));
                        let built = match (put.into_iter().next(), delete.into_iter().next()) {
                            (Some(item), _) => sdk::WriteRequest::builder()
                                .put_request(
                                    sdk::PutRequest::builder()
                                        .set_item(Some(item))
                                        .build()
                                        .ok()?,
                                )
                                .build(),
                            (None, Some(key)) => sdk::WriteRequest::builder()
                                .delete_request(
                                    sdk::DeleteRequest::builder()
                                        .set_key(Some(key))
                                        .build()
                                        .ok()?,
                                )
                                .build(),
                            (None, None) => return None,
                        };
                        Some(built)
                    })
                    .collect();
                unprocessed.insert(table, writes);
            }
            Ok(BatchWriteItemOutput::builder()
                .set_unprocessed_items(Some(unprocessed))
                .build())
        })
    }

    fn transact_write_items(
        &self,
        mut input: TransactWriteItemsInput,
    ) -> Answer<TransactWriteItemsOutput, TransactWriteItemsError> {
        if input.client_request_token.is_none() {
            input.client_request_token = Some(format!("sim-{:016x}", self.seeded.below(u64::MAX)));
        }
        self.serve("TransactWriteItems", input, |db, input| {
            use actions::transact_write_items::{
                TransactConditionCheck, TransactDelete, TransactPut, TransactUpdate,
                TransactWriteItem,
            };
            let transact_items = (input.transact_items.iter().flatten())
                .map(|action| TransactWriteItem {
                    put: action.put.as_ref().map(|put| TransactPut {
                        table_name: put.table_name.clone(),
                        item: dx_item(&put.item),
                        condition_expression: put.condition_expression.clone(),
                        expression_attribute_names: put.expression_attribute_names.clone(),
                        expression_attribute_values: dx_values(&put.expression_attribute_values),
                        return_values_on_condition_check_failure: named(
                            &put.return_values_on_condition_check_failure,
                        ),
                    }),
                    update: action.update.as_ref().map(|update| TransactUpdate {
                        table_name: update.table_name.clone(),
                        key: dx_item(&update.key),
                        update_expression: update.update_expression.clone(),
                        condition_expression: update.condition_expression.clone(),
                        expression_attribute_names: update.expression_attribute_names.clone(),
                        expression_attribute_values: dx_values(&update.expression_attribute_values),
                        return_values_on_condition_check_failure: named(
                            &update.return_values_on_condition_check_failure,
                        ),
                    }),
                    delete: action.delete.as_ref().map(|delete| TransactDelete {
                        table_name: delete.table_name.clone(),
                        key: dx_item(&delete.key),
                        condition_expression: delete.condition_expression.clone(),
                        expression_attribute_names: delete.expression_attribute_names.clone(),
                        expression_attribute_values: dx_values(&delete.expression_attribute_values),
                        return_values_on_condition_check_failure: named(
                            &delete.return_values_on_condition_check_failure,
                        ),
                    }),
                    condition_check: action.condition_check.as_ref().map(|check| {
                        TransactConditionCheck {
                            table_name: check.table_name.clone(),
                            key: dx_item(&check.key),
                            condition_expression: check.condition_expression.clone(),
                            expression_attribute_names: check.expression_attribute_names.clone(),
                            expression_attribute_values: dx_values(
                                &check.expression_attribute_values,
                            ),
                            return_values_on_condition_check_failure: named(
                                &check.return_values_on_condition_check_failure,
                            ),
                        }
                    }),
                })
                .collect();
            db.transact_write_items(actions::transact_write_items::TransactWriteItemsRequest {
                transact_items,
                client_request_token: input.client_request_token.clone(),
                ..Default::default()
            })?;
            Ok(TransactWriteItemsOutput::builder().build())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::error::ProvideErrorMetadata;

    #[test]
    fn every_kind_of_attribute_comes_back_as_it_went() {
        let item: SdkItem = [
            ("s", Sdk::S("text".into())),
            ("n", Sdk::N("-1.5".into())),
            ("b", Sdk::B(vec![0, 255].into())),
            ("bool", Sdk::Bool(true)),
            ("null", Sdk::Null(true)),
            ("ss", Sdk::Ss(vec!["a".into(), "b".into()])),
            ("ns", Sdk::Ns(vec!["1".into(), "2".into()])),
            ("bs", Sdk::Bs(vec![vec![1].into(), vec![2].into()])),
            ("l", Sdk::L(vec![Sdk::S("x".into()), Sdk::N("3".into())])),
            ("m", Sdk::M([("inner".to_owned(), Sdk::Bool(false))].into())),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
        assert_eq!(sdk_item(dx_item(&item)), item);
    }

    /// A claim is told by the contact state it moves into a call: put with `in_call` (a first
    /// attempt) or updated with `SET ... in_call = :attempt`; a give-back, whose condition
    /// names the attempt, claims nothing.
    #[test]
    fn a_transaction_claims_the_attempts_it_moves_into_a_call() {
        let key = |sk: &str| -> SdkItem {
            [
                ("pk".to_owned(), Sdk::S("T#acme#TASK#01TASK".into())),
                ("sk".to_owned(), Sdk::S(sk.into())),
            ]
            .into()
        };
        let mut first = key("C#01FIRST");
        first.insert("in_call".into(), Sdk::N("1".into()));
        let put = sdk::Put::builder()
            .table_name("t")
            .set_item(Some(first))
            .build()
            .unwrap();
        let update = |sk: &str, expression: &str| {
            sdk::Update::builder()
                .table_name("t")
                .set_key(Some(key(sk)))
                .update_expression(expression)
                .expression_attribute_values(":attempt", Sdk::N("3".into()))
                .build()
                .unwrap()
        };
        let claims = TransactWriteItemsInput::builder()
            .transact_items(sdk::TransactWriteItem::builder().put(put).build())
            .transact_items(
                sdk::TransactWriteItem::builder()
                    .update(update(
                        "C#01AGAIN",
                        "SET in_call = :attempt, claimed_at = :now",
                    ))
                    .build(),
            )
            .transact_items(
                sdk::TransactWriteItem::builder()
                    .update(update(
                        "C#01BACK",
                        "SET next_attempt_at = :at REMOVE in_call",
                    ))
                    .build(),
            )
            .build()
            .unwrap();
        assert_eq!(
            claims.written().claims,
            [
                ("01TASK".to_owned(), "01FIRST".to_owned(), 1),
                ("01TASK".to_owned(), "01AGAIN".to_owned(), 3),
            ]
        );
    }

    /// The store tells a failed condition from an outage by the SDK's typed errors and codes:
    /// the database in the process answers with the same ones.
    #[test]
    fn refusals_come_back_as_the_sdk_would_type_them() {
        let stored: DxItem = [("pk".to_owned(), Dx::S("T#a".into()))].into();
        let failed = Refused::Db(DynoxideError::ConditionalCheckFailedException(
            "The conditional request failed".into(),
            Some(stored),
        ));
        match PutItemError::from_refused(&failed, 1) {
            PutItemError::ConditionalCheckFailedException(error) => {
                assert_eq!(error.code(), Some("ConditionalCheckFailedException"));
                assert_eq!(
                    error.item().and_then(|item| item.get("pk")),
                    Some(&Sdk::S("T#a".into()))
                );
            }
            other => panic!("not typed as a failed condition: {other:?}"),
        }
        match TransactWriteItemsError::from_refused(&Refused::Conflict, 3) {
            TransactWriteItemsError::TransactionCanceledException(error) => {
                let codes: Vec<_> = (error.cancellation_reasons().iter())
                    .map(|reason| reason.code().unwrap_or_default())
                    .collect();
                assert_eq!(codes, ["TransactionConflict"; 3]);
            }
            other => panic!("not a cancelled transaction: {other:?}"),
        }
        let throttled = GetItemError::from_refused(&Refused::Throttled, 1);
        assert_eq!(
            throttled.code(),
            Some("ProvisionedThroughputExceededException")
        );
        assert!(Refused::Throttled.retried() && Refused::LostAfterCommit.retried());
        assert_eq!(Refused::LostAfterCommit.status(), 500);
        let wrong = Refused::Db(DynoxideError::ValidationException("bad".into()));
        assert!(!wrong.retried() && !failed.retried() && !Refused::Conflict.retried());
        assert_eq!(wrong.code(), "ValidationException");
    }

    /// A throttled request is tried three times, as the SDK's standard retry does, except
    /// through [`Wire::without_retries`] (the request limiter's client): once, then refused.
    #[test]
    fn the_limiters_requests_are_tried_once() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let attempts = |wire: Wire| {
            wire.set_faults(Some(crate::wire::DbFaults {
                throttled: 10_000,
                lost_after_commit: 0,
                conflict: 0,
            }));
            let input = GetItemInput::builder()
                .table_name("t")
                .key("pk", Sdk::S("a".into()))
                .key("sk", Sdk::S("b".into()))
                .build()
                .expect("an input");
            let answer = runtime.block_on(wire.get_item(input));
            let refused = answer.expect_err("every attempt is throttled");
            assert_eq!(
                refused.code(),
                Some("ProvisionedThroughputExceededException")
            );
            // Each attempt notes its throttle and its status.
            wire.seeded.trace().1 / 2
        };
        let wire = || {
            let seeded = crate::Seeded::new(1, 0);
            Wire::new(std::sync::Arc::default(), seeded)
        };
        assert_eq!(attempts(wire()), u64::from(ATTEMPTS));
        assert_eq!(attempts(wire().without_retries()), 1);
    }
}

//! Where the store's DynamoDB requests go. Every deployment and every test over HTTP sends them
//! through the SDK's client; the deterministic simulation (`sim/`) hands them to a database in
//! its own process ([`InProcessDynamoDb`]), which takes each request as the SDK's own input type
//! and answers with the SDK's own output or error, so the store above this seam is one code.
//!
//! The SDK's orchestrator (endpoint, signing, serialising, retry classification, interceptors)
//! is most of what a request costs in one process; behind this seam the simulation plays many
//! more seeds a minute. What the SDK does that the store relies on, the database in the process
//! must do too: retry a throttled or failing request as the SDK's standard retry does, and give
//! a transaction without a client request token one, the same for each of its retries.

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::{
    batch_get_item::BatchGetItemOutput,
    batch_get_item::{builders::BatchGetItemFluentBuilder, BatchGetItemError, BatchGetItemInput},
    batch_write_item::{
        builders::BatchWriteItemFluentBuilder, BatchWriteItemError, BatchWriteItemInput,
        BatchWriteItemOutput,
    },
    delete_item::{
        builders::DeleteItemFluentBuilder, DeleteItemError, DeleteItemInput, DeleteItemOutput,
    },
    get_item::{builders::GetItemFluentBuilder, GetItemError, GetItemInput, GetItemOutput},
    put_item::{builders::PutItemFluentBuilder, PutItemError, PutItemInput, PutItemOutput},
    query::{builders::QueryFluentBuilder, QueryError, QueryInput, QueryOutput},
    transact_write_items::{
        builders::TransactWriteItemsFluentBuilder, TransactWriteItemsError,
        TransactWriteItemsInput, TransactWriteItemsOutput,
    },
    update_item::{
        builders::UpdateItemFluentBuilder, UpdateItemError, UpdateItemInput, UpdateItemOutput,
    },
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// The answer to one request: the SDK's output, or its error as the SDK would have returned it.
pub type Answer<O, E> =
    Pin<Box<dyn Future<Output = Result<O, SdkError<E, HttpResponse>>> + Send + 'static>>;

/// A DynamoDB in this process: the operations the store sends, each taking the SDK's input and
/// answering as the SDK's client would (retries included).
pub trait InProcessDynamoDb: Send + Sync + 'static {
    fn get_item(&self, input: GetItemInput) -> Answer<GetItemOutput, GetItemError>;
    fn put_item(&self, input: PutItemInput) -> Answer<PutItemOutput, PutItemError>;
    fn update_item(&self, input: UpdateItemInput) -> Answer<UpdateItemOutput, UpdateItemError>;
    fn delete_item(&self, input: DeleteItemInput) -> Answer<DeleteItemOutput, DeleteItemError>;
    fn query(&self, input: QueryInput) -> Answer<QueryOutput, QueryError>;
    fn batch_get_item(
        &self,
        input: BatchGetItemInput,
    ) -> Answer<BatchGetItemOutput, BatchGetItemError>;
    fn batch_write_item(
        &self,
        input: BatchWriteItemInput,
    ) -> Answer<BatchWriteItemOutput, BatchWriteItemError>;
    fn transact_write_items(
        &self,
        input: TransactWriteItemsInput,
    ) -> Answer<TransactWriteItemsOutput, TransactWriteItemsError>;
}

/// Where a store's requests go: the SDK's client (its own field of [`Store`](super::Store)), or a
/// database in this process.
#[derive(Clone, Default)]
pub(crate) enum Backend {
    #[default]
    Sdk,
    InProcess(Arc<dyn InProcessDynamoDb>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Sdk => "Sdk",
            Backend::InProcess(_) => "InProcess",
        })
    }
}

/// A request built with the SDK's fluent builder, sent where the store's backend says.
pub(crate) trait SendTo {
    type Output;
    type Error;
    fn send_to(self, backend: &Backend) -> Answer<Self::Output, Self::Error>;
}

macro_rules! send_to {
    ($($builder:ty => $method:ident($output:ty, $error:ty)),* $(,)?) => {$(
        impl SendTo for $builder {
            type Output = $output;
            type Error = $error;
            fn send_to(self, backend: &Backend) -> Answer<$output, $error> {
                match backend {
                    Backend::Sdk => Box::pin(self.send()),
                    Backend::InProcess(db) => match self.as_input().clone().build() {
                        Ok(input) => db.$method(input),
                        Err(error) => {
                            Box::pin(std::future::ready(Err(SdkError::construction_failure(error))))
                        }
                    },
                }
            }
        }
    )*};
}

send_to!(
    GetItemFluentBuilder => get_item(GetItemOutput, GetItemError),
    PutItemFluentBuilder => put_item(PutItemOutput, PutItemError),
    UpdateItemFluentBuilder => update_item(UpdateItemOutput, UpdateItemError),
    DeleteItemFluentBuilder => delete_item(DeleteItemOutput, DeleteItemError),
    QueryFluentBuilder => query(QueryOutput, QueryError),
    BatchGetItemFluentBuilder => batch_get_item(BatchGetItemOutput, BatchGetItemError),
    BatchWriteItemFluentBuilder => batch_write_item(BatchWriteItemOutput, BatchWriteItemError),
    TransactWriteItemsFluentBuilder => transact_write_items(TransactWriteItemsOutput, TransactWriteItemsError),
);

//! The composition root: one `serve_<function>` per Lambda of `template.yaml`. Each reads its
//! function's configuration once ([`outbound_app::config`]), builds exactly that function's
//! parts, and hands every event to the domain; nothing below this crate reads the environment
//! or builds a client of its own. A function's `main.rs` calls one of them, so its binary links
//! only the handlers it runs.
//!
//! One feature per group, each turned on by its functions alone (so the dialer builds no router
//! and no file formats):
//! - [`http`] (`http`): the data source and task APIs;
//! - [`dialing`] (`dialing`): the tick, the dialer, call events and the flows' reports;
//! - [`background`] (`background`): imports, export jobs, reclaims and the event publisher.
//!
//! [`each_message`] is the life of every SQS-triggered function: each message on its own, only
//! the failed ones reported back for redelivery.

#[cfg(feature = "background")]
pub mod background;
#[cfg(feature = "dialing")]
pub mod dialing;
#[cfg(feature = "http")]
pub mod http;

#[cfg(feature = "background")]
pub use background::{serve_contact_import, serve_event_publisher, serve_exporter, serve_reclaim};
#[cfg(feature = "dialing")]
pub use dialing::{serve_call_events, serve_dialer, serve_dialer_tick, serve_flow_results};
#[cfg(feature = "http")]
pub use http::{serve_datasource_api, serve_task_api};

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use outbound_model::error::Error;
use std::future::Future;

/// Runs `handle` on every message body of `event` and reports the ids of those that failed
/// (partial batch failures).
pub async fn each_message<F, Fut>(event: SqsEvent, handle: F) -> SqsBatchResponse
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut response = SqsBatchResponse::default();
    for message in event.records {
        let id = message.message_id.unwrap_or_default();
        if let Err(error) = handle(message.body.unwrap_or_default()).await {
            tracing::error!(message_id = %id, %error, cause = ?error, "message failed; it will be redelivered");
            response.add_failure(id);
        }
    }
    response
}

/// Every SQS batch through `handle`, one message at a time, failed messages reported for
/// redelivery: the life of the dialer, call-events, import and export functions.
#[cfg(any(feature = "dialing", feature = "background"))]
async fn serve_batches<F, Fut>(handle: F) -> Result<(), lambda_runtime::Error>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let handle = &handle;
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<SqsEvent>| async move {
            // Boxed: the handlers' futures are deep enough to overflow the layout query
            // otherwise.
            let batch = each_message(event.payload, |body| Box::pin(handle(body))).await;
            Ok::<_, lambda_runtime::Error>(batch)
        },
    ))
    .await
}

/// The start of every function but the publisher: logging, then the configuration (the secrets
/// its environment names by ARN read first, D32) and the clients it names.
#[cfg(any(feature = "dialing", feature = "background"))]
async fn start() -> Result<outbound_app::App, outbound_model::error::ConfigError> {
    outbound_telemetry::init();
    outbound_app::App::from_env().await
}

/// A handler's error as the runtime reports it: the invocation fails and is retried by its
/// source.
#[cfg(any(feature = "dialing", feature = "background"))]
fn failed(error: impl std::fmt::Display) -> lambda_runtime::Error {
    lambda_runtime::Error::from(error.to_string())
}

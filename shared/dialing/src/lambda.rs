//! The three dialing functions' lives: the app and its engine once per cold start, then every
//! event through the [`Engine`].

use crate::engine::Engine;
use crate::Provider;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use outbound_app::lambda::each_message;
use outbound_app::App;
use outbound_model::error::Error;

/// dialer-tick: every scheduled event runs one tick.
pub async fn serve_tick() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let engine = Engine::from_app(&App::from_env().await?)?;
    let engine = &engine;
    lambda_runtime::run(service_fn(
        move |_: LambdaEvent<serde_json::Value>| async move {
            let report = engine
                .tick()
                .await
                .map_err(|error| lambda_runtime::Error::from(error.to_string()))?;
            Ok::<_, lambda_runtime::Error>(serde_json::json!({
                "running": report.running,
                "inWindow": report.in_window,
                "dialJobs": report.dial_jobs,
                "reconcileJobs": report.reconcile_jobs,
            }))
        },
    ))
    .await
}

/// The SQS-triggered dialing functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DialInbox {
    /// Dial and reconcile jobs: the dialer function.
    Jobs,
    /// Call outcomes: the call-events function.
    CallEvents,
}

impl DialInbox {
    /// Handles one message body of this queue.
    pub async fn handle<P: Provider>(self, engine: &Engine<P>, body: String) -> Result<(), Error> {
        match self {
            DialInbox::Jobs => engine.run_job(&body).await,
            DialInbox::CallEvents => engine.call_event(&body).await,
        }
    }
}

/// dialer and call-events: every SQS batch, failed messages reported for redelivery.
pub async fn serve_queue(inbox: DialInbox) -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let engine = Engine::from_app(&App::from_env().await?)?;
    let engine = &engine;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| async move {
        let batch = each_message(event.payload, |body| Box::pin(inbox.handle(engine, body))).await;
        Ok::<_, lambda_runtime::Error>(batch)
    }))
    .await
}

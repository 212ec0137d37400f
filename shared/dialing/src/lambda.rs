//! The three dialing functions' lives: the app and its engine once per cold start, then every
//! event through the [`Engine`].

use crate::call_event::EndedCall;
use crate::engine::Engine;
use crate::flow_results::{self, ContactFlowEvent};
use crate::Provider;
use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use outbound_adapters::aws::actions::Function;
use outbound_adapters::queue;
use outbound_app::lambda::each_message;
use outbound_app::App;
use outbound_model::error::Error;
use outbound_model::job::DialJob;

/// dialer-tick: every event of its schedule (EventBridge) runs one tick.
pub async fn serve_tick() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let engine = Engine::from_app(&App::from_env().await?)?;
    let engine = &engine;
    lambda_runtime::run(service_fn(
        move |_: LambdaEvent<EventBridgeEvent>| async move {
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
    /// Handles one message body of this queue: decoded here, at the edge, so the engine takes
    /// typed values. A call event that ends no call is acknowledged and ignored.
    pub async fn handle<P: Provider>(self, engine: &Engine<P>, body: String) -> Result<(), Error> {
        match self {
            DialInbox::Jobs => {
                let job = queue::decode::<DialJob>(&body)?;
                Function::Dialer.scope(engine.run_job(job)).await
            }
            DialInbox::CallEvents => match EndedCall::decode(&body)? {
                Some(ended) => Function::CallEvents.scope(engine.call_ended(ended)).await,
                None => Ok(()),
            },
        }
    }
}

/// flow-results: each Amazon Connect flow's report of what it found (D22), written on its
/// call's record; answered with the flat object of strings Connect takes.
pub async fn serve_flow_results() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let app = App::from_env().await?;
    let store = &app.store;
    let signer =
        app.config
            .call_signer
            .as_ref()
            .ok_or_else(|| outbound_model::error::ConfigError {
                name: outbound_app::config::CALL_SIGNING_KEY,
                problem: "is not set: a flow's report names its call by signed attributes (D29)"
                    .into(),
            })?;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<ContactFlowEvent>| async move {
            flow_results::record(store, signer, &event.payload, flow_results::PATIENCE)
                .await
                .map_err(|error| lambda_runtime::Error::from(error.to_string()))
        },
    ))
    .await
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

#[cfg(test)]
mod tests {
    use super::*;
    use outbound_model::{Id, Tenant};

    /// The dialer's SQS event as Lambda delivers it (tests/events/dialer-sqs-jobs.json, also
    /// used with `cargo lambda invoke`): each body is a dial job.
    #[test]
    fn dial_jobs_read_from_the_recorded_sqs_event() {
        let event: SqsEvent =
            serde_json::from_str(include_str!("../../../tests/events/dialer-sqs-jobs.json"))
                .unwrap();
        let jobs: Vec<DialJob> = event
            .records
            .iter()
            .map(|record| serde_json::from_str(record.body.as_deref().unwrap()).unwrap())
            .collect();
        let task = Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G7").unwrap();
        assert_eq!(
            jobs,
            vec![
                DialJob::Dial {
                    tenant: Tenant::parse("acme").unwrap(),
                    task_id: task.clone(),
                    budget: 10
                },
                DialJob::Reconcile {
                    tenant: Tenant::parse("acme").unwrap(),
                    task_id: task,
                    contact_id: Id::parse("01J9Z3K8Q4W6N2V5B7C1D3F5G8").unwrap(),
                    attempt: 2
                },
            ]
        );
    }

    /// The tick's schedule event as EventBridge delivers it (tests/events/dialer-tick-schedule.json).
    #[test]
    fn the_tick_reads_its_schedule_event() {
        let event: EventBridgeEvent = serde_json::from_str(include_str!(
            "../../../tests/events/dialer-tick-schedule.json"
        ))
        .unwrap();
        assert_eq!(
            (event.source.as_str(), event.detail_type.as_str()),
            ("aws.events", "Scheduled Event")
        );
    }
}

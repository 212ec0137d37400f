//! The four dialing functions: the engine over the configured provider (the tick, the dialer,
//! call events), or the store and the call signer alone (the flows' reports).

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use outbound_adapters::telephony::Telephony;
use outbound_dialing::engine::Engine;
use outbound_dialing::flow_results::{self, ContactFlowEvent};
use outbound_dialing::inbox::{call_event_message, dial_message};
use outbound_model::error::ConfigError;

/// dialer-tick: every event of its schedule runs one tick; answers what it queued.
pub async fn serve_dialer_tick() -> Result<(), lambda_runtime::Error> {
    let engine = &engine().await?;
    lambda_runtime::run(service_fn(
        move |_: LambdaEvent<EventBridgeEvent>| async move {
            let report = engine.tick().await.map_err(super::failed)?;
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

/// dialer: the dial queue's dial and reconcile jobs.
pub async fn serve_dialer() -> Result<(), lambda_runtime::Error> {
    let engine = &engine().await?;
    super::serve_batches(move |body| dial_message(engine, body)).await
}

/// call-events: the call-events queue's outcomes (Amazon Connect's contact events through
/// EventBridge, or the simulated provider's).
pub async fn serve_call_events() -> Result<(), lambda_runtime::Error> {
    let engine = &engine().await?;
    super::serve_batches(move |body| call_event_message(engine, body)).await
}

/// flow-results: each Amazon Connect flow's report of what it found (D22), written on its
/// call's record; answered with the flat object of strings Connect takes. It names its call by
/// signed attributes (D29), so without `CALL_SIGNING_KEY` (read from Secrets Manager by
/// `CALL_SIGNING_SECRET_ARN`, D32) it does not start.
pub async fn serve_flow_results() -> Result<(), lambda_runtime::Error> {
    let app = super::start().await?;
    let store = &app.store;
    let signer = app.config.call_signer.as_ref().ok_or(ConfigError {
        name: outbound_app::config::CALL_SIGNING_KEY,
        problem: "is not set: a flow's report names its call by signed attributes (D29)".into(),
    })?;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<ContactFlowEvent>| async move {
            flow_results::record(store, signer, &event.payload, flow_results::PATIENCE)
                .await
                .map_err(super::failed)
        },
    ))
    .await
}

/// The engine over the provider `DIAL_PROVIDER` names.
async fn engine() -> Result<Engine<Telephony>, ConfigError> {
    Engine::from_app(&super::start().await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_lambda_events::event::sqs::SqsEvent;
    use outbound_model::job::DialJob;
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
                    budget: 10,
                    paced_at: None,
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

//! The background functions: imports (S3 notifications through SQS), export jobs, reclaims
//! (their queue and their schedule) and the event publisher (the table's stream).

use aws_lambda_events::event::dynamodb::Event as StreamEvent;
use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use lambda_runtime::{service_fn, LambdaEvent};
use outbound_adapters::aws::Lazy;
use outbound_adapters::bus::Bus;
use outbound_adapters::queue::Queue;
use outbound_app::config::PublisherConfig;
use outbound_workers::events::Publisher;
use outbound_workers::{export_message, reclaim_message, sweep_reclaims, upload_message};
use serde::Deserialize;

/// contact-import: each S3 notification of an upload imports its file.
pub async fn serve_contact_import() -> Result<(), lambda_runtime::Error> {
    let app = &super::start().await?;
    super::serve_batches(move |body| upload_message(app, body)).await
}

/// exporter: each export job (D8) builds its file.
pub async fn serve_exporter() -> Result<(), lambda_runtime::Error> {
    let app = &super::start().await?;
    super::serve_batches(move |body| export_message(app, body)).await
}

/// What the reclaim function is sent: a batch of its queue's jobs, or its schedule's event (an
/// SQS batch always has `Records`; the schedule's event never does).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ReclaimEvent {
    Jobs(SqsEvent),
    Schedule(EventBridgeEvent),
}

/// reclaim: reclaim jobs from its queue, and on its schedule a sweep that queues again the
/// reclaims whose job was lost (D11).
pub async fn serve_reclaim() -> Result<(), lambda_runtime::Error> {
    let app = &super::start().await?;
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<ReclaimEvent>| async move {
            match event.payload {
                ReclaimEvent::Jobs(batch) => {
                    let response =
                        super::each_message(batch, |body| Box::pin(reclaim_message(app, body)))
                            .await;
                    Ok::<_, lambda_runtime::Error>(serde_json::to_value(response)?)
                }
                ReclaimEvent::Schedule(_) => {
                    // Boxed, as the jobs' futures are.
                    let queued = Box::pin(sweep_reclaims(app)).await.map_err(super::failed)?;
                    Ok(serde_json::json!({ "queued": queued }))
                }
            }
        },
    ))
    .await
}

/// event-publisher: the bus and its dead-letter queue ([`PublisherConfig`]: no table, bucket
/// or other queue), then every stream batch through [`Publisher::publish`].
pub async fn serve_event_publisher() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let config = PublisherConfig::from_env()?;
    let sdk = outbound_adapters::aws::sdk_config().await;
    let bus = Bus::new(
        Lazy::new({
            let sdk = sdk.clone();
            move || outbound_adapters::aws::eventbridge(&sdk)
        }),
        config.bus_name,
    );
    let dead_letters = Queue::new(
        Lazy::new(move || outbound_adapters::aws::timing::sqs(&sdk)),
        Some(config.dead_letter_queue_url),
    );
    let publisher = &Publisher::new(bus, dead_letters);
    lambda_runtime::run(service_fn(
        move |event: LambdaEvent<StreamEvent>| async move {
            // Boxed: the publish future is deep enough to overflow the layout query otherwise
            // (in the release profile).
            Ok::<_, lambda_runtime::Error>(Box::pin(publisher.publish(event.payload)).await)
        },
    ))
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reclaim function's two events, told apart by their shape: a recorded schedule event
    /// and a recorded SQS batch (tests/events/).
    #[test]
    fn reclaim_events_are_told_apart_by_their_shape() {
        let schedule: ReclaimEvent = serde_json::from_str(include_str!(
            "../../../tests/events/dialer-tick-schedule.json"
        ))
        .unwrap();
        assert!(
            matches!(schedule, ReclaimEvent::Schedule(event) if event.detail_type == "Scheduled Event")
        );
        let batch: ReclaimEvent =
            serde_json::from_str(include_str!("../../../tests/events/dialer-sqs-jobs.json"))
                .unwrap();
        assert!(matches!(batch, ReclaimEvent::Jobs(batch) if batch.records.len() == 2));
        assert!(serde_json::from_str::<ReclaimEvent>("{}").is_err());
    }
}

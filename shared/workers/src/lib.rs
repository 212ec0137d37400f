//! Queue-triggered work: S3 upload notifications (imports), reclaim jobs and export jobs arrive
//! as SQS batches; each message is handled on its own and only the failed ones are reported back for
//! redelivery (partial batch failures). The local stack feeds the same functions from its poller.
//! The dialing crate's `lambda` module does the same for the dialing engine's three functions, and
//! [`events`] publishes
//! the outbox's events from the table's stream.

pub mod events;

use aws_lambda_events::event::eventbridge::EventBridgeEvent;
use aws_lambda_events::event::sqs::SqsEvent;
use outbound_adapters::aws::actions::Function;
use outbound_adapters::queue;
use outbound_app::lambda::each_message;
use outbound_app::App;
use outbound_model::error::Error;
use outbound_model::export::ExportMessage;
use outbound_model::reclaim::ReclaimJob;
use outbound_service::{self as service, import};
use serde::Deserialize;

/// The queues whose messages a function handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inbox {
    /// S3 notifications of new objects under `uploads/`: the contact-import function.
    Uploads,
    /// Reclaim jobs: the reclaim function.
    Reclaim,
    /// Export jobs (D8): the exporter function.
    Exports,
}

impl Inbox {
    /// Handles one message body of this queue.
    pub async fn handle(self, app: &App, body: String) -> Result<(), Error> {
        match self {
            Inbox::Uploads => upload_message(app, body).await,
            Inbox::Reclaim => reclaim_message(app, body).await,
            Inbox::Exports => export_message(app, body).await,
        }
    }
}

/// The whole life of a queue-triggered Lambda: configuration and clients once, then every SQS
/// batch through [`Inbox::handle`], reporting the messages that failed.
pub async fn serve(inbox: Inbox) -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let app = App::from_env().await?;
    let handler =
        lambda_runtime::service_fn(|event: lambda_runtime::LambdaEvent<SqsEvent>| async {
            // Boxed: the handlers' futures are deep enough to overflow the layout query otherwise.
            let batch =
                each_message(event.payload, |body| Box::pin(inbox.handle(&app, body))).await;
            Ok::<_, lambda_runtime::Error>(batch)
        });
    lambda_runtime::run(handler).await
}

/// What the reclaim function is sent: a batch of its queue's jobs, or its schedule's event (an
/// SQS batch always has `Records`; the schedule's event never does).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ReclaimEvent {
    Jobs(SqsEvent),
    Schedule(EventBridgeEvent),
}

/// The reclaim Lambda: reclaim jobs from its queue, and on its schedule a sweep that queues
/// again the reclaims whose job was lost (D11).
pub async fn serve_reclaim() -> Result<(), lambda_runtime::Error> {
    outbound_telemetry::init();
    let app = App::from_env().await?;
    let app = &app;
    let handler = lambda_runtime::service_fn(
        move |event: lambda_runtime::LambdaEvent<ReclaimEvent>| async move {
            match event.payload {
                ReclaimEvent::Jobs(batch) => {
                    // reclaim_message itself, not Inbox::handle: a match on the queue would link
                    // the import and export code into this binary.
                    let response =
                        each_message(batch, |body| Box::pin(reclaim_message(app, body))).await;
                    Ok::<_, lambda_runtime::Error>(serde_json::to_value(response)?)
                }
                ReclaimEvent::Schedule(_) => {
                    // Boxed, as the jobs' futures are.
                    let queued = Box::pin(sweep_reclaims(app))
                        .await
                        .map_err(|error| lambda_runtime::Error::from(error.to_string()))?;
                    Ok(serde_json::json!({ "queued": queued }))
                }
            }
        },
    );
    lambda_runtime::run(handler).await
}

/// The reclaim function's schedule: queues again the reclaims whose job was lost (stored more
/// than [`service::reclaim::RECLAIM_GRACE`] ago); answers how many.
pub async fn sweep_reclaims(app: &App) -> Result<usize, Error> {
    let before = outbound_model::Timestamp(
        outbound_model::Timestamp::now().0 - service::reclaim::RECLAIM_GRACE.as_millis() as i64,
    );
    Function::Reclaim
        .scope(service::reclaim::sweep(&app.store, &app.reclaim, before))
        .await
}

/// The part of an S3 event notification the import needs. Read leniently, rather than with
/// the full event type, so a field the import does not use (such as a stand-in's `eventTime`
/// without a zone) cannot make a notification unreadable.
#[derive(Debug, Deserialize)]
struct Notification {
    /// Absent in S3's `s3:TestEvent`, sent when the notification is set up.
    #[serde(rename = "Records", default)]
    records: Vec<NotificationRecord>,
}

#[derive(Debug, Deserialize)]
struct NotificationRecord {
    s3: NotificationEntity,
}

#[derive(Debug, Deserialize)]
struct NotificationEntity {
    object: NotificationObject,
}

#[derive(Debug, Deserialize)]
struct NotificationObject {
    key: String,
}

/// An S3 notification: imports every uploaded object it names.
pub async fn upload_message(app: &App, body: String) -> Result<(), Error> {
    let notification: Notification =
        serde_json::from_str(&body).map_err(|e| Error::internal("decode S3 notification", e))?;
    for record in notification.records {
        // Boxed: the import future is deep enough to overflow the layout query otherwise.
        let key = object_key(&record.s3.object.key);
        let import = import::process_upload(&app.store, &app.blob, &key);
        Box::pin(Function::ContactImport.scope(import)).await?;
    }
    Ok(())
}

/// Keys in S3 notifications are URL-encoded, with `+` for a space.
pub fn object_key(encoded: &str) -> String {
    let spaced = encoded.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

/// A reclaim job.
pub async fn reclaim_message(app: &App, body: String) -> Result<(), Error> {
    let job: ReclaimJob = queue::decode(&body)?;
    Function::Reclaim
        .scope(service::reclaim::run(&app.store, &job))
        .await
        .map(drop)
}

/// An export job (D8).
pub async fn export_message(app: &App, body: String) -> Result<(), Error> {
    let message: ExportMessage = queue::decode(&body)?;
    // Boxed: the export future is deep enough to overflow the layout query otherwise.
    let export =
        outbound_service::export_job::run(&app.store, &app.blob, app.config.time_zone, &message);
    Box::pin(Function::Exporter.scope(export)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notification_keys_are_decoded() {
        assert_eq!(object_key("uploads/a%40b%3Ac/x+y"), "uploads/a@b:c/x y");
        assert_eq!(object_key("uploads/plain"), "uploads/plain");
    }

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

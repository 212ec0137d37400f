//! The background functions' handlers, one message at a time: an S3 upload notification
//! imports its file ([`upload_message`]), a reclaim job deletes what a deleted record left
//! ([`reclaim_message`], and [`sweep_reclaims`] on its schedule), an export job builds its file
//! ([`export_message`]); [`events`] publishes the outbox's events from the table's stream. The
//! edge feeds them their functions' batches; the local stack feeds the same handlers from its
//! poller.

pub mod events;

use outbound_adapters::aws::actions::Function;
use outbound_adapters::queue;
use outbound_app::App;
use outbound_model::error::Error;
use outbound_model::export::ExportMessage;
use outbound_model::reclaim::ReclaimJob;
use outbound_service::{self as service, import};
use serde::Deserialize;

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
}

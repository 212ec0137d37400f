//! The queues the local stack polls, each with the handler its function runs in AWS: one
//! process stands in for all of them here, so this is the one place that links every
//! function's handlers together (each Lambda's binary links only its own, through the edge).

use outbound_adapters::telephony::Provider;
use outbound_app::App;
use outbound_dialing::engine::Engine;
use outbound_dialing::inbox::{call_event_message, dial_message};
use outbound_model::error::Error;

/// The background functions' queues.
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
            Inbox::Uploads => outbound_workers::upload_message(app, body).await,
            Inbox::Reclaim => outbound_workers::reclaim_message(app, body).await,
            Inbox::Exports => outbound_workers::export_message(app, body).await,
        }
    }
}

/// The dialing engine's queues.
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
            DialInbox::Jobs => dial_message(engine, body).await,
            DialInbox::CallEvents => call_event_message(engine, body).await,
        }
    }
}

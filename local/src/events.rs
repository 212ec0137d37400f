//! The local stack's domain events (D20): the publisher's stream mapping on moto, and a
//! subscriber that logs every event the bus delivers and keeps the latest for tests and the
//! console's developers (`GET /local/events`).

use crate::provision::EventResources;
use crate::stream::StreamMapping;
use outbound_adapters::aws::Lazy;
use outbound_adapters::bus::Bus;
use outbound_adapters::queue::Queue;
use outbound_workers::events::Publisher;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Events kept by an [`EventLog`].
const KEPT: usize = 500;

/// The latest events the bus delivered, oldest first; cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct EventLog(Arc<Mutex<VecDeque<Value>>>);

impl EventLog {
    /// Keeps `event` (an EventBridge event: `detail-type`, `source`, `detail`, ...).
    pub fn record(&self, event: Value) {
        let mut events = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if events.len() == KEPT {
            events.pop_front();
        }
        events.push_back(event);
    }

    /// The events kept, oldest first.
    pub fn recent(&self) -> Vec<Value> {
        let events = self.0.lock().unwrap_or_else(|e| e.into_inner());
        events.iter().cloned().collect()
    }
}

/// The bus `name` on the stand-ins.
pub fn bus(sdk: &aws_config::SdkConfig, name: &str) -> Bus {
    let sdk = sdk.clone();
    Bus::new(
        Lazy::new(move || outbound_adapters::aws::eventbridge(&sdk)),
        name,
    )
}

/// The publisher of `resources`' bus and dead-letter queue, on the stand-ins; its bus's client
/// from `bus_sdk` (a fault proxy's endpoint in tests), the queue's from `sdk`.
pub fn publisher(
    sdk: &aws_config::SdkConfig,
    bus_sdk: &aws_config::SdkConfig,
    resources: &EventResources,
) -> Publisher {
    let sqs = sdk.clone();
    Publisher::new(
        bus(bus_sdk, &resources.bus),
        Queue::new(
            Lazy::new(move || outbound_adapters::aws::timing::sqs(&sqs)),
            Some(resources.dead_letter_queue_url.clone()),
        ),
    )
}

/// Starts the publisher (the stream mapping, every 200 ms) and the subscriber that logs what
/// the bus delivers into `log`.
pub fn spawn(sdk: &aws_config::SdkConfig, resources: &EventResources, log: EventLog) {
    let mapping = StreamMapping::new(sdk, &resources.stream_arn, publisher(sdk, sdk, resources));
    tokio::spawn(mapping.follow(Duration::from_millis(200)));
    let sqs = aws_sdk_sqs::Client::new(sdk);
    tokio::spawn(crate::poller::poll(
        sqs,
        resources.log_queue_url.clone(),
        move |body| {
            let log = log.clone();
            async move {
                let event: Value = serde_json::from_str(&body)
                    .map_err(|e| outbound_model::Error::internal("decode event", e))?;
                // Its id and kind only: the detail may hold what a person wrote.
                tracing::info!(
                    event_id = %event["detail"]["eventId"],
                    detail_type = %event["detail-type"],
                    "event delivered"
                );
                log.record(event);
                Ok(())
            }
        },
    ));
}

//! The dialing queues' messages, decoded here so the engine takes typed values: a dial or
//! reconcile job ([`dial_message`]) and a call's outcome ([`call_event_message`]), each run
//! under its function's name (the least-privilege check reads which function sent what).

use crate::call_event::{CallEvent, EventSource};
use crate::engine::Engine;
use outbound_adapters::aws::actions::Function;
use outbound_adapters::queue;
use outbound_adapters::telephony::Provider;
use outbound_model::error::Error;
use outbound_model::job::DialJob;

/// One message of the dial queue: the dialer function.
pub async fn dial_message<P: Provider>(engine: &Engine<P>, body: String) -> Result<(), Error> {
    let job = queue::decode::<DialJob>(&body)?;
    Function::Dialer.scope(engine.run_job(job)).await
}

/// One message of the call-events queue: the call-events function. A call event that neither
/// ends a call nor says an agent took one is acknowledged and ignored.
pub async fn call_event_message<P: Provider>(
    engine: &Engine<P>,
    body: String,
) -> Result<(), Error> {
    let source = EventSource::of(&engine.config.provider);
    match CallEvent::decode(&body, source)? {
        Some(CallEvent::Ended(ended)) => Function::CallEvents.scope(engine.call_ended(ended)).await,
        Some(CallEvent::WithAgent(call_id)) => {
            (Function::CallEvents.scope(engine.call_with_agent(&call_id))).await
        }
        None => Ok(()),
    }
}

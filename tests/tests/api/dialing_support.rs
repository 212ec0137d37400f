//! The dialing harness: the engine of the three dialing functions on a test's own table and
//! queues, with a clock the test moves and a provider that remembers every call it placed;
//! and the loop that stands in for the Lambda service (tick, dial queue, call-events queue).

use crate::support::TestApi;
use outbound_adapters::telephony::settings::OutcomeMix;
use outbound_adapters::telephony::simulated::OnPlaced;
use outbound_adapters::telephony::Telephony;
use outbound_adapters::telephony::{CallRequest, CallStatus, PlaceError, Provider};
use outbound_app::config::dialing::DialerConfig;
use outbound_dialing::engine::Engine;
use outbound_local::inbox::DialInbox;
use outbound_model::error::Error;
use outbound_model::pacing::QueueAgents;
pub use outbound_model::plan::ManualClock;
use outbound_model::signature::Carried;
use outbound_model::TaskStatus;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The simulated provider, remembering the token of every call it placed (and, as the local
/// stack does, the calls themselves for `GET /local/calls`); while `live` is set, it describes
/// every call as still connected, as Connect does a long call, and while `forgets` is set, as
/// unknown.
pub struct Recorder {
    inner: Telephony,
    /// The token of each call the provider placed, once (D28).
    pub placed: Arc<Mutex<Vec<String>>>,
    pub live: AtomicBool,
    /// While set, it knows nothing of any call, as Connect past its retention.
    pub forgets: AtomicBool,
}

impl Provider for Recorder {
    async fn place(&self, call: &CallRequest) -> Result<String, PlaceError> {
        self.inner.place(call).await
    }

    async fn describe(&self, call_id: &str) -> Result<CallStatus, Error> {
        if self.live.load(Ordering::SeqCst) {
            return Ok(CallStatus::InProgress);
        }
        if self.forgets.load(Ordering::SeqCst) {
            return Ok(CallStatus::Unknown);
        }
        self.inner.describe(call_id).await
    }

    async fn attempt_of(&self, call_id: &str) -> Result<Option<Carried>, Error> {
        self.inner.attempt_of(call_id).await
    }

    async fn queue_agents(
        &self,
        queues: &[String],
    ) -> Result<BTreeMap<String, QueueAgents>, Error> {
        self.inner.queue_agents(queues).await
    }

    fn attributes_fit(&self, attributes: &BTreeMap<String, String>, reserved: usize) -> bool {
        self.inner.attributes_fit(attributes, reserved)
    }

    fn per_call_caller_id(&self) -> bool {
        self.inner.per_call_caller_id()
    }
}

pub type TestEngine = Engine<Recorder>;

/// Settings for fast tests: outcomes at once, no rate limit worth the name.
pub fn fast_settings(api: &TestApi, mix: OutcomeMix) -> DialerConfig {
    let mut settings = DialerConfig {
        dial_queue_url: Some(api.resources.dial_queue_url.clone()),
        call_events_queue_url: Some(api.resources.call_events_queue_url.clone()),
        ..outbound_tests::fast_dialing()
    };
    settings.simulated.mix = mix;
    settings
}

pub const ALL_SUCCESS: OutcomeMix = OutcomeMix {
    success: 1,
    failed: 0,
    no_answer: 0,
};
pub const ALL_NO_ANSWER: OutcomeMix = OutcomeMix {
    success: 0,
    failed: 0,
    no_answer: 1,
};
pub const DEFAULT_MIX: OutcomeMix = OutcomeMix {
    success: 60,
    failed: 20,
    no_answer: 20,
};

impl TestApi {
    /// The dialing engine over this test's counted store and queues.
    pub fn engine(&self, settings: DialerConfig, clock: Arc<ManualClock>) -> TestEngine {
        outbound_tests::stack::simulated_engine(
            &self.sdk,
            &self.resources,
            self.store.clone(),
            settings,
            clock,
        )
        .with_provider(|inner| {
            let placed = Arc::new(Mutex::new(Vec::new()));
            let log = self.local_calls.hook();
            let tokens = placed.clone();
            let hook: OnPlaced = Arc::new(move |call: &CallRequest, report: &_| {
                log(call, report);
                tokens.lock().unwrap().push(call.token());
            });
            Recorder {
                inner: inner.on_placed(hook).with_agents(self.local_calls.agents()),
                placed,
                live: AtomicBool::new(false),
                forgets: AtomicBool::new(false),
            }
        })
    }

    /// Hands every waiting message of `queue` to the engine, as its Lambda would: the number
    /// handled.
    pub async fn drain(&self, engine: &TestEngine, queue: DialInbox) -> usize {
        let url = match queue {
            DialInbox::Jobs => &self.resources.dial_queue_url,
            DialInbox::CallEvents => &self.resources.call_events_queue_url,
        };
        outbound_local::poller::drain(&aws_sdk_sqs::Client::new(&self.sdk), url, |body| {
            queue.handle(engine, body)
        })
        .await
        .unwrap()
    }

    /// One round of the dialing functions: a tick, its dial jobs, then the outcomes.
    pub async fn dial_round(&self, engine: &TestEngine) {
        engine.tick().await.unwrap();
        self.drain(engine, DialInbox::Jobs).await;
        self.drain(engine, DialInbox::CallEvents).await;
    }

    /// Rounds until the task reaches `status`, at most `rounds` of them, the clock moved by
    /// `step` after each (so retries come due); answers how many ran.
    pub async fn dial_until(
        &self,
        engine: &TestEngine,
        clock: &ManualClock,
        step: Duration,
        (tenant, task): (&str, &str),
        status: TaskStatus,
        rounds: usize,
    ) -> usize {
        for round in 1..=rounds {
            self.dial_round(engine).await;
            clock.advance(step);
            if self.stored_task(tenant, task).await.status == status {
                return round;
            }
        }
        panic!(
            "task {task} is {:?} after {rounds} rounds, not {status:?}",
            self.stored_task(tenant, task).await.status
        );
    }
}

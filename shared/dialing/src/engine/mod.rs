//! The engine's entry points, one per function, each safe to run any number of times at once,
//! one file per job:
//! - [`tick`]: dialer-tick's minute: the running tasks that may dial now, one dial job each with
//!   its share of the calls in flight, and one reconcile job per call in flight too long;
//! - [`run`]: a dial job: one task's due contacts claimed and called, or skipped with a reason,
//!   each call by [`call`], a start in doubt sent again by [`resend`];
//! - [`recall`]: a large recall's contacts applied (D12);
//! - [`completion`]: a task completed once nothing is left to call or in flight;
//! - [`outcome`]: an ended call recorded exactly once, and a lost outcome reconciled.
//!
//! [`Engine::run_job`] takes a decoded [`DialJob`]; the functions decode their messages at the
//! edge (`crate::lambda`).

mod agents;
mod call;
mod completion;
mod outcome;
mod recall;
mod resend;
mod run;
mod tick;

pub use run::DialReport;
pub use tick::TickReport;

use chrono_tz::Tz;
use outbound_adapters::queue::Queue;
use outbound_adapters::store::dialing::Caps;
use outbound_adapters::store::Store;
use outbound_adapters::telephony::provider::Provider;
use outbound_adapters::telephony::Telephony;
use outbound_app::config::dialing::DialerConfig;
use outbound_app::App;
use outbound_model::error::ConfigError;
use outbound_model::error::Error;
use outbound_model::job::DialJob;
use outbound_model::plan::{Clock, SystemClock};
use outbound_model::signature::CallSigner;
use outbound_model::simulation::{planted, Bug};
use std::sync::Arc;

/// Configuration, clients and the provider, built once per cold start.
pub struct Engine<P> {
    pub store: Store,
    pub provider: P,
    pub config: DialerConfig,
    /// The service zone (D4), for tasks without their own.
    pub zone: Tz,
    /// Where the tick sends its dial and reconcile jobs.
    pub dial_jobs: Queue<DialJob>,
    /// Where large recalls keep their lists of contacts.
    pub blob: outbound_adapters::blob::Blob,
    pub clock: Arc<dyn Clock>,
    /// Signs each call's own attributes and checks them where they name an attempt (D29).
    pub signer: CallSigner,
}

impl Engine<Telephony> {
    /// The engine as configured: the configured provider and the system clock.
    pub fn from_app(app: &App) -> Result<Self, ConfigError> {
        if app.config.call_signer.is_none() {
            return Err(ConfigError {
                name: outbound_app::config::CALL_SIGNING_KEY,
                problem: "is not set: every call's own attributes are signed with it (D29)".into(),
            });
        }
        Ok(Self::over(app, app.telephony()?, Arc::new(SystemClock)))
    }
}

impl<P> Engine<P> {
    /// The engine over `app`'s store, bucket and dial queue, with `provider` and `clock`.
    pub fn over(app: &App, provider: P, clock: Arc<dyn Clock>) -> Self {
        Engine {
            store: app.store.clone(),
            provider,
            config: app.config.dialing.clone(),
            zone: app.config.time_zone,
            dial_jobs: app.dial_jobs.clone(),
            blob: app.blob.clone(),
            clock,
            // `from_app` requires the key; an engine built otherwise without it signs with a
            // key of its own process, which no other process verifies.
            signer: app.config.call_signer.clone().unwrap_or_else(|| {
                CallSigner::new(format!("{}{}", ulid::Ulid::new(), ulid::Ulid::new()).as_bytes())
            }),
        }
    }

    /// The same engine with another provider, made from the configured one (tests wrap it to
    /// record calls, or replace it with one that refuses).
    pub fn with_provider<Q>(self, provider: impl FnOnce(P) -> Q) -> Engine<Q> {
        Engine {
            provider: provider(self.provider),
            store: self.store,
            config: self.config,
            zone: self.zone,
            dial_jobs: self.dial_jobs,
            blob: self.blob,
            clock: self.clock,
            signer: self.signer,
        }
    }
}

impl<P: Provider> Engine<P> {
    fn caps(&self) -> Caps {
        Caps {
            per_task: self.config.max_in_flight_per_task,
            total: if planted(Bug::ServiceCapIgnored) {
                self.config.max_in_flight * 4
            } else {
                self.config.max_in_flight
            },
            rate_per_second: self.config.rate_per_second,
        }
    }

    /// Seconds between the dial runs of a minute: the slots at which agent-paced tasks are paced
    /// anew (D30).
    pub(crate) fn pace_slot_seconds(&self) -> u32 {
        60 / self.config.runs_per_tick.max(1)
    }

    /// Whether a run paced at `paced_at` comes after its slot, when a later pace has read the
    /// agents anew.
    fn pace_passed(&self, paced_at: outbound_model::Timestamp) -> bool {
        !planted(Bug::StalePaceKept)
            && self.clock.now().0 - paced_at.0 >= i64::from(self.pace_slot_seconds()) * 1000
    }

    /// One job of the dial queue.
    pub async fn run_job(&self, job: DialJob) -> Result<(), Error> {
        match job {
            DialJob::Dial {
                tenant,
                task_id,
                paced_at: Some(paced_at),
                ..
            } if self.pace_passed(paced_at) => {
                tracing::info!(tenant = tenant.as_str(), task = %task_id, "an agent-paced run delivered after its pace slot: its budget is from a reading that has passed, and the next pace places its calls");
                Ok(())
            }
            DialJob::Dial {
                tenant,
                task_id,
                budget,
                paced_at,
            } => {
                // Boxed, as each job below: inline, a job's future is too large for a thread's
                // stack in a debug build.
                Box::pin(self.dial_paced(&tenant, &task_id, budget, paced_at))
                    .await
                    .map(drop)
            }
            DialJob::Recall {
                tenant,
                task_id,
                recall_id,
            } => Box::pin(self.apply_recall(&tenant, &task_id, &recall_id)).await,
            DialJob::Reconcile {
                tenant,
                task_id,
                contact_id,
                attempt,
            } => Box::pin(self.reconcile(&tenant, &task_id, &contact_id, attempt)).await,
            DialJob::Pace => Box::pin(self.pace()).await.map(drop),
            DialJob::GuardNumbers { tenant } => {
                self.store.guard_numbers_apart(&tenant).await.map(drop)
            }
        }
    }
}

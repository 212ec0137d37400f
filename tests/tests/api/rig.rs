//! The rig of the suites that dial as a tenant would (compliance, results, telephony calls, a
//! hostile provider): a test's API, its engine with the simulated provider, and the engine's
//! clock moved to a fixed time of day, so windows set against it hold at any hour.

use crate::dialing_support::*;
use crate::support::{unique, TestApi};
use outbound_app::config::dialing::DialerConfig;
use outbound_model::call::{Reason, Skip};
use outbound_model::TaskStatus;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const OWNER: &str = "acme";

/// A test's API, its engine and the engine's clock, moved to the next 16:00 UTC: 11:00 in New
/// York and 08:00 in Los Angeles in winter (12:00 and 09:00 in summer).
pub(crate) struct Rig {
    pub(crate) api: TestApi,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) engine: TestEngine,
}

pub(crate) async fn rig() -> Rig {
    rig_with(|_| {}).await
}

/// [`rig`] with the API's and the engine's dialing settings changed by `tweak`.
pub(crate) async fn rig_with(tweak: impl Fn(&mut DialerConfig)) -> Rig {
    let api = TestApi::start_with(|config| tweak(&mut config.dialing)).await;
    let clock = ManualClock::starting_now();
    clock.advance_to_utc(16, 0, 0);
    let mut settings = fast_settings(&api, ALL_SUCCESS);
    tweak(&mut settings);
    let engine = api.engine(settings, clock.clone());
    Rig { api, clock, engine }
}

impl Rig {
    pub(crate) async fn settings(&self, body: Value) -> Value {
        self.api
            .post(OWNER, "/api/settings/update", body)
            .await
            .ok()
            .clone()
    }

    /// A data source with contacts of these numbers and extra fields: its id and contact ids.
    pub(crate) async fn source(&self, contacts: &[(&str, Value)]) -> (String, Vec<String>) {
        self.api.source_of(OWNER, contacts).await
    }

    pub(crate) async fn published(&self, source: &str, extra: Value) -> String {
        let task = self.api.task(OWNER, &unique("Task"), source, extra).await;
        let answer = self
            .api
            .post(OWNER, "/api/task/publish", json!({"id": task}))
            .await;
        assert_eq!(answer.ok()["status"], 1);
        task
    }

    /// A published task with `extra` body fields over a fresh data source of `contacts`: its id
    /// and its contacts' ids.
    pub(crate) async fn running(
        &self,
        contacts: &[(&str, Value)],
        extra: Value,
    ) -> (String, Vec<String>) {
        let (source, ids) = self.source(contacts).await;
        (self.published(&source, extra).await, ids)
    }

    /// Rounds of the dialing functions, a second apart, until `task` is COMPLETED.
    pub(crate) async fn complete(&self, task: &str) {
        self.complete_in(task, 4).await;
    }

    /// [`Rig::complete`] in at most `rounds` rounds.
    pub(crate) async fn complete_in(&self, task: &str, rounds: usize) {
        self.api
            .dial_until(
                &self.engine,
                &self.clock,
                Duration::from_secs(1),
                (OWNER, task),
                TaskStatus::Completed,
                rounds,
            )
            .await;
    }

    pub(crate) async fn diagnostics(&self, task: &str) -> Value {
        self.api
            .get(OWNER, &format!("/api/task/{task}/diagnostics"))
            .await
            .ok()
            .clone()
    }

    /// `GET /local/calls`: the calls the provider placed for `task`, oldest first.
    pub(crate) async fn local_calls(&self, task: &str) -> Vec<Value> {
        let answer = self
            .api
            .http
            .get(format!("{}/local/calls", self.api.base))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        let calls: Vec<Value> = answer.json().await.unwrap();
        calls
            .into_iter()
            .filter(|call| call["taskId"] == task)
            .collect()
    }

    /// The tokens (`task-contact-attempt`) of the calls placed so far.
    pub(crate) fn placed(&self) -> Vec<String> {
        self.engine.provider.placed.lock().unwrap().clone()
    }

    /// One contact's state in a task: its attempts, latest reason and skip.
    pub(crate) async fn state(
        &self,
        task: &str,
        contact: &str,
    ) -> (u32, Option<Reason>, Option<Skip>, bool) {
        let states = self.api.stored_task_contacts(OWNER, task).await;
        let state = &states[contact];
        (state.attempts, state.last_reason, state.skip, state.done)
    }
}

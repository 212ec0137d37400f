//! A start in doubt sent again (D28): rebuilt as its claim built it, from the number it was
//! claimed with, counted toward the frequency cap at its new time, and only while its contact
//! may still be called; else left for later or never.

use super::run::Callee;
use super::tick::Reach;
use super::Engine;
use outbound_adapters::store::dialing::FrequencyClaim;
use outbound_adapters::telephony::provider::{CallRequest, Provider};
use outbound_model::call::CallAttempt;
use outbound_model::dnc::lookup_key;
use outbound_model::error::Error;
use outbound_model::simulation::{planted, Bug};
use outbound_model::task::{Due, TaskContact};
use outbound_model::{Task, TaskStatus, Tenant, Timestamp};
// tokio's clock: the same as std's in a Lambda, virtual under the simulation's paused runtime,
// where a deadline read from the wall clock would make a run's length depend on the machine.

/// A start in doubt to send again (D28): the request, and the attempt it counted toward the
/// frequency cap (and when), to take back should it not be sent.
pub(super) struct Resend {
    pub(super) request: CallRequest,
    pub(super) counted: Option<(FrequencyClaim, Timestamp)>,
}

/// What may become of a start in doubt now (D28).
pub(super) enum Again {
    /// Sent again with its token.
    Send(Box<Resend>),
    /// Not now, maybe later: its task paused, its window or the calling hours closed, its
    /// number at the frequency cap.
    Later,
    /// Never by this attempt: its task over, its contact deleted, its number listed or without
    /// an E.164 form, or its number, flow or caller ID no longer the tenant's.
    Never,
}

impl<P: Provider> Engine<P> {
    /// A re-send built and then not sent: the attempt it counted toward the cap is taken back.
    pub(super) async fn not_sent(&self, tenant: &Tenant, resend: &Resend) {
        if let Some((frequency, at)) = &resend.counted {
            self.uncount(tenant, frequency, *at).await;
        }
    }

    /// The start of attempt `attempt`, in doubt (D28), to send again: built as the claim built it,
    /// from the number it was claimed with, and counted toward the frequency cap; else whether
    /// its contact may be called later ([`Again`]).
    pub(super) async fn request_again(
        &self,
        attempt: &CallAttempt,
        state: &TaskContact,
        task: &Task,
    ) -> Result<Again, Error> {
        let now = self.clock.now();
        match task.status {
            TaskStatus::Running => match self.reach(task, now) {
                Some(Reach::Everyone) => {}
                // A callback's call is not held by the daily window (D31).
                Some(Reach::Callbacks) if state.callback.is_some() => {}
                _ => return Ok(Again::Later),
            },
            TaskStatus::Paused => return Ok(Again::Later),
            _ => return Ok(Again::Never),
        }
        let tenant = &attempt.tenant;
        let rules = match self
            .rules(tenant, task, self.config.max_in_flight_per_task)
            .await
        {
            Ok(rules) => rules,
            Err(Error::NotFound(_)) => return Ok(Again::Never),
            Err(error) => return Err(error),
        };
        let targets = self
            .store
            .contact_targets(
                tenant,
                &task.data_source_id,
                std::slice::from_ref(&attempt.contact_id),
                &task.settings.call_attributes,
            )
            .await?;
        let Some(target) = targets.get(&attempt.contact_id) else {
            return Ok(Again::Never);
        };
        let callee = Callee::of(target, &rules);
        if rules
            .windows
            .admit(&callee.zones, callee.own_zone, now)
            .is_err()
        {
            return Ok(Again::Later);
        }
        let listed_as = lookup_key(&callee.target.phone, callee.e164.as_deref());
        if self
            .store
            .dnc_entry_of(tenant, &[listed_as])
            .await?
            .is_some()
        {
            return Ok(Again::Never);
        }
        let due = Due {
            contact_id: attempt.contact_id.clone(),
            attempt: attempt.attempt,
            state: Some(state.clone()),
        };
        // D14: a number that has no E.164 form now (its country cleared since the claim) is
        // given to no provider.
        let Some(to) = callee.e164.as_deref() else {
            return Ok(Again::Never);
        };
        let Ok(mut request) = self.request(tenant, task, &due, &callee, to, &rules) else {
            // Its number or flow is no longer the tenant's: never sent again.
            return Ok(Again::Never);
        };
        // The number the claim chose, presented again only while the tenant holds it: a re-send
        // may come days later (D28), after the operator took it back.
        if let Some(number) = &state.calling_from {
            if !self.store.holds_caller_id(tenant, number).await? {
                return Ok(Again::Never);
            }
        }
        request.caller_id = state.calling_from.clone();
        // Sent again, the start may be the one that places the call, now: counted toward the
        // frequency cap as an attempt at this time, so only while the number is under it (D17).
        let counted = if planted(Bug::ResendUncounted) {
            None
        } else {
            let number = callee.counted;
            let seen = (self.store)
                .frequency_attempts(tenant, std::slice::from_ref(&number))
                .await?
                .remove(&number)
                .unwrap_or_default();
            let frequency = FrequencyClaim {
                number,
                cap: rules.cap,
                seen,
            };
            let capped = frequency.eligible_at().is_some_and(|at| at > now);
            if capped || !self.store.count_attempt(tenant, &frequency, now).await? {
                return Ok(Again::Later);
            }
            Some((frequency, now))
        };
        Ok(Again::Send(Box::new(Resend { request, counted })))
    }
}

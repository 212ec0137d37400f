//! Agent-paced tasks at the tick (D30): the agents of every queue in use read in one request to
//! the provider, whatever the number of tasks on them, and shared between each queue's tasks by
//! D13's order through [`share_agents`], which paces each one. What a task gets is the most
//! calls in flight its dial runs may top up to this tick.

use super::tick::claimant;
use super::Engine;
use outbound_adapters::store::dialing::RunningTask;
use outbound_adapters::telephony::provider::Provider;
use outbound_model::pacing::{share_agents, AgentPacing, QueueAgents, QueueTask};
use outbound_model::{Id, Tenant, Timestamp};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The agent-paced tasks of each queue in use: each with its demand (as the tick asks) and its
/// pacing.
type ByQueue<'a> = BTreeMap<&'a str, Vec<(&'a (&'a RunningTask, u32), &'a AgentPacing)>>;

impl<P: Provider> Engine<P> {
    /// The most calls in flight each agent-paced task of `asks` (task, demand) may have now;
    /// agentless tasks are not in it. When the provider cannot say what its agents do, each
    /// task keeps the calls it has and places none, not even for a ringing call that ends: a
    /// call no agent may take would be abandoned. With them, when the agents were read: the
    /// time their runs are paced at.
    pub(super) async fn agent_caps(
        &self,
        asks: &[(&RunningTask, u32)],
    ) -> (HashMap<Id, u32>, Option<Timestamp>) {
        let mut by_queue: ByQueue<'_> = BTreeMap::new();
        for ask in asks {
            if let Some(pacing) = &ask.0.task.settings.agents {
                (by_queue.entry(pacing.queue_id.as_str()).or_default()).push((ask, pacing));
            }
        }
        if by_queue.is_empty() {
            return (HashMap::new(), None);
        }
        let queues: Vec<String> = by_queue.keys().map(|queue| (*queue).to_owned()).collect();
        let agents = match self.provider.queue_agents(&queues).await {
            Ok(agents) => agents,
            Err(error) => {
                tracing::warn!(%error, "the queues' agents could not be read: no call is paced to them this tick");
                // Its calls talking: a ringing call that ends is not replaced either.
                let caps = (by_queue.values().flatten())
                    .map(|((r, _), _)| (r.task.id.clone(), r.task.talking.min(r.task.in_flight)))
                    .collect();
                return (caps, None);
            }
        };
        let read_at = self.clock.now();
        self.keep_agents(&by_queue, &agents, read_at).await;
        let mut caps = HashMap::new();
        for (queue, mut tasks) in by_queue {
            // D13's order, as the tick shares out.
            tasks.sort_by(|(a, _), (b, _)| claimant(a).rank().cmp(&claimant(b).rank()));
            let paced: Vec<QueueTask> = (tasks.iter())
                .map(|((r, demand), pacing)| {
                    let counters = &r.task.counters;
                    QueueTask {
                        pacing: pacing.pacing(),
                        in_flight: r.task.in_flight,
                        talking: r.task.talking,
                        demand: (*demand).max(r.task.in_flight),
                        ended: counters.calls,
                        answered: counters.answered_by_people(),
                        abandoned: counters.abandoned,
                    }
                })
                .collect();
            let state = agents.get(queue).copied().unwrap_or_default();
            let shares = share_agents(state, &paced);
            tracing::debug!(queue, ?state, ?shares, "agents shared");
            for (((r, _), _), cap) in tasks.iter().zip(shares) {
                caps.insert(r.task.id.clone(), cap);
            }
        }
        (caps, Some(read_at))
    }

    /// Keeps what was read of each queue at `now` for its tenants' diagnostics and for the runs
    /// paced by it (D30), the writes at once; a write that fails only leaves an older reading
    /// (the page shows it, and runs paced by it go on).
    async fn keep_agents(
        &self,
        by_queue: &ByQueue<'_>,
        agents: &BTreeMap<String, QueueAgents>,
        now: Timestamp,
    ) {
        let mut readings: BTreeSet<(&Tenant, &str)> = BTreeSet::new();
        for (queue, tasks) in by_queue {
            readings.extend(tasks.iter().map(|((r, _), _)| (&r.tenant, *queue)));
        }
        let writes = readings.into_iter().map(|(tenant, queue)| async move {
            let state = agents.get(queue).copied().unwrap_or_default();
            if let Err(error) = self
                .store
                .save_queue_agents(tenant, queue, &state, now)
                .await
            {
                tracing::warn!(%error, queue, "a queue's agents were not kept");
            }
        });
        futures::future::join_all(writes).await;
    }
}

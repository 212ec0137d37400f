//! The simulated provider's agents (D30): a pool per queue, set by the local stack
//! (`POST /local/agents`), that answered calls of agent-paced tasks go to. A call a person
//! answers takes a free agent for the queue's handle time, or, with none free, is abandoned
//! [`ABANDON_AFTER`] later. The pool also counts what pacing is judged by: calls answered and
//! abandoned, and the most calls of the queue in flight at once.

use outbound_model::pacing::QueueAgents;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an answered person waits for an agent before the call counts as abandoned (D30).
pub const ABANDON_AFTER: Duration = Duration::from_secs(2);

/// The most agents a queue of the pool may have.
pub const MOST_AGENTS: u32 = 1_000;

/// One queue's agents and what its calls did.
#[derive(Debug)]
struct Queue {
    agents: u32,
    handle: Duration,
    /// When each busy agent's call ends.
    busy_until: Vec<Instant>,
    /// When each call of the queue's tasks placed and not yet ended ends.
    calls_until: Vec<Instant>,
    answered: u64,
    abandoned: u64,
    most_in_flight: u32,
}

impl Queue {
    fn new(agents: u32, handle: Duration) -> Self {
        Queue {
            agents,
            handle,
            busy_until: Vec::new(),
            calls_until: Vec::new(),
            answered: 0,
            abandoned: 0,
            most_in_flight: 0,
        }
    }

    fn settle(&mut self, now: Instant) {
        self.busy_until.retain(|until| *until > now);
        self.calls_until.retain(|until| *until > now);
    }
}

/// What became of a call a person answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answered {
    /// An agent took it: the call ends when the agent's handle time is over, `talk` after the
    /// answer.
    Agent { talk: Duration },
    /// No agent was free: the caller hung up in silence [`ABANDON_AFTER`] after answering.
    Abandoned,
}

/// A queue of the pool as `GET /local/agents` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueView {
    pub queue_id: String,
    pub agents: u32,
    /// Agents on a call now.
    pub busy: u32,
    pub handle_seconds: u64,
    /// Calls a person answered that an agent took.
    pub answered: u64,
    /// Calls a person answered that no agent was free for.
    pub abandoned: u64,
    /// The most calls of the queue's tasks in flight at once (ringing or talking).
    pub max_calls_in_flight: u32,
}

/// The agent pools, by queue id; cheap to clone, one per local stack.
#[derive(Clone, Debug, Default)]
pub struct AgentPool(Arc<Mutex<BTreeMap<String, Queue>>>);

impl AgentPool {
    fn queues(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Queue>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets queue `queue_id` to `agents` agents handling each call for `handle`. Agents on a
    /// call keep it; its counters start again.
    pub fn set(&self, queue_id: &str, agents: u32, handle: Duration) {
        let mut queues = self.queues();
        let queue = queues
            .entry(queue_id.to_owned())
            .or_insert_with(|| Queue::new(agents, handle));
        queue.agents = agents;
        queue.handle = handle;
        queue.answered = 0;
        queue.abandoned = 0;
        queue.most_in_flight = u32::try_from(queue.calls_until.len()).unwrap_or(u32::MAX);
    }

    /// A call of `queue_id`'s task placed at `now` whose party answers after `ring` (or, when
    /// `answers` is false, whose call ends after `ring`): an agent free at the answer takes it,
    /// else it is abandoned (`None` for a call nobody answers). Counts the call in flight until
    /// it ends.
    pub fn place(
        &self,
        queue_id: &str,
        now: Instant,
        ring: Duration,
        answers: bool,
    ) -> Option<Answered> {
        let mut queues = self.queues();
        let queue = queues
            .entry(queue_id.to_owned())
            .or_insert_with(|| Queue::new(0, Duration::ZERO));
        queue.settle(now);
        let answer_at = now + ring;
        let outcome = if !answers {
            None
        } else {
            let busy_then = queue.busy_until.iter().filter(|u| **u > answer_at).count();
            if u32::try_from(busy_then).unwrap_or(u32::MAX) < queue.agents {
                queue.busy_until.push(answer_at + queue.handle);
                queue.answered += 1;
                Some(Answered::Agent { talk: queue.handle })
            } else {
                queue.abandoned += 1;
                Some(Answered::Abandoned)
            }
        };
        let ends = match outcome {
            Some(Answered::Agent { talk }) => answer_at + talk,
            Some(Answered::Abandoned) => answer_at + ABANDON_AFTER,
            None => answer_at,
        };
        queue.calls_until.push(ends);
        let in_flight = u32::try_from(queue.calls_until.len()).unwrap_or(u32::MAX);
        queue.most_in_flight = queue.most_in_flight.max(in_flight);
        outcome
    }

    /// Each of `queue_ids`' agents at `now`: free, on a call, and of those on a call the ones
    /// whose call ends within `soon`. A queue never set has no agent.
    pub fn agents(
        &self,
        queue_ids: &[String],
        now: Instant,
        soon: Duration,
    ) -> BTreeMap<String, QueueAgents> {
        let mut queues = self.queues();
        queue_ids
            .iter()
            .map(|id| {
                let state = match queues.get_mut(id) {
                    Some(queue) => {
                        queue.settle(now);
                        let busy = u32::try_from(queue.busy_until.len()).unwrap_or(u32::MAX);
                        let soon_free = queue
                            .busy_until
                            .iter()
                            .filter(|until| **until <= now + soon)
                            .count();
                        QueueAgents {
                            available: queue.agents.saturating_sub(busy),
                            on_contact: busy,
                            soon_free: u32::try_from(soon_free).unwrap_or(u32::MAX),
                        }
                    }
                    None => QueueAgents::default(),
                };
                (id.clone(), state)
            })
            .collect()
    }

    /// `GET /local/agents`: every queue set, by id.
    pub fn view(&self, now: Instant) -> Vec<QueueView> {
        let mut queues = self.queues();
        queues
            .iter_mut()
            .map(|(id, queue)| {
                queue.settle(now);
                QueueView {
                    queue_id: id.clone(),
                    agents: queue.agents,
                    busy: u32::try_from(queue.busy_until.len()).unwrap_or(u32::MAX),
                    handle_seconds: queue.handle.as_secs(),
                    answered: queue.answered,
                    abandoned: queue.abandoned,
                    max_calls_in_flight: queue.most_in_flight,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RING: Duration = Duration::from_secs(1);

    #[test]
    fn an_answered_call_takes_a_free_agent_or_is_abandoned() {
        let pool = AgentPool::default();
        let now = Instant::now();
        pool.set("q", 2, Duration::from_secs(30));
        let talk = Some(Answered::Agent {
            talk: Duration::from_secs(30),
        });
        assert_eq!(pool.place("q", now, RING, true), talk);
        assert_eq!(pool.place("q", now, RING, true), talk);
        assert_eq!(pool.place("q", now, RING, true), Some(Answered::Abandoned));
        // Unanswered calls take no agent, and count in flight.
        assert_eq!(pool.place("q", now, RING, false), None);
        let view = &pool.view(now)[0];
        assert_eq!(
            (
                view.busy,
                view.answered,
                view.abandoned,
                view.max_calls_in_flight
            ),
            (2, 2, 1, 4)
        );
        let agents = pool.agents(&["q".into(), "none".into()], now, RING);
        assert_eq!(agents["q"].available, 0);
        assert_eq!(agents["none"], QueueAgents::default());
        // After the handle time the agents are free again.
        let later = now + Duration::from_secs(40);
        assert_eq!(pool.agents(&["q".into()], later, RING)["q"].available, 2);
        assert_eq!(pool.place("q", later, RING, true), talk);
    }

    #[test]
    fn agents_finishing_within_the_ring_are_soon_free() {
        let pool = AgentPool::default();
        let now = Instant::now();
        pool.set("q", 1, Duration::from_secs(10));
        pool.place("q", now, RING, true);
        let soon = Duration::from_secs(12);
        let state = pool.agents(&["q".into()], now + Duration::from_secs(5), soon)["q"];
        assert_eq!(
            (state.available, state.on_contact, state.soon_free),
            (0, 1, 1)
        );
        let state = pool.agents(&["q".into()], now, Duration::from_secs(2))["q"];
        assert_eq!(state.soon_free, 0);
    }
}

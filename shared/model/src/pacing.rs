//! Agent pacing (D30): a task's pacing settings as stored ([`AgentPacing`]), and the pure
//! functions of the pace. [`calls_to_place`]: from the queue's agents (free now, and soon free),
//! the task's calls still ringing, its measured answer rate and its abandonment so far, how many
//! calls to place now; [`share_agents`]: one queue's agents shared between its tasks in D13's
//! order. No I/O and no clock, so the tick, the dialer and the pacing benchmark all ask the same
//! question the same way.
//!
//! - Progressive: a task's calls ringing never exceed its free agents x `callsPerAgent`.
//! - Predictive: calls are placed ahead of agents, for those free now and those that will be by
//!   the time a call is answered. The number ringing is the largest whose expected abandoned
//!   calls (answers beyond the agents ready for them, the answers a binomial of the calls
//!   ringing) stay within a share of the expected answers: the target, and the headroom the
//!   task has under it again (so over its life it lands near the target, not well below). At or
//!   above its target the task paces progressively (1 call per free agent) until it is back
//!   under.

use crate::error::Error;
use serde::{Deserialize, Serialize};

/// How a task's answered calls meet people (D30).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[strum(serialize_all = "SCREAMING_SNAKE_CASE")]
pub enum DialingMode {
    /// Calls go to the task's flow and nobody waits for an agent (the default).
    #[default]
    Agentless,
    /// At most `callsPerAgent` calls ringing per agent of the queue free now.
    Progressive,
    /// Calls placed ahead of agents becoming free, abandonment held at `abandonmentTarget`.
    Predictive,
}

impl DialingMode {
    pub const ALL: [DialingMode; 3] = [
        DialingMode::Agentless,
        DialingMode::Progressive,
        DialingMode::Predictive,
    ];

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// `field` as sent; the refusal names the modes.
    pub fn parse(field: &str, raw: &str) -> Result<Self, Error> {
        DialingMode::ALL
            .into_iter()
            .find(|mode| mode.name() == raw.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = DialingMode::ALL.iter().map(|m| m.name()).collect();
                Error::invalid(format!("{field} must be one of {}", names.join(", ")))
            })
    }

    /// Whether calls wait for an agent of a queue: progressive or predictive.
    pub fn paced(self) -> bool {
        self != DialingMode::Agentless
    }
}

/// A setting kept to two decimals exactly (`callsPerAgent` 1.25, `abandonmentTarget` 2.5):
/// hundredths, so settings compare and store without floating point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Hundredths(pub u32);

impl Hundredths {
    pub fn value(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

/// A number an agent-paced task is set with (D30): its field in the API, its bounds and its
/// default, in hundredths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacingSetting {
    pub field: &'static str,
    pub low: Hundredths,
    pub high: Hundredths,
    pub default: Hundredths,
}

impl PacingSetting {
    /// `value` as sent, rounded to two decimals, within the bounds; the refusal names the field
    /// and the range.
    pub fn parse(&self, value: f64) -> Result<Hundredths, Error> {
        let hundredths = (value * 100.0).round();
        let (low, high) = (f64::from(self.low.0), f64::from(self.high.0));
        if !value.is_finite() || hundredths < low || hundredths > high {
            return Err(Error::invalid(format!(
                "{} must be a number from {} to {}",
                self.field,
                self.low.value(),
                self.high.value()
            )));
        }
        Ok(Hundredths(hundredths as u32))
    }
}

/// `callsPerAgent`: 1.0 to 3.0, default 1.0.
pub const CALLS_PER_AGENT: PacingSetting = PacingSetting {
    field: "callsPerAgent",
    low: Hundredths(100),
    high: Hundredths(300),
    default: Hundredths(100),
};
/// `abandonmentTarget`, a percentage: 0 to 10, default 3.
pub const ABANDONMENT_TARGET: PacingSetting = PacingSetting {
    field: "abandonmentTarget",
    low: Hundredths(0),
    high: Hundredths(1_000),
    default: Hundredths(300),
};

/// How one task paces its calls to agents (D30), as it is stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentPacing {
    pub mode: DialingMode,
    /// One of the tenant's queues; the task's flow transfers an answered call there.
    pub queue_id: String,
    pub calls_per_agent: Hundredths,
    pub abandonment_target: Hundredths,
}

impl AgentPacing {
    /// The pacing the tick asks [`calls_to_place`] with.
    pub fn pacing(&self) -> Pacing {
        match self.mode {
            DialingMode::Predictive => Pacing::Predictive {
                target: self.abandonment_target.value() / 100.0,
            },
            _ => Pacing::Progressive {
                calls_per_agent: self.calls_per_agent.value(),
            },
        }
    }
}

/// A queue's agents now, as the provider reports them (Amazon Connect's current metrics; the
/// simulated provider's pool).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueAgents {
    /// Logged in and free to take a call.
    pub available: u32,
    /// Talking to a contact.
    pub on_contact: u32,
    /// Of the agents not available, those free by the time a call placed now is answered
    /// (Connect: in after-contact work).
    pub soon_free: u32,
}

/// How a task's calls are paced (D30).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// At most `calls_per_agent` calls ringing per free agent (1.0-3.0).
    Progressive { calls_per_agent: f64 },
    /// Ahead of agents, abandoned calls held at or below `target` (a fraction, 0.0-0.10) of
    /// the calls a person answered.
    Predictive { target: f64 },
}

/// What the pacing of one task reads, at one moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingInput {
    pub pacing: Pacing,
    /// Agents of the queue free now, and not promised to another task.
    pub agents_free: u32,
    /// Agents talking or in after-contact work who will be free by the time a call placed now is
    /// answered (their handle time nearly spent).
    pub agents_soon_free: u32,
    /// The task's calls placed and not yet answered or ended.
    pub ringing: u32,
    /// The task's answered calls per call placed, as measured (with a prior while it has few
    /// calls: [`answer_rate`]).
    pub answer_rate: f64,
    /// The task's calls a person answered over the last 30 days, and of them those abandoned.
    pub answered: u64,
    pub abandoned: u64,
}

/// The most calls predictive pacing keeps ringing per agent ready: however low the answer rate
/// seems, a burst of answers never meets an empty queue tenfold.
pub const MOST_PER_AGENT: f64 = 10.0;

/// Calls to place now (D30): never negative, never more than the mode allows.
pub fn calls_to_place(input: &PacingInput) -> u32 {
    ringing_allowed(input).saturating_sub(input.ringing)
}

/// The most calls the task may have ringing now (D30), whatever it has ringing.
pub fn ringing_allowed(input: &PacingInput) -> u32 {
    match input.pacing {
        Pacing::Progressive { calls_per_agent } => progressive(input.agents_free, calls_per_agent),
        Pacing::Predictive { target } if over_target(input, target) => {
            progressive(input.agents_free, 1.0)
        }
        Pacing::Predictive { target } => {
            // Under its target, a task may risk more in this batch by what it has in hand, so
            // over the 30 days it lands on the target rather than well below it.
            let rate = abandonment_rate(input.answered, input.abandoned);
            predictive(input, batch_share(target, rate))
        }
    }
}

/// The abandonment rate so far: abandoned calls per call a person answered; 0 before any.
pub fn abandonment_rate(answered: u64, abandoned: u64) -> f64 {
    if answered == 0 {
        0.0
    } else {
        abandoned as f64 / answered as f64
    }
}

/// The answer rate to pace with: `answered` of `placed`, blended with a `prior` worth
/// `PRIOR_CALLS` calls, so a task's first few calls do not swing its pace.
pub fn answer_rate(placed: u64, answered: u64, prior: f64) -> f64 {
    const PRIOR_CALLS: f64 = 50.0;
    (answered as f64 + prior * PRIOR_CALLS) / (placed as f64 + PRIOR_CALLS)
}

/// The share of a batch's expected answers it may expect to abandon: the target, and the
/// headroom under it again, at most twice the target.
fn batch_share(target: f64, rate: f64) -> f64 {
    (2.0 * target - rate).clamp(0.0, 2.0 * target)
}

fn over_target(input: &PacingInput, target: f64) -> bool {
    abandonment_rate(input.answered, input.abandoned) >= target
}

fn progressive(agents_free: u32, calls_per_agent: f64) -> u32 {
    (f64::from(agents_free) * calls_per_agent.clamp(1.0, 3.0)).floor() as u32
}

/// The largest number of calls ringing whose expected abandoned calls are at most `target` of
/// their expected answers, with the agents free now and soon free to take them.
///
/// The excess over the target, `expected_abandoned(n) - target * n * p`, is 0 at `n = 0` and
/// convex in `n` (the expected excess of a binomial over a fixed number is), so once it is
/// positive it stays positive: the calls allowed are a prefix of `0..=most`, found by bisection
/// in O(most log most) rather than by trying each number in turn.
fn predictive(input: &PacingInput, target: f64) -> u32 {
    let ready = input.agents_free + input.agents_soon_free;
    if ready == 0 {
        return 0;
    }
    let p = input.answer_rate.clamp(0.01, 1.0);
    let most = (f64::from(ready) * MOST_PER_AGENT).ceil() as u32;
    let within =
        |ringing: u32| expected_abandoned(ringing, p, ready) <= target * f64::from(ringing) * p;
    // Invariant: `within(low)`, and `high` is past the last number within.
    let (mut low, mut high) = (0u32, most + 1);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if within(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

/// E[max(0, A - ready)] for A ~ Binomial(n, p): the answers no agent is ready for.
///
/// The terms are summed in logarithms: `q^n` alone underflows to 0 past about 2,600 calls at a
/// quarter answered (1,075 at a half), and every term built from it by ratios would be 0 too,
/// so thousands of calls would seem to risk no abandoned call at all.
fn expected_abandoned(n: u32, p: f64, ready: u32) -> f64 {
    if n <= ready {
        return 0.0;
    }
    let q = 1.0 - p;
    if q <= 0.0 {
        return f64::from(n - ready);
    }
    let (ln_p, ln_q) = (p.ln(), q.ln());
    // ln P(A = k), from k = 0 upwards by the ratio of successive terms.
    let mut ln_pmf = f64::from(n) * ln_q;
    let mut excess = 0.0;
    for k in 0..=n {
        if k > ready {
            excess += ln_pmf.exp() * f64::from(k - ready);
        }
        if k < n {
            ln_pmf += (f64::from(n - k) / f64::from(k + 1)).ln() + ln_p - ln_q;
        }
    }
    excess
}

/// The answer rate a task is paced with before it has calls of its own (D30): blended away by
/// [`answer_rate`] as its calls are made.
pub const ANSWER_RATE_PRIOR: f64 = 0.3;

/// One agent-paced task of a queue, as the tick sees it (D30).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueTask {
    pub pacing: Pacing,
    /// Its calls in flight: ringing, or talking to an agent.
    pub in_flight: u32,
    /// Of those, its calls an agent took (the provider said so): the rest are ringing.
    pub talking: u32,
    /// The calls in flight it can use (D23): at least `in_flight`.
    pub demand: u32,
    /// Its calls placed that ended, and of them those a person answered and those abandoned.
    pub ended: u64,
    pub answered: u64,
    pub abandoned: u64,
}

/// The most calls in flight each task of one queue may have now (D30), the tasks in D13's order
/// (priority, then oldest): each in turn is paced against the agents the tasks before it left.
/// Each task's calls ringing are its calls in flight but those an agent took, its own: the
/// queue's agents on a call are not shared out among its tasks, as they may be talking to
/// another task's calls, or to calls the queue took in. A task keeps the calls it has, but its
/// cap holds only its calls talking and the calls ringing its pace allows ([`ringing_allowed`]):
/// with more ringing than that, a call that ends is not replaced. What it may add is what
/// [`calls_to_place`] allows, at most its demand, and the agents that covers (one a call for
/// progressive `callsPerAgent` 1; the expected answers for predictive) are not offered again.
pub fn share_agents(agents: QueueAgents, tasks: &[QueueTask]) -> Vec<u32> {
    let mut free = agents.available;
    let mut soon = agents.soon_free;
    let mut on_contact = agents.on_contact;
    tasks
        .iter()
        .map(|task| {
            let its_talking =
                if crate::simulation::planted(crate::simulation::Bug::TalkingMisattributed) {
                    let handed = on_contact.min(task.in_flight);
                    on_contact -= handed;
                    handed
                } else {
                    task.talking.min(task.in_flight)
                };
            let ringing = task.in_flight - its_talking;
            let rate = answer_rate(task.ended, task.answered, ANSWER_RATE_PRIOR);
            // Calls talking to agents were answered by a person: counted as such now, not when
            // they end, or an abandoned call (counted 2 s after its answer) would weigh on the
            // task's rate alone while the calls answered with it are still talking.
            let input = PacingInput {
                pacing: task.pacing,
                agents_free: free,
                agents_soon_free: soon,
                ringing,
                answer_rate: rate,
                answered: task.answered + u64::from(its_talking),
                abandoned: task.abandoned,
            };
            let allowed = ringing_allowed(&input);
            let place =
                (allowed.saturating_sub(ringing)).min(task.demand.saturating_sub(task.in_flight));
            // Its cap holds the calls talking and the calls ringing that its pace still allows:
            // with more ringing than that (its agents taken by another task's answers, or gone),
            // a call that ends is not replaced until it is back within.
            let kept = its_talking + ringing.min(allowed);
            let covered = f64::from(ringing + place);
            let promised = match task.pacing {
                Pacing::Progressive { calls_per_agent } => {
                    (covered / calls_per_agent.clamp(1.0, 3.0)).ceil()
                }
                Pacing::Predictive { .. } => (covered * rate).ceil(),
            } as u32;
            let from_free = promised.min(free);
            free -= from_free;
            soon -= (promised - from_free).min(soon);
            kept + place
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(pacing: Pacing) -> PacingInput {
        PacingInput {
            pacing,
            agents_free: 4,
            agents_soon_free: 2,
            ringing: 0,
            answer_rate: 0.25,
            answered: 1_000,
            abandoned: 10,
        }
    }

    const PREDICTIVE: Pacing = Pacing::Predictive { target: 0.03 };

    #[test]
    fn progressive_rings_free_agents_times_calls_per_agent_less_what_rings() {
        let one = Pacing::Progressive {
            calls_per_agent: 1.0,
        };
        assert_eq!(calls_to_place(&input(one)), 4);
        let two_and_a_half = Pacing::Progressive {
            calls_per_agent: 2.5,
        };
        assert_eq!(calls_to_place(&input(two_and_a_half)), 10);
        assert_eq!(
            calls_to_place(&PacingInput {
                ringing: 7,
                ..input(two_and_a_half)
            }),
            3
        );
        assert_eq!(
            calls_to_place(&PacingInput {
                ringing: 12,
                ..input(two_and_a_half)
            }),
            0,
            "more ringing than allowed places nothing, never a negative"
        );
        let soon_free_do_not_count = PacingInput {
            agents_free: 0,
            ..input(one)
        };
        assert_eq!(calls_to_place(&soon_free_do_not_count), 0);
    }

    #[test]
    fn predictive_dials_ahead_of_agents_within_its_target() {
        let placed = calls_to_place(&input(PREDICTIVE));
        // Six agents ready, a quarter of calls answered: more than one call per agent, fewer
        // than the 24 that would be answered by six on average.
        assert!((7..24).contains(&placed), "{placed}");
        // 1 % abandoned so far against 3 %: this batch may risk 3 % and the 2 % in hand.
        let share = batch_share(0.03, 0.01);
        assert!((share - 0.05).abs() < 1e-12);
        let ready = 6;
        let expected = expected_abandoned(placed, 0.25, ready);
        assert!(expected <= share * f64::from(placed) * 0.25, "{expected}");
        let one_more = expected_abandoned(placed + 1, 0.25, ready);
        assert!(
            one_more > share * f64::from(placed + 1) * 0.25,
            "the largest such number"
        );
    }

    #[test]
    fn predictive_places_more_for_a_lower_answer_rate_and_a_looser_target() {
        let at = |answer_rate: f64, target: f64| {
            calls_to_place(&PacingInput {
                answer_rate,
                abandoned: 0,
                ..input(Pacing::Predictive { target })
            })
        };
        assert!(at(0.10, 0.03) > at(0.25, 0.03));
        assert!(at(0.25, 0.03) > at(0.60, 0.03));
        assert!(at(0.25, 0.10) >= at(0.25, 0.03));
        assert!(
            at(0.25, 0.0) >= 4,
            "a zero target still calls the free agents"
        );
    }

    #[test]
    fn predictive_at_its_target_paces_progressively_until_back_under() {
        let at_target = PacingInput {
            answered: 1_000,
            abandoned: 30,
            ..input(PREDICTIVE)
        };
        assert_eq!(calls_to_place(&at_target), 4, "one call per free agent");
        let under = PacingInput {
            abandoned: 29,
            ..at_target
        };
        assert!(calls_to_place(&under) > 4);
    }

    #[test]
    fn no_agent_ready_places_nothing() {
        let none = PacingInput {
            agents_free: 0,
            agents_soon_free: 0,
            ..input(PREDICTIVE)
        };
        assert_eq!(calls_to_place(&none), 0);
        let only_soon_free = PacingInput {
            agents_free: 0,
            agents_soon_free: 3,
            ..input(PREDICTIVE)
        };
        assert!(
            calls_to_place(&only_soon_free) >= 3,
            "calls placed now are answered when they are free"
        );
    }

    fn queue_task(pacing: Pacing, in_flight: u32, demand: u32) -> QueueTask {
        QueueTask {
            pacing,
            in_flight,
            talking: 0,
            demand,
            ended: 1_000,
            answered: 250,
            abandoned: 0,
        }
    }

    const ONE: Pacing = Pacing::Progressive {
        calls_per_agent: 1.0,
    };

    #[test]
    fn tasks_on_one_queue_share_its_agents_in_order() {
        let agents = QueueAgents {
            available: 5,
            on_contact: 0,
            soon_free: 0,
        };
        // The first takes three agents, all it can use; the second the two left; the third none.
        let tasks = [
            queue_task(ONE, 0, 3),
            queue_task(ONE, 0, 10),
            queue_task(ONE, 0, 10),
        ];
        assert_eq!(share_agents(agents, &tasks), [3, 2, 0]);
        // Two calls per agent: the first's three calls cover two agents.
        let two = Pacing::Progressive {
            calls_per_agent: 2.0,
        };
        let tasks = [queue_task(two, 0, 3), queue_task(two, 0, 10)];
        assert_eq!(share_agents(agents, &tasks), [3, 6]);
    }

    #[test]
    fn calls_talking_to_agents_are_kept_and_do_not_ring() {
        // Four agents talking to the task's four calls, one free: one more call, never fewer
        // than it has.
        let agents = QueueAgents {
            available: 1,
            on_contact: 4,
            soon_free: 0,
        };
        let talking = |in_flight, talking| QueueTask {
            talking,
            ..queue_task(ONE, in_flight, 10)
        };
        assert_eq!(share_agents(agents, &[talking(4, 4)]), [5]);
        // No agent free: it keeps its calls and adds none.
        let busy = QueueAgents {
            available: 0,
            ..agents
        };
        assert_eq!(share_agents(busy, &[talking(4, 4)]), [4]);
        assert_eq!(share_agents(busy, &[queue_task(ONE, 0, 10)]), [0]);
    }

    #[test]
    fn a_task_counts_its_own_calls_talking_not_another_tasks() {
        // Eight agents, five talking to B's five calls, three free; A's five calls ring. A
        // comes first in D13's order and counts its five as ringing: with three agents free it
        // may have three ringing, so it adds none (it used to take B's five talking for its
        // own, count none ringing and add three); B then finds the free agents promised to A's
        // calls and adds none either. A's cap holds its three ringing calls allowed: of its five,
        // the two beyond them are not replaced when they end.
        let agents = QueueAgents {
            available: 3,
            on_contact: 5,
            soon_free: 0,
        };
        let a = queue_task(ONE, 5, 20);
        let b = QueueTask {
            talking: 5,
            ..queue_task(ONE, 5, 20)
        };
        assert_eq!(share_agents(agents, &[a, b]), [3, 5]);
        // Calls the queue took in (five agents talking, none of them the tasks'): A's five
        // still ring.
        assert_eq!(share_agents(agents, &[a]), [3]);
        // B first: its five are talking, so it may ring three more; A then finds no agent.
        assert_eq!(share_agents(agents, &[b, a]), [8, 0]);
    }

    #[test]
    fn a_ringing_call_that_ends_is_replaced_only_within_the_agents_free() {
        // Three calls ringing, two talking; the agents then all busy (or logged out): the cap
        // is the two talking, so as the ringing calls end none is placed in their stead (the
        // cap used to be the five in flight, and the run placed a call for each that ended
        // while no agent was free: the simulation's seed 103).
        let busy = QueueAgents {
            available: 0,
            on_contact: 4,
            soon_free: 0,
        };
        let task = QueueTask {
            talking: 2,
            ..queue_task(ONE, 5, 20)
        };
        assert_eq!(share_agents(busy, &[task]), [2]);
        // One agent free at 2 calls an agent: two may ring, so two of the three are kept.
        let one_free = QueueAgents {
            available: 1,
            ..busy
        };
        let two = QueueTask {
            pacing: Pacing::Progressive {
                calls_per_agent: 2.0,
            },
            ..task
        };
        assert_eq!(share_agents(one_free, &[two]), [4]);
        // Within its pace, a task keeps what it has and adds up to it.
        assert_eq!(
            share_agents(
                one_free,
                &[QueueTask {
                    in_flight: 3,
                    ..two
                }]
            ),
            [4]
        );
    }

    #[test]
    fn calls_talking_count_as_answered_for_the_target() {
        // One abandoned of 20 answered so far (5 %, over a 3 % target): progressive, one a free
        // agent; but with 20 more answered calls talking now the task is at 2.5 %, under it.
        let agents = QueueAgents {
            available: 4,
            on_contact: 20,
            soon_free: 0,
        };
        let over = QueueTask {
            answered: 20,
            abandoned: 1,
            ..queue_task(PREDICTIVE, 0, 100)
        };
        let idle = QueueAgents {
            on_contact: 0,
            ..agents
        };
        assert_eq!(share_agents(idle, &[over])[0], 4);
        let talking = QueueTask {
            in_flight: 20,
            talking: 20,
            ..over
        };
        assert!(share_agents(agents, &[talking])[0] > 24);
    }

    #[test]
    fn a_predictive_task_dials_ahead_of_a_progressive_one() {
        let agents = QueueAgents {
            available: 4,
            on_contact: 0,
            soon_free: 2,
        };
        let progressive = share_agents(agents, &[queue_task(ONE, 0, 100)])[0];
        let predictive = share_agents(agents, &[queue_task(PREDICTIVE, 0, 100)])[0];
        assert_eq!(progressive, 4);
        assert!(predictive > 6, "{predictive}");
    }

    #[test]
    fn the_binomial_excess_is_exact_on_small_cases() {
        // Two calls at one half, one agent: two answers with probability 1/4, one too many.
        assert!((expected_abandoned(2, 0.5, 1) - 0.25).abs() < 1e-12);
        assert_eq!(expected_abandoned(3, 0.5, 3), 0.0);
        // Certain answers: every one past the agents is abandoned.
        assert!((expected_abandoned(5, 1.0, 2) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_binomial_excess_holds_for_thousands_of_calls() {
        // 2,800 calls at a quarter answered, 700 agents: about 700 answers, so about half a
        // standard deviation (22.9) of them past the agents, 9.2 (E[max(0, Z)] = 0.399 sd).
        let excess = expected_abandoned(2_800, 0.25, 700);
        assert!((excess - 9.14).abs() < 0.1, "{excess}");
        // Far more calls than agents: nearly all the answers past them are abandoned.
        let flood = expected_abandoned(7_000, 0.25, 700);
        assert!((flood - 1_050.0).abs() < 1.0, "{flood}");
        let half = expected_abandoned(1_200, 0.5, 100);
        assert!((half - 500.0).abs() < 1.0, "{half}");
    }

    #[test]
    fn predictive_with_hundreds_of_agents_stays_near_their_answers() {
        // 700 agents ready, a quarter answered: about 2,800 calls answer to 700 people; ten
        // calls an agent (7,000) would abandon about 1,050 of the 1,750 answers.
        let many = PacingInput {
            agents_free: 700,
            agents_soon_free: 0,
            ringing: 0,
            answer_rate: 0.25,
            answered: 0,
            abandoned: 0,
            pacing: PREDICTIVE,
        };
        let placed = calls_to_place(&many);
        // By the normal approximation: 2,900 calls risk about 27 (under 0.06 x 725 answers),
        // 3,000 about 50 (over 0.06 x 750).
        assert!((2_900..=3_000).contains(&placed), "{placed}");
        let share = batch_share(0.03, 0.0);
        assert!(expected_abandoned(placed, 0.25, 700) <= share * f64::from(placed) * 0.25);
        assert!(
            expected_abandoned(placed + 1, 0.25, 700) > share * f64::from(placed + 1) * 0.25,
            "the largest such number"
        );
    }

    #[test]
    fn the_bisection_finds_what_trying_each_number_finds() {
        for ready in [1, 2, 5, 13, 40] {
            for p in [0.05, 0.25, 0.5, 0.9] {
                for target in [0.0, 0.03, 0.1, 0.2] {
                    let input = PacingInput {
                        agents_free: ready,
                        agents_soon_free: 0,
                        ringing: 0,
                        answer_rate: p,
                        answered: 0,
                        abandoned: 0,
                        pacing: PREDICTIVE,
                    };
                    let most = ready * MOST_PER_AGENT as u32;
                    let linear = (0..=most)
                        .take_while(|&n| {
                            expected_abandoned(n, p, ready) <= target * f64::from(n) * p
                        })
                        .last()
                        .unwrap_or(0);
                    assert_eq!(predictive(&input, target), linear, "{ready} {p} {target}");
                }
            }
        }
    }

    #[test]
    fn rates_blend_a_prior_and_start_at_zero_abandonment() {
        assert_eq!(abandonment_rate(0, 0), 0.0);
        assert!((abandonment_rate(200, 6) - 0.03).abs() < 1e-12);
        assert!((answer_rate(0, 0, 0.3) - 0.3).abs() < 1e-12);
        let measured = answer_rate(10_000, 2_500, 0.5);
        assert!((measured - 0.25).abs() < 0.01, "{measured}");
    }
}

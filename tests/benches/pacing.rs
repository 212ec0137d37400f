//! The pacing benchmark (D30, `make bench`): a simulated working day of one task on one queue,
//! paced by `outbound_model::pacing::calls_to_place` second by second, the same day for
//! progressive pacing (1.0 call per free agent) and predictive pacing (target 3 %). No stand-in
//! is involved: the pacing function is pure, and this measures what it makes of agents' time.
//!
//! The day: `AGENTS` agents logged in, `CONTACTS` contacts each called once, a quarter of calls
//! answered by a person; an answered call rings 5-20 s, an unanswered one 15-25 s; a person is
//! talked to for 120 s on average (Erlang-4: most calls 60-200 s), and abandoned when no agent
//! is free within 2 s of the answer. Measured until the last contact is called, for `SEEDS`
//! seeds; records `pacing.<mode>.<figure>`:
//! - `occupancy_pct`: agents' talking time over their logged-in time;
//! - `abandonment_pct`: abandoned calls per call a person answered;
//! - `calls_per_agent_hour`: calls placed per agent per hour;
//! - `contacts_per_hour`: contacts whose call ended, per hour;
//!
//! and `pacing.predictive_over_progressive_contacts`, the ratio of the last.

use outbound_model::pacing::{answer_rate, calls_to_place, Pacing, PacingInput};
use outbound_tests::bench::record;

const AGENTS: usize = 20;
const CONTACTS: u32 = 10_000;
const ANSWER_RATE: f64 = 0.25;
const MEAN_HANDLE_S: f64 = 120.0;
const PATIENCE_S: u64 = 2;
const DAY_S: u64 = 10 * 3600;
const SEEDS: u64 = 5;
/// An agent whose call ends within this many seconds counts as soon free: about the time an
/// answered call rings.
const SOON_S: u64 = 12;

#[derive(Clone, Copy)]
struct Ringing {
    ends_at: u64,
    answered: bool,
}

#[derive(Default)]
struct Day {
    placed: u64,
    answered: u64,
    abandoned: u64,
    finished: u64,
    talking_s: u64,
    elapsed_s: u64,
}

fn main() {
    let mut contacts = [0.0; 2];
    for seed in 0..SEEDS {
        for (index, (name, pacing)) in [
            (
                "progressive",
                Pacing::Progressive {
                    calls_per_agent: 1.0,
                },
            ),
            ("predictive", Pacing::Predictive { target: 0.03 }),
        ]
        .into_iter()
        .enumerate()
        {
            let day = simulate(pacing, seed);
            let hours = day.elapsed_s as f64 / 3600.0;
            let per_hour = day.finished as f64 / hours;
            contacts[index] = per_hour;
            let agent_seconds = (AGENTS as u64 * day.elapsed_s) as f64;
            record(
                &format!("pacing.{name}.occupancy_pct"),
                round1(100.0 * day.talking_s as f64 / agent_seconds),
            );
            record(
                &format!("pacing.{name}.abandonment_pct"),
                round1(100.0 * day.abandoned as f64 / day.answered.max(1) as f64),
            );
            record(
                &format!("pacing.{name}.calls_per_agent_hour"),
                round1(day.placed as f64 / AGENTS as f64 / hours),
            );
            record(
                &format!("pacing.{name}.contacts_per_hour"),
                per_hour.round(),
            );
        }
        record(
            "pacing.predictive_over_progressive_contacts",
            (contacts[1] / contacts[0] * 100.0).round() / 100.0,
        );
    }
}

/// One day of `pacing` with the draws of `seed`; measured until the last contact is called.
fn simulate(pacing: Pacing, seed: u64) -> Day {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut busy_until = [0u64; AGENTS];
    let mut ringing: Vec<Ringing> = Vec::new();
    // Answered calls waiting for an agent, with the second they are abandoned at.
    let mut waiting: Vec<u64> = Vec::new();
    let mut day = Day::default();
    let mut left = CONTACTS;
    let mut rings_ended = 0u64;
    for now in 0..DAY_S {
        // Calls whose ringing ends now: answered ones wait for an agent, others are done.
        let (ended, still): (Vec<Ringing>, Vec<Ringing>) =
            ringing.iter().partition(|call| call.ends_at <= now);
        ringing = still;
        for call in ended {
            rings_ended += 1;
            if call.answered {
                day.answered += 1;
                waiting.push(now + PATIENCE_S);
            } else {
                day.finished += 1;
            }
        }
        // Free agents take the waiting calls, oldest first; those past their patience hang up.
        waiting.sort_unstable();
        let mut kept = Vec::new();
        for deadline in waiting.drain(..) {
            match busy_until.iter_mut().find(|until| **until <= now) {
                Some(agent) => {
                    let handle = handle_seconds(&mut rng);
                    *agent = now + handle;
                    day.talking_s += handle;
                    day.finished += 1;
                }
                None if deadline <= now => {
                    day.abandoned += 1;
                    day.finished += 1;
                }
                None => kept.push(deadline),
            }
        }
        waiting = kept;
        if left == 0 {
            day.elapsed_s = now;
            return day;
        }
        let free = busy_until.iter().filter(|until| **until <= now).count() as u32;
        let soon_free = busy_until
            .iter()
            .filter(|until| **until > now && **until - now <= SOON_S)
            .count() as u32;
        let input = PacingInput {
            pacing,
            agents_free: free.saturating_sub(waiting.len() as u32),
            agents_soon_free: soon_free,
            ringing: ringing.len() as u32,
            answer_rate: answer_rate(rings_ended, day.answered, 0.3),
            answered: day.answered,
            abandoned: day.abandoned,
        };
        let placing = calls_to_place(&input).min(left);
        for _ in 0..placing {
            let answered = rng.f64() < ANSWER_RATE;
            let ring = if answered {
                rng.u64(5..=20)
            } else {
                rng.u64(15..=25)
            };
            ringing.push(Ringing {
                ends_at: now + ring,
                answered,
            });
        }
        day.placed += u64::from(placing);
        left -= placing;
    }
    day.elapsed_s = DAY_S;
    day
}

/// Erlang-4 with mean `MEAN_HANDLE_S`: the sum of four exponential draws.
fn handle_seconds(rng: &mut fastrand::Rng) -> u64 {
    let phase = MEAN_HANDLE_S / 4.0;
    let total: f64 = (0..4).map(|_| -phase * (1.0 - rng.f64()).ln()).sum();
    total.round().max(1.0) as u64
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

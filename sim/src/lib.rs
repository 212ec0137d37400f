//! The deterministic simulation (D28): the real engine, the real store code and the real API run
//! in one process on one thread, over an embedded DynamoDB reached through the store's own seam
//! ([`dynamo`], [`wire`]), in-process queues with SQS's semantics ([`mailbox`]) and a provider that
//! keeps its own log of what it placed ([`provider`]), under virtual time. Everything that
//! varies comes from one seed: the world ([`world`]), the faults, the latencies that decide how
//! concurrent runs interleave, which handlers die at which await. One seed, one trace: the
//! trace's hash is printed, and a seed run twice gives the same one.
//!
//! [`run`] plays one seed: a storm (faults on, the world changed under the tasks) then a calm
//! (faults off) until every task is over, checking the invariants ([`invariants`]) after every
//! step and at the end.

pub mod dynamo;
pub mod invariants;
pub mod mailbox;
pub mod provider;
pub mod wire;
pub mod world;

use std::sync::{Arc, Mutex};

/// The seed's draws, the trace and virtual time, shared by every part of one seed's world.
#[derive(Clone)]
pub struct Seeded {
    state: Arc<Mutex<SeedState>>,
    /// Unix milliseconds at virtual time zero.
    epoch: i64,
    start: tokio::time::Instant,
}

struct SeedState {
    rng: fastrand::Rng,
    trace: u64,
    notes: u64,
    last: std::collections::VecDeque<String>,
    /// `SIM_TRACE` set: every line printed as it is added.
    print: bool,
}

/// Trace lines kept to print with a failure.
const KEPT_NOTES: usize = 60;

impl std::fmt::Debug for Seeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seeded(at {} ms)", self.now_ms())
    }
}

impl Seeded {
    /// The draws of `seed`, virtual time starting now at `epoch` (Unix milliseconds). Must be
    /// made inside the seed's runtime, whose clock is paused.
    pub fn new(seed: u64, epoch: i64) -> Seeded {
        Seeded {
            state: Arc::new(Mutex::new(SeedState {
                rng: fastrand::Rng::with_seed(seed),
                trace: 0xcbf2_9ce4_8422_2325,
                notes: 0,
                last: Default::default(),
                print: std::env::var_os("SIM_TRACE").is_some(),
            })),
            epoch,
            start: tokio::time::Instant::now(),
        }
    }

    /// Virtual Unix milliseconds now.
    pub fn now_ms(&self) -> i64 {
        self.epoch + self.start.elapsed().as_millis() as i64
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.state.lock().unwrap().rng.u64(0..n)
    }

    /// True `per_10k` times in 10,000.
    pub fn chance(&self, per_10k: u32) -> bool {
        per_10k > 0 && self.below(10_000) < u64::from(per_10k)
    }

    /// Adds `line` to the trace, at the virtual time now.
    pub fn note(&self, line: &str) {
        let at = self.now_ms() - self.epoch;
        let mut state = self.state.lock().unwrap();
        let mut hash = state.trace;
        for byte in at.to_le_bytes().iter().chain(line.as_bytes()) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        state.trace = hash;
        state.notes += 1;
        if state.last.len() == KEPT_NOTES {
            state.last.pop_front();
        }
        let line = format!("{:>9} ms  {line}", at);
        if state.print {
            eprintln!("{line}");
        }
        state.last.push_back(line);
    }

    /// The trace's hash and length so far.
    pub fn trace(&self) -> (u64, u64) {
        let state = self.state.lock().unwrap();
        (state.trace, state.notes)
    }

    /// The trace's last lines.
    pub fn last_notes(&self) -> Vec<String> {
        self.state.lock().unwrap().last.iter().cloned().collect()
    }
}

/// What one seed came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub seed: u64,
    /// The trace's hash and its number of lines.
    pub trace: (u64, u64),
    pub calls: usize,
    pub steps: usize,
    pub killed: usize,
    pub redelivered: usize,
    /// Virtual minutes the calm took for every task to end.
    pub calm_minutes: u32,
}

/// Plays `seed` on a runtime of its own, on this thread: its outcome, or what broke.
pub fn run(seed: u64) -> Result<Outcome, String> {
    run_planted(seed, None)
}

/// [`run`] with `planted` live in the service's code (the mutation table).
pub fn run_planted(
    seed: u64,
    planted: Option<outbound_model::simulation::Bug>,
) -> Result<Outcome, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    fastrand::seed(seed);
    runtime.block_on(async move {
        let mut world = world::World::build(seed, planted).await?;
        let outcome = world.play().await;
        if let Err(broken) = &outcome {
            let notes = world.seeded.last_notes().join("\n  ");
            return Err(format!("{broken}\n  the trace's last lines:\n  {notes}"));
        }
        outcome
    })
}

/// The seeds part `part` of `parts` plays: `SIM_SEED` alone (in part 0), else those of
/// `1..=SIM_SEEDS` (`default` unless set) with `seed % parts == part`.
pub fn seeds_of_part(part: u64, parts: u64, default: u64) -> Vec<u64> {
    if let Ok(one) = std::env::var("SIM_SEED") {
        let seed: u64 = one.trim().parse().expect("SIM_SEED is a whole number");
        return if part == 0 { vec![seed] } else { Vec::new() };
    }
    let count = std::env::var("SIM_SEEDS")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(default);
    (1..=count).filter(|seed| seed % parts == part).collect()
}

/// The one command that replays `seed`.
pub fn replay_command(seed: u64) -> String {
    format!("make sim SIM_SEED={seed}")
}

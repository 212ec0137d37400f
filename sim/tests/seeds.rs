//! The seeds of `make test` and `make sim`: `SIM_SEEDS` seeds (2,000 unless set) split over
//! parts the test runner runs side by side; `SIM_SEED` replays one, printing its trace's end
//! (and with `SIM_LOG=<filter>`, `SIM_LOG=warn` say, the service's own log).

use outbound_sim::{replay_command, run};

/// The seeds `make test` plays when `SIM_SEEDS` does not say.
const SEEDS: u64 = 2_000;
/// The seeds are split over this many tests, which the test runner runs side by side.
const PARTS: u64 = 20;

fn seeds(part: u64) -> Vec<u64> {
    outbound_sim::seeds_of_part(part, PARTS, SEEDS)
}

fn play(part: u64) {
    if let Ok(filter) = std::env::var("SIM_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .without_time()
            .with_writer(std::io::stderr)
            .try_init();
    }
    let mut failed = Vec::new();
    let (mut calls, mut played) = (0, 0);
    let began = std::time::Instant::now();
    // Where the time goes: the part's seed that took longest, and how long.
    let mut slowest = (std::time::Duration::ZERO, 0);
    for seed in seeds(part) {
        let seed_began = std::time::Instant::now();
        let result = run(seed);
        slowest = slowest.max((seed_began.elapsed(), seed));
        match result {
            Ok(outcome) => {
                calls += outcome.calls;
                played += 1;
                if std::env::var("SIM_SEED").is_ok() {
                    eprintln!("{outcome:?}");
                }
            }
            Err(broken) => {
                eprintln!("seed {seed}: {broken}\n  replay: {}", replay_command(seed));
                failed.push(seed);
            }
        }
    }
    eprintln!(
        "part {part}: {played} seeds kept every promise, {calls} calls placed, in {:.1} s \
         (the slowest, seed {}: {} ms)",
        began.elapsed().as_secs_f64(),
        slowest.1,
        slowest.0.as_millis()
    );
    assert!(failed.is_empty(), "seeds that broke a promise: {failed:?}");
}

/// One test per part, `seeds_part_0` to `seeds_part_19`: short enough each to share the cores
/// with the rest of `make test`, many enough for the test runner to keep every core busy.
macro_rules! parts {
    ($($name:ident = $part:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                play($part);
            }
        )*
    };
}

parts!(
    seeds_part_0 = 0,
    seeds_part_1 = 1,
    seeds_part_2 = 2,
    seeds_part_3 = 3,
    seeds_part_4 = 4,
    seeds_part_5 = 5,
    seeds_part_6 = 6,
    seeds_part_7 = 7,
    seeds_part_8 = 8,
    seeds_part_9 = 9,
    seeds_part_10 = 10,
    seeds_part_11 = 11,
    seeds_part_12 = 12,
    seeds_part_13 = 13,
    seeds_part_14 = 14,
    seeds_part_15 = 15,
    seeds_part_16 = 16,
    seeds_part_17 = 17,
    seeds_part_18 = 18,
    seeds_part_19 = 19,
);

/// One seed, one trace: a seed played twice gives the same trace and the same outcome.
#[test]
fn a_seed_played_twice_gives_the_same_trace() {
    let first = run(2).expect("seed 2 keeps its promises");
    let second = run(2).expect("seed 2 keeps its promises");
    assert_eq!(first, second);
    assert!(first.trace.1 > 100, "a trace of some length: {first:?}");
    assert_ne!(
        run(6).expect("seed 6 keeps its promises").trace,
        first.trace
    );
}

/// The mutation table (`make sim-mutants`, docs/simulation.md): each bug planted in turn, seeds
/// played until one breaks a promise (at most `SIM_MUTANT_SEEDS`, 1,000 unless set); every bug
/// must be found. `SIM_MUTANT=<name>` plants that one alone.
#[test]
#[ignore = "make sim-mutants runs it"]
fn every_planted_bug_is_found() {
    use outbound_model::simulation::Bug;
    use strum::IntoEnumIterator;
    let most: u64 = std::env::var("SIM_MUTANT_SEEDS")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1_000);
    let only = std::env::var("SIM_MUTANT").ok();
    let mut missed = Vec::new();
    eprintln!("| planted bug | found by seed | seeds played | the promise broken |");
    eprintln!("|---|---|---|---|");
    for bug in Bug::iter() {
        let name: &str = bug.into();
        if only.as_deref().is_some_and(|only| only != name) {
            continue;
        }
        let found = first_broken(most, bug);
        match found {
            Some((seed, broken)) => {
                let first = broken.lines().next().unwrap_or_default().to_owned();
                eprintln!("| `{name}` | {seed} | {seed} | {first} |");
            }
            None => {
                eprintln!("| `{name}` | not found | {most} | |");
                missed.push(name);
            }
        }
    }
    assert!(missed.is_empty(), "planted bugs no seed found: {missed:?}");
}

/// The first of seeds `1..=most` that breaks a promise with `bug` planted, and what it broke;
/// the seeds played a batch at a time, one on each core.
fn first_broken(most: u64, bug: outbound_model::simulation::Bug) -> Option<(u64, String)> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let mut next = 1;
    while next <= most {
        let batch: Vec<u64> = (next..=most).take(cores as usize).collect();
        next += cores;
        let broken = std::thread::scope(|scope| {
            let played: Vec<_> = (batch.iter())
                .map(|&seed| scope.spawn(move || outbound_sim::run_planted(seed, Some(bug))))
                .collect();
            (batch.iter().zip(played))
                .map(|(seed, played)| (*seed, played.join().expect("a seed's thread")))
                .find_map(|(seed, outcome)| outcome.err().map(|broken| (seed, broken)))
        });
        if broken.is_some() {
            return broken;
        }
    }
    None
}

//! One seed, one trace: the deterministic simulation runs the service's own code on one thread,
//! and sets here what that thread reads as the time ([`crate::Timestamp::now`]) and the ids it
//! makes ([`crate::id::Id::new`]), so that the same seed writes the same records in the same
//! order. Nothing but a simulation enters one; elsewhere both read the system as always.

use std::cell::RefCell;

/// A bug planted in the service's code for the simulation's mutation table (docs/simulation.md):
/// each is live only on a simulated thread entered with it, so the table shows every invariant
/// able to fail. Nothing outside a simulation can turn one on.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, strum::EnumString, strum::IntoStaticStr, strum::EnumIter,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Bug {
    /// The claim does not check the do-not-call list.
    DncIgnored,
    /// The claim neither checks nor counts the frequency cap.
    FrequencyIgnored,
    /// A contact is never done for having used its `maxDialCount`.
    MaxDialIgnored,
    /// A call the provider refused or was too busy for is not given back.
    GiveBackSkipped,
    /// Calling hours read in UTC, not in the called party's zone.
    CallingHoursInUtc,
    /// A start in doubt sent again is not counted toward the frequency cap.
    ResendUncounted,
    /// Each try of a start carries a token of its own: the provider cannot tell a start sent
    /// again from a new call.
    TokenDropped,
    /// An outcome is recorded whether or not its attempt is still in flight: an outcome event
    /// delivered twice (late, or again) is recorded twice.
    OutcomeTwice,
    /// The claim reads the service's cap on calls in flight four times over.
    ServiceCapIgnored,
    /// A start in doubt that gave back its places is never sent again: it waits out the
    /// longest call and is settled "no outcome" (the 12-hour hold of D28 before the fix).
    ReleasedNeverResent,
    /// A call placed by a start in doubt sent again is judged by its attempt's claim: found
    /// connected more than `DIAL_MAX_CALL_SECONDS` after the claim, it is settled "no outcome"
    /// and its own outcome dropped.
    ResendJudgedByClaim,
    /// The queue's agents on a call are handed out among its agent-paced tasks in D13's order
    /// as their calls talking, instead of each task's own (the defect of D30 before the fix).
    TalkingMisattributed,
    /// The dial run dials every contact whatever the task's filter says (D31).
    FilterIgnored,
    /// The task's schedule neither holds its calls back before its start nor stops it at its
    /// end (D31).
    ScheduleIgnored,
    /// An agent-paced run keeps its budget whatever reading of the agents came after its own:
    /// delivered after its pace slot, or its claim answered after a newer reading (D30).
    StalePaceKept,
    /// A callback set by the API is due at once rather than at its time (D31).
    CallbackEarly,
    /// A callback the flow asked for is due when the call ends rather than at its time (D31).
    FlowCallbackEarly,
}

/// Whether `bug` is planted on this thread.
pub fn planted(bug: Bug) -> bool {
    SIMULATED.with(|cell| {
        cell.borrow()
            .as_ref()
            .is_some_and(|simulated| simulated.planted == Some(bug))
    })
}

/// What a simulated thread reads instead of the system: its clock, the seed of its ids and of
/// its other draws.
struct Simulated {
    planted: Option<Bug>,
    clock: Box<dyn Fn() -> i64>,
    ids: u64,
    draws: u64,
    last_millis: i64,
    sequence: u16,
}

thread_local! {
    static SIMULATED: RefCell<Option<Simulated>> = const { RefCell::new(None) };
}

/// While the guard lives, this thread's time is `clock()` (Unix milliseconds), its ids and its
/// [draws](random_below) come from `seed`, and `planted` (if any) is live.
pub fn enter(clock: impl Fn() -> i64 + 'static, seed: u64, planted: Option<Bug>) -> Guard {
    SIMULATED.with(|cell| {
        *cell.borrow_mut() = Some(Simulated {
            planted,
            clock: Box::new(clock),
            ids: seed,
            draws: seed ^ 0xD1CE,
            last_millis: i64::MIN,
            sequence: 0,
        })
    });
    Guard(())
}

/// Leaves the simulation when dropped.
pub struct Guard(());

impl Drop for Guard {
    fn drop(&mut self) {
        SIMULATED.with(|cell| *cell.borrow_mut() = None);
    }
}

/// The simulated time in Unix milliseconds, on a simulated thread; `None` elsewhere.
pub fn now() -> Option<i64> {
    SIMULATED.with(|cell| cell.borrow().as_ref().map(|simulated| (simulated.clock)()))
}

/// The next id of a simulated thread: a ULID of its time, later than every one it made before
/// (a sequence in its random part orders those of one millisecond), the rest drawn from its seed.
pub(crate) fn next_id() -> Option<ulid::Ulid> {
    SIMULATED.with(|cell| {
        let mut cell = cell.borrow_mut();
        let simulated = cell.as_mut()?;
        let millis = (simulated.clock)();
        if millis > simulated.last_millis {
            simulated.last_millis = millis;
            simulated.sequence = 0;
        } else {
            simulated.sequence = simulated.sequence.wrapping_add(1);
        }
        let random =
            (u128::from(simulated.sequence) << 64) | u128::from(splitmix(&mut simulated.ids));
        Some(ulid::Ulid::from_parts(
            u64::try_from(simulated.last_millis).unwrap_or(0),
            random,
        ))
    })
}

/// A random number in `0..n` (0 when `n` is 0): the service's own random choices (backoff
/// jitter, a free place among several) are made here. On a simulated thread it is drawn from
/// the seed, so nothing else that draws from the thread's generator (the SDK's log spans do)
/// changes a replay; elsewhere from the thread's generator.
pub fn random_below(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let drawn = SIMULATED.with(|cell| {
        let mut cell = cell.borrow_mut();
        let simulated = cell.as_mut()?;
        Some(splitmix(&mut simulated.draws) % n)
    });
    drawn.unwrap_or_else(|| fastrand::u64(0..n))
}

/// SplitMix64: a well-mixed next number of a 64-bit state.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::Id;
    use crate::Timestamp;

    /// The same seed and time give the same ids, each later than the last; the time is the
    /// simulation's; leaving it gives the system's back.
    #[test]
    fn a_simulated_thread_reads_its_own_time_and_ids() {
        let draw = || {
            let _guard = enter(|| 1_700_000_000_000, 7, None);
            assert_eq!(Timestamp::now(), Timestamp(1_700_000_000_000));
            (0..5).map(|_| Id::new()).collect::<Vec<_>>()
        };
        let (first, second) = (draw(), draw());
        assert_eq!(first, second);
        assert!(first.windows(2).all(|pair| pair[0] < pair[1]), "{first:?}");
        assert!(Timestamp::now().0 > 1_700_000_000_000);
    }
}

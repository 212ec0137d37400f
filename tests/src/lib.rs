//! What the HTTP suite and the benchmarks share beyond the local stack (`outbound-local`): a
//! stack of fresh resources per test with its AWS calls counted ([`stack`]), the write capacity
//! they cost ([`capacity`]), the fault-injecting proxy in front of moto ([`faults`]), the
//! benchmarks' samples ([`bench`]), and the engine's settings of fast runs ([`fast_dialing`]).

pub mod bench;
pub mod capacity;
pub mod faults;
pub mod stack;

/// The engine's settings of fast tests and benches: outcomes at once, no rate limit worth the
/// name; each adds its queues, caps or outcome mix.
pub fn fast_dialing() -> outbound_app::config::dialing::DialerConfig {
    let mut settings = outbound_app::config::dialing::DialerConfig {
        rate_per_second: 1000,
        ..Default::default()
    };
    settings.simulated.delay = std::time::Duration::ZERO;
    settings
}

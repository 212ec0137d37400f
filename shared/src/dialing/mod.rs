//! The dialing engine (D13): which contacts a running task calls and when ([`plan`]), the
//! telephony providers that place the calls ([`provider`], [`simulated`], [`connect`]), and the
//! three entry points the functions run ([`engine`]): the tick that finds running tasks, the
//! dialer that claims and places calls for one task, and the recorder of call outcomes.

pub mod connect;
pub mod provider;

pub use provider::{CallReport, CallRequest, CallStatus, Outcome, PlaceError, Provider};

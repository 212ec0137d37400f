//! The outbound domain crate: everything the Lambda functions share, in rooms that each own one
//! thing. Imports run only down these layers (`tests/layers.rs` checks it), lowest first:
//!
//! 0. [`error`]: the one error type; [`http::envelope`] is the one place that turns it into a
//!    status code.
//! 1. [`model`]: the domain types, which cannot hold invalid values (tenants, ids, contacts,
//!    tasks, calls, imports, exports, reclaim jobs).
//! 2. [`files`] (CSV and `.xlsx`), [`telemetry`] (logs, metrics), [`aws`] (the SDK's set-up,
//!    lazy clients, request timing), [`auth`] (tokens and the tenant they name).
//! 3. The adapters: [`store`] (all DynamoDB code, the events' outbox), [`blob`] (S3), [`queue`]
//!    (SQS, typed messages), [`bus`] (EventBridge, the domain events of D20).
//! 4. [`config`]: what a function reads from its environment, read once.
//! 5. [`dialing`]: the dialing engine, its providers and its plan (D13).
//! 6. [`service`]: one function per operation.
//! 7. [`app`]: the composition root, which builds configuration, clients, queues and the engine
//!    once per cold start.
//! 8. The entry points: [`http`] (the routers) and [`worker`] (queue, schedule and stream
//!    handlers).

pub mod app;
pub mod auth;
pub mod aws;
pub mod blob;
pub mod bus;
pub mod config;
pub mod dialing;
pub mod error;
pub mod files;
pub mod http;
pub mod model;
pub mod queue;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod worker;

pub use error::{Error, Result};

/// The allocator of every binary that links this crate: the four functions, the local API, the
/// tests and the benchmark, so what `make bench` measures is what runs. glibc's allocator hands
/// freed memory back to the kernel and faults it in again on the next import; with mimalloc a
/// warm function reuses it, which halves the time to parse a 10,000-row CSV here.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

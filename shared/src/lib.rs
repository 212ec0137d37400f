//! The outbound domain crate: everything the Lambda functions share.
//!
//! Layering, outermost first: [`http`] turns requests into typed commands and results into the
//! envelope; [`service`] holds one function per operation; [`model`] holds the types that cannot
//! hold invalid values; [`store`] is the DynamoDB code. [`error::Error`] is the one error type, and
//! [`http::envelope`] the one place that turns it into a status code.

pub mod auth;
pub mod aws;
pub mod blob;
pub mod config;
pub mod dialing;
pub mod error;
pub mod files;
pub mod http;
pub mod model;
pub mod reclaim;
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

//! The adapters: the only code that speaks to AWS. [`store`] holds every DynamoDB request (and
//! the events' outbox), [`blob`] S3, [`queue`] SQS with typed messages, [`bus`] EventBridge,
//! [`telephony`] Amazon Connect (and the simulated provider that stands in for it), [`secrets`]
//! Secrets Manager (the keys read at cold start, D32), and [`aws`] the SDK's shared set-up: one
//! HTTP client, lazy clients, request timing, and the one place that tells a busy dependency
//! from a wrong request (D1).

pub mod aws;
pub mod blob;
pub mod bus;
pub mod queue;
pub mod secrets;
pub mod store;
pub mod telephony;

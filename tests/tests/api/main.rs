//! The HTTP-level integration suite: every test runs against the local API and moto.

mod auth;
mod calls;
mod contacts;
mod datasource;
mod deletion;
mod dialing;
mod dialing_rules;
mod dialing_support;
mod envelope;
mod export_jobs;
mod exports;
mod faults;
mod files;
mod import_limits;
mod imports;
mod isolation;
mod lambda_events;
mod paging;
mod races;
mod support;
mod task_calls;
mod task_races;
mod task_recall;
mod task_states;
mod task_views;
mod tasks;

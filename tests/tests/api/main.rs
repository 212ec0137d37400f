//! The HTTP-level integration suite: every test runs against the local API and moto.

mod datasource;
mod support;
mod task_calls;
mod task_races;
mod task_recall;
mod task_states;
mod task_views;
mod tasks;

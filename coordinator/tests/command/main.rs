//! The `autoeval` command from the outside, one test binary: each module a
//! command or concern (runs, batches, the config file, the CLI, power).

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod batch;
mod calls;
mod cli;
mod common;
mod config;
mod decided;
mod docs;
mod power;
mod run;

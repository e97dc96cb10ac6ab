//! The verifier against independent oracles, one test binary.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod agreement;
mod common;
mod equality;
mod history;
mod public_reading;
mod verdicts;

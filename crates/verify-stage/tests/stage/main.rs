//! The verify stage from the outside, one test binary.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod common;
mod public_fuzz;
mod reference_regex;

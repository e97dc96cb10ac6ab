//! The generators from the outside, one test binary.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod datasets;
mod oracle_distribution;

//! The parsers from the outside, one test binary: logic and regex answers,
//! the public implementation's reading, and fuzzing.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod answers;
mod fuzz;
mod parse_logic;
mod parse_regex;
mod public_regex;

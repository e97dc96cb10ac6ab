//! The metrics against outside figures, one test binary.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod denominators;
mod paired;
mod table8;

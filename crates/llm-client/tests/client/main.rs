//! The model client from the outside, one test binary: HTTP calls, retries
//! and refusals, adaptive concurrency, batch mode and the request shapes.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

mod adaptive;
mod batch;
mod batch_shape;
mod common;
mod http;
mod refusals;
mod request_shape;

//! How a run calls its models: calls at once, time limits, attempts, and
//! the sampling a protocol may give its own defaults.

use super::within;
use autoeval_models::{defaults, ranges};
use serde::{Deserialize, Serialize};

/// How models are called.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CallArgs {
    /// Round trips in flight at once.
    #[arg(long, default_value_t = defaults::CONCURRENCY, value_parser = within(ranges::CONCURRENCY.0, ranges::CONCURRENCY.1))]
    pub concurrency: usize,
    /// Model request time limit in seconds (at most a day, a provider's batch window).
    #[arg(long, default_value_t = defaults::REQUEST_TIMEOUT_S, value_parser = within(ranges::REQUEST_TIMEOUT_S.0, ranges::REQUEST_TIMEOUT_S.1))]
    pub request_timeout_s: u64,
    /// Attempts per model call, the first included.
    #[arg(long, default_value_t = defaults::MAX_ATTEMPTS, value_parser = within(ranges::MAX_ATTEMPTS.0, ranges::MAX_ATTEMPTS.1))]
    pub max_attempts: u32,
    /// Sampling temperature: 0.1 when not given; under --protocol paper, 1
    /// for local open models.
    #[arg(long, value_parser = within(ranges::TEMPERATURE.0, ranges::TEMPERATURE.1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens per reply: 1024 when not given; under a protocol, each
    /// provider's own (none for local servers).
    #[arg(long, value_parser = within(ranges::MAX_TOKENS.0, ranges::MAX_TOKENS.1))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// The temperature when none is given and no protocol says otherwise.
pub const DEFAULT_TEMPERATURE: f64 = 0.1;

/// The token cap when none is given and no protocol says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

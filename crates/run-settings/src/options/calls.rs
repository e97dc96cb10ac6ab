//! How a run calls its models: calls at once, time limits, attempts, and
//! the sampling a protocol may give its own defaults.

use super::within;
use serde::{Deserialize, Serialize};

/// How models are called.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CallArgs {
    /// Round trips in flight at once.
    #[arg(long, default_value_t = 32, value_parser = within(1_usize, 100_000))]
    pub concurrency: usize,
    /// Model request time limit in seconds (at most a day, a provider's batch window).
    #[arg(long, default_value_t = 120, value_parser = within(1_u64, 86_400))]
    pub request_timeout_s: u64,
    /// Attempts per model call, the first included.
    #[arg(long, default_value_t = 6, value_parser = within(1_u32, 100))]
    pub max_attempts: u32,
    /// Sampling temperature: 0.1 when not given; under --protocol paper, 1
    /// for local open models.
    #[arg(long, value_parser = within(0.0_f64, 2.0))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens per reply: 1024 when not given; under a protocol, each
    /// provider's own (none for local servers).
    #[arg(long, value_parser = within(1_u32, 10_000_000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// The temperature when none is given and no protocol says otherwise.
pub const DEFAULT_TEMPERATURE: f64 = 0.1;

/// The token cap when none is given and no protocol says otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;

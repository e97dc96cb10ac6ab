//! What a call gives: its reply, or why it failed for good.

use autoeval_models::Usage;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A call that failed for good.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
pub enum CallError {
    /// The API kept failing, or refused the request.
    #[error("API failure after {attempts} attempt(s){}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Api {
        /// Last HTTP status, if a response came.
        status: Option<u16>,
        /// What went wrong, with any key removed.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The backend cannot be used as configured.
    #[error("{0}")]
    Setup(String),
    /// The backend halted: its provider refused in a way every request
    /// would repeat, or every attempt so far failed the same way.
    #[error("the backend stopped: {cause}")]
    Halted {
        /// The failure that halted it.
        cause: String,
        /// Attempts this call made before it stopped.
        attempts: u32,
    },
}

impl CallError {
    /// Attempts the call made.
    pub fn attempts(&self) -> u32 {
        match self {
            CallError::Api { attempts, .. } | CallError::Halted { attempts, .. } => *attempts,
            CallError::Setup(_) => 0,
        }
    }
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The model's text.
    pub text: String,
    /// Tokens used.
    pub usage: Usage,
    /// Cost in USD, when the price table knows the model and the server
    /// reported usage (zero when cached).
    pub cost: Option<f64>,
    /// Of the cost, what the model's thinking cost (its reasoning tokens
    /// at the output price), when it reported any and the model is priced.
    #[serde(default)]
    pub reasoning_cost: Option<f64>,
    /// Wall-clock time of the call, retries included.
    pub latency_ms: f64,
    /// Attempts made (0 when the cache answered).
    pub attempts: u32,
    /// True when the cache answered and nothing was sent.
    pub cached: bool,
    /// True when the server reported no usage (or the reply was too long to
    /// read): `usage` and `cost` are estimated from the text, four
    /// characters a token, so that the budget is still charged.
    #[serde(default)]
    pub usage_estimated: bool,
    /// True when the reply passed the size limit: its text is empty, the
    /// answer non-compliant ("answer too long").
    #[serde(default)]
    pub too_long: bool,
    /// Why the model stopped; `None` when the provider did not say.
    #[serde(default)]
    pub finish_reason: Option<autoeval_models::Finish>,
    /// True when the provider's batch API answered, and `cost` is at its price.
    #[serde(default)]
    pub batched: bool,
}

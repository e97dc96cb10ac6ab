//! What the LLM backends share and can compute without I/O: model specs,
//! generation parameters, rate-limit schedules, the interfaces of the reply
//! cache and the call observer, the response cache's key, token cost from a price
//! table users can extend, and the retry policy (exponential backoff with
//! jitter that honours Retry-After).

mod batch;
mod finish;
mod gate;
mod interfaces;
mod keys;
mod max_tokens;
mod model;
mod prices;
pub mod provider;
mod sent;
mod settings;
mod spec;
mod waits;

pub use batch::{
    BatchCall, BatchCounts, BatchEnd, BatchJournal, BatchOutcome, BatchRecord, BatchSettings,
    BatchSpend, BatchStatus, CallState, JournalBook, JournalUnavailable, LARGEST_BATCH,
};
pub use finish::Finish;
pub use gate::{estimate_tokens, Cell, LocalGate, RateGate, RateLimits, TokenHistory};
pub use interfaces::{
    AttemptOutcome, CacheFuture, CacheUnavailable, CachedReply, CallClaim, CallObserver,
    ResponseCache,
};

pub use keys::{key_help, one_line, within};
pub use max_tokens::{MaxTokens, NO_CAP};
pub use model::Model;
pub use prices::{Price, PriceTable};
pub use provider::spec_help;
pub use settings::{defaults, in_range, ranges, ModelSettings, FLEET_EXTRA_FIELDS, MODEL_KEYS};
pub use spec::{ModelSpec, SpecError};
pub use waits::{describe_waits, Observers, RateWait, WaitCause, Waits};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Sampling settings of one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationParams {
    /// Sampling temperature (the paper used 0.1 for API models).
    pub temperature: f64,
    /// Most tokens in the reply; `None` sends no cap (the server's limit).
    pub max_tokens: Option<u32>,
    /// Seed, for backends that take one.
    pub seed: Option<u64>,
    /// A reasoning model (o1/o3 style): send `max_completion_tokens` and no
    /// temperature, which such models reject.
    #[serde(default)]
    pub reasoning: bool,
    /// A system message sent before each prompt.
    #[serde(default)]
    pub system: Option<String>,
    /// How hard a reasoning model thinks (`minimal`, `low`, `medium`,
    /// `high`), sent in each API's own field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Most tokens a model may spend thinking, sent in each API's own field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// The version of its API a provider that versions requests by query
    /// (`api-version`) is asked under; `None` for its unversioned path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// More request-body fields (`top_p`, `stop`, …), sent as given; they
    /// replace fields of the same name.
    #[serde(default)]
    pub extra: BTreeMap<String, Value>,
}

impl Default for GenerationParams {
    fn default() -> GenerationParams {
        GenerationParams {
            temperature: 0.1,
            max_tokens: Some(1024),
            seed: None,
            reasoning: false,
            system: None,
            reasoning_effort: None,
            thinking_budget: None,
            api_version: None,
            extra: BTreeMap::new(),
        }
    }
}

/// Which step of the benchmark a request belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// I: formula to English.
    Informalize,
    /// A: English back to a formula.
    Autoformalize,
    /// A4: is φ0 ≡ φ1?
    Judge,
}

/// What makes one request a distinct sample: the work unit it serves, the
/// round of (A∘I)^n and the stage. Two different samples never share a
/// cached reply, even when their prompts are identical; the same sample
/// asked again (a resumed or repeated run) is answered from the cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Sample {
    /// The work unit, e.g. item id, model, prompt style and repeat joined by `|`.
    pub unit: String,
    /// Round r of (A∘I)^n, from 1 (1 for judge requests).
    pub round: u32,
    /// The step asked.
    pub stage: Stage,
}

/// The response cache's key: a SHA-256 over everything that determines a
/// reply and the sample it is, so a rerun never pays twice, a changed prompt
/// never hits, and no unit or round is answered with another's reply.
pub fn cache_key(
    spec: &ModelSpec,
    prompt: &str,
    params: &GenerationParams,
    sample: &Sample,
) -> String {
    let mut canonical = serde_json::json!({
        "backend": spec.backend(),
        "model": spec.model(),
        "url": spec.base_url().unwrap_or(""),
        "prompt": prompt,
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
        "seed": params.seed,
        "unit": sample.unit,
        "round": sample.round,
        "stage": sample.stage,
    });
    // Only when set, so that the keys of plain requests stay what they were.
    if params.reasoning {
        canonical["reasoning"] = Value::Bool(true);
    }
    if let Some(system) = &params.system {
        canonical["system"] = Value::String(system.clone());
    }
    if let Some(effort) = &params.reasoning_effort {
        canonical["reasoning_effort"] = Value::String(effort.clone());
    }
    if let Some(budget) = params.thinking_budget {
        canonical["thinking_budget"] = Value::from(budget);
    }
    if !params.extra.is_empty() {
        canonical["extra"] = serde_json::to_value(&params.extra).unwrap_or_default();
    }
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Tokens of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens: every output token billed, thinking included.
    pub completion_tokens: u64,
    /// Of the completion tokens, those spent thinking (0 when the provider
    /// reports none).
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// `prompt` and `completion` tokens, none of them reported as thinking.
    pub fn new(prompt: u64, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            reasoning_tokens: 0,
        }
    }
}

/// When to retry a failed call and how long to wait.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// Wait before the first retry.
    pub base_delay: Duration,
    /// Longest wait between attempts.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: defaults::MAX_ATTEMPTS,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

/// True for HTTP statuses worth retrying: 408, 429 and 5xx.
pub fn retryable_status(status: u16) -> bool {
    status == 408 || status == 429 || (500..600).contains(&status)
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` (attempt counts from 1) after a
    /// retryable failure: the server's Retry-After when it gave one,
    /// otherwise exponential backoff with full jitter; `unit` is a uniform
    /// draw in [0, 1).
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>, unit: f64) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
        let cap = exp.min(self.max_delay);
        cap.mul_f64(unit.clamp(0.0, 1.0))
    }

    /// How long a backend may be told "later" (429, 5xx, no connection)
    /// with no answer at all before it halts: as long as one request could
    /// wait through all its attempts at the longest wait. So a provider
    /// that never answers costs a run this long, whatever its size.
    pub fn patience(&self) -> Duration {
        self.max_delay
            .saturating_mul(self.max_attempts.saturating_sub(1).max(1))
    }
}

/// The longest Retry-After honoured: a server's header is a number from
/// outside, and no wait longer than a provider's batch window makes sense.
pub const LONGEST_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Reads a Retry-After header: delay seconds or an HTTP date, at most
/// [`LONGEST_RETRY_AFTER`].
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        let longest = LONGEST_RETRY_AFTER.as_secs_f64();
        return (secs >= 0.0 && !secs.is_nan()).then(|| Duration::from_secs_f64(secs.min(longest)));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(LONGEST_RETRY_AFTER),
    )
}

//! What the LLM backends share and can compute without I/O: model specs,
//! generation parameters, the response cache's key, token cost from a price
//! table users can extend, and the retry policy (exponential backoff with
//! jitter that honours Retry-After).

mod spec;

pub use spec::{ModelSpec, SpecError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Sampling settings of one request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationParams {
    /// Sampling temperature (the paper used 0.1 for API models).
    pub temperature: f64,
    /// Most tokens in the reply.
    pub max_tokens: u32,
    /// Seed, for backends that take one.
    pub seed: Option<u64>,
}

impl Default for GenerationParams {
    fn default() -> GenerationParams {
        GenerationParams {
            temperature: 0.1,
            max_tokens: 1024,
            seed: None,
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
    let canonical = serde_json::json!({
        "backend": spec.backend(),
        "model": spec.model(),
        "url": match spec { ModelSpec::OpenaiCompatible { base_url, .. } => base_url.as_str(), _ => "" },
        "prompt": prompt,
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
        "seed": params.seed,
        "unit": sample.unit,
        "round": sample.round,
        "stage": sample.stage,
    });
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Tokens of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

/// Dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
}

/// Prices by model name; users extend it with a JSON object of the same shape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PriceTable(pub BTreeMap<String, Price>);

impl PriceTable {
    /// Published list prices of a few common models (USD per million tokens).
    pub fn builtin() -> PriceTable {
        let rows = [
            ("gpt-4o", 2.5, 10.0),
            ("gpt-4o-mini", 0.15, 0.6),
            ("gpt-3.5-turbo", 0.5, 1.5),
            ("claude-3-5-sonnet-latest", 3.0, 15.0),
            ("claude-3-5-haiku-latest", 0.8, 4.0),
            ("reference", 0.0, 0.0),
        ];
        PriceTable(
            rows.iter()
                .map(|&(m, i, o)| {
                    (
                        m.to_string(),
                        Price {
                            input: i,
                            output: o,
                        },
                    )
                })
                .collect(),
        )
    }

    /// This table with the entries of a JSON object `{"model": {"input": …, "output": …}}` added or replaced.
    pub fn extended_with(mut self, json: &str) -> Result<PriceTable, serde_json::Error> {
        let extra: PriceTable = serde_json::from_str(json)?;
        self.0.extend(extra.0);
        Ok(self)
    }

    /// Cost of `usage` on `model`, when the table knows the model.
    pub fn cost(&self, model: &str, usage: Usage) -> Option<f64> {
        let p = self.0.get(model)?;
        Some(
            (usage.prompt_tokens as f64 * p.input + usage.completion_tokens as f64 * p.output)
                / 1e6,
        )
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
            max_attempts: 6,
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
}

/// Reads a Retry-After header: delay seconds or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

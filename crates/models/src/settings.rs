//! Per-model settings: generation parameters and request shape, from the
//! config file's `[model."SPEC"]` tables and from a spec's `?key=value` tail.

use crate::{GenerationParams, MaxTokens, SpecError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// How one model is asked. Unset fields keep the run's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModelSettings {
    /// Sampling temperature (not sent to reasoning models).
    pub temperature: Option<f64>,
    /// Most tokens per reply (`max_completion_tokens` for reasoning
    /// models), or `"none"` to send no cap.
    pub max_tokens: Option<MaxTokens>,
    /// Seed, for servers that take one.
    pub seed: Option<u64>,
    /// A reasoning model (o1/o3 style) that rejects `max_tokens` and `temperature`.
    pub reasoning: Option<bool>,
    /// A system message sent before each prompt.
    pub system: Option<String>,
    /// How hard a reasoning model thinks: `minimal`, `low`, `medium` or
    /// `high` (OpenAI's `reasoning_effort` and `reasoning.effort`, Gemini's
    /// `thinkingLevel`); marks the model a reasoning model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Most tokens a model may spend thinking (Gemini's `thinkingBudget`,
    /// Anthropic's and Bedrock's `thinking.budget_tokens`); 0 turns
    /// thinking off where the model allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_budget: Option<u32>,
    /// The `api-version` of a provider that versions its API by query (an
    /// Azure deployment's path); unset, its unversioned `v1` path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// Requests in flight at once to this model.
    pub concurrency: Option<usize>,
    /// Time limit of one request, in seconds.
    pub request_timeout_s: Option<u64>,
    /// Attempts per call, the first included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// The largest reply read, in bytes; a longer one is a non-compliant
    /// "answer too long" [default: 1 MiB].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reply_bytes: Option<usize>,
    /// Requests a minute the provider allows this model, across every worker.
    pub requests_per_minute: Option<u32>,
    /// Prompt plus completion tokens a minute the provider allows this model, across every worker.
    pub tokens_per_minute: Option<u64>,
    /// Send this model's calls through the provider's batch API (OpenAI's
    /// Batch API, Anthropic's Message Batches): half the price, answers within a day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<bool>,
    /// Most requests in one batch [default: 10000].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<usize>,
    /// Longest wait, in seconds, for a batch to fill before it is sent [default: 60].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_wait_s: Option<f64>,
    /// Seconds between two polls of a batch in flight [default: 30].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_poll_s: Option<f64>,
    /// Whether concurrency adapts to the provider (backs off on 429 and 5xx,
    /// grows while calls succeed, up to `concurrency`) [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_concurrency: Option<bool>,
    /// More request-body fields sent as given (`top_p`, `stop`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

impl ModelSettings {
    /// Settings from a spec's tail, `key=value&key=value`: the keys above
    /// (kebab or snake case) set those settings, any other key is an extra
    /// body field. A value is read as JSON when it is JSON (`0.9`, `true`,
    /// `["\n"]`), as a string otherwise.
    pub fn from_query(spec: &str, query: &str) -> Result<ModelSettings, SpecError> {
        let bad = |why: String| SpecError {
            spec: spec.to_string(),
            why,
            forms: crate::provider::forms(),
        };
        let mut out = ModelSettings::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, raw) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("{pair:?} is not key=value")))?;
            let value: Value =
                serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
            let wrong = |what: &str| bad(format!("{key} must be {what}, not {raw:?}"));
            match key.replace('_', "-").as_str() {
                "temperature" => {
                    out.temperature = Some(value.as_f64().ok_or_else(|| wrong("a number"))?)
                }
                "max-tokens" => {
                    out.max_tokens =
                        Some(serde_json::from_value(value).map_err(|_| {
                            wrong(&format!("a whole number or {:?}", crate::NO_CAP))
                        })?)
                }
                "seed" => out.seed = Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?),
                "reasoning" => {
                    out.reasoning = Some(value.as_bool().ok_or_else(|| wrong("true or false"))?)
                }
                "system" => out.system = Some(raw.to_string()),
                "reasoning-effort" => out.reasoning_effort = Some(effort(raw).map_err(&bad)?),
                "thinking-budget" => {
                    out.thinking_budget =
                        Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "api-version" => out.api_version = Some(raw.to_string()),
                "concurrency" => {
                    out.concurrency = Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "request-timeout-s" => {
                    out.request_timeout_s =
                        Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "max-attempts" => {
                    out.max_attempts = Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "max-reply-bytes" => {
                    out.max_reply_bytes =
                        Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "requests-per-minute" => {
                    out.requests_per_minute =
                        Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "tokens-per-minute" => {
                    out.tokens_per_minute =
                        Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "batch" => out.batch = Some(value.as_bool().ok_or_else(|| wrong("true or false"))?),
                "batch-size" => {
                    out.batch_size = Some(as_int(&value).ok_or_else(|| wrong("a whole number"))?)
                }
                "batch-wait-s" => {
                    out.batch_wait_s = Some(value.as_f64().ok_or_else(|| wrong("a number"))?)
                }
                "batch-poll-s" => {
                    out.batch_poll_s = Some(value.as_f64().ok_or_else(|| wrong("a number"))?)
                }
                "adaptive-concurrency" => {
                    out.adaptive_concurrency =
                        Some(value.as_bool().ok_or_else(|| wrong("true or false"))?)
                }
                _ => {
                    out.extra.insert(key.to_string(), value);
                }
            }
        }
        Ok(out)
    }

    /// `self` with every setting that `over` sets replaced; extras merge.
    pub fn overridden_by(mut self, over: ModelSettings) -> ModelSettings {
        self.extra.extend(over.extra);
        ModelSettings {
            temperature: over.temperature.or(self.temperature),
            max_tokens: over.max_tokens.or(self.max_tokens),
            seed: over.seed.or(self.seed),
            reasoning: over.reasoning.or(self.reasoning),
            system: over.system.or(self.system),
            reasoning_effort: over.reasoning_effort.or(self.reasoning_effort),
            thinking_budget: over.thinking_budget.or(self.thinking_budget),
            api_version: over.api_version.or(self.api_version),
            concurrency: over.concurrency.or(self.concurrency),
            request_timeout_s: over.request_timeout_s.or(self.request_timeout_s),
            max_attempts: over.max_attempts.or(self.max_attempts),
            max_reply_bytes: over.max_reply_bytes.or(self.max_reply_bytes),
            requests_per_minute: over.requests_per_minute.or(self.requests_per_minute),
            tokens_per_minute: over.tokens_per_minute.or(self.tokens_per_minute),
            batch: over.batch.or(self.batch),
            batch_size: over.batch_size.or(self.batch_size),
            batch_wait_s: over.batch_wait_s.or(self.batch_wait_s),
            batch_poll_s: over.batch_poll_s.or(self.batch_poll_s),
            adaptive_concurrency: over.adaptive_concurrency.or(self.adaptive_concurrency),
            extra: self.extra,
        }
    }

    /// How this model's calls are batched, when they are.
    pub fn batching(&self) -> Option<crate::BatchSettings> {
        if self.batch != Some(true) {
            return None;
        }
        let default = crate::BatchSettings::default();
        let seconds = |s: Option<f64>, or: Duration| {
            s.filter(|s| s.is_finite() && *s >= 0.0)
                .map_or(or, Duration::from_secs_f64)
        };
        Some(crate::BatchSettings {
            size: self.batch_size.unwrap_or(default.size).max(1),
            wait: seconds(self.batch_wait_s, default.wait),
            poll: seconds(self.batch_poll_s, default.poll),
        })
    }

    /// The generation parameters these settings make of the run's `base`
    /// (the spec's [`crate::ModelSpec::params`] adds what its name says).
    pub(crate) fn params(&self, base: &GenerationParams) -> GenerationParams {
        let mut extra = base.extra.clone();
        extra.extend(self.extra.clone());
        GenerationParams {
            temperature: self.temperature.unwrap_or(base.temperature),
            max_tokens: self.max_tokens.map_or(base.max_tokens, MaxTokens::cap),
            seed: self.seed.or(base.seed),
            // An effort is asked only of a reasoning model.
            reasoning: self
                .reasoning
                .unwrap_or(base.reasoning || self.reasoning_effort.is_some()),
            system: self.system.clone().or_else(|| base.system.clone()),
            reasoning_effort: self
                .reasoning_effort
                .clone()
                .or_else(|| base.reasoning_effort.clone()),
            thinking_budget: self.thinking_budget.or(base.thinking_budget),
            api_version: self
                .api_version
                .clone()
                .or_else(|| base.api_version.clone()),
            extra,
        }
    }
}

/// The efforts a reasoning model is asked at.
pub const REASONING_EFFORTS: [&str; 5] = ["none", "minimal", "low", "medium", "high"];

/// `raw` as a reasoning effort, or why not.
fn effort(raw: &str) -> Result<String, String> {
    if REASONING_EFFORTS.contains(&raw) {
        Ok(raw.to_string())
    } else {
        Err(format!(
            "reasoning-effort must be one of {}, not {raw:?}",
            REASONING_EFFORTS.join(", ")
        ))
    }
}

impl ModelSettings {
    /// Why these settings cannot be sent, when they cannot: an effort
    /// that is none of [`REASONING_EFFORTS`] (a config file's table is read
    /// by serde, which does not check it).
    pub fn invalid(&self) -> Option<String> {
        self.reasoning_effort
            .as_deref()
            .and_then(|e| effort(e).err())
    }
}

fn as_int<T: TryFrom<u64>>(v: &Value) -> Option<T> {
    v.as_u64().and_then(|n| T::try_from(n).ok())
}

/// The extra request-body fields a fleet run's settings may carry: sampling
/// parameters only, never a field that changes which model is asked, how
/// many answers are paid for, or where the reply goes.
pub const FLEET_EXTRA_FIELDS: [&str; 9] = [
    "top_p",
    "top_k",
    "min_p",
    "presence_penalty",
    "frequency_penalty",
    "repetition_penalty",
    "stop",
    "logit_bias",
    "response_format",
];

/// The largest value of one extra field, and of the system message, in bytes.
const FLEET_FIELD_BYTES: usize = 4096;
const FLEET_SYSTEM_BYTES: usize = 64 * 1024;

impl ModelSettings {
    /// Why these settings, as a fleet run registered them, go past what a
    /// worker takes from a run (see [`FLEET_EXTRA_FIELDS`]); `None` when they
    /// do not. A field the worker's own spec (`model`'s `?…` tail) sets is its own.
    pub fn past_fleet_bounds(&self, model: &crate::Model) -> Option<String> {
        let own = &model.own_settings().extra;
        for (key, value) in &self.extra {
            if own.get(key) == Some(value) {
                continue;
            }
            if !FLEET_EXTRA_FIELDS.contains(&key.as_str()) {
                return Some(format!(
                    "the extra request field {key:?} is not one a fleet run may set (only {})",
                    FLEET_EXTRA_FIELDS.join(", ")
                ));
            }
            if value.to_string().len() > FLEET_FIELD_BYTES {
                return Some(format!(
                    "the extra request field {key:?} is longer than {FLEET_FIELD_BYTES} bytes"
                ));
            }
        }
        let out_of = |what: &str, range: &str| Some(format!("{what} is out of range ({range})"));
        if self.temperature.is_some_and(|t| !(0.0..=2.0).contains(&t)) {
            return out_of("temperature", "0..=2");
        }
        if self
            .max_tokens
            .and_then(MaxTokens::cap)
            .is_some_and(|t| t > 10_000_000)
        {
            return out_of("max-tokens", "at most 10000000");
        }
        if self.thinking_budget.is_some_and(|t| t > 10_000_000) {
            return out_of("thinking-budget", "at most 10000000");
        }
        if let Some(why) = self.invalid() {
            return Some(why);
        }
        let version_ok =
            |v: &String| v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if self.api_version.as_ref().is_some_and(|v| !version_ok(v)) {
            return out_of("api-version", "letters, digits and '-', at most 32");
        }
        if self.request_timeout_s.is_some_and(|t| t > 86_400) {
            return out_of("request-timeout-s", "at most 86400");
        }
        if self.max_attempts.is_some_and(|n| n == 0 || n > 100) {
            return out_of("max-attempts", "1..=100");
        }
        if self
            .batch_size
            .is_some_and(|n| n == 0 || n > crate::batch::LARGEST_BATCH)
        {
            return out_of("batch-size", "1..=100000");
        }
        let day = |s: Option<f64>| s.is_some_and(|s| !(0.0..=86_400.0).contains(&s));
        if day(self.batch_wait_s) || day(self.batch_poll_s) {
            return out_of("batch-wait-s and batch-poll-s", "0..=86400");
        }
        if self.max_reply_bytes.is_some_and(|b| b > 64 << 20) {
            return out_of("max-reply-bytes", "at most 64 MiB");
        }
        if self
            .system
            .as_ref()
            .is_some_and(|s| s.len() > FLEET_SYSTEM_BYTES)
        {
            return out_of("the system message", "at most 64 KiB");
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_sets_known_keys_and_passes_the_rest_as_body_fields() {
        let s = ModelSettings::from_query(
            "x",
            "reasoning=true&max_tokens=50&top_p=0.9&stop=[\"\\n\"]&user=me",
        )
        .unwrap();
        assert_eq!(s.reasoning, Some(true));
        assert_eq!(s.max_tokens, Some(MaxTokens::Cap(50)));
        assert_eq!(s.extra["top_p"], serde_json::json!(0.9));
        assert_eq!(s.extra["stop"], serde_json::json!(["\n"]));
        assert_eq!(s.extra["user"], serde_json::json!("me"));
        assert!(ModelSettings::from_query("x", "temperature=hot").is_err());
        assert!(ModelSettings::from_query("x", "seed").is_err());
        let limited =
            ModelSettings::from_query("x", "requests_per_minute=600&tokens-per-minute=90000")
                .unwrap();
        assert_eq!(limited.requests_per_minute, Some(600));
        assert_eq!(limited.tokens_per_minute, Some(90_000));
        assert!(limited.extra.is_empty());
    }

    #[test]
    fn later_settings_win_and_extras_merge() {
        let file = ModelSettings::from_query("x", "temperature=0.5&top_p=0.9&seed=1").unwrap();
        let spec = ModelSettings::from_query("x", "temperature=0&stop=END").unwrap();
        let merged = file.overridden_by(spec);
        let p = merged.params(&GenerationParams::default());
        assert_eq!(p.temperature, 0.0);
        assert_eq!(p.seed, Some(1));
        assert_eq!(p.extra.len(), 2);
        assert_eq!(p.max_tokens, GenerationParams::default().max_tokens);
    }

    #[test]
    fn a_fleet_run_may_set_sampling_fields_but_not_which_model_or_how_many() {
        let mut s = ModelSettings::default();
        s.extra.insert("top_p".into(), Value::from(0.9));
        let reference: crate::Model = "reference".parse().unwrap();
        assert_eq!(s.past_fleet_bounds(&reference), None);
        for key in ["model", "n", "stream", "messages"] {
            let mut bad = s.clone();
            bad.extra.insert(key.into(), Value::from(1));
            let why = bad.past_fleet_bounds(&reference).expect("refused");
            assert!(why.contains(key), "{why}");
        }
        let mut long = s.clone();
        long.extra
            .insert("stop".into(), Value::from("x".repeat(5000)));
        assert!(long.past_fleet_bounds(&reference).is_some());
        let hot = ModelSettings {
            temperature: Some(9.0),
            ..ModelSettings::default()
        };
        assert!(hot
            .past_fleet_bounds(&reference)
            .is_some_and(|w| w.contains("temperature")));
        // A field the worker's own spec sets is the worker's, not the run's.
        let mut own = ModelSettings::default();
        own.extra.insert("n".into(), Value::from(2));
        let spec: crate::Model = "openai-compatible:m@http://127.0.0.1:1/v1?n=2"
            .parse()
            .unwrap();
        assert_eq!(own.past_fleet_bounds(&spec), None);
    }
}

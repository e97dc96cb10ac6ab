//! Per-model settings: generation parameters and request shape, from the
//! config file's `[model."SPEC"]` tables and from a spec's `?key=value` tail.

use crate::keys::within;
use crate::{GenerationParams, MaxTokens, SpecError};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// How one model is asked. Unset fields keep the run's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModelSettings {
    /// Sampling temperature (not sent to reasoning models).
    #[arg(long, value_parser = within(ranges::TEMPERATURE.0, ranges::TEMPERATURE.1))]
    pub temperature: Option<f64>,
    /// Most tokens per reply (`max_completion_tokens` for reasoning
    /// models), or `"none"` to send no cap.
    #[arg(long, value_parser = crate::keys::max_tokens)]
    pub max_tokens: Option<MaxTokens>,
    /// Seed, for servers that take one.
    #[arg(long)]
    pub seed: Option<u64>,
    /// A reasoning model (o1/o3 style) that rejects `max_tokens` and `temperature`.
    #[arg(long)]
    pub reasoning: Option<bool>,
    /// A system message sent before each prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// How hard a reasoning model thinks: `minimal`, `low`, `medium` or
    /// `high` (OpenAI's `reasoning_effort` and `reasoning.effort`, Gemini's
    /// `thinkingLevel`); marks the model a reasoning model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(REASONING_EFFORTS))]
    pub reasoning_effort: Option<String>,
    /// Most tokens a model may spend thinking (Gemini's `thinkingBudget`,
    /// Anthropic's and Bedrock's `thinking.budget_tokens`); 0 turns
    /// thinking off where the model allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::THINKING_BUDGET.0, ranges::THINKING_BUDGET.1))]
    pub thinking_budget: Option<u32>,
    /// The `api-version` of a provider that versions its API by query (an
    /// Azure deployment's path); unset, its unversioned `v1` path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub api_version: Option<String>,
    /// Requests in flight at once to a model.
    #[arg(long, value_parser = within(ranges::CONCURRENCY.0, ranges::CONCURRENCY.1))]
    pub concurrency: Option<usize>,
    /// Time limit of one request, in seconds (at most a day, a provider's batch window).
    #[arg(long, value_parser = within(ranges::REQUEST_TIMEOUT_S.0, ranges::REQUEST_TIMEOUT_S.1))]
    pub request_timeout_s: Option<u64>,
    /// Attempts per call, the first included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::MAX_ATTEMPTS.0, ranges::MAX_ATTEMPTS.1))]
    pub max_attempts: Option<u32>,
    /// The largest reply read, in bytes; a longer one is a non-compliant
    /// "answer too long" [default: 1 MiB].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::MAX_REPLY_BYTES.0, ranges::MAX_REPLY_BYTES.1))]
    pub max_reply_bytes: Option<usize>,
    /// Requests a minute the provider allows this model, across every worker.
    #[arg(long, value_parser = within(ranges::REQUESTS_PER_MINUTE.0, ranges::REQUESTS_PER_MINUTE.1))]
    pub requests_per_minute: Option<u32>,
    /// Prompt plus completion tokens a minute the provider allows this model, across every worker.
    #[arg(long, value_parser = within(ranges::TOKENS_PER_MINUTE.0, ranges::TOKENS_PER_MINUTE.1))]
    pub tokens_per_minute: Option<u64>,
    /// Send this model's calls through the provider's batch API (OpenAI's
    /// Batch API, Anthropic's Message Batches): half the price, answers within a day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub batch: Option<bool>,
    /// Most requests in one batch [default: 10000].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::BATCH_SIZE.0, ranges::BATCH_SIZE.1))]
    pub batch_size: Option<usize>,
    /// Longest wait, in seconds, for a batch to fill before it is sent [default: 60].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::BATCH_SECONDS.0, ranges::BATCH_SECONDS.1))]
    pub batch_wait_s: Option<f64>,
    /// Seconds between two polls of a batch in flight [default: 30].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long, value_parser = within(ranges::BATCH_SECONDS.0, ranges::BATCH_SECONDS.1))]
    pub batch_poll_s: Option<f64>,
    /// Whether concurrency adapts to the provider (backs off on 429 and 5xx,
    /// grows while calls succeed, up to `concurrency`) [default: true].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[arg(long)]
    pub adaptive_concurrency: Option<bool>,
    /// More request-body fields sent as given (`top_p`, `stop`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[arg(skip)]
    pub extra: BTreeMap<String, Value>,
}

impl ModelSettings {
    /// Settings from a spec's tail, `key=value&key=value`: the keys above
    /// (kebab or snake case) set those settings, any other key is an extra
    /// body field. A value is read as JSON when it is JSON (`0.9`, `true`,
    /// `["\n"]`), as a string otherwise.
    pub fn from_query(spec: &str, query: &str) -> Result<ModelSettings, SpecError> {
        // The spec's form is right: its tail is what to fix.
        let bad = |why: String| SpecError {
            spec: spec.to_string(),
            why,
            forms: String::new(),
        };
        let (mut keys, mut extra) = (Vec::new(), BTreeMap::new());
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, raw) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("{pair:?} is not key=value")))?;
            if MODEL_KEYS.contains(&key.replace('_', "-").as_str()) {
                keys.push((key.to_string(), raw.to_string()));
            } else {
                let value =
                    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()));
                extra.insert(key.to_string(), value);
            }
        }
        let mut out = ModelSettings::from_keys(keys).map_err(bad)?;
        out.extra = extra;
        Ok(out)
    }

    /// The one merge of settings: `self` with every setting `over` sets
    /// replaced, field by field, and the extra body fields of both (`over`'s
    /// winning a name both set). A field added to the settings merges
    /// without a line here.
    pub fn combine(self, over: ModelSettings) -> ModelSettings {
        let as_table = |s: &ModelSettings| match serde_json::to_value(s) {
            Ok(Value::Object(table)) => table,
            _ => serde_json::Map::new(),
        };
        let (mut merged, over_table) = (as_table(&self), as_table(&over));
        for (key, value) in over_table {
            if !value.is_null() && key != "extra" {
                merged.insert(key, value);
            }
        }
        let mut extra = self.extra;
        extra.extend(over.extra);
        let mut out: ModelSettings =
            serde_json::from_value(Value::Object(merged)).unwrap_or_default();
        out.extra = extra;
        out
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

/// The range of each per-model key that is a number, declared once: the
/// run-wide flag of the same name (`--request-timeout-s`, …) checks the
/// same range, and both say so in the same words.
pub mod ranges {
    /// `concurrency`: calls in flight at once.
    pub const CONCURRENCY: (usize, usize) = (1, 100_000);
    /// `request-timeout-s`: at most a day, a provider's batch window.
    pub const REQUEST_TIMEOUT_S: (u64, u64) = (1, 86_400);
    /// `max-attempts`: the first included.
    pub const MAX_ATTEMPTS: (u32, u32) = (1, 100);
    /// `temperature`.
    pub const TEMPERATURE: (f64, f64) = (0.0, 2.0);
    /// `max-tokens` (or `none`).
    pub const MAX_TOKENS: (u32, u32) = (1, 10_000_000);
    /// `thinking-budget`: 0 turns thinking off where the model allows it.
    pub const THINKING_BUDGET: (u32, u32) = (0, 10_000_000);
    /// `max-reply-bytes`.
    pub const MAX_REPLY_BYTES: (usize, usize) = (1, 64 << 20);
    /// `requests-per-minute`.
    pub const REQUESTS_PER_MINUTE: (u32, u32) = (1, 100_000_000);
    /// `tokens-per-minute`.
    pub const TOKENS_PER_MINUTE: (u64, u64) = (1, 100_000_000_000);
    /// `batch-size`.
    pub const BATCH_SIZE: (usize, usize) = (1, crate::batch::LARGEST_BATCH);
    /// `batch-wait-s` and `batch-poll-s`: at most a day.
    pub const BATCH_SECONDS: (f64, f64) = (0.0, 86_400.0);
}

/// The defaults of the call settings every model has, each written once.
pub mod defaults {
    /// Calls in flight at once.
    pub const CONCURRENCY: usize = 32;
    /// A request's time limit, in seconds.
    pub const REQUEST_TIMEOUT_S: u64 = 120;
    /// Attempts per call, the first included.
    pub const MAX_ATTEMPTS: u32 = 6;
}

/// `value` checked against `range`, in the words the flags' parser uses:
/// `0 is out of range: it must lie in 1..=86400`.
pub fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    value: T,
    (low, high): (T, T),
) -> Result<T, String> {
    if low <= value && value <= high {
        Ok(value)
    } else {
        Err(format!(
            "{value} is out of range: it must lie in {low}..={high}"
        ))
    }
}

/// Every per-model key, as a spec's `?key=value` tail and a config file's
/// `[model."SPEC"]` table spell it (a test holds it to the fields).
pub const MODEL_KEYS: [&str; 19] = [
    "temperature",
    "max-tokens",
    "seed",
    "reasoning",
    "system",
    "reasoning-effort",
    "thinking-budget",
    "api-version",
    "concurrency",
    "request-timeout-s",
    "max-attempts",
    "max-reply-bytes",
    "requests-per-minute",
    "tokens-per-minute",
    "batch",
    "batch-size",
    "batch-wait-s",
    "batch-poll-s",
    "adaptive-concurrency",
];

/// The efforts a reasoning model is asked at.
pub const REASONING_EFFORTS: [&str; 5] = ["none", "minimal", "low", "medium", "high"];

impl ModelSettings {
    /// Why these settings cannot be sent, when they cannot: read back
    /// through the settings' own flag parser, a number out of its key's
    /// range ([`ranges`]) or an effort that is none of
    /// [`REASONING_EFFORTS`] is refused in the flag's words, naming it. The
    /// check of the settings a fleet run registered.
    pub fn invalid(&self) -> Option<String> {
        ModelSettings::from_keys(self.as_keys()).err()
    }
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
        if let Some(why) = self.invalid() {
            return Some(why);
        }
        let out_of = |what: &str, range: &str| Some(format!("{what} is out of range ({range})"));
        let version_ok =
            |v: &String| v.len() <= 32 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if self.api_version.as_ref().is_some_and(|v| !version_ok(v)) {
            return out_of("api-version", "letters, digits and '-', at most 32");
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

    /// Settings with every key set, each to a value within its range.
    fn every_key_set() -> ModelSettings {
        ModelSettings {
            temperature: Some(0.5),
            max_tokens: Some(MaxTokens::Cap(99)),
            seed: Some(7),
            reasoning: Some(true),
            system: Some("Be brief".into()),
            reasoning_effort: Some("low".into()),
            thinking_budget: Some(2048),
            api_version: Some("2025-01-01".into()),
            concurrency: Some(3),
            request_timeout_s: Some(30),
            max_attempts: Some(2),
            max_reply_bytes: Some(1000),
            requests_per_minute: Some(60),
            tokens_per_minute: Some(9000),
            batch: Some(true),
            batch_size: Some(10),
            batch_wait_s: Some(1.5),
            batch_poll_s: Some(2.5),
            adaptive_concurrency: Some(false),
            extra: BTreeMap::new(),
        }
    }

    #[test]
    fn every_field_is_a_key_of_a_specs_tail_and_of_a_config_table() {
        let all = every_key_set();
        let Value::Object(fields) = serde_json::to_value(&all).unwrap() else {
            panic!("settings are a table");
        };
        let query: Vec<String> = fields
            .iter()
            .filter(|(k, _)| *k != "extra")
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect();
        let mut keys: Vec<String> = query
            .iter()
            .map(|p| p.split('=').next().unwrap().replace('_', "-"))
            .collect();
        keys.sort();
        let mut listed = MODEL_KEYS.map(String::from).to_vec();
        listed.sort();
        assert_eq!(keys, listed, "MODEL_KEYS is every field");
        let read = ModelSettings::from_query("x", &query.join("&")).unwrap();
        assert!(
            read.extra.is_empty(),
            "a field read as a body field: {:?}",
            read.extra
        );
        assert_eq!(read, all);
        let table: ModelSettings = serde_json::from_value(Value::Object(fields)).unwrap();
        assert_eq!(table, all);
    }

    #[test]
    fn a_value_out_of_its_range_is_refused_as_the_flag_refuses_it() {
        for (pair, words) in [
            (
                "request-timeout-s=0",
                "request-timeout-s: 0 is out of range: it must lie in 1..=86400",
            ),
            (
                "max-attempts=0",
                "max-attempts: 0 is out of range: it must lie in 1..=100",
            ),
            ("concurrency=0", "concurrency: 0 is out of range"),
            (
                "temperature=3",
                "temperature: 3 is out of range: it must lie in 0..=2",
            ),
            ("max-tokens=0", "max-tokens: 0 is out of range"),
            (
                "thinking-budget=20000000",
                "thinking-budget: 20000000 is out of range",
            ),
            ("max-reply-bytes=0", "max-reply-bytes: 0 is out of range"),
            (
                "requests-per-minute=0",
                "requests-per-minute: 0 is out of range",
            ),
            (
                "tokens-per-minute=0",
                "tokens-per-minute: 0 is out of range",
            ),
            ("batch-size=0", "batch-size: 0 is out of range"),
            (
                "batch-wait-s=100000",
                "batch-wait-s: 100000 is out of range",
            ),
            ("batch-poll-s=-1", "batch-poll-s: -1 is out of range"),
            ("reasoning-effort=max", "possible values: none, minimal"),
        ] {
            let why = ModelSettings::from_query("x", pair)
                .unwrap_err()
                .to_string();
            // The flag's parser names the flag, then says why.
            let key = pair.split('=').next().unwrap();
            let words = words.strip_prefix(&format!("{key}: ")).unwrap_or(words);
            assert!(why.contains(&format!("'--{key} <")), "{pair}: {why}");
            assert!(why.contains(words), "{pair}: {why}");
        }
        // The flag's own parser says the same words.
        assert_eq!(
            in_range(0_u64, ranges::REQUEST_TIMEOUT_S).unwrap_err(),
            "0 is out of range: it must lie in 1..=86400"
        );
    }

    #[test]
    fn the_merge_takes_every_field_set_over_and_keeps_the_rest() {
        let all = every_key_set();
        assert_eq!(ModelSettings::default().combine(all.clone()), all);
        assert_eq!(all.clone().combine(ModelSettings::default()), all);
        let over = ModelSettings {
            request_timeout_s: Some(5),
            ..ModelSettings::default()
        };
        let merged = all.clone().combine(over);
        assert_eq!(merged.request_timeout_s, Some(5));
        assert_eq!(
            ModelSettings {
                request_timeout_s: all.request_timeout_s,
                ..merged
            },
            all
        );
    }

    #[test]
    fn later_settings_win_and_extras_merge() {
        let file = ModelSettings::from_query("x", "temperature=0.5&top_p=0.9&seed=1").unwrap();
        let spec = ModelSettings::from_query("x", "temperature=0&stop=END").unwrap();
        let merged = file.combine(spec);
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

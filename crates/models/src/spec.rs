//! Model specs as users write them on the command line.

use crate::ModelSettings;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Which model answers, and through which backend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "backend", rename_all = "kebab-case")]
pub enum ModelSpec {
    /// The built-in deterministic model: its round trip is exact.
    Reference,
    /// The reference model with App. G errors injected into `rate` of the items.
    ReferenceNoisy {
        /// Fraction of items, 0 to 1.
        rate: f64,
    },
    /// A judge (A4) that answers like the reference model's verifier but
    /// gives the opposite answer for `rate` of the pairs, chosen by a hash of
    /// the prompt: a judge with a known error rate. Other prompts it answers
    /// as `reference`.
    ReferenceJudgeNoisy {
        /// Fraction of judgements flipped, 0 to 1.
        rate: f64,
    },
    /// The reference model dressing `rate` of its formulas in prose, ASCII
    /// notation or an equation: answers that strict and lenient reading tell apart.
    ReferenceChatty {
        /// Fraction of autoformalization answers dressed, 0 to 1.
        rate: f64,
    },
    /// OpenAI's chat completions.
    Openai {
        /// Model name, e.g. `gpt-4o`.
        model: String,
    },
    /// Anthropic's messages API.
    Anthropic {
        /// Model name.
        model: String,
    },
    /// Any OpenAI-compatible server (vLLM, Ollama, llama.cpp, TGI, the mock server).
    OpenaiCompatible {
        /// Model name the server expects.
        model: String,
        /// Base URL, e.g. `http://127.0.0.1:8000/v1`.
        base_url: String,
    },
}

/// Why a model spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid model {spec:?}: {why}; expected reference, reference-noisy:RATE, reference-judge-noisy:RATE, reference-chatty:RATE, openai:MODEL, anthropic:MODEL or openai-compatible:MODEL@URL, optionally followed by ?key=value&… settings")]
pub struct SpecError {
    /// The spec as given.
    pub spec: String,
    /// What is wrong with it.
    pub why: String,
}

impl ModelSpec {
    /// A spec as written, with its optional `?key=value&…` tail of settings
    /// (`openai:o3-mini?reasoning=true`, `openai-compatible:m@URL?top_p=0.9`).
    pub fn parse_with_settings(s: &str) -> Result<(ModelSpec, ModelSettings), SpecError> {
        match s.split_once('?') {
            Some((spec, query)) => Ok((spec.parse()?, ModelSettings::from_query(s, query)?)),
            None => Ok((s.parse()?, ModelSettings::default())),
        }
    }
}

impl std::str::FromStr for ModelSpec {
    type Err = SpecError;
    /// The spec without settings; a `?…` tail is ignored here (see [`ModelSpec::parse_with_settings`]).
    fn from_str(written: &str) -> Result<ModelSpec, SpecError> {
        let s = written.split_once('?').map_or(written, |(spec, _)| spec);
        let bad = |why: &str| SpecError {
            spec: written.to_string(),
            why: why.to_string(),
        };
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        let named = |rest: Option<&str>| match rest {
            Some(m) if !m.trim().is_empty() => Ok(m.to_string()),
            _ => Err(bad("the model name is missing")),
        };
        match kind {
            "reference" if rest.is_none() => Ok(ModelSpec::Reference),
            "reference-noisy" | "reference-judge-noisy" | "reference-chatty" => {
                let rate: f64 = rest
                    .ok_or_else(|| bad("the rate is missing"))?
                    .parse()
                    .map_err(|_| bad("the rate is not a number"))?;
                if !(0.0..=1.0).contains(&rate) {
                    return Err(bad("the rate must be between 0 and 1"));
                }
                Ok(match kind {
                    "reference-noisy" => ModelSpec::ReferenceNoisy { rate },
                    "reference-chatty" => ModelSpec::ReferenceChatty { rate },
                    _ => ModelSpec::ReferenceJudgeNoisy { rate },
                })
            }
            "openai" => Ok(ModelSpec::Openai {
                model: named(rest)?,
            }),
            "anthropic" => Ok(ModelSpec::Anthropic {
                model: named(rest)?,
            }),
            "openai-compatible" => {
                // Model names may hold `:`, `/` or even `@` (llama3:8b,
                // org/model); the URL starts at the last `@http`.
                let (model, url) = rest
                    .and_then(|r| {
                        let at = r.rfind("@http").or_else(|| r.find('@'))?;
                        Some((&r[..at], &r[at + 1..]))
                    })
                    .ok_or_else(|| bad("write it as openai-compatible:MODEL@URL"))?;
                if model.is_empty() {
                    return Err(bad("the model name is missing"));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad("the URL must start with http:// or https://"));
                }
                // A spec travels in messages, queue names, Redis and every
                // record: a credential in it would travel too.
                let authority = url
                    .split_once("://")
                    .map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
                if authority.contains('@') {
                    return Err(bad(
                        "the URL holds a user or password, which would be written wherever the spec is; give the server's key in OPENAI_COMPATIBLE_API_KEY (or the secrets file) instead",
                    ));
                }
                Ok(ModelSpec::OpenaiCompatible {
                    model: model.to_string(),
                    base_url: url.trim_end_matches('/').to_string(),
                })
            }
            _ => Err(bad("unknown backend")),
        }
    }
}

impl std::fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelSpec::Reference => write!(f, "reference"),
            ModelSpec::ReferenceNoisy { rate } => write!(f, "reference-noisy:{rate}"),
            ModelSpec::ReferenceJudgeNoisy { rate } => write!(f, "reference-judge-noisy:{rate}"),
            ModelSpec::ReferenceChatty { rate } => write!(f, "reference-chatty:{rate}"),
            ModelSpec::Openai { model } => write!(f, "openai:{model}"),
            ModelSpec::Anthropic { model } => write!(f, "anthropic:{model}"),
            ModelSpec::OpenaiCompatible { model, base_url } => {
                write!(f, "openai-compatible:{model}@{base_url}")
            }
        }
    }
}

impl ModelSpec {
    /// The backend's name, part of cache keys and price lookups.
    pub fn backend(&self) -> &'static str {
        match self {
            ModelSpec::Reference => "reference",
            ModelSpec::ReferenceNoisy { .. } => "reference-noisy",
            ModelSpec::ReferenceJudgeNoisy { .. } => "reference-judge-noisy",
            ModelSpec::ReferenceChatty { .. } => "reference-chatty",
            ModelSpec::Openai { .. } => "openai",
            ModelSpec::Anthropic { .. } => "anthropic",
            ModelSpec::OpenaiCompatible { .. } => "openai-compatible",
        }
    }

    /// The model's name as the backend knows it.
    pub fn model(&self) -> String {
        match self {
            ModelSpec::Reference => "reference".into(),
            ModelSpec::ReferenceNoisy { rate } => format!("reference-noisy:{rate}"),
            ModelSpec::ReferenceJudgeNoisy { rate } => format!("reference-judge-noisy:{rate}"),
            ModelSpec::ReferenceChatty { rate } => format!("reference-chatty:{rate}"),
            ModelSpec::Openai { model }
            | ModelSpec::Anthropic { model }
            | ModelSpec::OpenaiCompatible { model, .. } => model.clone(),
        }
    }

    /// Whether this is one of the built-in models, which run in this process and cost nothing.
    pub fn is_builtin(&self) -> bool {
        matches!(
            self,
            ModelSpec::Reference
                | ModelSpec::ReferenceNoisy { .. }
                | ModelSpec::ReferenceJudgeNoisy { .. }
                | ModelSpec::ReferenceChatty { .. }
        )
    }

    /// The environment variable holding the API key, for backends that need one.
    pub fn key_variable(&self) -> Option<&'static str> {
        match self {
            ModelSpec::Openai { .. } => Some("OPENAI_API_KEY"),
            ModelSpec::Anthropic { .. } => Some("ANTHROPIC_API_KEY"),
            ModelSpec::OpenaiCompatible { .. } => Some("OPENAI_COMPATIBLE_API_KEY"),
            _ => None,
        }
    }
}

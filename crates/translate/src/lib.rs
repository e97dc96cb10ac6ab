//! One round trip (A∘I)(φ0) as a library call: the model informalizes φ0
//! (I), then autoformalizes its own English in a fresh context (A); the
//! answer is read in both declared modes, strict (the paper's) and lenient. Everything a result line needs is recorded:
//! the English, the raw answer, φ1 or why it does not parse, the copy check,
//! tokens, cost, latency, attempts, and an API failure if there was one.

pub mod judge;
mod settings;
mod stage;
mod task;

pub use autoeval_llm_client::Backend;
pub use autoeval_prompts::Templates;
pub use settings::{CopyPolicy, Local, SettingsError, StageSettings};
pub use stage::{translate, Translator};
pub use task::{shots_name, task_item, TranslateTask, VerifyTask};

use autoeval_llm_client::{CallError, Reply};
use autoeval_models::{Sample, Stage, Usage};
use autoeval_prompts::{copy_check, CopyCheck, Family, Shots};
use autoeval_syntax::{canonical, parse_formula, parse_regex, print, Mode, Style};
use serde::{Deserialize, Serialize};

/// Everything one round trip produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    /// Versions of the informalization and autoformalization templates.
    pub templates: Vec<String>,
    /// The model's English (ψ0).
    pub english: Option<String>,
    /// Whether ψ0 copies the formula.
    pub copy_check: Option<CopyCheck>,
    /// The model's raw autoformalization answer.
    pub raw_answer: Option<String>,
    /// The answer read strictly, as the paper does (the headline).
    pub strict: Reading,
    /// The answer read leniently.
    pub lenient: Reading,
    /// Why a call failed for good; such an item is an API failure, not non-compliant.
    pub api_failure: Option<String>,
    /// Tokens of both calls.
    pub usage: Usage,
    /// Cost of both calls in USD, when known.
    pub cost: Option<f64>,
    /// Wall-clock time of both calls.
    pub latency_ms: f64,
    /// Attempts of both calls (0 for cached replies).
    pub attempts: u32,
    /// True when both replies came from the cache.
    pub cached: bool,
}

/// One reading of the answer: φ1 in canonical form, or why there is none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    /// φ1 printed canonically, when the answer reads as one formula.
    pub phi1: Option<String>,
    /// Why it does not (syntactic non-compliance).
    pub non_compliance: Option<String>,
}

impl Reading {
    /// Reads `answer` in `mode` for a dataset of `family`.
    pub fn of(answer: &str, family: Family, mode: Mode, alphabet: &[char]) -> Reading {
        let parsed = if family == Family::Regex {
            parse_regex(answer, mode, alphabet).map(|p| print::regex(&p.value))
        } else {
            parse_formula(answer, mode)
                .map(|p| print::formula(&canonical(&p.value), Style::Unicode))
        };
        match parsed {
            Ok(phi1) => Reading {
                phi1: Some(phi1),
                non_compliance: None,
            },
            Err(e) => Reading {
                phi1: None,
                non_compliance: Some(e.to_string()),
            },
        }
    }
}

/// How a round trip is asked.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// Prompt family of the item's dataset.
    pub family: Family,
    /// The ground truth.
    pub phi0: &'a str,
    /// Zero- or few-shot.
    pub shots: Shots,
    /// Regex alphabet.
    pub alphabet: &'a [char],
    /// The work unit this round belongs to, as the cache tells samples apart
    /// (item id, model, prompt style, repeat).
    pub unit: String,
    /// Round r of (A∘I)^n, from 1.
    pub round: u32,
}

impl RoundTrip {
    /// Adds a reply's accounting; `first` for the informalization call.
    fn add(&mut self, reply: &Reply, first: bool) {
        self.usage.prompt_tokens += reply.usage.prompt_tokens;
        self.usage.completion_tokens += reply.usage.completion_tokens;
        // The cost is known only when every call's cost is.
        self.cost = if first {
            reply.cost
        } else {
            self.cost.zip(reply.cost).map(|(a, b)| a + b)
        };
        self.latency_ms += reply.latency_ms;
        self.attempts += reply.attempts;
    }

    fn failed(mut self, e: CallError) -> RoundTrip {
        // The attempts of the failed call count too: `attempts` is what the server saw.
        self.attempts += e.attempts();
        self.api_failure = Some(e.to_string());
        self
    }
}

/// Runs I then A for one item.
pub async fn round_trip(backend: &Backend, templates: &Templates, req: &Request<'_>) -> RoundTrip {
    let mut out = RoundTrip::default();
    let i = match templates.informalize(req.family, req.phi0, req.shots, req.alphabet) {
        Ok(p) => p,
        Err(e) => return out.failed(CallError::Setup(e.to_string())),
    };
    out.templates.push(i.template.clone());
    let sample = |stage| Sample {
        unit: req.unit.clone(),
        round: req.round,
        stage,
    };
    let english = match backend.chat(&i.text, &sample(Stage::Informalize)).await {
        Ok(r) => {
            out.cached = r.cached;
            out.add(&r, true);
            r.text
        }
        Err(e) => return out.failed(e),
    };
    out.copy_check = Some(copy_check(req.phi0, &english));
    let a = match templates.autoformalize(req.family, req.phi0, &english, req.shots, req.alphabet) {
        Ok(p) => p,
        Err(e) => return out.failed(CallError::Setup(e.to_string())),
    };
    out.templates.push(a.template.clone());
    out.english = Some(english);
    let answer = match backend.chat(&a.text, &sample(Stage::Autoformalize)).await {
        Ok(r) => {
            out.cached &= r.cached;
            out.add(&r, false);
            r.text
        }
        Err(e) => return out.failed(e),
    };
    out.strict = Reading::of(&answer, req.family, Mode::Strict, req.alphabet);
    out.lenient = Reading::of(&answer, req.family, Mode::Lenient, req.alphabet);
    out.raw_answer = Some(answer);
    out
}

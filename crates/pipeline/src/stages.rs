//! The two working stages: translate (I then A) and verify.

use crate::message::{shots_name, TranslateTask, VerifyTask};
use autoeval_generate::DatasetKind;
use autoeval_llm_client::Backend;
use autoeval_prompts::{Family, Templates};
use autoeval_proto::{LenientReading, ResultRecord, Tokens, Verdict};
use autoeval_syntax::Mode;
use autoeval_translate::{round_trip, Reading, Request, RoundTrip};
use autoeval_verify::{check, Kind, Prover, Settings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// What to do when the English copies the formula instead of describing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CopyPolicy {
    /// Record the flag; the verdict stands.
    #[default]
    Flag,
    /// Count the round as non-compliant.
    Fail,
}

/// What the stages need: a backend per model, the prompts, the verifier.
pub struct Stages {
    /// Backends by model spec as written.
    pub backends: BTreeMap<String, Backend>,
    /// Prompt templates.
    pub templates: Templates,
    /// Verifier settings (mode, budgets); the alphabet comes from each task.
    pub settings: Settings,
    /// Isolating prover for first-order checks.
    pub prover: Arc<dyn Prover + Send + Sync>,
    /// Copy-check policy.
    pub copy_policy: CopyPolicy,
}

impl Stages {
    /// Why the run must stop, if a model's backend halted: every attempt
    /// so far failed the same way.
    pub fn halted(&self) -> Option<String> {
        self.backends.iter().find_map(|(model, b)| {
            b.halt().map(|h| {
                format!(
                    "stopped after {} attempts to reach {model} failed the same way: {}; {}",
                    h.attempts, h.cause, h.fix
                )
            })
        })
    }
}

/// Stage one: the model informalizes the task's formula, then formalizes its English back.
pub async fn translate(task: TranslateTask, stages: &Stages) -> VerifyTask {
    let family = Family::of_dataset(task.item.dataset.name()).unwrap_or(Family::Propositional);
    let translation = match stages.backends.get(&task.model) {
        Some(backend) => {
            let alphabet: Vec<char> = task.alphabet.chars().collect();
            let request = Request {
                family,
                phi0: &task.input,
                shots: task.prompt,
                alphabet: &alphabet,
                unit: task.unit().to_string(),
                round: task.round,
            };
            round_trip(backend, &stages.templates, &request).await
        }
        None => RoundTrip {
            api_failure: Some(format!("no backend for model {}", task.model)),
            ..RoundTrip::default()
        },
    };
    VerifyTask { task, translation }
}

/// The outcome of one reading of an answer.
#[derive(Clone)]
struct Judged {
    verdict: Verdict,
    reason: Option<String>,
    counterexample: Option<serde_json::Value>,
    method: Option<String>,
    verify_ms: f64,
}

impl Judged {
    fn because(verdict: Verdict, reason: impl Into<String>) -> Judged {
        Judged {
            verdict,
            reason: Some(reason.into()),
            counterexample: None,
            method: None,
            verify_ms: 0.0,
        }
    }
}

/// Proves one reading of the answer against φ0 (or says why it cannot be).
fn judge_reading(task: &TranslateTask, reading: &Reading, stages: &Stages) -> Judged {
    let Some(phi1) = &reading.phi1 else {
        let why = reading.non_compliance.clone();
        return Judged::because(
            Verdict::NonCompliant,
            why.unwrap_or_else(|| "no answer".into()),
        );
    };
    let kind: Kind = task
        .item
        .dataset
        .check_kind()
        .parse()
        .unwrap_or(Kind::Plogic);
    // φ1 is already read and printed canonically; reading it again must not
    // refuse what the reading accepted.
    let settings = Settings {
        alphabet: task.alphabet.chars().collect(),
        mode: Mode::Lenient,
        ..stages.settings.clone()
    };
    let started = Instant::now();
    let outcome = check(kind, &task.item.fs, phi1, &settings, stages.prover.as_ref());
    Judged {
        verify_ms: started.elapsed().as_secs_f64() * 1e3,
        verdict: match outcome.verdict {
            autoeval_verify::Verdict::Equivalent => Verdict::Equivalent,
            autoeval_verify::Verdict::NotEquivalent => Verdict::NotEquivalent,
            autoeval_verify::Verdict::Unknown => Verdict::Unknown,
            autoeval_verify::Verdict::Timeout => Verdict::Timeout,
            autoeval_verify::Verdict::NonCompliant => Verdict::NonCompliant,
            autoeval_verify::Verdict::VerifierError => Verdict::VerifierError,
        },
        reason: outcome.reason,
        counterexample: outcome
            .counterexample
            .and_then(|c| serde_json::to_value(c).ok()),
        method: serde_json::to_value(outcome.method)
            .ok()
            .and_then(|v| v.as_str().map(String::from)),
    }
}

/// Stage two: proves φ_r against φ0, reading the answer strictly (the
/// record's verdict, the paper's) and leniently (`lenient`). Returns the
/// round's record and, when the strict reading kept the meaning and more
/// rounds are asked, the next task.
pub fn verify(message: VerifyTask, stages: &Stages) -> (ResultRecord, Option<TranslateTask>) {
    let VerifyTask { task, translation } = message;
    let mut record = base_record(&task, &translation);
    record.prompt_set = stages.templates.set_id().to_string();
    let copied = record.copied && stages.copy_policy == CopyPolicy::Fail;
    let (strict, lenient) = if let Some(failure) = &translation.api_failure {
        let j = || Judged::because(Verdict::ApiFailure, failure.clone());
        (j(), j())
    } else if copied {
        let j = || Judged::because(Verdict::NonCompliant, "the English copies the formula");
        (j(), j())
    } else {
        let strict = judge_reading(&task, &translation.strict, stages);
        let lenient = if translation.lenient == translation.strict {
            // The same φ1: the same verdict, proved once.
            Judged {
                verify_ms: 0.0,
                ..strict.clone()
            }
        } else {
            judge_reading(&task, &translation.lenient, stages)
        };
        (strict, lenient)
    };
    record.verdict = strict.verdict;
    record.closeness = near_miss(&task, &record);
    record.reason = strict.reason;
    record.counterexample = strict.counterexample;
    record.method = strict.method;
    record.verify_ms = strict.verify_ms + lenient.verify_ms;
    record.lenient = Some(LenientReading {
        verdict: lenient.verdict,
        phi1: translation.lenient.phi1.clone(),
        reason: lenient.reason,
    });
    let next = (record.verdict == Verdict::Equivalent && task.round < task.rounds).then(|| {
        TranslateTask {
            round: task.round + 1,
            input: record.phi1.clone().unwrap_or_default(),
            ..task
        }
    });
    (record, next)
}

/// How close a compliant but non-equivalent φ_r came to φ0 (paper 003's
/// metrics but BERTScore, which needs an encoder), so the report can tell a
/// near miss from a wild one. Only logic has these metrics, not regex.
fn near_miss(task: &TranslateTask, record: &ResultRecord) -> Option<autoeval_proto::Closeness> {
    if record.verdict != Verdict::NotEquivalent || task.item.dataset == DatasetKind::Regex {
        return None;
    }
    Some(autoeval_closeness::closeness(
        &record.phi0,
        record.phi1.as_deref()?,
    ))
}

fn base_record(task: &TranslateTask, t: &RoundTrip) -> ResultRecord {
    let metrics = task.item.metrics_json();
    ResultRecord {
        id: task.item.id.clone(),
        dataset: task.item.dataset.name().to_string(),
        batch: task.item.batch,
        complexity: task.item.complexity,
        model: task.model.clone(),
        prompt: shots_name(task.prompt).to_string(),
        round: task.round,
        repeat: task.repeat,
        verdict: Verdict::Unknown,
        phi0: task.item.fs.clone(),
        input: task.input.clone(),
        english: t.english.clone(),
        raw_answer: t.raw_answer.clone(),
        phi1: t.strict.phi1.clone(),
        reason: None,
        copied: t.copy_check.as_ref().is_some_and(|c| c.copied),
        counterexample: None,
        method: None,
        verify_ms: 0.0,
        usage: Tokens {
            prompt_tokens: t.usage.prompt_tokens,
            completion_tokens: t.usage.completion_tokens,
        },
        cost: t.cost,
        latency_ms: t.latency_ms,
        attempts: t.attempts,
        cached: t.cached,
        templates: t.templates.clone(),
        prompt_set: String::new(),
        lenient: None,
        closeness: None,
        metrics,
    }
}

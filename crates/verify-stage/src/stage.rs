//! The verify stage: an answer read strictly and leniently, each reading
//! proved against φ0, and the round's record.

use autoeval_generate::DatasetKind;
use autoeval_proto::{
    CopyPolicy, LenientReading, Reading, ResultRecord, RoundTrip, TranslateTask, Verdict,
    VerifyTask,
};
use autoeval_syntax::Mode;
use autoeval_verify::{check, check_as_reference, Kind, Prover, Settings};
use std::sync::Arc;
use std::time::Instant;

/// Checks one task may need: its strict and its lenient reading, each
/// proved apart (a verifier's hold is reckoned in them).
pub const CHECKS_PER_TASK: usize = 2;

/// What proving a run's answers needs: the verifier, the copy policy, and
/// the prompt set the records name.
pub struct VerifyStage {
    /// Verifier settings (mode, budgets); the alphabet comes from each task.
    pub settings: Settings,
    /// Isolating prover for first-order checks.
    pub prover: Arc<dyn Prover + Send + Sync>,
    /// Copy-check policy.
    pub copy_policy: CopyPolicy,
    /// The prompt set's id, as records carry it.
    pub prompt_set: String,
    /// The headline reading is the public implementation's (the
    /// `reference` prompt set): a regular expression is read back its way,
    /// and where its verdict was not ours the record says so.
    pub as_reference: bool,
}

impl autoeval_engine::Verify for VerifyStage {
    fn verify(&self, task: VerifyTask) -> ResultRecord {
        verify(task, self)
    }
}

/// The outcome of one reading of an answer.
#[derive(Clone)]
struct Judged {
    verdict: Verdict,
    reason: Option<String>,
    counterexample: Option<serde_json::Value>,
    method: Option<String>,
    case_sensitive: bool,
    verify_ms: f64,
}

impl Judged {
    fn because(verdict: Verdict, reason: impl Into<String>) -> Judged {
        Judged {
            verdict,
            reason: Some(reason.into()),
            counterexample: None,
            method: None,
            case_sensitive: false,
            verify_ms: 0.0,
        }
    }
}

/// Proves one reading of the answer against φ0 (or says why it cannot be);
/// `public` when the reading is the public implementation's, whose logic
/// formulas are decided as that one reading of the raw answer produced
/// them ([`autoeval_verify::check_as_reference`]), never read again.
fn judge_reading(
    task: &TranslateTask,
    reading: &Reading,
    raw_answer: Option<&str>,
    public: bool,
    stages: &VerifyStage,
) -> Judged {
    let Some(phi1) = &reading.phi1 else {
        let why = reading.non_compliance.clone();
        return Judged::because(
            Verdict::NonCompliant,
            why.unwrap_or_else(|| "no answer".into()),
        );
    };
    let kind = Kind::from(task.item.dataset);
    // φ1 is already read and printed canonically; reading it again must not
    // refuse what the reading accepted.
    let settings = Settings {
        alphabet: task.alphabet.chars().collect(),
        mode: Mode::Lenient,
        public_regex_reading: public,
        ..stages.settings.clone()
    };
    let started = Instant::now();
    let prover = stages.prover.as_ref();
    let outcome = match raw_answer {
        Some(answer) if public && kind != Kind::Regex => {
            check_as_reference(&task.item.fs, answer, &settings, prover)
        }
        // The public reading of a regex is the raw answer's too.
        Some(answer) if public => check(kind, &task.item.fs, answer, &settings, prover),
        _ => check(kind, &task.item.fs, phi1, &settings, prover),
    };
    Judged {
        verify_ms: started.elapsed().as_secs_f64() * 1e3,
        verdict: outcome.verdict,
        case_sensitive: outcome.case_sensitive,
        reason: outcome.reason,
        counterexample: outcome
            .counterexample
            .and_then(|c| serde_json::to_value(c).ok()),
        method: serde_json::to_value(outcome.method)
            .ok()
            .and_then(|v| v.as_str().map(String::from)),
    }
}

/// Proves φ_r against φ0, reading the answer strictly (the record's
/// verdict, the paper's) and leniently (`lenient`): the round's record.
/// Whether a next round follows is the engine's rule
/// ([`TranslateTask::after`]), applied to the stored record.
pub fn verify(message: VerifyTask, stages: &VerifyStage) -> ResultRecord {
    let VerifyTask { task, translation } = message;
    let mut record = ResultRecord::of_round(&task, &translation);
    record.prompt_set = stages.prompt_set.clone();
    let copied = record.copied && stages.copy_policy == CopyPolicy::Fail;
    let (strict, lenient) = if let Some(failure) = &translation.api_failure {
        let j = || Judged::because(Verdict::ApiFailure, failure.clone());
        (j(), j())
    } else if copied {
        let j = || Judged::because(Verdict::NonCompliant, "the English copies the formula");
        (j(), j())
    } else {
        let raw = translation.raw_answer.as_deref();
        let strict = judge_reading(&task, &translation.strict, raw, stages.as_reference, stages);
        let lenient = if translation.lenient == translation.strict {
            // The same φ1: the same verdict, proved once.
            Judged {
                verify_ms: 0.0,
                ..strict.clone()
            }
        } else {
            judge_reading(&task, &translation.lenient, raw, false, stages)
        };
        (strict, lenient)
    };
    record.verdict = strict.verdict;
    record.closeness = near_miss(&task, &record);
    record.reason = strict.reason;
    record.counterexample = strict.counterexample;
    record.method = strict.method;
    record.case_sensitive = strict.case_sensitive;
    record.reference_verdict = reference_verdict(&task, &translation, strict.verdict, stages);
    record.verify_ms = strict.verify_ms + lenient.verify_ms;
    // Written only where it differs: the strict fields say the rest, and a
    // record is read back the same either way (`ResultRecord::lenient_reading`).
    let differs = lenient.verdict != record.verdict
        || translation.lenient.phi1 != record.phi1
        || lenient.reason != record.reason;
    record.lenient = differs.then(|| LenientReading {
        verdict: lenient.verdict,
        phi1: translation.lenient.phi1.clone(),
        reason: lenient.reason,
    });
    record
}

/// The public implementation's verdict where it is not `ours`: known while
/// a run goes for regular expressions only (for logic it would take the
/// public prover's own give-ups, docs/METRICS.md).
fn reference_verdict(
    task: &TranslateTask,
    translation: &RoundTrip,
    ours: Verdict,
    stages: &VerifyStage,
) -> Option<Verdict> {
    if !stages.as_reference || task.item.dataset != DatasetKind::Regex {
        return None;
    }
    let answer = translation.raw_answer.as_deref()?;
    autoeval_verify::public_regex_verdict(&task.item.fs, answer, ours)
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

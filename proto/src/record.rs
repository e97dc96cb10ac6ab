//! The result of one round of one work unit: the line a run appends to its
//! results file (and the fleet stores in Redis).

use crate::UnitKey;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The final outcome of one round. API failures and timeouts are separate
/// from non-compliance and from wrong answers in every count.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// φ_r means the same as φ0.
    Equivalent,
    /// φ_r differs from φ0.
    NotEquivalent,
    /// The verifier could not decide.
    #[default]
    Unknown,
    /// The verifier ran out of time or resources.
    Timeout,
    /// The answer is not a well-formed formula (syntactic non-compliance).
    NonCompliant,
    /// A model call failed for good; nothing is known about the model's answer.
    ApiFailure,
    /// The verifier failed (a prover that could not start or crashed, a
    /// formula it could not encode); nothing is known about the answer.
    VerifierError,
}

/// A verdict name that is not one of [`Verdict::ALL`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown verdict {0:?}")]
pub struct UnknownVerdict(pub String);

impl std::str::FromStr for Verdict {
    type Err = UnknownVerdict;

    fn from_str(s: &str) -> Result<Verdict, UnknownVerdict> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| UnknownVerdict(s.to_string()))
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Verdict {
    /// All verdicts, in the order tables list them.
    pub const ALL: [Verdict; 7] = [
        Verdict::Equivalent,
        Verdict::NotEquivalent,
        Verdict::Unknown,
        Verdict::Timeout,
        Verdict::NonCompliant,
        Verdict::ApiFailure,
        Verdict::VerifierError,
    ];

    /// The name used in files.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Equivalent => "equivalent",
            Verdict::NotEquivalent => "not_equivalent",
            Verdict::Unknown => "unknown",
            Verdict::Timeout => "timeout",
            Verdict::NonCompliant => "non_compliant",
            Verdict::ApiFailure => "api_failure",
            Verdict::VerifierError => "verifier_error",
        }
    }

    /// True when a rerun could end differently without the model changing.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            Verdict::ApiFailure | Verdict::VerifierError | Verdict::Timeout
        )
    }

    /// True when our infrastructure failed (a model call or the verifier):
    /// such rounds say nothing about the model and stay out of A2 and A3.
    pub fn is_infrastructure_failure(self) -> bool {
        matches!(self, Verdict::ApiFailure | Verdict::VerifierError)
    }

    /// True when the model's answer parsed (metric A2).
    pub fn is_compliant(self) -> bool {
        matches!(
            self,
            Verdict::Equivalent | Verdict::NotEquivalent | Verdict::Unknown | Verdict::Timeout
        )
    }
}

/// Tokens of one round (both calls).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens, thinking included.
    pub completion_tokens: u64,
    /// Of the completion tokens, those the model spent thinking. Always
    /// written: a round trip's tokens travel in bincode, which has no
    /// optional fields.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// The same answer read leniently: its φ1 and verdict, beside the strict
/// (paper's) reading that the record's own fields hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LenientReading {
    /// The outcome under lenient reading.
    pub verdict: Verdict,
    /// φ1 as read leniently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phi1: Option<String>,
    /// Why the verdict is what it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How close a candidate formula is to its ground truth (paper 003), each
/// score in [0, 1] and 1 for identical formulas.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Closeness {
    /// BLEU over formula tokens, divided by the reference's self-match.
    pub bleu: f64,
    /// ROUGE-L F1 over formula tokens, divided by the self-match.
    pub rouge_l: f64,
    /// METEOR over formula tokens (exact matches), divided by the self-match.
    pub meteor: f64,
    /// Logical-equivalence score; `None` when a formula does not parse.
    #[serde(default)]
    pub le: Option<f64>,
    /// Smatch++ F1, divided by the self-match; `None` when a formula does not parse.
    #[serde(default)]
    pub smatch: Option<f64>,
    /// BERTScore F1; `None` when no encoder was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bertscore: Option<f64>,
}

/// Why a round whose reply was cut at the token cap is non-compliant.
pub const TRUNCATED: &str = "truncated";

/// One results line: everything about one round of one work unit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// Item id.
    pub id: String,
    /// Dataset name.
    pub dataset: String,
    /// Batch of the item.
    pub batch: u64,
    /// Value of the dataset's complexity metric.
    pub complexity: u32,
    /// Model spec as written.
    pub model: String,
    /// `zero-shot` or `few-shot`.
    pub prompt: String,
    /// Round r of (A∘I)^n, from 1.
    pub round: u32,
    /// Repeat number, from 0.
    pub repeat: u32,
    /// The outcome with the answer read strictly, as the paper does (the headline).
    pub verdict: Verdict,
    /// The outcome with the answer read leniently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lenient: Option<LenientReading>,
    /// The ground truth φ0.
    pub phi0: String,
    /// What this round translated (φ_{r−1}) where it is not φ0: absent in
    /// round 1, whose input is φ0 (see [`ResultRecord::input`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The model's English.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub english: Option<String>,
    /// The model's raw autoformalization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_answer: Option<String>,
    /// φ_r, parsed and printed canonically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phi1: Option<String>,
    /// Why the verdict is what it is (non-compliance, unknown, timeout, API failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True when the English copies the formula instead of describing it.
    #[serde(default)]
    pub copied: bool,
    /// Why the model stopped, per call answered (informalization first):
    /// `complete`, `truncated`, `filtered`, `other` or `unreported`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finish_reasons: Vec<String>,
    /// Evidence that φ_r and φ0 differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counterexample: Option<Value>,
    /// How close φ_r came to φ0, for a compliant φ_r that is not equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closeness: Option<Closeness>,
    /// How the verifier decided (`truth_table`, `z3`, `automata`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// True when names were compared with their case because two of φ0's
    /// names differ only in case; otherwise case is ignored, as the public
    /// implementation does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub case_sensitive: bool,
    /// The public implementation's verdict on this answer where it is not
    /// this record's (`--protocol reference`, regular expressions): a case
    /// its published numbers got wrong, counted as `reference_disagrees`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_verdict: Option<Verdict>,
    /// Verifier time in milliseconds.
    #[serde(default)]
    pub verify_ms: f64,
    /// Tokens of both calls.
    #[serde(default)]
    pub usage: Tokens,
    /// Cost of both calls in USD; null when the price table has no price for the model.
    #[serde(default)]
    pub cost: Option<f64>,
    /// Of the cost, what the model's thinking cost, when the provider
    /// reported thinking tokens and the price table prices the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_cost: Option<f64>,
    /// Wall time of both calls in milliseconds.
    #[serde(default)]
    pub latency_ms: f64,
    /// Attempts of both calls (0 when the cache answered).
    #[serde(default)]
    pub attempts: u32,
    /// True when both replies came from the response cache.
    #[serde(default)]
    pub cached: bool,
    /// True when `usage` and `cost` are partly an estimate: a server
    /// reported no usage, or a reply was too long to read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_estimated: bool,
    /// The prompt set and its version, `name@version` (e.g. `paper@1a2b3c4d`).
    #[serde(default)]
    pub prompt_set: String,
    /// Template versions used.
    #[serde(default)]
    pub templates: Vec<String>,
    /// Metrics of φ0 (`depth`, `num_operators`, `num_nodes`, …).
    #[serde(default)]
    pub metrics: Map<String, Value>,
}

impl ResultRecord {
    /// The record of `task`'s round as its translation `t` left it, before
    /// any verdict (`Unknown`): the item, the unit, the English, the answer
    /// and its strict reading, and what the calls cost. The one place a
    /// record is made from a task.
    pub fn of_round(task: &crate::TranslateTask, t: &crate::RoundTrip) -> ResultRecord {
        let metrics = task.item.metrics_json();
        ResultRecord {
            id: task.item.id.clone(),
            dataset: task.item.dataset.name().to_string(),
            batch: task.item.batch,
            complexity: task.item.complexity,
            model: task.model.clone(),
            prompt: task.prompt.name().to_string(),
            round: task.round,
            repeat: task.repeat,
            verdict: Verdict::Unknown,
            phi0: task.item.fs.clone(),
            input: ResultRecord::input_beside(&task.item.fs, &task.input),
            english: t.english.clone(),
            raw_answer: t.raw_answer.clone(),
            phi1: t.strict.phi1.clone(),
            reason: None,
            copied: t.copy_check.as_ref().is_some_and(|c| c.copied),
            finish_reasons: t.finish_reasons.clone(),
            counterexample: None,
            method: None,
            case_sensitive: false,
            reference_verdict: None,
            verify_ms: 0.0,
            usage: t.usage,
            cost: t.cost,
            reasoning_cost: t.reasoning_cost,
            latency_ms: t.latency_ms,
            attempts: t.attempts,
            cached: t.cached,
            usage_estimated: t.usage_estimated,
            templates: t.templates.clone(),
            prompt_set: String::new(),
            lenient: None,
            closeness: None,
            metrics,
        }
    }

    /// The work unit this round belongs to.
    pub fn round_key(&self) -> crate::RoundKey {
        self.unit().round(self.round)
    }

    /// The work unit this record belongs to.
    pub fn unit(&self) -> UnitKey {
        UnitKey {
            id: self.id.clone(),
            model: self.model.clone(),
            prompt: self.prompt.clone(),
            repeat: self.repeat,
        }
    }

    /// What this round translated: φ_{r−1}, or φ0 in round 1.
    pub fn input(&self) -> &str {
        self.input.as_deref().unwrap_or(&self.phi0)
    }

    /// `input` as a record keeps it: only where it is not φ0.
    pub fn input_beside(phi0: &str, input: &str) -> Option<String> {
        (input != phi0).then(|| input.to_string())
    }

    /// The outcome under lenient reading (the strict one when none was recorded).
    pub fn lenient_verdict(&self) -> Verdict {
        self.lenient.as_ref().map_or(self.verdict, |l| l.verdict)
    }

    /// The answer read leniently: as recorded, or, where the record holds
    /// none because it read the same, the strict reading.
    pub fn lenient_reading(&self) -> LenientReading {
        self.lenient.clone().unwrap_or_else(|| LenientReading {
            verdict: self.verdict,
            phi1: self.phi1.clone(),
            reason: self.reason.clone(),
        })
    }

    /// True when a reply was cut at the token cap: the round is
    /// non-compliant with reason [`TRUNCATED`], counted apart.
    pub fn truncated(&self) -> bool {
        self.verdict == Verdict::NonCompliant && self.reason.as_deref() == Some(TRUNCATED)
    }

    /// A metric of φ0 as a number, when the item has it.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).and_then(Value::as_f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judgement_is_one_flat_json_object_around_its_question() {
        let line = r#"{"id":"fol-0-1-2","dataset":"fol","complexity":3,"model":"m","prompt":"few-shot","round":2,"repeat":0,"judge":"j","style":"cot","phi0":"p","phi1":"q","equivalent":true,"non_compliant":false,"judgement":"yes"}"#;
        let j: JudgeRecord = serde_json::from_str(line).unwrap();
        assert_eq!(
            (j.task.id.as_str(), j.task.round, j.task.equivalent),
            ("fol-0-1-2", 2, true)
        );
        assert_eq!(j.judgement.as_deref(), Some("yes"));
        assert_eq!(
            serde_json::to_string(&j).unwrap(),
            line,
            "the file layout is unchanged"
        );
        assert_eq!(JudgeTask::from(&j), j.task);
    }

    #[test]
    fn verdicts_use_the_documented_names() {
        for v in Verdict::ALL {
            assert_eq!(serde_json::to_value(v).unwrap(), v.name());
            assert_eq!(v.to_string().parse::<Verdict>(), Ok(v));
        }
        assert_eq!(
            "equivalnet".parse::<Verdict>(),
            Err(UnknownVerdict("equivalnet".into()))
        );
        assert!(Verdict::ApiFailure.is_retryable() && Verdict::Timeout.is_retryable());
        assert!(Verdict::VerifierError.is_retryable() && !Verdict::VerifierError.is_compliant());
        assert!(Verdict::VerifierError.is_infrastructure_failure());
        assert!(!Verdict::NonCompliant.is_compliant() && !Verdict::ApiFailure.is_compliant());
    }

    #[test]
    fn records_round_trip_through_json() {
        let r = ResultRecord {
            id: "plogic-0-0-3".into(),
            dataset: "plogic".into(),
            model: "reference".into(),
            prompt: "zero-shot".into(),
            round: 1,
            verdict: Verdict::ApiFailure,
            reason: Some("HTTP 500".into()),
            ..ResultRecord::default()
        };
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains(r#""verdict":"api_failure""#));
        assert_eq!(serde_json::from_str::<ResultRecord>(&line).unwrap(), r);
    }
}

/// One A4 judgement: a judge model's answer to "is φ0 ≡ φ1?" for a recorded pair.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// The question: the pair, who made φ1, and who is asked.
    #[serde(flatten)]
    pub task: JudgeTask,
    /// `yes`, `no` or `unparseable`; absent after an API failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judgement: Option<String>,
    /// The judge's raw answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Why the call failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_failure: Option<String>,
}

/// An A4 question: the pair, who made φ1 and who is asked. It travels on
/// the broker as it is, and is the first part of its [`JudgeRecord`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeTask {
    /// Item id of the pair.
    pub id: String,
    /// Dataset name.
    pub dataset: String,
    /// Complexity of φ0.
    pub complexity: u32,
    /// The model that produced φ1.
    pub model: String,
    /// Prompt style that produced φ1.
    pub prompt: String,
    /// Round of φ1.
    pub round: u32,
    /// Repeat of φ1.
    pub repeat: u32,
    /// The judge model.
    pub judge: String,
    /// `cot` or `yesno`.
    pub style: String,
    /// The ground truth.
    pub phi0: String,
    /// The candidate as the judge sees it: the source model's answer.
    pub phi1: String,
    /// The formal verdict: true for equivalent.
    pub equivalent: bool,
    /// φ1 is syntactically non-compliant (Fig. 20's "incompliant"): the
    /// judge is asked all the same, and its answer is counted apart. Always
    /// written: the task travels in bincode, which has no optional fields.
    #[serde(default)]
    pub non_compliant: bool,
}

impl JudgeTask {
    /// The work unit whose round is judged.
    pub fn unit(&self) -> UnitKey {
        UnitKey {
            id: self.id.clone(),
            model: self.model.clone(),
            prompt: self.prompt.clone(),
            repeat: self.repeat,
        }
    }

    /// The judge asked: its model spec and style.
    pub fn judge_key(&self) -> crate::JudgeKey {
        crate::JudgeKey {
            spec: self.judge.clone(),
            style: self.style.clone(),
        }
    }
}

impl From<&JudgeRecord> for JudgeTask {
    fn from(j: &JudgeRecord) -> JudgeTask {
        j.task.clone()
    }
}

impl From<JudgeTask> for JudgeRecord {
    fn from(task: JudgeTask) -> JudgeRecord {
        JudgeRecord {
            task,
            ..JudgeRecord::default()
        }
    }
}

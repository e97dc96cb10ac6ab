//! The work that flows between stages: a translate task (ask a model to
//! translate one formula there and back), what the model answered, and the
//! verify task that carries both to the prover.

use crate::wire::TaskItem;
use crate::{Tokens, UnitKey};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Zero-shot or few-shot (two examples).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Shots {
    /// No examples.
    ZeroShot,
    /// The two examples of App. F.
    FewShot,
}

impl Shots {
    /// Both styles, zero-shot first.
    pub const ALL: [Shots; 2] = [Shots::ZeroShot, Shots::FewShot];

    /// The style's name in files, records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Shots::ZeroShot => "zero-shot",
            Shots::FewShot => "few-shot",
        }
    }
}

impl fmt::Display for Shots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A prompt style's name that is neither `zero-shot` nor `few-shot`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown prompt style {0:?}: expected zero-shot or few-shot")]
pub struct UnknownShots(pub String);

impl FromStr for Shots {
    type Err = UnknownShots;

    fn from_str(s: &str) -> Result<Shots, UnknownShots> {
        Shots::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownShots(s.to_string()))
    }
}

/// What to do when the English copies the formula instead of describing it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CopyPolicy {
    /// Record the flag; the verdict stands.
    #[default]
    Flag,
    /// Count the round as non-compliant.
    Fail,
}

/// What the copy check found in an informalization.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CopyCheck {
    /// True when anything below was found.
    pub copied: bool,
    /// Operator symbols of the formal syntax found in the English.
    pub symbols: Vec<String>,
    /// The longest run of the formula's own text found in the English.
    pub fragment: Option<String>,
}

/// Ask a model to translate one formula there and back (round `round` of `rounds`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslateTask {
    /// The item, with φ0 and its metrics.
    pub item: TaskItem,
    /// Regex alphabet of the item's dataset, e.g. `"01"`.
    pub alphabet: String,
    /// Model spec as written.
    pub model: String,
    /// Zero- or few-shot.
    pub prompt: Shots,
    /// Repeat number, from 0.
    pub repeat: u32,
    /// This round, from 1.
    pub round: u32,
    /// Rounds asked for: n of (A∘I)^n.
    pub rounds: u32,
    /// The formula to translate: φ0 in round 1, then the previous round's φ.
    pub input: String,
}

impl TranslateTask {
    /// The work unit this task belongs to.
    pub fn unit(&self) -> UnitKey {
        UnitKey {
            id: self.item.id.clone(),
            model: self.model.clone(),
            prompt: self.prompt.name().to_string(),
            repeat: self.repeat,
        }
    }

    /// This task's round of its unit.
    pub fn round_key(&self) -> crate::RoundKey {
        self.unit().round(self.round)
    }

    /// The round of this unit that comes after `record`, one of its rounds:
    /// [`NextRound::after`] applied to this task.
    pub fn after(&self, record: &crate::ResultRecord) -> Option<TranslateTask> {
        NextRound::after(record, self.rounds).map(|next| TranslateTask {
            round: next.round,
            input: next.input.to_owned(),
            ..self.clone()
        })
    }
}

/// Where a unit goes after one of its rounds: the round that comes next
/// and the formula it translates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextRound<'a> {
    /// The next round, from 2.
    pub round: u32,
    /// The formula it translates: the φ1 that kept the meaning.
    pub input: &'a str,
}

impl<'a> NextRound<'a> {
    /// The one rule of (A∘I)^n, for a unit of `rounds` rounds: a round that
    /// kept the meaning (an equivalent φ1) starts the next, translating that
    /// φ1, while rounds remain; any other round ends the unit. Everything
    /// that asks whether a unit goes on (the verify loop, resume, the paired
    /// comparisons, the Redis store) asks this.
    pub fn after(record: &'a crate::ResultRecord, rounds: u32) -> Option<NextRound<'a>> {
        let phi1 = record
            .phi1
            .as_deref()
            .filter(|_| record.verdict == crate::Verdict::Equivalent)?;
        (record.round < rounds).then_some(NextRound {
            round: record.round + 1,
            input: phi1,
        })
    }

    /// Whether `record` ends its unit of `rounds` rounds.
    pub fn ends(record: &crate::ResultRecord, rounds: u32) -> bool {
        NextRound::after(record, rounds).is_none()
    }
}

/// One reading of the answer: φ1 in canonical form, or why there is none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reading {
    /// φ1 printed canonically, when the answer reads as one formula.
    pub phi1: Option<String>,
    /// Why it does not (syntactic non-compliance).
    pub non_compliance: Option<String>,
}

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
    /// Why the model stopped, per call answered (informalization first):
    /// `complete`, `truncated`, `filtered`, `other` or `unreported`.
    #[serde(default)]
    pub finish_reasons: Vec<String>,
    /// Tokens of both calls.
    pub usage: Tokens,
    /// Cost of both calls in USD, when known.
    pub cost: Option<f64>,
    /// Of the cost, what thinking cost, when the provider reported thinking tokens.
    #[serde(default)]
    pub reasoning_cost: Option<f64>,
    /// Wall-clock time of both calls.
    pub latency_ms: f64,
    /// Attempts of both calls (0 for cached replies).
    pub attempts: u32,
    /// True when both replies came from the cache.
    pub cached: bool,
    /// True when the server reported no usage (or the reply was too long to
    /// read) for a reply, and its tokens and cost are an estimate.
    pub usage_estimated: bool,
    /// Tokens of the calls paid for here (`usage` less the cache's
    /// answers): what the budget is charged. Kept by the worker that made
    /// the calls; never sent on.
    #[serde(skip)]
    pub paid_usage: Tokens,
    /// True when the call failed because its backend halted (a refusal
    /// every request would repeat): like a call never sent, the unit stays
    /// pending rather than counting as a failure. Kept by the worker that
    /// made the calls; never sent on.
    #[serde(skip)]
    pub halted: bool,
}

impl RoundTrip {
    /// True when the round trip failed before anything was sent, or because
    /// its backend halted: after a halt it stays pending rather than
    /// counting as a failure.
    pub fn never_sent(&self) -> bool {
        self.api_failure.is_some() && (self.attempts == 0 || self.halted)
    }
}

/// A translated task, ready to be parsed and proved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyTask {
    /// What was asked.
    pub task: TranslateTask,
    /// What the model answered, with its accounting.
    pub translation: RoundTrip,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_styles_read_back_their_names() {
        for s in Shots::ALL {
            assert_eq!(s.name().parse::<Shots>(), Ok(s));
            assert_eq!(s.to_string(), s.name());
        }
        assert!("one-shot".parse::<Shots>().is_err());
    }

    #[test]
    fn only_a_round_that_kept_the_meaning_and_has_rounds_left_goes_on() {
        use crate::Verdict;
        let task = TranslateTask {
            item: TaskItem {
                id: "plogic-0-0-0".into(),
                dataset: crate::DatasetKind::Plogic,
                batch: 0,
                complexity: 1,
                fs: "p".into(),
                metrics: Vec::new(),
            },
            alphabet: String::new(),
            model: "reference".into(),
            prompt: Shots::ZeroShot,
            repeat: 0,
            round: 1,
            rounds: 2,
            input: "p".into(),
        };
        let round = |round: u32, verdict, phi1: Option<&str>| crate::ResultRecord {
            round,
            verdict,
            phi1: phi1.map(str::to_string),
            ..crate::ResultRecord::default()
        };
        let next = task
            .after(&round(1, Verdict::Equivalent, Some("q")))
            .expect("a second round");
        assert_eq!((next.round, next.input.as_str()), (2, "q"));
        assert_eq!(next.unit(), task.unit());
        assert!(task
            .after(&round(1, Verdict::NotEquivalent, Some("q")))
            .is_none());
        assert!(
            task.after(&round(1, Verdict::Equivalent, None)).is_none(),
            "no φ1, nothing to translate"
        );
        assert!(
            task.after(&round(2, Verdict::Equivalent, Some("r")))
                .is_none(),
            "no third round"
        );
    }
}

//! Every pair of arms (a model with a prompt style) of a dataset, compared
//! on the items both answered, per round and reading, overall and per
//! complexity value; and each arm's scores with intervals clustered by item.
//!
//! A unit's round counts as a trial unless it was an API failure or a
//! verifier error (they say nothing about the model), and a unit that
//! stopped before the round (an earlier round was measured and not
//! equivalent) counts as a failed trial. Unlike the summary's per-round
//! counts, a unit whose earlier round failed for the infrastructure, or that
//! has not reached the round yet, is no trial at all: from round 2 on, the
//! two can differ by those units.

use crate::paired::{clustered, difference, holm, Clustered, Difference, Outcomes};
use autoeval_proto::{ResultRecord, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Which verdict of a record is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reading {
    /// The paper's verdict.
    Strict,
    /// The verdict of the lenient reading.
    Lenient,
}

/// Which score is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Compliance.
    A2,
    /// Accuracy.
    A3,
}

/// A model with a prompt style.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Arm {
    /// Model spec.
    pub model: String,
    /// Prompt style.
    pub prompt: String,
}

/// Where a set of outcomes belongs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    /// Dataset.
    pub dataset: String,
    /// Round.
    pub round: u32,
    /// Reading.
    pub reading: Reading,
    /// Arm.
    pub arm: Arm,
}

/// One arm's per-item outcomes in one cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArmOutcomes {
    /// Per item: compliant rounds and trials.
    pub a2: Outcomes,
    /// Per item: equivalent rounds and trials.
    pub a3: Outcomes,
    /// Each item's complexity value.
    pub complexity: BTreeMap<String, u32>,
}

impl ArmOutcomes {
    /// The outcomes of `metric`.
    pub fn of(&self, metric: Metric) -> &Outcomes {
        match metric {
            Metric::A2 => &self.a2,
            Metric::A3 => &self.a3,
        }
    }
}

/// One unit's verdict per round, as `reading` reads it.
type Rounds = BTreeMap<u32, Verdict>;

/// Per-item outcomes of every cell of `records`.
pub fn item_outcomes(records: &[ResultRecord]) -> BTreeMap<Cell, ArmOutcomes> {
    // Each unit: (dataset, model, prompt, item, repeat) → complexity and its rounds.
    type UnitKey = (String, String, String, String, u32);
    let mut units: BTreeMap<UnitKey, (u32, Rounds, Rounds)> = BTreeMap::new();
    let mut rounds: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for r in records {
        let key = (
            r.dataset.clone(),
            r.model.clone(),
            r.prompt.clone(),
            r.id.clone(),
            r.repeat,
        );
        let (complexity, strict, lenient) = units.entry(key).or_default();
        *complexity = r.complexity;
        strict.insert(r.round, r.verdict);
        lenient.insert(r.round, r.lenient_verdict());
        rounds.entry(r.dataset.clone()).or_default().insert(r.round);
    }
    let mut out: BTreeMap<Cell, ArmOutcomes> = BTreeMap::new();
    for ((dataset, model, prompt, item, _), (complexity, strict, lenient)) in &units {
        for (reading, verdicts) in [(Reading::Strict, strict), (Reading::Lenient, lenient)] {
            for &round in rounds.get(dataset).into_iter().flatten() {
                let Some((compliant, equivalent)) = outcome(verdicts, round) else {
                    continue;
                };
                let cell = Cell {
                    dataset: dataset.clone(),
                    round,
                    reading,
                    arm: Arm {
                        model: model.clone(),
                        prompt: prompt.clone(),
                    },
                };
                let arm = out.entry(cell).or_default();
                arm.complexity.insert(item.clone(), *complexity);
                for (outcomes, success) in [(&mut arm.a2, compliant), (&mut arm.a3, equivalent)] {
                    let (s, n) = outcomes.entry(item.clone()).or_default();
                    *s += u32::from(success);
                    *n += 1;
                }
            }
        }
    }
    out
}

/// Whether a unit's `round` was compliant and equivalent; `None` when it
/// says nothing (an infrastructure failure, or not reached for another reason).
fn outcome(verdicts: &Rounds, round: u32) -> Option<(bool, bool)> {
    match verdicts.get(&round) {
        Some(v) if v.is_infrastructure_failure() => None,
        Some(v) => Some((v.is_compliant(), *v == Verdict::Equivalent)),
        None => {
            let stopped = verdicts
                .range(..round)
                .any(|(_, v)| !v.is_infrastructure_failure() && *v != Verdict::Equivalent);
            stopped.then_some((false, false))
        }
    }
}

/// A difference on the items of one complexity value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtComplexity {
    /// The complexity value.
    pub complexity: u32,
    /// A minus B on its items (its p-value unadjusted).
    pub difference: Difference,
}

/// Arm A against arm B on one dataset, round, reading and metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Dataset.
    pub dataset: String,
    /// Round.
    pub round: u32,
    /// Reading.
    pub reading: Reading,
    /// Score compared.
    pub metric: Metric,
    /// The first arm.
    pub a: Arm,
    /// The second arm.
    pub b: Arm,
    /// A minus B on every item both answered.
    pub overall: Difference,
    /// The overall p-value after Holm's adjustment over every pair of the
    /// same dataset, round, reading and metric.
    pub adjusted_p: f64,
    /// Whether the difference survives the adjustment at the 5% level.
    pub separated: bool,
    /// A minus B per complexity value.
    pub by_complexity: Vec<AtComplexity>,
}

/// Every pair of arms of every dataset, round, reading and metric.
pub fn compare(outcomes: &BTreeMap<Cell, ArmOutcomes>) -> Vec<Comparison> {
    type Family = (String, u32, Reading);
    let mut families: BTreeMap<Family, Vec<(&Arm, &ArmOutcomes)>> = BTreeMap::new();
    for (cell, arm) in outcomes {
        families
            .entry((cell.dataset.clone(), cell.round, cell.reading))
            .or_default()
            .push((&cell.arm, arm));
    }
    let mut out = Vec::new();
    for ((dataset, round, reading), arms) in families {
        for metric in [Metric::A2, Metric::A3] {
            // Each arm split by complexity value once, not once per pair and value.
            let split: Vec<BTreeMap<u32, Outcomes>> = arms
                .iter()
                .map(|(_, o)| by_value(o.of(metric), &o.complexity))
                .collect();
            let mut family = Vec::new();
            for (i, (a, oa)) in arms.iter().enumerate() {
                for (j, (b, ob)) in arms.iter().enumerate().skip(i + 1) {
                    let Some(overall) = difference(oa.of(metric), ob.of(metric)) else {
                        continue;
                    };
                    family.push(Comparison {
                        dataset: dataset.clone(),
                        round,
                        reading,
                        metric,
                        a: (*a).clone(),
                        b: (*b).clone(),
                        overall,
                        adjusted_p: overall.p_value,
                        separated: false,
                        by_complexity: by_complexity(&split[i], &split[j]),
                    });
                }
            }
            let p: Vec<f64> = family.iter().map(|c| c.overall.p_value).collect();
            for (c, adjusted) in family.iter_mut().zip(holm(&p)) {
                c.adjusted_p = adjusted;
                c.separated = adjusted < 0.05;
            }
            out.extend(family);
        }
    }
    out
}

/// `outcomes` split by each item's complexity value.
fn by_value(outcomes: &Outcomes, complexity: &BTreeMap<String, u32>) -> BTreeMap<u32, Outcomes> {
    let mut split: BTreeMap<u32, Outcomes> = BTreeMap::new();
    for (item, v) in outcomes {
        if let Some(value) = complexity.get(item) {
            split.entry(*value).or_default().insert(item.clone(), *v);
        }
    }
    split
}

/// A minus B on the items of each complexity value, from their splits.
fn by_complexity(a: &BTreeMap<u32, Outcomes>, b: &BTreeMap<u32, Outcomes>) -> Vec<AtComplexity> {
    a.iter()
        .filter_map(|(complexity, oa)| {
            Some(AtComplexity {
                complexity: *complexity,
                difference: difference(oa, b.get(complexity)?)?,
            })
        })
        .collect()
}

/// An arm's scores in one cell with intervals clustered by item.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClusteredScores {
    /// Dataset.
    pub dataset: String,
    /// Round.
    pub round: u32,
    /// Reading.
    pub reading: Reading,
    /// Arm.
    pub arm: Arm,
    /// A2, clustered by item.
    pub compliance: Option<Clustered>,
    /// A3, clustered by item.
    pub accuracy: Option<Clustered>,
}

/// Each cell's A2 and A3 with intervals clustered by item.
pub fn clustered_scores(outcomes: &BTreeMap<Cell, ArmOutcomes>) -> Vec<ClusteredScores> {
    outcomes
        .iter()
        .map(|(cell, arm)| ClusteredScores {
            dataset: cell.dataset.clone(),
            round: cell.round,
            reading: cell.reading,
            arm: cell.arm.clone(),
            compliance: clustered(&arm.a2),
            accuracy: clustered(&arm.a3),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(model: &str, id: &str, repeat: u32, round: u32, verdict: Verdict) -> ResultRecord {
        ResultRecord {
            id: id.into(),
            dataset: "plogic".into(),
            model: model.into(),
            prompt: "zero-shot".into(),
            complexity: 2,
            repeat,
            round,
            verdict,
            ..ResultRecord::default()
        }
    }

    #[test]
    fn stopped_units_fail_and_infrastructure_failures_are_no_trial() {
        let records = vec![
            rec("m", "i1", 0, 1, Verdict::NotEquivalent),
            rec("m", "i2", 0, 1, Verdict::Equivalent),
            rec("m", "i2", 0, 2, Verdict::Equivalent),
            rec("m", "i3", 0, 1, Verdict::ApiFailure),
        ];
        let cells = item_outcomes(&records);
        let round2 = cells
            .iter()
            .find(|(c, _)| c.round == 2 && c.reading == Reading::Strict)
            .map(|(_, o)| o)
            .unwrap();
        // i1 stopped after round 1: a failed trial; i3 never measured.
        assert_eq!(round2.a3.get("i1"), Some(&(0, 1)));
        assert_eq!(round2.a3.get("i2"), Some(&(1, 1)));
        assert_eq!(round2.a3.get("i3"), None);
    }

    #[test]
    fn two_models_on_the_same_items_are_compared_with_holm_adjusted_p_values() {
        let mut records = Vec::new();
        for i in 0..30 {
            let id = format!("i{i}");
            records.push(rec("good", &id, 0, 1, Verdict::Equivalent));
            let worse = if i % 2 == 0 {
                Verdict::NotEquivalent
            } else {
                Verdict::Equivalent
            };
            records.push(rec("bad", &id, 0, 1, worse));
            records.push(rec("same", &id, 0, 1, Verdict::Equivalent));
        }
        let comparisons = compare(&item_outcomes(&records));
        let a3: Vec<&Comparison> = comparisons
            .iter()
            .filter(|c| c.metric == Metric::A3 && c.reading == Reading::Strict && c.round == 1)
            .collect();
        assert_eq!(a3.len(), 3);
        let bad_good = a3
            .iter()
            .find(|c| c.a.model == "bad" && c.b.model == "good")
            .unwrap();
        assert_eq!(bad_good.overall.b_better, 15);
        assert_eq!(bad_good.overall.difference, -0.5);
        // Exact: 2 × 0.5^15, then Holm over three comparisons (this one is the smallest p, with its tie).
        assert!((bad_good.overall.p_value - 2.0 * 0.5_f64.powi(15)).abs() < 1e-12);
        assert!((bad_good.adjusted_p - 3.0 * 2.0 * 0.5_f64.powi(15)).abs() < 1e-12);
        assert!(bad_good.separated);
        let good_same = a3
            .iter()
            .find(|c| c.a.model == "good" && c.b.model == "same")
            .unwrap();
        assert_eq!(good_same.overall.p_value, 1.0);
        assert!(!good_same.separated);
    }
}

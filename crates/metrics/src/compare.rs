//! Every pair of arms (a model with a prompt style) of a dataset, compared
//! on the items both answered, per round and reading, overall and per
//! complexity value; and each arm's scores with intervals clustered by item.
//!
//! A unit's round counts as a trial unless it was an API failure or a
//! verifier error (they say nothing about the model), and a unit that
//! stopped before the round (an earlier round was measured and not
//! equivalent) counts as a failed trial; a unit whose round failed for the
//! infrastructure is no trial at that round or later, as in the summary
//! (docs/METRICS.md). Only a unit of a run still going that has not reached
//! the round yet differs: the summary counts it as stopped, here it is no trial.

use crate::paired::{holm, ClusterSums, Clustered, Difference, PairSums};
use autoeval_proto::{NextRound, ResultRecord, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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

/// One unit's verdict per round, as a reading reads it.
pub type Rounds = BTreeMap<u32, Verdict>;

/// An item's units seen so far: by (arm, repeat), each unit's rounds in
/// both readings; and how many of them have ended.
#[derive(Default)]
struct OpenItem {
    complexity: u32,
    units: BTreeMap<(Arm, u32), (Rounds, Rounds)>,
    ended: usize,
}

/// Successes and trials.
type Tally = (u32, u32);

/// One arm's sums in one (dataset, round, reading).
#[derive(Default)]
struct ArmSums {
    a2: ClusterSums,
    a3: ClusterSums,
}

/// One pair of arms' sums for one metric, overall and per complexity value.
#[derive(Default)]
struct PairAcc {
    overall: PairSums,
    by_complexity: BTreeMap<u32, PairSums>,
}

/// The arms and pairs of arms of one (dataset, round, reading).
#[derive(Default)]
struct Family {
    arms: BTreeMap<Arm, ArmSums>,
    pairs: BTreeMap<(Arm, Arm, Metric), PairAcc>,
}

/// The paired comparisons and clustered scores of a run, taken in a record
/// at a time. An item's units are held until every one of them has ended
/// (when the plan says how many it has), then folded into sums and let go:
/// memory follows the items in progress, not the run.
#[derive(Default)]
pub struct Paired {
    /// Units per item and rounds per unit, when the plan is known.
    plan: Option<(usize, u32)>,
    open: HashMap<(String, String), OpenItem>,
    families: BTreeMap<(String, u32, Reading), Family>,
    rounds_seen: BTreeMap<String, BTreeSet<u32>>,
}

impl Paired {
    /// Comparisons of records whose plan is unknown: every item is held to the end.
    pub fn new() -> Paired {
        Paired::default()
    }

    /// Comparisons of a run whose every item has `units_per_item` units
    /// (models × prompt styles × repeats) of at most `rounds` rounds.
    pub fn for_plan(units_per_item: usize, rounds: u32) -> Paired {
        Paired {
            plan: Some((units_per_item, rounds)),
            ..Paired::default()
        }
    }

    /// Takes in one record (each unit's round once).
    pub fn add(&mut self, r: &ResultRecord) {
        self.rounds_seen
            .entry(r.dataset.clone())
            .or_default()
            .insert(r.round);
        let key = (r.dataset.clone(), r.id.clone());
        let item = self.open.entry(key).or_default();
        item.complexity = r.complexity;
        let arm = Arm {
            model: r.model.clone(),
            prompt: r.prompt.clone(),
        };
        let (strict, lenient) = item.units.entry((arm, r.repeat)).or_default();
        strict.insert(r.round, r.verdict);
        lenient.insert(r.round, r.lenient_verdict());
        let Some((units, rounds)) = self.plan else {
            return;
        };
        if NextRound::ends(r, rounds) {
            item.ended += 1;
        }
        if item.ended >= units {
            // The key is made again only here, once per item.
            if let Some(((dataset, _), item)) =
                self.open.remove_entry(&(r.dataset.clone(), r.id.clone()))
            {
                self.fold(&dataset, &item, rounds);
            }
        }
    }

    /// Counts one item's units in every round up to `rounds` and both readings.
    fn fold(&mut self, dataset: &str, item: &OpenItem, rounds: u32) {
        for round in 1..=rounds {
            for reading in [Reading::Strict, Reading::Lenient] {
                // Per arm: (compliant, trials) and (equivalent, trials) over its repeats.
                let mut per_arm: BTreeMap<&Arm, (Tally, Tally)> = BTreeMap::new();
                for ((arm, _), (strict, lenient)) in &item.units {
                    let verdicts = match reading {
                        Reading::Strict => strict,
                        Reading::Lenient => lenient,
                    };
                    let Some((compliant, equivalent)) = unit_outcome(verdicts, round) else {
                        continue;
                    };
                    let ((s2, n2), (s3, n3)) = per_arm.entry(arm).or_default();
                    *s2 += u32::from(compliant);
                    *n2 += 1;
                    *s3 += u32::from(equivalent);
                    *n3 += 1;
                }
                if per_arm.is_empty() {
                    continue;
                }
                let family = self
                    .families
                    .entry((dataset.to_string(), round, reading))
                    .or_default();
                for (arm, (a2, a3)) in &per_arm {
                    let sums = family.arms.entry((*arm).clone()).or_default();
                    sums.a2.add(a2.0, a2.1);
                    sums.a3.add(a3.0, a3.1);
                }
                let arms: Vec<_> = per_arm.iter().collect();
                for (i, (a, (a2, a3))) in arms.iter().enumerate() {
                    for (b, (b2, b3)) in arms.iter().skip(i + 1) {
                        for (metric, oa, ob) in [(Metric::A2, a2, b2), (Metric::A3, a3, b3)] {
                            let pair = family
                                .pairs
                                .entry(((**a).clone(), (**b).clone(), metric))
                                .or_default();
                            pair.overall.add(*oa, *ob);
                            pair.by_complexity
                                .entry(item.complexity)
                                .or_default()
                                .add(*oa, *ob);
                        }
                    }
                }
            }
        }
    }

    /// Every pair of arms compared, and each arm's clustered scores, of
    /// every dataset, round and reading the records reached.
    pub fn finish(mut self) -> (Vec<Comparison>, Vec<ClusteredScores>) {
        let open = std::mem::take(&mut self.open);
        for ((dataset, _), item) in open {
            let rounds = self
                .rounds_seen
                .get(&dataset)
                .and_then(|r| r.last().copied())
                .unwrap_or(1);
            let rounds = self.plan.map_or(rounds, |(_, r)| r.max(rounds));
            self.fold(&dataset, &item, rounds);
        }
        let mut comparisons = Vec::new();
        let mut scores = Vec::new();
        for ((dataset, round, reading), family) in self.families {
            if !self
                .rounds_seen
                .get(&dataset)
                .is_some_and(|r| r.contains(&round))
            {
                continue;
            }
            for (arm, sums) in &family.arms {
                scores.push(ClusteredScores {
                    dataset: dataset.clone(),
                    round,
                    reading,
                    arm: arm.clone(),
                    compliance: sums.a2.clustered(),
                    accuracy: sums.a3.clustered(),
                });
            }
            for metric in [Metric::A2, Metric::A3] {
                let mut family_out: Vec<Comparison> = family
                    .pairs
                    .iter()
                    .filter(|((_, _, m), _)| *m == metric)
                    .filter_map(|((a, b, _), pair)| {
                        let overall = pair.overall.difference()?;
                        Some(Comparison {
                            dataset: dataset.clone(),
                            round,
                            reading,
                            metric,
                            a: a.clone(),
                            b: b.clone(),
                            overall,
                            adjusted_p: overall.p_value,
                            separated: false,
                            by_complexity: pair
                                .by_complexity
                                .iter()
                                .filter_map(|(complexity, sums)| {
                                    Some(AtComplexity {
                                        complexity: *complexity,
                                        difference: sums.difference()?,
                                    })
                                })
                                .collect(),
                        })
                    })
                    .collect();
                let p: Vec<f64> = family_out.iter().map(|c| c.overall.p_value).collect();
                for (c, adjusted) in family_out.iter_mut().zip(holm(&p)) {
                    c.adjusted_p = adjusted;
                    c.separated = adjusted < 0.05;
                }
                comparisons.extend(family_out);
            }
        }
        (comparisons, scores)
    }
}

/// Whether a unit's `round` was compliant and equivalent, given its
/// verdict per round; `None` when it says nothing (an infrastructure
/// failure, or not reached for another reason).
pub fn unit_outcome(verdicts: &Rounds, round: u32) -> Option<(bool, bool)> {
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

    fn paired(records: &[ResultRecord], plan: Option<(usize, u32)>) -> Paired {
        let mut paired = match plan {
            Some((units, rounds)) => Paired::for_plan(units, rounds),
            None => Paired::new(),
        };
        for r in records {
            paired.add(r);
        }
        paired
    }

    #[test]
    fn stopped_units_fail_and_infrastructure_failures_are_no_trial() {
        let records = vec![
            rec("m", "i1", 0, 1, Verdict::NotEquivalent),
            rec("m", "i2", 0, 1, Verdict::Equivalent),
            rec("m", "i2", 0, 2, Verdict::Equivalent),
            rec("m", "i3", 0, 1, Verdict::ApiFailure),
            rec("m", "i4", 0, 1, Verdict::Equivalent),
            rec("m", "i4", 0, 2, Verdict::NotEquivalent),
        ];
        // Held to the end, or let go as each item ends: the same sums.
        for plan in [None, Some((1, 2))] {
            let (_, scores) = paired(&records, plan).finish();
            let round2 = scores
                .iter()
                .find(|c| c.round == 2 && c.reading == Reading::Strict)
                .unwrap();
            // i1 stopped after round 1: a failed trial; i2 kept the meaning,
            // i4 did not; i3 was never measured.
            let a3 = round2.accuracy.unwrap();
            assert_eq!((a3.items, a3.trials), (3, 3), "{plan:?}");
            assert!((a3.mean - 1.0 / 3.0).abs() < 1e-12, "{plan:?}");
        }
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
        let (comparisons, _) = paired(&records, Some((3, 1))).finish();
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

//! What the report needs of a run's records beyond their summary, taken in
//! a record at a time: sums and bounded samples, so that a report of a
//! million rounds holds a few megabytes, not the rounds.

use autoeval_metrics::closeness::{misses_of, Misses};
use autoeval_metrics::summary::{Counts, Distribution, KnownCost};
use autoeval_proto::{Closeness, ResultRecord, Verdict};
use std::collections::{BTreeMap, BTreeSet};

/// The verdicts failing examples are drawn from, in the order they are shown.
pub(crate) const FAILING: [Verdict; 4] = [
    Verdict::NotEquivalent,
    Verdict::NonCompliant,
    Verdict::Timeout,
    Verdict::Unknown,
];

/// One model and prompt style's tokens, cost and time over every dataset.
#[derive(Default)]
pub struct CostRow {
    /// Rounds.
    pub rounds: usize,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens, thinking included.
    pub completion_tokens: u64,
    /// Of them, tokens spent thinking.
    pub reasoning_tokens: u64,
    /// USD, known while every round's is.
    pub cost: KnownCost,
    /// Of it, what thinking cost, over the rounds that reported it.
    pub reasoning_cost: Option<f64>,
    /// Model-call time per round.
    pub latency: Distribution,
    /// Verifier time per round.
    pub verify: Distribution,
}

/// A (dataset, model, prompt style)'s round-1 counts by the value of each of φ0's metrics.
pub type ByMetric = BTreeMap<String, BTreeMap<i64, Counts>>;

/// The report's view of a run's records.
pub struct RunDigest {
    examples_per_dataset: usize,
    /// Every model of the records.
    pub models: BTreeSet<String>,
    /// Every prompt set named by the records.
    pub prompt_sets: BTreeSet<String>,
    /// Round-1 counts by φ0's metrics, per (dataset, model, prompt style).
    pub by_metric: BTreeMap<(String, String, String), ByMetric>,
    /// Closeness of round-1 misses per (dataset, model).
    closeness: BTreeMap<(String, String), Vec<Closeness>>,
    /// Tokens, cost and time per (model, prompt style).
    pub cost: BTreeMap<(String, String), CostRow>,
    /// Failing rounds kept for the examples: per (dataset, verdict), the
    /// first rounds of the lowest-numbered batches, as many as choosing
    /// the examples can reach.
    examples: BTreeMap<(String, Verdict), BTreeMap<u64, Vec<ResultRecord>>>,
}

impl RunDigest {
    /// An empty digest for a report showing `examples_per_dataset` failing examples per dataset.
    pub fn new(examples_per_dataset: usize) -> RunDigest {
        RunDigest {
            examples_per_dataset,
            models: BTreeSet::new(),
            prompt_sets: BTreeSet::new(),
            by_metric: BTreeMap::new(),
            closeness: BTreeMap::new(),
            cost: BTreeMap::new(),
            examples: BTreeMap::new(),
        }
    }

    /// The digest of `records`.
    pub fn of(records: &[ResultRecord], examples_per_dataset: usize) -> RunDigest {
        let mut digest = RunDigest::new(examples_per_dataset);
        for r in records {
            digest.add(r);
        }
        digest
    }

    /// Takes in one record (each unit's round once).
    pub fn add(&mut self, r: &ResultRecord) {
        if !self.models.contains(&r.model) {
            self.models.insert(r.model.clone());
        }
        if !r.prompt_set.is_empty() && !self.prompt_sets.contains(&r.prompt_set) {
            self.prompt_sets.insert(r.prompt_set.clone());
        }
        if r.round == 1 {
            let by = self
                .by_metric
                .entry((r.dataset.clone(), r.model.clone(), r.prompt.clone()))
                .or_default();
            for (name, value) in r.metrics.iter().filter_map(|(k, v)| Some((k, v.as_f64()?))) {
                by.entry(name.clone())
                    .or_default()
                    .entry(value.round() as i64)
                    .or_default()
                    .add(r.verdict);
            }
            if let Some(c) = &r.closeness {
                self.closeness
                    .entry((r.dataset.clone(), r.model.clone()))
                    .or_default()
                    .push(c.clone());
            }
        }
        let row = self
            .cost
            .entry((r.model.clone(), r.prompt.clone()))
            .or_default();
        row.rounds += 1;
        row.prompt_tokens += r.usage.prompt_tokens;
        row.completion_tokens += r.usage.completion_tokens;
        row.reasoning_tokens += r.usage.reasoning_tokens;
        row.cost.add(r.cost);
        if let Some(c) = r.reasoning_cost {
            row.reasoning_cost = Some(row.reasoning_cost.unwrap_or(0.0) + c);
        }
        row.latency.add(r.latency_ms);
        row.verify.add(r.verify_ms);
        if FAILING.contains(&r.verdict) {
            self.keep_example(r);
        }
    }

    /// Keeps `r` if choosing the examples could reach it: each item is shown
    /// once and batches are taken in turn, so no more than twice the examples
    /// shown are needed from each of as many batches.
    fn keep_example(&mut self, r: &ResultRecord) {
        let reach = 2 * self.examples_per_dataset.max(1);
        let batches = self
            .examples
            .entry((r.dataset.clone(), r.verdict))
            .or_default();
        if batches.len() >= reach && batches.keys().next_back().is_some_and(|&b| r.batch > b) {
            return;
        }
        let kept = batches.entry(r.batch).or_default();
        if kept.len() < reach {
            kept.push(r.clone());
        }
        if batches.len() > reach {
            batches.pop_last();
        }
    }

    /// The failing rounds kept of `dataset`, by verdict and batch, each
    /// batch's in the order they came.
    pub fn failing(&self, dataset: &str) -> Vec<&ResultRecord> {
        FAILING
            .iter()
            .filter_map(|v| self.examples.get(&(dataset.to_string(), *v)))
            .flat_map(|batches| batches.values().flatten())
            .collect()
    }

    /// The closeness of round-1 misses per dataset and model.
    pub fn misses(&self) -> Vec<Misses> {
        self.closeness
            .iter()
            .map(|((dataset, model), scores)| misses_of(dataset, model, scores))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_scored_misses_of_round_one_are_kept_for_closeness() {
        let rec = |round, le: Option<f64>| ResultRecord {
            dataset: "fol".into(),
            model: "m".into(),
            round,
            closeness: le.map(|le| Closeness {
                le: Some(le),
                ..Closeness::default()
            }),
            ..ResultRecord::default()
        };
        let digest = RunDigest::of(
            &[
                rec(1, Some(0.5)),
                rec(1, Some(0.9)),
                rec(2, Some(0.1)),
                rec(1, None),
            ],
            4,
        );
        let rows = digest.misses();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].n, 2);
        assert_eq!(rows[0].le.unwrap().median, 0.7);
    }
}

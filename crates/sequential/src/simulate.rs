//! The validity simulation: the procedure replayed many times over one
//! finished run's records, each time in another draw order. Every outcome
//! is fixed by the records, so the full plan's figure is the truth each
//! stopped interval must cover; only the order is random.

use crate::procedure::{DatasetPlan, Design, ItemOutcome, Level, Measure, Procedure};
use crate::records::ItemOutcomes;
use crate::sequence::{Estimator, Interval};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What the replays came to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replays {
    /// Replays run.
    pub runs: usize,
    /// Stopped intervals of asked levels (A2, A3) that held the truth, and all of them.
    pub covered: (usize, usize),
    /// Stopped intervals of asked pairs' differences that held the truth, and all of them.
    pub covered_pairs: (usize, usize),
    /// Asked quantities whose interval held the truth after every wave of
    /// their replay (the guarantee of a confidence sequence), and all of them.
    pub held_throughout: (usize, usize),
    /// Replays in which some pair was ordered against the truth.
    pub wrong_order_runs: usize,
    /// Item answers (an item asked of a model) each replay used, sorted.
    pub answers: Vec<usize>,
    /// Item answers of the full plan.
    pub plan_answers: usize,
}

impl Replays {
    /// The share of the levels' stopped intervals that held the truth.
    pub fn coverage(&self) -> f64 {
        self.covered.0 as f64 / self.covered.1.max(1) as f64
    }

    /// The share of the pairs' stopped intervals that held the truth.
    pub fn pair_coverage(&self) -> f64 {
        self.covered_pairs.0 as f64 / self.covered_pairs.1.max(1) as f64
    }

    /// The share of asked quantities whose interval held the truth at every wave.
    pub fn held_share(&self) -> f64 {
        self.held_throughout.0 as f64 / self.held_throughout.1.max(1) as f64
    }

    /// The share of replays with a pair ordered wrongly.
    pub fn wrong_order_share(&self) -> f64 {
        self.wrong_order_runs as f64 / self.runs.max(1) as f64
    }

    /// The `q`-quantile of the answers used, as a share of the plan's.
    pub fn answers_share(&self, q: f64) -> f64 {
        if self.answers.is_empty() {
            return 0.0;
        }
        let i = ((self.answers.len() - 1) as f64 * q).round() as usize;
        self.answers[i] as f64 / self.plan_answers.max(1) as f64
    }
}

/// Each (model, item)'s outcome, looked up once.
struct Table {
    outcomes: HashMap<(usize, String), ItemOutcome>,
}

impl Table {
    fn new(records: &ItemOutcomes, models: &[String], plan: &[DatasetPlan], round: u32) -> Table {
        let mut outcomes = HashMap::new();
        for dataset in plan {
            for stratum in &dataset.strata {
                for item in &stratum.items {
                    for (m, model) in models.iter().enumerate() {
                        let outcome = records.outcome(model, item, round).unwrap_or(ItemOutcome {
                            compliant: None,
                            accurate: None,
                        });
                        outcomes.insert((m, item.clone()), outcome);
                    }
                }
            }
        }
        Table { outcomes }
    }

    fn get(&self, m: usize, item: &str) -> ItemOutcome {
        self.outcomes
            .get(&(m, item.to_string()))
            .copied()
            .unwrap_or(ItemOutcome {
                compliant: None,
                accurate: None,
            })
    }

    /// The plan's own mean of `measure` over dataset `plan`'s items: the
    /// mean of each item's value, over the items it has a value for.
    fn truth(&self, measure: &Measure, plan: &DatasetPlan) -> f64 {
        let value = |item: &str| -> Option<f64> {
            match *measure {
                Measure::Level { model, level } => {
                    let o = self.get(model, item);
                    match level {
                        Level::Compliance => o.compliant,
                        Level::Accuracy => o.accurate,
                    }
                }
                Measure::Order { first, second } => {
                    Some(self.get(first, item).accurate? - self.get(second, item).accurate?)
                }
            }
        };
        let values: Vec<f64> = plan
            .strata
            .iter()
            .flat_map(|s| s.items.iter())
            .filter_map(|i| value(i))
            .collect();
        values.iter().sum::<f64>() / values.len().max(1) as f64
    }
}

/// Whether `interval` holds `truth` (within rounding of an end is on it).
fn holds(interval: &Interval, truth: f64) -> bool {
    interval.lower - 1e-9 <= truth && truth <= interval.upper + 1e-9
}

/// Replays the procedure `runs` times over `records` at `round`, the
/// draw order of replay k being `order(k)`.
pub fn replay<E: Estimator>(
    records: &ItemOutcomes,
    design: &Design,
    round: u32,
    runs: usize,
    order: impl Fn(u64) -> Vec<DatasetPlan>,
) -> Replays {
    let models = records.models();
    let population = order(0);
    let table = Table::new(records, &models, &population, round);
    let items: usize = population
        .iter()
        .map(|d| d.strata.iter().map(|s| s.items.len()).sum::<usize>())
        .sum();
    let mut out = Replays {
        runs,
        covered: (0, 0),
        covered_pairs: (0, 0),
        held_throughout: (0, 0),
        wrong_order_runs: 0,
        answers: Vec::with_capacity(runs),
        plan_answers: items * models.len(),
    };
    for k in 0..runs {
        let plan = order(k as u64);
        let mut procedure: Procedure<E> =
            Procedure::new(design.clone(), models.len(), plan.clone());
        let truths: Vec<f64> = procedure
            .quantities()
            .iter()
            .map(|q| table.truth(&q.measure, &plan[q.dataset]))
            .collect();
        let mut held = vec![true; truths.len()];
        while let Some(wave) = procedure.next_wave() {
            procedure.observe(&wave, |m, item| table.get(m, item));
            for ((q, truth), held) in procedure.quantities().iter().zip(&truths).zip(&mut held) {
                *held &= holds(&q.interval, *truth);
            }
        }
        for (q, held) in procedure.quantities().iter().zip(&held) {
            if q.asked {
                out.held_throughout.1 += 1;
                out.held_throughout.0 += usize::from(*held);
            }
        }
        let mut wrong = false;
        for (q, &truth) in procedure.quantities().iter().zip(&truths) {
            if q.asked {
                let tally = match q.measure {
                    Measure::Level { .. } => &mut out.covered,
                    Measure::Order { .. } => &mut out.covered_pairs,
                };
                tally.1 += 1;
                tally.0 += usize::from(holds(&q.interval, truth));
            }
            if let Some(side) = q.order() {
                let sign = if truth.abs() < 1e-12 {
                    std::cmp::Ordering::Equal
                } else {
                    truth.total_cmp(&0.0)
                };
                if side.is_ne() && side != sign {
                    wrong = true;
                }
            }
        }
        out.wrong_order_runs += usize::from(wrong);
        out.answers.push(procedure.answers());
    }
    out.answers.sort_unstable();
    out
}

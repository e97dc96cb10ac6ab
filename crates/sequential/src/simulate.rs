//! The validity simulation: the procedure replayed many times over one
//! finished run's records, each time in another draw order. Every outcome
//! is fixed by the records, so the full plan's figure is the truth each
//! stopped interval must cover; only the order is random.

use crate::design::Decide;
use crate::procedure::{DatasetPlan, Design, ItemOutcome, Level, Measure, Procedure};
use crate::records::ItemOutcomes;
use crate::sequence::Interval;
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
    /// Each asked question: its truth, its oracle, what the replays used.
    pub questions: Vec<Question>,
    /// Item answers the oracle needs: for each dataset and model, the
    /// largest oracle of the questions it answers for.
    pub oracle_answers: usize,
    /// Under `--decide best`: replays that found each dataset's best where
    /// the truth has a unique best, and the replays × datasets where it has one.
    pub best_found: (usize, usize),
    /// Each asked question decided before the plan was spent, each replay:
    /// the items in flight at its decision (drawn past it) over the items
    /// it used, sorted.
    #[serde(default)]
    pub past: Vec<f64>,
}

/// One asked question across the replays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// Its dataset's index.
    pub dataset: usize,
    /// What it measures.
    pub measure: Measure,
    /// The full plan's figure.
    pub truth: f64,
    /// Items of its dataset with a value.
    pub population: usize,
    /// The items the fixed-time oracle needs.
    pub oracle: usize,
    /// The items its dataset had drawn when it was decided, each replay, sorted.
    pub used: Vec<usize>,
}

impl Question {
    /// The median of the items it used.
    pub fn median_used(&self) -> usize {
        median(&self.used)
    }

    /// Its median use over its oracle's.
    pub fn ratio(&self) -> f64 {
        self.median_used() as f64 / self.oracle.max(1) as f64
    }
}

/// The median of sorted `values` (0 for none).
fn median(values: &[usize]) -> usize {
    if values.is_empty() {
        return 0;
    }
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]).div_ceil(2)
    }
}

impl Replays {
    /// The share of replays with a pair ordered wrongly.
    pub fn wrong_order_share(&self) -> f64 {
        self.wrong_order_runs as f64 / self.runs.max(1) as f64
    }

    /// The median of the item answers used.
    pub fn median_answers(&self) -> usize {
        median(&self.answers)
    }

    /// The `q`-quantile of the answers used, as a share of the plan's.
    pub fn answers_share(&self, q: f64) -> f64 {
        quantile(&self.answers, q).map_or(0.0, |a| a as f64 / self.plan_answers.max(1) as f64)
    }

    /// The `q`-quantile of what questions drew past their decisions, as a
    /// share of what they used (0 when none was decided before the end).
    pub fn past_share(&self, q: f64) -> f64 {
        quantile(&self.past, q).unwrap_or(0.0)
    }
}

/// The `q`-quantile of sorted `values`, by the nearest rank.
fn quantile<T: Copy>(values: &[T], q: f64) -> Option<T> {
    let last = values.len().checked_sub(1)?;
    Some(values[(last as f64 * q).round() as usize])
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
        let values = self.values(measure, plan);
        values.iter().sum::<f64>() / values.len().max(1) as f64
    }

    /// The value of `measure` of each item of `plan` that has one.
    fn values(&self, measure: &Measure, plan: &DatasetPlan) -> Vec<f64> {
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
        plan.strata
            .iter()
            .flat_map(|s| s.items.iter())
            .filter_map(|i| value(i))
            .collect()
    }
}

/// Whether `interval` holds `truth` (within rounding of an end is on it).
fn holds(interval: &Interval, truth: f64) -> bool {
    interval.lower - 1e-9 <= truth && truth <= interval.upper + 1e-9
}

/// Replays the procedure `runs` times over `records` at `round`, the
/// draw order of replay k being `order(k)`.
pub fn replay(
    records: &ItemOutcomes,
    design: &Design,
    round: u32,
    runs: usize,
    order: impl Fn(u64) -> Vec<DatasetPlan>,
) -> Replays {
    let models = records.models();
    let population = order(0);
    let table = Table::new(records, &models, &population, round);
    let start = Procedure::new(design.clone(), models.len(), population.clone());
    let truths: Vec<f64> = start
        .quantities()
        .iter()
        .map(|q| table.truth(&q.measure, &population[q.dataset]))
        .collect();
    let best = true_best(&start, &truths, population.len());
    let mut questions = oracle_questions(&table, &start, &population, &best);
    let mut out = Replays {
        runs,
        covered: (0, 0),
        covered_pairs: (0, 0),
        held_throughout: (0, 0),
        wrong_order_runs: 0,
        answers: Vec::with_capacity(runs),
        plan_answers: start.plan_answers(),
        oracle_answers: oracle_answers(&questions, &population, models.len()),
        questions: Vec::new(),
        best_found: (0, 0),
        past: Vec::new(),
    };
    for k in 0..runs {
        let plan = order(k as u64);
        let mut procedure = Procedure::new(design.clone(), models.len(), plan);
        let mut held = vec![true; truths.len()];
        procedure.run_on(
            |m, item| table.get(m, item),
            |procedure| {
                for ((q, truth), held) in procedure.quantities().iter().zip(&truths).zip(&mut held)
                {
                    *held &= holds(&q.interval, *truth);
                }
            },
        );
        out.tally(&procedure, &truths, &held);
        for question in &mut questions {
            let q = &procedure.quantities()[question.index];
            let drawn = procedure.items_drawn(q.dataset).0;
            question.used.push(q.decided.map_or(drawn, |d| d.items));
            if let Some(d) = q.decided.filter(|d| !d.spent && d.items > 0) {
                out.past.push(d.in_flight as f64 / d.items as f64);
            }
        }
        if design.decide == Decide::Best {
            for (d, truth) in best.iter().enumerate() {
                if let Some(truth) = truth {
                    out.best_found.1 += 1;
                    out.best_found.0 += usize::from(procedure.best(d) == Some(*truth));
                }
            }
        }
        out.answers.push(procedure.answers());
    }
    out.answers.sort_unstable();
    out.past.sort_by(f64::total_cmp);
    out.questions = questions
        .into_iter()
        .map(|mut q| {
            q.question.used = std::mem::take(&mut q.used);
            q.question.used.sort_unstable();
            q.question
        })
        .collect();
    out
}

impl Replays {
    /// Counts one finished replay's coverage and wrong orders.
    fn tally(&mut self, procedure: &Procedure, truths: &[f64], held: &[bool]) {
        let mut wrong = false;
        for ((q, &truth), held) in procedure.quantities().iter().zip(truths).zip(held) {
            if q.asked {
                self.held_throughout.1 += 1;
                self.held_throughout.0 += usize::from(*held);
                let tally = match q.measure {
                    Measure::Level { .. } => &mut self.covered,
                    Measure::Order { .. } => &mut self.covered_pairs,
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
        self.wrong_order_runs += usize::from(wrong);
    }
}

/// A question being replayed: which quantity it is, and its uses so far.
struct Replayed {
    index: usize,
    question: Question,
    used: Vec<usize>,
}

/// The asked questions of `procedure` with their oracles. Under
/// `--decide best`, the pairs of each dataset's true `best` (a unique one).
fn oracle_questions(
    table: &Table,
    procedure: &Procedure,
    plan: &[DatasetPlan],
    best: &[Option<usize>],
) -> Vec<Replayed> {
    let design = procedure.design();
    let quantities = procedure.quantities();
    let pairs_per_dataset = quantities
        .iter()
        .filter(|q| q.dataset == 0 && matches!(q.measure, Measure::Order { .. }))
        .count()
        .max(1);
    let mut out = Vec::new();
    for (index, q) in quantities.iter().enumerate() {
        let asked = match (design.decide, q.measure) {
            (Decide::Best, Measure::Order { first, second }) => {
                best[q.dataset].is_some_and(|b| b == first || b == second)
            }
            _ => q.asked,
        };
        if !asked {
            continue;
        }
        let values = table.values(&q.measure, &plan[q.dataset]);
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let oracle = match q.measure {
            Measure::Level { .. } => {
                crate::oracle::level_items(mean, design.precision, design.alpha, n)
            }
            Measure::Order { .. } => {
                let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n.max(1) as f64)
                    .sqrt();
                crate::oracle::pair_items(mean, sd, design.alpha / pairs_per_dataset as f64, n)
            }
        };
        out.push(Replayed {
            index,
            question: Question {
                dataset: q.dataset,
                measure: q.measure,
                truth: mean,
                population: n,
                oracle,
                used: Vec::new(),
            },
            used: Vec::new(),
        });
    }
    out
}

/// The oracle's item answers: per dataset and model, the largest oracle
/// of the questions the model answers for.
fn oracle_answers(questions: &[Replayed], plan: &[DatasetPlan], models: usize) -> usize {
    let mut most = vec![vec![0usize; models]; plan.len()];
    for q in questions {
        let of = match q.question.measure {
            Measure::Level { model, .. } => vec![model],
            Measure::Order { first, second } => vec![first, second],
        };
        for m in of {
            let slot = &mut most[q.question.dataset][m];
            *slot = (*slot).max(q.question.oracle);
        }
    }
    most.iter().flatten().sum()
}

/// Each dataset's model of the highest true accuracy, when no other ties it.
fn true_best(procedure: &Procedure, truths: &[f64], datasets: usize) -> Vec<Option<usize>> {
    (0..datasets)
        .map(|d| {
            let mut accuracy: Vec<(usize, f64)> = procedure
                .quantities()
                .iter()
                .zip(truths)
                .filter_map(|(q, &t)| match q.measure {
                    Measure::Level {
                        model,
                        level: Level::Accuracy,
                    } if q.dataset == d => Some((model, t)),
                    _ => None,
                })
                .collect();
            accuracy.sort_by(|a, b| b.1.total_cmp(&a.1));
            match accuracy.as_slice() {
                [(m, a), (_, b), ..] if a - b > 1e-12 => Some(*m),
                [(m, _)] => Some(*m),
                _ => None,
            }
        })
        .collect()
}

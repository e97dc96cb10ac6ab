//! The sequential procedure of `run --until decided`: which quantities are
//! to be decided, the waves that draw items for them, and when each is
//! decided.
//!
//! Every model still needed answers the same items, so a pair's comparison
//! stays paired. Each dataset draws on its own: its items, stratum by
//! stratum in the order the caller shuffled them (from the run's seed), in
//! waves whose split among strata [`crate::allocate`] decides. A quantity's
//! value per item is the share of the item's units (prompt styles and
//! repeats) that succeeded, so an item is one draw; a pair's is the
//! difference of its two models' shares.

use crate::allocate::{allocate, StratumShare};
use crate::sequence::{Estimator, Interval, StratifiedSequence};
use serde::{Deserialize, Serialize};

/// What `--until decided` is asked to decide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Decide {
    /// Each model's compliance and accuracy per dataset, to the precision.
    Accuracy,
    /// The order of every pair of models per dataset.
    Order,
    /// Both.
    #[default]
    Both,
}

/// The procedure's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// Each level's intervals miss with probability at most this; the
    /// family of pair orders errs anywhere with probability at most this.
    pub alpha: f64,
    /// The half-width a level is decided at, as a fraction.
    pub precision: f64,
    /// What is to be decided.
    pub decide: Decide,
    /// A stratum's least share of a wave, as a fraction of its proportional share.
    pub min_share: f64,
    /// A dataset's first wave, as a fraction of its items.
    pub first_wave: f64,
    /// Each later wave, as a fraction of the dataset's items drawn so far.
    pub growth: f64,
}

impl Design {
    /// The items of a dataset's next wave, `drawn` of its `total` items
    /// drawn so far over `strata` strata (at least two per stratum).
    pub fn wave_size(&self, drawn: usize, total: usize, strata: usize) -> usize {
        let size = if drawn == 0 {
            self.first_wave * total as f64
        } else {
            self.growth * drawn as f64
        };
        (size.ceil() as usize).max(2 * strata)
    }
}

impl Default for Design {
    fn default() -> Self {
        Design {
            alpha: 0.05,
            precision: 0.02,
            decide: Decide::Both,
            min_share: 0.5,
            first_wave: 0.01,
            growth: 0.25,
        }
    }
}

/// One dataset of the plan: its strata, each holding its items in the
/// order they are to be drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetPlan {
    /// The dataset's name.
    pub name: String,
    /// Its strata (one per complexity value).
    pub strata: Vec<StratumPlan>,
}

/// One stratum of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StratumPlan {
    /// The complexity value its items share.
    pub complexity: u32,
    /// Its items' ids, in draw order.
    pub items: Vec<String>,
}

/// What one model's units of one item came to: the share of them
/// compliant and the share accurate, among those measured (`None` when an
/// infrastructure failure took every one, or none is recorded).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ItemOutcome {
    /// Share compliant (A2's numerator).
    pub compliant: Option<f64>,
    /// Share accurate (A3's numerator).
    pub accurate: Option<f64>,
}

/// The two levels a model has per dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// A2.
    Compliance,
    /// A3.
    Accuracy,
}

/// What a quantity measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Measure {
    /// A model's level.
    Level {
        /// The model's index.
        model: usize,
        /// Which level.
        level: Level,
    },
    /// The difference of two models' accuracy, `first` minus `second`.
    Order {
        /// The first model's index.
        first: usize,
        /// The second model's index.
        second: usize,
    },
}

impl Measure {
    /// From the sequence's [0, 1] scale to the quantity's: a level is
    /// itself, a pair's difference `2z − 1`.
    fn scale(&self) -> (f64, f64) {
        match self {
            Measure::Level { .. } => (1.0, 0.0),
            Measure::Order { .. } => (2.0, -1.0),
        }
    }
}

/// When a quantity was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decided {
    /// The wave after which it was.
    pub wave: usize,
    /// Its dataset's items drawn by then.
    pub items: usize,
}

/// One quantity and where it stands.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Quantity {
    /// Its dataset's index.
    pub dataset: usize,
    /// What it measures.
    pub measure: Measure,
    /// Whether it was asked for (the others are followed all the same).
    pub asked: bool,
    /// Its point estimate (stratified), on its own scale: a level in [0, 1],
    /// a difference in [−1, 1].
    pub estimate: f64,
    /// Its anytime-valid interval, on the same scale.
    pub interval: Interval,
    /// When it was decided, if it was.
    pub decided: Option<Decided>,
}

impl Quantity {
    /// The models it needs answers from.
    fn models(&self) -> Vec<usize> {
        match self.measure {
            Measure::Level { model, .. } => vec![model],
            Measure::Order { first, second } => vec![first, second],
        }
    }

    /// Its value for one item, on the sequence's [0, 1] scale.
    fn value(&self, outcome: &dyn Fn(usize) -> ItemOutcome) -> Option<f64> {
        match self.measure {
            Measure::Level { model, level } => match level {
                Level::Compliance => outcome(model).compliant,
                Level::Accuracy => outcome(model).accurate,
            },
            Measure::Order { first, second } => {
                let (a, b) = (outcome(first).accurate?, outcome(second).accurate?);
                Some((a - b + 1.0) / 2.0)
            }
        }
    }

    /// For a pair: which way the order went, once decided.
    pub fn order(&self) -> Option<std::cmp::Ordering> {
        match self.measure {
            Measure::Order { .. } if self.decided.is_some() => Some(self.interval.side_of_zero()),
            _ => None,
        }
    }
}

/// One dataset's part of a wave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WavePart {
    /// The dataset's index.
    pub dataset: usize,
    /// The models that answer it.
    pub models: Vec<usize>,
    /// Its items, each with its stratum's index.
    pub items: Vec<(usize, String)>,
}

/// The items the next wave draws, and who answers them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wave {
    /// Its number, from 1.
    pub number: usize,
    /// Its part of each dataset that still draws.
    pub parts: Vec<WavePart>,
}

/// The procedure (see the module's doc), its intervals from `E`: the
/// confidence sequence in every run, the naive interval in the simulation
/// that shows why.
#[derive(Clone, Debug)]
pub struct Procedure<E: Estimator = StratifiedSequence> {
    design: Design,
    models: usize,
    datasets: Vec<DatasetPlan>,
    /// Items drawn so far, by dataset and stratum.
    drawn: Vec<Vec<usize>>,
    quantities: Vec<Quantity>,
    /// Each quantity's interval method, in the same order.
    estimators: Vec<E>,
    waves: usize,
    /// Item answers (an item asked of a model) the waves handed out.
    answers: usize,
    /// A wave handed out and not observed yet.
    pending: bool,
}

impl<E: Estimator> Procedure<E> {
    /// The procedure for `models` models over `datasets`.
    pub fn new(design: Design, models: usize, datasets: Vec<DatasetPlan>) -> Self {
        let pairs = models * models.saturating_sub(1) / 2;
        let pair_alpha = design.alpha / (pairs * datasets.len()).max(1) as f64;
        let levels_asked = design.decide != Decide::Order;
        let orders_asked = design.decide != Decide::Accuracy;
        let mut quantities = Vec::new();
        let mut estimators = Vec::new();
        for (d, dataset) in datasets.iter().enumerate() {
            let sizes: Vec<usize> = dataset.strata.iter().map(|s| s.items.len()).collect();
            let mut add = |measure: Measure, asked, alpha| {
                let mut estimator = E::start(&sizes, alpha);
                let (scale, shift) = measure.scale();
                quantities.push(Quantity {
                    dataset: d,
                    measure,
                    asked,
                    estimate: scale * estimator.estimate() + shift,
                    interval: estimator.interval().affine(scale, shift),
                    decided: None,
                });
                estimators.push(estimator);
            };
            for model in 0..models {
                for level in [Level::Compliance, Level::Accuracy] {
                    add(Measure::Level { model, level }, levels_asked, design.alpha);
                }
            }
            for first in 0..models {
                for second in first + 1..models {
                    add(Measure::Order { first, second }, orders_asked, pair_alpha);
                }
            }
        }
        Procedure {
            drawn: datasets.iter().map(|d| vec![0; d.strata.len()]).collect(),
            design,
            models,
            datasets,
            quantities,
            estimators,
            waves: 0,
            answers: 0,
            pending: false,
        }
    }

    /// Every quantity, decided or not.
    pub fn quantities(&self) -> &[Quantity] {
        &self.quantities
    }

    /// Waves handed out so far.
    pub fn waves(&self) -> usize {
        self.waves
    }

    /// The procedure's settings.
    pub fn design(&self) -> &Design {
        &self.design
    }

    /// Item answers of the whole plan.
    pub fn plan_answers(&self) -> usize {
        (0..self.datasets.len())
            .map(|d| self.items_drawn(d).1)
            .sum::<usize>()
            * self.models
    }

    /// The settings in one line, for the run's first words.
    pub fn design_line(&self) -> String {
        let asked = match self.design.decide {
            Decide::Accuracy => "A2 and A3 per model",
            Decide::Order => "the order of every pair",
            Decide::Both => "A2 and A3 per model and the order of every pair",
        };
        format!(
            "{asked}, to ±{:.1} pp at α = {}",
            100.0 * self.design.precision,
            self.design.alpha
        )
    }

    /// What a wave asks, in one line: `tasks` units still to run of it.
    pub fn wave_line(&self, wave: &Wave, units_per_answer: usize, tasks: usize) -> String {
        let answers: usize = wave
            .parts
            .iter()
            .map(|p| p.items.len() * p.models.len())
            .sum();
        let open = self
            .quantities
            .iter()
            .filter(|q| q.asked && q.decided.is_none())
            .count();
        format!(
            "wave {}: {} items, {} units ({tasks} to run); {open} questions open",
            wave.number,
            wave.parts.iter().map(|p| p.items.len()).sum::<usize>(),
            answers * units_per_answer,
        )
    }

    /// Item answers (an item asked of a model) the waves so far handed out.
    pub fn answers(&self) -> usize {
        self.answers
    }

    /// Items drawn so far in dataset `d`, and how many it has.
    pub fn items_drawn(&self, d: usize) -> (usize, usize) {
        let total = self.datasets[d].strata.iter().map(|s| s.items.len()).sum();
        (self.drawn[d].iter().sum(), total)
    }

    /// Whether everything asked is decided.
    pub fn finished(&self) -> bool {
        self.quantities
            .iter()
            .all(|q| !q.asked || q.decided.is_some())
    }

    /// The models dataset `d` still needs: those of its undecided asked quantities.
    fn needed(&self, d: usize) -> Vec<usize> {
        let mut models = vec![false; self.models];
        for q in self.undecided(d) {
            for m in q.models() {
                models[m] = true;
            }
        }
        (0..self.models).filter(|&m| models[m]).collect()
    }

    fn undecided(&self, d: usize) -> impl Iterator<Item = &Quantity> {
        self.quantities
            .iter()
            .filter(move |q| q.dataset == d && q.asked && q.decided.is_none())
    }

    /// The next wave, or `None` when everything asked is decided (or every
    /// item drawn). The wave must be observed before the next is asked for.
    pub fn next_wave(&mut self) -> Option<Wave> {
        assert!(
            !self.pending,
            "a wave is handed out before the last was observed"
        );
        let mut parts = Vec::new();
        for d in 0..self.datasets.len() {
            let models = self.needed(d);
            let (drawn, total) = self.items_drawn(d);
            if models.is_empty() || drawn >= total {
                continue;
            }
            let counts = self.split(d, drawn, total);
            let items = self.take(d, &counts);
            for (q, e) in self.quantities.iter().zip(&mut self.estimators) {
                if q.dataset == d && q.models().iter().all(|m| models.contains(m)) {
                    e.begin_wave(&counts);
                }
            }
            self.answers += items.len() * models.len();
            parts.push(WavePart {
                dataset: d,
                models,
                items,
            });
        }
        if parts.is_empty() {
            return None;
        }
        self.waves += 1;
        self.pending = true;
        Some(Wave {
            number: self.waves,
            parts,
        })
    }

    /// How many items of each stratum dataset `d`'s next wave draws.
    fn split(&self, d: usize, drawn: usize, total: usize) -> Vec<usize> {
        let strata = &self.datasets[d].strata;
        let size = self.design.wave_size(drawn, total, strata.len());
        // The widest undecided interval's strata are the ones to narrow.
        let widest = self
            .quantities
            .iter()
            .zip(&self.estimators)
            .filter(|(q, _)| q.dataset == d && q.asked && q.decided.is_none())
            .max_by(|a, b| {
                a.0.interval
                    .half_width()
                    .total_cmp(&b.0.interval.half_width())
            })
            .map(|(_, e)| e);
        let shares: Vec<StratumShare> = strata
            .iter()
            .enumerate()
            .map(|(h, s)| StratumShare {
                weight: s.items.len() as f64 / total as f64,
                left: s.items.len() - self.drawn[d][h],
                spread: widest.map_or(0.5, |q| q.stratum_sd(h)),
            })
            .collect();
        allocate(size, &shares, self.design.min_share)
    }

    /// Takes the next `counts[h]` items of each stratum of dataset `d`.
    fn take(&mut self, d: usize, counts: &[usize]) -> Vec<(usize, String)> {
        let mut items = Vec::new();
        for (h, &k) in counts.iter().enumerate() {
            let from = self.drawn[d][h];
            let stratum = &self.datasets[d].strata[h];
            items.extend(
                stratum.items[from..from + k]
                    .iter()
                    .map(|id| (h, id.clone())),
            );
            self.drawn[d][h] += k;
        }
        items
    }

    /// Takes in the outcomes of `wave`'s items (`outcome(model, item)`) and
    /// decides what they settle.
    pub fn observe(&mut self, wave: &Wave, outcome: impl Fn(usize, &str) -> ItemOutcome) {
        self.pending = false;
        for part in &wave.parts {
            let d = part.dataset;
            let (drawn, _) = self.items_drawn(d);
            for (q, e) in self.quantities.iter_mut().zip(&mut self.estimators) {
                if q.dataset != d || !q.models().iter().all(|m| part.models.contains(m)) {
                    continue;
                }
                for (h, item) in &part.items {
                    e.observe(*h, q.value(&|m| outcome(m, item)));
                }
                let (scale, shift) = q.measure.scale();
                q.estimate = scale * e.estimate() + shift;
                q.interval = e.interval().affine(scale, shift);
                let settled = e.complete()
                    || match q.measure {
                        Measure::Level { .. } => q.interval.half_width() <= self.design.precision,
                        Measure::Order { .. } => q.interval.side_of_zero().is_ne(),
                    };
                if settled && q.decided.is_none() {
                    q.decided = Some(Decided {
                        wave: wave.number,
                        items: drawn,
                    });
                }
            }
        }
    }
}

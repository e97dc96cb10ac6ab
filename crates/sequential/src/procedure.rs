//! The sequential procedure of `run --until decided`: which quantities are
//! to be decided, the waves that draw items for them, and when each is
//! decided.
//!
//! Every model still needed answers the same items, so a pair's comparison
//! stays paired. Each dataset draws on its own. With betting (what a run
//! uses) its items come in one uniformly random order: each stratum in the
//! order the caller shuffled it (from the run's seed), the strata in the
//! plan's random turns. The methods kept for comparison split each wave
//! among strata as [`crate::allocate`] decides. A quantity's value per item
//! is the share of the item's units (prompt styles and repeats) that
//! succeeded, so an item is one draw; a pair's is the difference of its two
//! models' shares. Levels are decided at the precision, pairs by e-Holm
//! over their e-processes ([`crate::family`]), and under `--decide best`
//! each dataset once its best is.

use crate::allocate::{allocate, StratumShare};
use crate::sequence::{Estimator, Interval};
use serde::{Deserialize, Serialize};

pub use crate::design::{DatasetPlan, Decide, Design, StratumPlan};

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

/// When a quantity was decided, and on what.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decided {
    /// The wave after which it was.
    pub wave: usize,
    /// Its dataset's items observed by then: what the decision used.
    pub items: usize,
    /// Its dataset's items handed out then and not yet observed (the waves
    /// ahead): drawn past the decision, they are run, recorded and taken
    /// into its figures all the same.
    #[serde(default)]
    pub in_flight: usize,
    /// Decided only because every item was drawn: the figure is then the
    /// plan's own, exact for its items and silent beyond them.
    #[serde(default)]
    pub spent: bool,
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
    /// Its point estimate, on its own scale: a level in [0, 1], a
    /// difference in [−1, 1].
    pub estimate: f64,
    /// Its anytime-valid interval, on the same scale.
    pub interval: Interval,
    /// The level its interval is read at: α for a level; for a pair, the
    /// level its decision was taken at (α over the family before).
    #[serde(default)]
    pub level: f64,
    /// When it was decided, if it was.
    pub decided: Option<Decided>,
    /// For a decided pair: the first model above (`Greater`), below, or
    /// tied over the whole plan (`Equal`).
    #[serde(skip)]
    pub direction: Option<std::cmp::Ordering>,
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
        self.direction
    }

    /// Whether it is a pair of `model` and another: the other.
    fn pair_of(&self, model: usize) -> Option<usize> {
        match self.measure {
            Measure::Order { first, second } if first == model => Some(second),
            Measure::Order { first, second } if second == model => Some(first),
            _ => None,
        }
    }

    /// For a decided pair, the model above (`None` when tied or undecided).
    fn winner(&self) -> Option<usize> {
        match (self.measure, self.direction?) {
            (Measure::Order { first, .. }, std::cmp::Ordering::Greater) => Some(first),
            (Measure::Order { second, .. }, std::cmp::Ordering::Less) => Some(second),
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
    /// Its items, each with its stratum's index, in draw order.
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

/// The procedure (see the module's doc).
#[derive(Clone, Debug)]
pub struct Procedure {
    design: Design,
    models: usize,
    datasets: Vec<DatasetPlan>,
    /// Items drawn so far, by dataset and stratum.
    drawn: Vec<Vec<usize>>,
    /// Items observed so far, by dataset.
    observed: Vec<usize>,
    quantities: Vec<Quantity>,
    /// Each quantity's interval method, in the same order.
    estimators: Vec<Box<dyn Estimator>>,
    /// The pairs' one-sided hypotheses ("no better", "no worse") in the
    /// family e-Holm controls, and how many it has rejected.
    family: crate::family::Family,
    waves: usize,
    /// Item answers (an item asked of a model) the waves handed out.
    answers: usize,
    /// The numbers of the waves handed out and not observed yet, oldest first.
    in_flight: std::collections::VecDeque<usize>,
}

impl Procedure {
    /// The procedure for `models` models over `datasets`.
    pub fn new(design: Design, models: usize, mut datasets: Vec<DatasetPlan>) -> Self {
        for dataset in &mut datasets {
            if dataset.turns.len() != dataset.len() {
                dataset.interleave(0);
            }
        }
        let pairs = models * models.saturating_sub(1) / 2 * datasets.len();
        let family = crate::family::Family::new(if design.decide.pairs() { 2 * pairs } else { 0 });
        // A pair's interval is read at α over the family's pairs until it is decided.
        let pair_alpha = design.alpha / pairs.max(1) as f64;
        let mut quantities = Vec::new();
        let mut estimators = Vec::new();
        for (d, dataset) in datasets.iter().enumerate() {
            let sizes: Vec<usize> = dataset.strata.iter().map(|s| s.items.len()).collect();
            let mut add = |measure: Measure, asked, alpha| {
                let aim = match measure {
                    Measure::Level { .. } => Some(design.precision),
                    Measure::Order { .. } => None,
                };
                let mut estimator = design.method.start(&sizes, alpha, aim);
                let (scale, shift) = measure.scale();
                quantities.push(Quantity {
                    dataset: d,
                    measure,
                    asked,
                    estimate: scale * estimator.estimate() + shift,
                    interval: estimator.interval().affine(scale, shift),
                    level: alpha,
                    decided: None,
                    direction: None,
                });
                estimators.push(estimator);
            };
            for model in 0..models {
                for level in [Level::Compliance, Level::Accuracy] {
                    add(
                        Measure::Level { model, level },
                        design.decide.levels(),
                        design.alpha,
                    );
                }
            }
            for first in 0..models {
                for second in first + 1..models {
                    add(
                        Measure::Order { first, second },
                        design.decide.pairs(),
                        pair_alpha,
                    );
                }
            }
        }
        Procedure {
            drawn: datasets.iter().map(|d| vec![0; d.strata.len()]).collect(),
            observed: vec![0; datasets.len()],
            design,
            models,
            datasets,
            quantities,
            estimators,
            family,
            waves: 0,
            answers: 0,
            in_flight: Default::default(),
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
        self.datasets.iter().map(DatasetPlan::len).sum::<usize>() * self.models
    }

    /// The settings in one line, for the run's first words.
    pub fn design_line(&self) -> String {
        self.design.line()
    }

    /// What a wave asks, in one line: `tasks` units still to run of it.
    pub fn wave_line(&self, wave: &Wave, units_per_answer: usize, tasks: usize) -> String {
        let answers: usize = wave
            .parts
            .iter()
            .map(|p| p.items.len() * p.models.len())
            .sum();
        let open = self.open_questions();
        format!(
            "wave {}: {} items, {} units ({tasks} to run); {open} question{} open",
            wave.number,
            wave.parts.iter().map(|p| p.items.len()).sum::<usize>(),
            answers * units_per_answer,
            if open == 1 { "" } else { "s" }
        )
    }

    /// Questions still open: undecided asked quantities, or under
    /// `--decide best` each dataset whose best is not decided.
    pub fn open_questions(&self) -> usize {
        if self.design.decide == Decide::Best {
            return (0..self.datasets.len())
                .filter(|&d| self.best(d).is_none())
                .count();
        }
        self.quantities
            .iter()
            .filter(|q| q.asked && q.decided.is_none())
            .count()
    }

    /// Item answers (an item asked of a model) the waves so far handed out.
    pub fn answers(&self) -> usize {
        self.answers
    }

    /// Items drawn so far in dataset `d`, and how many it has.
    pub fn items_drawn(&self, d: usize) -> (usize, usize) {
        (self.drawn[d].iter().sum(), self.datasets[d].len())
    }

    /// Waves handed out and not observed yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Hands out waves until as many are in flight as the design lets run
    /// ahead, or nothing more is needed: the waves to run next, in order.
    pub fn hand_out(&mut self) -> Vec<Wave> {
        let mut waves = Vec::new();
        while self.in_flight.len() <= self.design.ahead {
            match self.next_wave() {
                Some(wave) => waves.push(wave),
                None => break,
            }
        }
        waves
    }

    /// Whether everything asked is decided.
    pub fn finished(&self) -> bool {
        (0..self.datasets.len()).all(|d| self.needed(d).is_empty())
    }

    /// Under `--decide best`, dataset `d`'s best model once decided: the
    /// one model no decided pair puts below another, decided above every
    /// other model by its own pair.
    pub fn best(&self, d: usize) -> Option<usize> {
        let candidates = self.candidates(d);
        let &[best] = candidates.as_slice() else {
            return None;
        };
        let above_all = self
            .pairs_of(d, best)
            .all(|(q, _)| q.winner() == Some(best));
        above_all.then_some(best)
    }

    /// Dataset `d`'s models that no decided pair puts below another.
    fn candidates(&self, d: usize) -> Vec<usize> {
        let mut beaten = vec![false; self.models];
        for q in self.quantities.iter().filter(|q| q.dataset == d) {
            if let (Some(winner), Measure::Order { first, second }) = (q.winner(), q.measure) {
                beaten[if winner == first { second } else { first }] = true;
            }
        }
        (0..self.models).filter(|&m| !beaten[m]).collect()
    }

    /// Dataset `d`'s pairs of `model`, each with the other model.
    fn pairs_of(&self, d: usize, model: usize) -> impl Iterator<Item = (&Quantity, usize)> {
        self.quantities
            .iter()
            .filter(move |q| q.dataset == d)
            .filter_map(move |q| q.pair_of(model).map(|other| (q, other)))
    }

    /// The models dataset `d` still needs (none once all it is asked is
    /// decided, or its items are all drawn).
    fn needed(&self, d: usize) -> Vec<usize> {
        let (drawn, total) = self.items_drawn(d);
        let mut models = vec![false; self.models];
        if drawn < total {
            if self.design.decide == Decide::Best {
                self.needed_for_best(d, &mut models);
            } else {
                for q in self.undecided(d) {
                    for m in q.models() {
                        models[m] = true;
                    }
                }
            }
        }
        (0..self.models).filter(|&m| models[m]).collect()
    }

    /// Marks the models the best of dataset `d` still needs: every
    /// candidate, and each model a candidate's pair with is undecided.
    /// (The set only shrinks, so no sequence misses a draw and resumes.)
    fn needed_for_best(&self, d: usize, models: &mut [bool]) {
        if self.best(d).is_some() {
            return;
        }
        for c in self.candidates(d) {
            models[c] = true;
            for (q, other) in self.pairs_of(d, c) {
                if q.decided.is_none() {
                    models[other] = true;
                }
            }
        }
    }

    fn undecided(&self, d: usize) -> impl Iterator<Item = &Quantity> {
        self.quantities
            .iter()
            .filter(move |q| q.dataset == d && q.asked && q.decided.is_none())
    }

    /// Runs to the end on outcomes known in advance (a replay, a
    /// simulation), handing waves out ahead as a run does; `after` sees the
    /// procedure after each wave is observed.
    pub fn run_on(
        &mut self,
        outcome: impl Fn(usize, &str) -> ItemOutcome,
        mut after: impl FnMut(&Procedure),
    ) {
        let mut waves = std::collections::VecDeque::new();
        loop {
            waves.extend(self.hand_out());
            let Some(wave) = waves.pop_front() else {
                return;
            };
            self.observe(&wave, &outcome);
            after(self);
        }
    }

    /// The next wave, or `None` when everything asked is decided (or every
    /// item drawn): chosen from the waves observed, while at most
    /// `design.ahead` others are in flight. (`None` is final: what is
    /// needed only shrinks as decisions come.)
    pub fn next_wave(&mut self) -> Option<Wave> {
        assert!(
            self.in_flight.len() <= self.design.ahead,
            "a wave is handed out while {} are in flight",
            self.in_flight.len()
        );
        let mut parts = Vec::new();
        for d in 0..self.datasets.len() {
            let models = self.needed(d);
            if models.is_empty() {
                continue;
            }
            let items = if self.design.method.bets() {
                self.take_turns(d)
            } else {
                let (drawn, total) = self.items_drawn(d);
                let counts = self.split(d, drawn, total);
                self.take(d, &counts)
            };
            let mut counts = vec![0; self.datasets[d].strata.len()];
            for (h, _) in &items {
                counts[*h] += 1;
            }
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
        self.in_flight.push_back(self.waves);
        Some(Wave {
            number: self.waves,
            parts,
        })
    }

    /// The next items of dataset `d` in its one uniform order: the strata
    /// in their turns, each stratum's items in its own order.
    fn take_turns(&mut self, d: usize) -> Vec<(usize, String)> {
        let (drawn, total) = self.items_drawn(d);
        let size = self
            .design
            .wave_size(drawn, total, self.datasets[d].strata.len())
            .min(total - drawn);
        let plan = &self.datasets[d];
        let mut items = Vec::with_capacity(size);
        for &h in &plan.turns[drawn..drawn + size] {
            items.push((h, plan.strata[h].items[self.drawn[d][h]].clone()));
            self.drawn[d][h] += 1;
        }
        items
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
    /// decides what they settle. Waves are observed in the order handed out.
    pub fn observe(&mut self, wave: &Wave, outcome: impl Fn(usize, &str) -> ItemOutcome) {
        assert_eq!(
            self.in_flight.pop_front(),
            Some(wave.number),
            "waves are observed in the order they are handed out"
        );
        for part in &wave.parts {
            self.observed[part.dataset] += part.items.len();
            for (q, e) in self.quantities.iter_mut().zip(&mut self.estimators) {
                if q.dataset != part.dataset || !q.models().iter().all(|m| part.models.contains(m))
                {
                    continue;
                }
                for (h, item) in &part.items {
                    e.observe(*h, q.value(&|m| outcome(m, item)));
                }
                let (scale, shift) = q.measure.scale();
                q.estimate = scale * e.estimate() + shift;
                q.interval = e.interval().affine(scale, shift);
            }
        }
        self.settle(wave.number);
    }

    /// Decides every pair the family's e-Holm now rejects, after wave
    /// `wave`; each is read from then on at the level of its decision.
    fn reject_pairs(&mut self, wave: usize) {
        loop {
            let evidence = self
                .quantities
                .iter()
                .zip(&self.estimators)
                .enumerate()
                .filter(|(_, (q, _))| {
                    q.asked && q.decided.is_none() && matches!(q.measure, Measure::Order { .. })
                })
                .filter_map(|(i, (_, e))| e.evidence().map(|(up, down)| (i, up, down)));
            let Some(rejection) = self.family.next(self.design.alpha, evidence) else {
                return;
            };
            let decided = self.decided_now(self.quantities[rejection.pair].dataset, wave, false);
            let (q, e) = (
                &mut self.quantities[rejection.pair],
                &mut self.estimators[rejection.pair],
            );
            e.read_at(rejection.level);
            let (scale, shift) = q.measure.scale();
            q.interval = e.interval().affine(scale, shift);
            q.level = rejection.level;
            q.direction = Some(rejection.direction);
            q.decided = Some(decided);
        }
    }

    /// A decision in dataset `d` after wave `wave`, on what is observed now.
    fn decided_now(&self, d: usize, wave: usize, spent: bool) -> Decided {
        decided_at(&self.drawn[d], self.observed[d], wave, spent)
    }

    /// Marks what the intervals and e-values now settle, after wave `wave`.
    fn settle(&mut self, wave: usize) {
        if self.design.method.bets() {
            self.reject_pairs(wave);
        }
        let at = |d: usize, spent| Some(decided_at(&self.drawn[d], self.observed[d], wave, spent));
        for (q, e) in self.quantities.iter_mut().zip(&self.estimators) {
            if q.decided.is_some() {
                continue;
            }
            let decided = |spent| at(q.dataset, spent);
            if e.complete() {
                q.decided = decided(true);
                if matches!(q.measure, Measure::Order { .. }) {
                    q.direction = Some(q.interval.side_of_zero());
                }
                continue;
            }
            match q.measure {
                Measure::Level { .. } if q.interval.half_width() <= self.design.precision => {
                    q.decided = decided(false);
                }
                // Without bets, a pair is decided once its interval (at α
                // over the pairs: Bonferroni) leaves zero.
                Measure::Order { .. }
                    if !self.design.method.bets() && q.interval.side_of_zero().is_ne() =>
                {
                    q.decided = decided(false);
                    q.direction = Some(q.interval.side_of_zero());
                }
                _ => {}
            }
        }
    }
}

/// A decision after wave `wave` on `observed` items, with a dataset's items
/// `drawn` by stratum (those beyond the observed are in flight).
fn decided_at(drawn: &[usize], observed: usize, wave: usize, spent: bool) -> Decided {
    Decided {
        wave,
        items: observed,
        in_flight: drawn.iter().sum::<usize>() - observed,
        spent,
    }
}

//! The interval methods a procedure can run on: betting (what a run uses),
//! the empirical-Bernstein sequence it replaced, and the naive fixed-sample
//! interval; the last two only for `bench-decided`'s comparison.

use crate::naive::FixedSample;
use crate::pooled::PooledBetting;
use crate::sequence::{Estimator, StratifiedSequence};
use serde::{Deserialize, Serialize};

/// No bet risks more than this share of the capital. Betting everything
/// (1) would refute a candidate for good on one value against it; at 0.9
/// a model that answers every item right is placed as fast as by the
/// Clopper–Pearson interval, within a few items (docs/METRICS.md).
pub const TRUNCATION: f64 = 0.9;

/// How the intervals and the pairs' decisions are made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Betting confidence sequences, the items drawn in one uniform order;
    /// a pair's order by its e-process, the pairs' family by e-Holm.
    #[default]
    Betting,
    /// The stratified empirical-Bernstein sequence, Bonferroni over pairs,
    /// waves split among strata (the procedure betting replaced).
    Bernstein,
    /// A fixed-sample interval looked at after every wave (invalid: kept
    /// to show the coverage check can fail).
    Naive,
}

impl Method {
    /// The method's interval of a population whose strata hold `sizes`
    /// values, at level `alpha`, to be decided at a half-width of `aim`
    /// when it has one (a level's precision; betting aims its bets at it).
    pub fn start(self, sizes: &[usize], alpha: f64, aim: Option<f64>) -> Box<dyn Estimator> {
        match self {
            Method::Betting => Box::new(PooledBetting::new(sizes, alpha, TRUNCATION, aim)),
            Method::Bernstein => Box::new(StratifiedSequence::new(sizes, alpha)),
            Method::Naive => Box::new(FixedSample::new(sizes, alpha)),
        }
    }

    /// Whether it bets: items drawn in one uniform order and pairs decided
    /// by their e-processes.
    pub fn bets(self) -> bool {
        self == Method::Betting
    }
}

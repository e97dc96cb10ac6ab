//! The betting confidence sequence of one dataset's mean, its items drawn
//! in one uniformly random order (strata interleaved at random): each draw
//! is then uniform over the items not drawn yet, so the hedged-capital
//! sequence for sampling without replacement ([`crate::betting`]) covers
//! the plan's own mean, the strata's weighted by their sizes, at every
//! wave at once (docs/METRICS.md, "Deciding with fewer calls").

use crate::betting::HedgedSequence;
use crate::sequence::{Estimator, Interval};

/// A dataset's mean by betting (see the module's doc).
#[derive(Clone, Debug)]
pub struct PooledBetting {
    sequence: HedgedSequence,
    /// The level the interval is read at.
    reading: f64,
    /// Per stratum: values drawn, their sum, their sum of squares.
    strata: Vec<(usize, f64, f64)>,
}

impl PooledBetting {
    /// The sequence of a population whose strata hold `sizes` values,
    /// read at `alpha` and at no level below it, bets risking at most
    /// `truncation` of the capital and aimed at a half-width of `aim` when given.
    pub fn new(sizes: &[usize], alpha: f64, truncation: f64, aim: Option<f64>) -> Self {
        let size: usize = sizes.iter().sum();
        let mut sequence =
            HedgedSequence::new(alpha, Some(size as u64)).with_truncation(truncation);
        if let Some(aim) = aim {
            sequence = sequence.aimed_at(aim);
        }
        PooledBetting {
            sequence,
            reading: alpha,
            strata: vec![(0, 0.0, 0.0); sizes.len()],
        }
    }
}

impl Estimator for PooledBetting {
    /// The bets are made draw by draw: a wave changes nothing.
    fn begin_wave(&mut self, _counts: &[usize]) {}

    fn observe(&mut self, h: usize, x: Option<f64>) {
        if self.sequence.complete() {
            return;
        }
        match x {
            None => self.sequence.skip(),
            Some(x) => {
                let x = x.clamp(0.0, 1.0);
                self.sequence.push(x);
                let s = &mut self.strata[h];
                s.0 += 1;
                s.1 += x;
                s.2 += x * x;
            }
        }
    }

    /// The mean of the draws (½ before any): the draws are uniform over the population.
    fn estimate(&self) -> f64 {
        self.sequence.mean()
    }

    fn interval(&mut self) -> Interval {
        let (lower, upper) = self.sequence.interval_at(self.reading);
        Interval { lower, upper }
    }

    fn stratum_sd(&self, h: usize) -> f64 {
        let (n, sum, squares) = self.strata[h];
        let n1 = n as f64 + 1.0;
        let mean = (sum + 0.5) / n1;
        ((squares + 0.25) / n1 - mean * mean).max(0.0).sqrt()
    }

    fn complete(&self) -> bool {
        self.sequence.complete()
    }

    fn evidence(&self) -> Option<(f64, f64)> {
        Some(self.sequence.evidence())
    }

    fn read_at(&mut self, level: f64) {
        self.reading = level;
    }

    fn boxed_clone(&self) -> Box<dyn Estimator> {
        Box::new(self.clone())
    }
}

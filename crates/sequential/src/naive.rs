//! The interval a naive implementation would peek at after every wave: the
//! fixed-sample normal interval of the stratified mean, with the finite
//! population correction. It holds 1 − α at one fixed sample size; looked
//! at after every wave and stopped on, it does not, which the validity
//! simulation shows. Nothing in a run uses it.

use crate::sequence::{stratified_mean, weights, Estimator, Interval};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

/// One stratum's sums.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Sums {
    size: usize,
    drawn: usize,
    sum: f64,
    squares: f64,
}

/// The fixed-sample interval, recomputed at every look.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FixedSample {
    z: f64,
    weights: Vec<f64>,
    strata: Vec<Sums>,
}

impl FixedSample {
    /// The interval of a population whose strata hold `sizes` values, at level 1 − `alpha`.
    pub fn new(sizes: &[usize], alpha: f64) -> Self {
        FixedSample {
            z: Normal::standard().inverse_cdf(1.0 - alpha / 2.0),
            weights: weights(sizes),
            strata: sizes
                .iter()
                .map(|&size| Sums {
                    size,
                    ..Sums::default()
                })
                .collect(),
        }
    }
}

impl Estimator for FixedSample {
    fn begin_wave(&mut self, _counts: &[usize]) {}

    fn observe(&mut self, h: usize, x: Option<f64>) {
        let s = &mut self.strata[h];
        match x {
            None => s.size = s.size.saturating_sub(1).max(s.drawn),
            Some(x) => {
                s.drawn += 1;
                s.sum += x;
                s.squares += x * x;
            }
        }
    }

    fn estimate(&self) -> f64 {
        stratified_mean(
            self.strata
                .iter()
                .zip(&self.weights)
                .map(|(s, w)| (*w, s.drawn, s.sum)),
        )
    }

    fn interval(&mut self) -> Interval {
        if self.strata.iter().any(|s| s.drawn < 2 && s.drawn < s.size) {
            return Interval {
                lower: 0.0,
                upper: 1.0,
            };
        }
        let variance: f64 = self
            .strata
            .iter()
            .zip(&self.weights)
            .map(|(s, w)| {
                let n = s.drawn as f64;
                let mean = s.sum / n;
                let sample = (s.squares - n * mean * mean).max(0.0) / (n - 1.0).max(1.0);
                let correction = 1.0 - n / s.size.max(1) as f64;
                w * w * sample / n * correction
            })
            .sum();
        let centre = self.estimate();
        let half = self.z * variance.sqrt();
        Interval {
            lower: (centre - half).max(0.0),
            upper: (centre + half).min(1.0),
        }
    }

    fn stratum_sd(&self, h: usize) -> f64 {
        let s = &self.strata[h];
        let n = s.drawn as f64 + 1.0;
        let mean = (s.sum + 0.5) / n;
        ((s.squares + 0.25) / n - mean * mean).max(0.0).sqrt()
    }

    fn complete(&self) -> bool {
        self.strata.iter().all(|s| s.drawn >= s.size)
    }

    fn boxed_clone(&self) -> Box<dyn Estimator> {
        Box::new(self.clone())
    }
}

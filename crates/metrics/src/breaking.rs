//! Breaking complexity: where a model's accuracy falls through one half.
//!
//! Accuracy is fitted against complexity by a logistic regression on the
//! rounds at each complexity (maximum likelihood by Newton's method with
//! step halving), and the complexity at which the fitted accuracy is 50%
//! is given with Fieller's interval for the ratio −intercept/slope. The
//! band and the interval are fixed-time: they hold for the records as they
//! stand when computed, not at every look at a run as it goes (the
//! intervals of `--until decided` are the anytime-valid ones).

use statrs::distribution::{ContinuousCDF, Normal};
use thiserror::Error;

/// The rounds at one complexity: how many there were, how many succeeded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tally {
    /// The complexity value.
    pub complexity: f64,
    /// Rounds that succeeded (for A3, verified equivalent).
    pub successes: usize,
    /// Rounds counted.
    pub trials: usize,
}

/// Why no logistic curve is fitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum NoFit {
    /// Fewer than two complexities have rounds: no slope to fit.
    #[error("rounds at fewer than two complexities")]
    OneComplexity,
    /// Every round succeeded, or every round failed.
    #[error("every round {0}")]
    AllAlike(&'static str),
    /// The outcomes split cleanly by complexity, so the best fit is a step
    /// with no finite slope.
    #[error("the outcomes split cleanly by complexity (no finite fit)")]
    Separated,
}

/// A fitted curve: logit(accuracy) = intercept + slope × complexity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogisticFit {
    /// The intercept on the logit scale.
    pub intercept: f64,
    /// The change in log-odds per unit of complexity.
    pub slope: f64,
    /// The estimates' covariance (inverse Fisher information): intercept
    /// variance, covariance, slope variance.
    pub covariance: (f64, f64, f64),
}

/// Where the fitted accuracy crosses 50%.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Crossing {
    /// The curve crosses at `at`; Fieller's interval is `[low, high]`.
    Bounded {
        /// The complexity at which the fitted accuracy is 50%.
        at: f64,
        /// The interval's lower end.
        low: f64,
        /// The interval's upper end.
        high: f64,
    },
    /// The slope is not told apart from flat at this confidence, so the
    /// crossing could lie anywhere; `at` is the point estimate.
    Unbounded {
        /// The complexity at which the fitted accuracy is 50%.
        at: f64,
    },
}

/// The logistic function.
fn sigmoid(eta: f64) -> f64 {
    1.0 / (1.0 + (-eta).exp())
}

/// The normal quantile of a two-sided interval at `confidence`.
fn z_of(confidence: f64) -> f64 {
    Normal::standard().inverse_cdf(0.5 + confidence / 2.0)
}

/// Above this slope (log-odds per unit of complexity, on centred data) the
/// fit is running off to a step: the data are separated.
const SEPARATED_SLOPE: f64 = 30.0;

/// The log-likelihood, gradient and information of (intercept, slope) on
/// centred complexities.
fn newton_terms(rows: &[(f64, f64, f64)], a: f64, b: f64) -> (f64, [f64; 2], [f64; 3]) {
    let (mut ll, mut g, mut info) = (0.0, [0.0; 2], [0.0; 3]);
    for &(x, k, n) in rows {
        let eta = a + b * x;
        let p = sigmoid(eta);
        // log(1 + e^eta) computed without overflow.
        let softplus = eta.max(0.0) + (-eta.abs()).exp().ln_1p();
        ll += k * eta - n * softplus;
        let r = k - n * p;
        g[0] += r;
        g[1] += r * x;
        let w = n * p * (1.0 - p);
        info[0] += w;
        info[1] += w * x;
        info[2] += w * x * x;
    }
    (ll, g, info)
}

/// The inverse of the symmetric 2×2 matrix (aa, ab, bb), if it has one.
fn invert(m: [f64; 3]) -> Option<[f64; 3]> {
    let det = m[0] * m[2] - m[1] * m[1];
    (det > 1e-12 * (m[0] * m[2]).abs().max(f64::MIN_POSITIVE))
        .then(|| [m[2] / det, -m[1] / det, m[0] / det])
}

impl LogisticFit {
    /// The maximum-likelihood curve through `tallies`.
    pub fn fit(tallies: &[Tally]) -> Result<Self, NoFit> {
        let counted: Vec<&Tally> = tallies.iter().filter(|t| t.trials > 0).collect();
        let trials: f64 = counted.iter().map(|t| t.trials as f64).sum();
        let successes: f64 = counted.iter().map(|t| t.successes as f64).sum();
        let first = counted.first().map(|t| t.complexity);
        if counted.iter().all(|t| Some(t.complexity) == first) {
            return Err(NoFit::OneComplexity);
        }
        if successes == trials {
            return Err(NoFit::AllAlike("succeeded"));
        }
        if successes == 0.0 {
            return Err(NoFit::AllAlike("failed"));
        }
        // Centred, so that the intercept and slope are nearly uncorrelated
        // and Newton's steps well conditioned.
        let mean = counted
            .iter()
            .map(|t| t.complexity * t.trials as f64)
            .sum::<f64>()
            / trials;
        let rows: Vec<(f64, f64, f64)> = counted
            .iter()
            .map(|t| (t.complexity - mean, t.successes as f64, t.trials as f64))
            .collect();
        let share = successes / trials;
        let (mut a, mut b) = ((share / (1.0 - share)).ln(), 0.0);
        let (mut ll, mut g, mut info) = newton_terms(&rows, a, b);
        for _ in 0..200 {
            let inv = invert(info).ok_or(NoFit::Separated)?;
            let step = [inv[0] * g[0] + inv[1] * g[1], inv[1] * g[0] + inv[2] * g[1]];
            // Halve the step until the likelihood does not fall.
            let mut t = 1.0;
            let (na, nb, terms) = loop {
                let (na, nb) = (a + t * step[0], b + t * step[1]);
                let terms = newton_terms(&rows, na, nb);
                if terms.0 >= ll - 1e-12 || t < 1e-8 {
                    break (na, nb, terms);
                }
                t /= 2.0;
            };
            let moved = (na - a).abs() + (nb - b).abs();
            (a, b) = (na, nb);
            (ll, g, info) = terms;
            if b.abs() > SEPARATED_SLOPE {
                return Err(NoFit::Separated);
            }
            if moved < 1e-10 {
                let c = invert(info).ok_or(NoFit::Separated)?;
                // Back from centred complexities: intercept = a − b·mean.
                return Ok(LogisticFit {
                    intercept: a - b * mean,
                    slope: b,
                    covariance: (
                        c[0] - 2.0 * mean * c[1] + mean * mean * c[2],
                        c[1] - mean * c[2],
                        c[2],
                    ),
                });
            }
        }
        Err(NoFit::Separated)
    }

    /// The fitted accuracy at `complexity`.
    pub fn at(&self, complexity: f64) -> f64 {
        sigmoid(self.intercept + self.slope * complexity)
    }

    /// The pointwise band of the fitted accuracy at `complexity` (the
    /// interval of the linear predictor, mapped through the logistic).
    pub fn band(&self, complexity: f64, confidence: f64) -> (f64, f64) {
        let (vaa, vab, vbb) = self.covariance;
        let x = complexity;
        let sd = (vaa + 2.0 * x * vab + x * x * vbb).max(0.0).sqrt();
        let eta = self.intercept + self.slope * x;
        let z = z_of(confidence);
        (sigmoid(eta - z * sd), sigmoid(eta + z * sd))
    }

    /// Where the fitted accuracy is 50%, with Fieller's interval at
    /// `confidence`: the complexities x at which intercept + slope·x is
    /// not told apart from 0. `None` for a flat fit.
    pub fn crossing(&self, confidence: f64) -> Option<Crossing> {
        let (a, b) = (self.intercept, self.slope);
        if b == 0.0 {
            return None;
        }
        let at = -a / b;
        let (vaa, vab, vbb) = self.covariance;
        let z2 = z_of(confidence).powi(2);
        // (a + b·x)² ≤ z²·Var(a + b·x), a quadratic in x.
        let qa = b * b - z2 * vbb;
        let qb = a * b - z2 * vab;
        let qc = a * a - z2 * vaa;
        if qa <= 0.0 {
            return Some(Crossing::Unbounded { at });
        }
        let root = (qb * qb - qa * qc).max(0.0).sqrt();
        Some(Crossing::Bounded {
            at,
            low: (-qb - root) / qa,
            high: (-qb + root) / qa,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

    use super::*;

    /// Tallies of `n` rounds at complexities 1..=10 from the curve
    /// logit p = a + b·x, with the successes `draw` makes of each p.
    fn tallies(n: usize, mut draw: impl FnMut(f64) -> usize) -> Vec<Tally> {
        (1..=10)
            .map(|c| Tally {
                complexity: c as f64,
                successes: draw(sigmoid(2.0 - 0.4 * c as f64)),
                trials: n,
            })
            .collect()
    }

    #[test]
    fn the_curve_the_shares_follow_is_the_fit_and_it_crosses_where_it_falls_to_half() {
        let n = 100_000;
        let exact = tallies(n, |p| (p * n as f64).round() as usize);
        let fit = LogisticFit::fit(&exact).unwrap();
        assert!((fit.intercept - 2.0).abs() < 0.01, "{fit:?}");
        assert!((fit.slope + 0.4).abs() < 0.002, "{fit:?}");
        assert!((fit.at(5.0) - 0.5).abs() < 0.002);
        let Some(Crossing::Bounded { at, low, high }) = fit.crossing(0.95) else {
            panic!("{:?}", fit.crossing(0.95));
        };
        assert!((at - 5.0).abs() < 0.02 && low < 5.0 && 5.0 < high && high - low < 0.1);
        let (lo, hi) = fit.band(5.0, 0.95);
        assert!(lo < 0.5 && 0.5 < hi && hi - lo < 0.01);
    }

    #[test]
    fn fiellers_interval_covers_the_true_crossing_about_as_often_as_it_says() {
        // A seeded xorshift generator: the test needs draws, not a crate.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let runs = 400;
        let mut covered = 0;
        for _ in 0..runs {
            let data = tallies(40, |p| (0..40).filter(|_| uniform() < p).count());
            if let Ok(fit) = LogisticFit::fit(&data) {
                if let Some(Crossing::Bounded { low, high, .. }) = fit.crossing(0.95) {
                    covered += usize::from(low <= 5.0 && 5.0 <= high);
                }
            }
        }
        // 95% nominal; at 400 runs a share under 92% would be 2.8 standard errors short.
        assert!(covered as f64 / runs as f64 >= 0.92, "{covered} of {runs}");
    }

    #[test]
    fn a_flat_curve_has_no_bounded_crossing_and_alike_or_split_outcomes_no_fit() {
        let flat = tallies(20, |_| 14);
        let fit = LogisticFit::fit(&flat).unwrap();
        assert!(fit.slope.abs() < 1e-6);
        assert!(matches!(
            fit.crossing(0.95),
            None | Some(Crossing::Unbounded { .. })
        ));
        assert_eq!(
            LogisticFit::fit(&tallies(20, |_| 20)),
            Err(NoFit::AllAlike("succeeded"))
        );
        let split = tallies(20, |p| if p > 0.5 { 20 } else { 0 });
        assert_eq!(LogisticFit::fit(&split), Err(NoFit::Separated));
        assert_eq!(
            LogisticFit::fit(&tallies(20, |_| 3)[..1]),
            Err(NoFit::OneComplexity)
        );
    }
}

//! A confidence sequence for the mean of a finite, stratified population of
//! values in [0, 1], sampled without replacement within each stratum, the
//! strata drawn in waves of sizes chosen as the run goes.
//!
//! It is the predictable plug-in empirical-Bernstein confidence sequence for
//! sampling without replacement (Waudby-Smith & Ramdas 2020; the
//! bound of Howard et al. 2021), carried to strata: under the true stratum
//! means, draw i from stratum h has conditional mean
//! `(N_h μ_h − S_h) / (N_h − n_h)` (what is left of the stratum), so
//!
//! ```text
//! M_t(μ) = Π exp(λ_i (x_i − (N_h μ_h − S_h)/(N_h − n_h)) − v_i ψ_E(λ_i))
//! ```
//!
//! is a non-negative supermartingale for any predictable bet λ_i ∈ [0, 1),
//! with `v_i = 4 (x_i − x̂_i)²` for a predictable guess x̂_i and
//! `ψ_E(λ) = (−log(1 − λ) − λ) / 4`. Its logarithm is `A − Σ_h B_h μ_h − V`,
//! linear in the stratum means. The bets of a wave are set so that every
//! stratum's `B_h` grows in proportion to its weight `w_h = N_h / N`; then
//! `Σ_h B_h μ_h = c · Σ_h w_h μ_h` is a multiple of the pooled mean alone,
//! and by Ville's inequality the set of pooled means that `M` (and its
//! mirror for the upper side) has not pushed past `2/α` covers the truth at
//! every wave at once with probability at least 1 − α. Where a wave could not
//! keep the proportion exactly (a stratum drawn out, a wave cut short), the
//! excess is bounded by what the stratum can still hold, which is never
//! wrong and costs nothing once a stratum is drawn out.

use serde::{Deserialize, Serialize};

/// The largest bet: λ near 1 makes `ψ_E` blow up.
const MAX_BET: f64 = 0.5;

/// A closed interval of means.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Its lower end.
    pub lower: f64,
    /// Its upper end.
    pub upper: f64,
}

impl Interval {
    /// Half its width.
    pub fn half_width(&self) -> f64 {
        (self.upper - self.lower) / 2.0
    }

    /// Whether it holds `x`.
    pub fn contains(&self, x: f64) -> bool {
        self.lower <= x && x <= self.upper
    }

    /// Whether it lies above zero, below it, or holds it (a difference
    /// within rounding of zero is zero).
    pub fn side_of_zero(&self) -> std::cmp::Ordering {
        const ROUNDING: f64 = 1e-9;
        if self.lower > ROUNDING {
            std::cmp::Ordering::Greater
        } else if self.upper < -ROUNDING {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Equal
        }
    }

    /// This interval's image under `x ↦ scale·x + shift` (`scale` > 0).
    pub fn affine(&self, scale: f64, shift: f64) -> Interval {
        Interval {
            lower: scale * self.lower + shift,
            upper: scale * self.upper + shift,
        }
    }
}

/// The stratified estimate of strata given as (weight, values drawn, their
/// sum): each stratum's mean so far weighted by its share of the
/// population, strata not drawn yet left out; ½ before any draw.
pub fn stratified_mean(strata: impl Iterator<Item = (f64, usize, f64)>) -> f64 {
    let (mut sum, mut weight) = (0.0, 0.0);
    for (w, drawn, total) in strata {
        if drawn > 0 {
            sum += w * total / drawn as f64;
            weight += w;
        }
    }
    if weight == 0.0 {
        0.5
    } else {
        sum / weight
    }
}

/// Each stratum's share of a population whose strata hold `sizes` values.
pub fn weights(sizes: &[usize]) -> Vec<f64> {
    let total: usize = sizes.iter().sum();
    sizes
        .iter()
        .map(|&n| n as f64 / total.max(1) as f64)
        .collect()
}

/// `ψ_E(λ)` of the empirical-Bernstein bound.
fn psi_e(bet: f64) -> f64 {
    (-(1.0 - bet).ln() - bet) / 4.0
}

/// One stratum's sums.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Stratum {
    /// Values it holds (N_h), less those that can never be observed.
    size: usize,
    /// Values drawn so far (n_h).
    drawn: usize,
    /// Their sum (S_h).
    sum: f64,
    /// Their sum of squared deviations from the running guess.
    squares: f64,
    /// Σ λ_i (x_i + S_h/(N_h − n_h)).
    a: f64,
    /// Σ λ_i N_h/(N_h − n_h).
    b: f64,
    /// Σ v_i ψ_E(λ_i).
    v: f64,
    /// This wave's bet scale: a draw's bet is this times what is left of the stratum.
    scale: f64,
}

impl Stratum {
    /// The predictable guess of the next value: the mean so far, pulled to ½.
    fn guess(&self) -> f64 {
        (0.5 + self.sum) / (self.drawn as f64 + 1.0)
    }

    /// The regularised variance of the values so far.
    fn variance(&self) -> f64 {
        (0.25 + self.squares) / (self.drawn as f64 + 1.0)
    }

    /// Whether every value it holds has been drawn.
    fn drawn_out(&self) -> bool {
        self.drawn >= self.size
    }

    /// The least and most its mean can be, given what was drawn.
    fn bounds(&self) -> (f64, f64) {
        if self.size == 0 {
            return (0.0, 1.0);
        }
        let n = self.size as f64;
        let left = (self.size - self.drawn.min(self.size)) as f64;
        (self.sum / n, (self.sum + left) / n)
    }
}

/// What the procedure needs of an interval method, so that the valid ones
/// and the naive one it is compared with run the same waves.
pub trait Estimator: std::fmt::Debug + Send {
    /// A wave is about to draw `counts[h]` values of stratum h.
    fn begin_wave(&mut self, counts: &[usize]);
    /// One drawn value of stratum `h`; `None` can never be observed.
    fn observe(&mut self, h: usize, x: Option<f64>);
    /// The point estimate.
    fn estimate(&self) -> f64;
    /// The interval after the values seen so far.
    fn interval(&mut self) -> Interval;
    /// The spread of stratum `h`'s values so far.
    fn stratum_sd(&self, h: usize) -> f64;
    /// Whether every value has been drawn (the mean is then known).
    fn complete(&self) -> bool;
    /// The e-values against "the mean is at most ½" and "at least ½",
    /// when the method bets; `None` when it only gives intervals.
    fn evidence(&self) -> Option<(f64, f64)> {
        None
    }
    /// From now on, gives its interval at level `level` (a method that
    /// bets; others keep theirs).
    fn read_at(&mut self, _level: f64) {}
    /// A copy of it.
    fn boxed_clone(&self) -> Box<dyn Estimator>;
}

impl Clone for Box<dyn Estimator> {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

/// The confidence sequence of one pooled mean (see the module's doc).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StratifiedSequence {
    alpha: f64,
    strata: Vec<Stratum>,
    /// Each stratum's share of the population, fixed at the start.
    weights: Vec<f64>,
    /// The running intersection of the intervals given so far.
    kept: Interval,
}

impl StratifiedSequence {
    /// The sequence of a population whose strata hold `sizes` values, at level 1 − `alpha`.
    pub fn new(sizes: &[usize], alpha: f64) -> Self {
        let weights = weights(sizes);
        StratifiedSequence {
            alpha,
            strata: sizes
                .iter()
                .map(|&size| Stratum {
                    size,
                    ..Stratum::default()
                })
                .collect(),
            weights,
            kept: Interval {
                lower: 0.0,
                upper: 1.0,
            },
        }
    }
}

impl Estimator for StratifiedSequence {
    /// Sets the bets of a wave that draws `counts[h]` values of stratum h,
    /// before any of them is seen: each stratum's `B_h` grows by the same
    /// multiple of its weight, as large as the tuned bet allows.
    fn begin_wave(&mut self, counts: &[usize]) {
        let drawn: usize = self.strata.iter().map(|s| s.drawn).sum();
        let wave: usize = counts.iter().sum();
        if wave == 0 {
            return;
        }
        // The tuned bet of Waudby-Smith & Ramdas at the wave's middle draw,
        // on the pooled variance so far.
        let variance: f64 = self
            .strata
            .iter()
            .zip(&self.weights)
            .map(|(s, w)| w * s.variance())
            .sum::<f64>()
            .max(1e-4);
        let t = drawn as f64 + (wave as f64 + 1.0) / 2.0;
        let tuned = (2.0 * (2.0 / self.alpha).ln() / (variance * t * (1.0 + t).ln())).sqrt();
        let mut growth = wave as f64 * tuned.min(MAX_BET);
        // No draw's bet may pass the cap: a stratum's largest bet is its first.
        for ((s, w), &k) in self.strata.iter().zip(&self.weights).zip(counts) {
            if k > 0 && *w > 0.0 {
                let left = (s.size - s.drawn.min(s.size)) as f64 / s.size as f64;
                growth = growth.min(MAX_BET * k as f64 / (w * left));
            }
        }
        for ((s, w), &k) in self.strata.iter_mut().zip(&self.weights).zip(counts) {
            s.scale = if k == 0 { 0.0 } else { growth * w / k as f64 };
        }
    }

    /// Takes in one drawn value `x` ∈ [0, 1] of stratum `h`, at the bet the
    /// wave set; `None` is a value that can never be observed (its stratum
    /// shrinks by one).
    fn observe(&mut self, h: usize, x: Option<f64>) {
        let s = &mut self.strata[h];
        let Some(x) = x else {
            s.size = s.size.saturating_sub(1).max(s.drawn);
            return;
        };
        if s.drawn_out() {
            return;
        }
        let x = x.clamp(0.0, 1.0);
        let n = s.size as f64;
        let left = (s.size - s.drawn) as f64;
        let bet = (s.scale * left / n).min(MAX_BET);
        let guess = s.guess();
        s.a += bet * (x + s.sum / left);
        s.b += bet * n / left;
        s.v += 4.0 * (x - guess).powi(2) * psi_e(bet);
        s.squares += (x - guess).powi(2);
        s.sum += x;
        s.drawn += 1;
    }

    /// The stratified estimate: each stratum's mean so far, weighted by its
    /// share of the population (strata not drawn yet left out).
    fn estimate(&self) -> f64 {
        stratified_mean(
            self.strata
                .iter()
                .zip(&self.weights)
                .map(|(s, w)| (*w, s.drawn, s.sum)),
        )
    }

    /// The standard deviation of stratum `h`'s values so far (regularised).
    fn stratum_sd(&self, h: usize) -> f64 {
        self.strata[h].variance().sqrt()
    }

    /// The interval now, intersected with every interval given before
    /// (`close` keeps it for the next).
    fn interval(&mut self) -> Interval {
        let now = self.interval_now();
        let mut kept = Interval {
            lower: self.kept.lower.max(now.lower),
            upper: self.kept.upper.min(now.upper),
        };
        if kept.lower > kept.upper {
            // An empty intersection is a miscoverage already (probability at
            // most α); it is given as the point between.
            let mid = (kept.lower + kept.upper) / 2.0;
            kept = Interval {
                lower: mid,
                upper: mid,
            };
        }
        self.kept = kept;
        kept
    }

    fn complete(&self) -> bool {
        self.strata.iter().all(Stratum::drawn_out)
    }

    fn boxed_clone(&self) -> Box<dyn Estimator> {
        Box::new(self.clone())
    }
}

impl StratifiedSequence {
    /// This wave's interval alone.
    fn interval_now(&self) -> Interval {
        let active = || {
            self.strata
                .iter()
                .zip(&self.weights)
                .filter(|(s, w)| !s.drawn_out() && **w > 0.0)
        };
        let (mut least, mut most) = (0.0, 0.0);
        for (s, w) in self.strata.iter().zip(&self.weights) {
            let (lo, hi) = s.bounds();
            least += w * lo;
            most += w * hi;
        }
        let sure = Interval {
            lower: least,
            upper: most,
        };
        if active().next().is_none() {
            return sure;
        }
        let c = active().map(|(s, w)| s.b / w).fold(f64::INFINITY, f64::min);
        if c <= 0.0 {
            return sure;
        }
        let (mut a, mut v, mut excess_most, mut excess_least) = (0.0, 0.0, 0.0, 0.0);
        for (s, w) in self.strata.iter().zip(&self.weights) {
            a += s.a;
            v += s.v;
            let excess = s.b - c * w;
            let (lo, hi) = s.bounds();
            excess_most += (excess * lo).max(excess * hi);
            excess_least += (excess * lo).min(excess * hi);
        }
        let log = (2.0 / self.alpha).ln();
        Interval {
            lower: ((a - excess_most - v - log) / c).max(sure.lower),
            upper: ((a - excess_least + v + log) / c).min(sure.upper),
        }
    }

    /// Values drawn so far, over every stratum.
    pub fn drawn(&self) -> usize {
        self.strata.iter().map(|s| s.drawn).sum()
    }

    /// Values drawn so far from stratum `h`, and how many it holds.
    pub fn stratum_drawn(&self, h: usize) -> (usize, usize) {
        (self.strata[h].drawn, self.strata[h].size)
    }
}

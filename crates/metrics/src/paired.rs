//! Comparisons of two models on the same items, and the size a run needs.
//!
//! Every model of a run answers the same generated items, so two models are
//! compared item by item: the difference of their scores on the items both
//! answered, its interval, and an exact test on the items where they differ.
//! The item is the unit of independence: a run with repeats gives each item
//! its share of successes, and intervals are clustered by item, never
//! counting repeats as fresh evidence.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};
use std::collections::BTreeMap;

/// One arm's outcomes: per item, successes and trials (repeats measured).
pub type Outcomes = BTreeMap<String, (u32, u32)>;

/// The normal quantile of `p`.
fn z(p: f64) -> f64 {
    Normal::new(0.0, 1.0)
        .map(|n| n.inverse_cdf(p))
        .unwrap_or(f64::NAN)
}

/// The two-sided 95% normal quantile.
fn z95() -> f64 {
    z(0.975)
}

/// A score with its 95% interval clustered by item.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Clustered {
    /// Successes over trials, all repeats of all items.
    pub mean: f64,
    /// Cluster-robust standard error (items as clusters, small-sample corrected).
    pub se: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Items.
    pub items: usize,
    /// Trials.
    pub trials: u64,
}

/// The share of successes of `outcomes` with its interval clustered by
/// item: the sandwich estimator of a mean with items as clusters and the
/// usual G/(G−1) correction; `None` with fewer than two items.
pub fn clustered(outcomes: &Outcomes) -> Option<Clustered> {
    let mut sums = ClusterSums::default();
    for &(s, n) in outcomes.values() {
        sums.add(s, n);
    }
    sums.clustered()
}

/// What [`clustered`] needs of an arm's items, summed item by item, so
/// that an item's outcomes can be let go once it is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterSums {
    items: usize,
    s: f64,
    n: f64,
    ss: f64,
    sn: f64,
    nn: f64,
}

impl ClusterSums {
    /// Counts one item's successes `s` of `n` trials (an item without trials is none).
    pub fn add(&mut self, s: u32, n: u32) {
        if n == 0 {
            return;
        }
        let (s, n) = (f64::from(s), f64::from(n));
        self.items += 1;
        self.s += s;
        self.n += n;
        self.ss += s * s;
        self.sn += s * n;
        self.nn += n * n;
    }

    /// The clustered score of the items counted; `None` with fewer than two.
    pub fn clustered(&self) -> Option<Clustered> {
        if self.items < 2 {
            return None;
        }
        let mean = self.s / self.n;
        // Σ (s − n·mean)², expanded so that no item need be kept.
        let scatter = (self.ss - 2.0 * mean * self.sn + mean * mean * self.nn).max(0.0);
        let g = self.items as f64;
        let se = (g / (g - 1.0) * scatter).sqrt() / self.n;
        Some(Clustered {
            mean,
            se,
            low: (mean - z95() * se).max(0.0),
            high: (mean + z95() * se).min(1.0),
            items: self.items,
            trials: self.n as u64,
        })
    }
}

/// Model A against model B on the items both answered.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    /// Items both answered.
    pub items: usize,
    /// Mean over items of A's share minus B's.
    pub difference: f64,
    /// Lower bound of its 95% interval (`None` with fewer than two items).
    pub low: Option<f64>,
    /// Upper bound.
    pub high: Option<f64>,
    /// Items on which A did better.
    pub a_better: usize,
    /// Items on which B did better.
    pub b_better: usize,
    /// Two-sided exact sign test over the items where they differ (with
    /// one repeat, McNemar's exact test on the discordant pairs).
    pub p_value: f64,
}

/// A minus B over the items both answered: each item's difference of shares,
/// their mean, a normal interval from their spread (clustered by item by
/// construction), and the exact test on the items where they differ.
pub fn difference(a: &Outcomes, b: &Outcomes) -> Option<Difference> {
    let mut sums = PairSums::default();
    for (item, &outcome_a) in a {
        if let Some(&outcome_b) = b.get(item) {
            sums.add(outcome_a, outcome_b);
        }
    }
    sums.difference()
}

/// What [`difference`] needs of the items two arms both answered, summed
/// item by item.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PairSums {
    items: usize,
    sum: f64,
    squares: f64,
    a_better: usize,
    b_better: usize,
}

impl PairSums {
    /// Counts one item's (successes, trials) of A and of B; an item one of
    /// them has no trial of is not one both answered.
    pub fn add(&mut self, (sa, na): (u32, u32), (sb, nb): (u32, u32)) {
        if na == 0 || nb == 0 {
            return;
        }
        let d = f64::from(sa) / f64::from(na) - f64::from(sb) / f64::from(nb);
        self.items += 1;
        self.sum += d;
        self.squares += d * d;
        if d > 0.0 {
            self.a_better += 1;
        } else if d < 0.0 {
            self.b_better += 1;
        }
    }

    /// A minus B over the items counted; `None` with none.
    pub fn difference(&self) -> Option<Difference> {
        let n = self.items;
        if n == 0 {
            return None;
        }
        let mean = self.sum / n as f64;
        let (low, high) = if n < 2 {
            (None, None)
        } else {
            let var = ((self.squares - n as f64 * mean * mean) / (n - 1) as f64).max(0.0);
            let half = z95() * (var / n as f64).sqrt();
            (Some((mean - half).max(-1.0)), Some((mean + half).min(1.0)))
        };
        Some(Difference {
            items: n,
            difference: mean,
            low,
            high,
            a_better: self.a_better,
            b_better: self.b_better,
            p_value: sign_test(self.a_better, self.b_better),
        })
    }
}

/// Two-sided exact binomial test of `b` against `c` at one half (McNemar's
/// exact test when they are the discordant pairs): 1 when neither.
pub fn sign_test(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let Ok(binomial) = Binomial::new(0.5, n as u64) else {
        return 1.0;
    };
    (2.0 * binomial.cdf(b.min(c) as u64)).min(1.0)
}

/// Holm's step-down adjustment of `p_values`, in their order.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p_values[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// The smallest difference in accuracy between two models that `items`
/// paired items detect with `power` at two-sided level `alpha`, when both
/// score about `baseline` and their outcomes are uncorrelated per item
/// (a correlation, which pairing exploits, only makes it smaller).
pub fn detectable_difference(items: usize, baseline: f64, alpha: f64, power: f64) -> Option<f64> {
    if items == 0 || !(0.0..1.0).contains(&baseline) || baseline == 0.0 {
        return None;
    }
    let spread = 2.0 * baseline * (1.0 - baseline);
    Some((z(1.0 - alpha / 2.0) + z(power)) * (spread / items as f64).sqrt())
}

/// Items needed to detect `difference` with `power` at level `alpha`, as
/// [`detectable_difference`] assumes.
pub fn items_needed(difference: f64, baseline: f64, alpha: f64, power: f64) -> Option<u64> {
    if difference <= 0.0 || !(0.0..1.0).contains(&baseline) || baseline == 0.0 {
        return None;
    }
    let spread = 2.0 * baseline * (1.0 - baseline);
    let k = z(1.0 - alpha / 2.0) + z(power);
    Some((k * k * spread / (difference * difference)).ceil() as u64)
}

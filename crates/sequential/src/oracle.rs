//! The fixed-time oracle: for each question, the smallest sample a
//! fixed-time test would need had it known the true figures in advance.
//! No procedure can know them, so the oracle cannot be run; it is the
//! limit a sequential procedure's price is judged against
//! (docs/METRICS.md, "The price against the limit").
//!
//! - A level: the Wilson interval at the true rate, its half-width scaled
//!   by the finite-population correction √((N − n)/(N − 1)), reaching the
//!   precision.
//! - A pair: the paired z-test at the true mean difference and spread of
//!   the per-item differences, with the same correction, two-sided at α
//!   split over the dataset's pairs, rejecting.

use statrs::distribution::{ContinuousCDF, Normal};

/// The finite-population correction of the variance of a mean of `n` of `population`.
fn correction(n: usize, population: usize) -> f64 {
    if population <= 1 {
        return 0.0;
    }
    ((population - n.min(population)) as f64 / (population - 1) as f64).max(0.0)
}

/// The normal quantile a two-sided test at `alpha` rejects past.
fn z(alpha: f64) -> f64 {
    Normal::standard().inverse_cdf(1.0 - alpha / 2.0)
}

/// The smallest n of `population` at which the Wilson interval at level
/// 1 − `alpha` around the true `rate`, finite-population corrected, is
/// at most ± `precision` (the whole population at worst).
pub fn level_items(rate: f64, precision: f64, alpha: f64, population: usize) -> usize {
    let z = z(alpha);
    let p = rate.clamp(0.0, 1.0);
    (1..population)
        .find(|&n| {
            let n_f = n as f64;
            let half =
                z / (1.0 + z * z / n_f) * (p * (1.0 - p) / n_f + z * z / (4.0 * n_f * n_f)).sqrt();
            half * correction(n, population).sqrt() <= precision
        })
        .unwrap_or(population)
}

/// The smallest n of `population` at which a two-sided paired z-test at
/// `alpha`, told the true `mean` difference and its `sd`, finite-population
/// corrected, rejects no difference (the whole population at worst, and
/// for no difference at all).
pub fn pair_items(mean: f64, sd: f64, alpha: f64, population: usize) -> usize {
    if mean.abs() < 1e-12 {
        return population;
    }
    let z = z(alpha);
    (1..population)
        .find(|&n| z * sd / (n as f64).sqrt() * correction(n, population).sqrt() < mean.abs())
        .unwrap_or(population)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_right_on_every_item_is_placed_within_two_points_by_93() {
        // Wilson at p = 1: z²/(2(n + z²)) ≤ 0.02 from n = 93 (z = 1.96),
        // the correction for a large population changing nothing.
        assert_eq!(level_items(1.0, 0.02, 0.05, 1_000_000), 93);
        // The correction only lowers it.
        assert!(level_items(1.0, 0.02, 0.05, 200) < 93);
    }

    #[test]
    fn the_z_test_needs_z_sd_over_the_difference_squared() {
        // (1.96 · 0.5 / 0.1)² = 96.04: 97 items.
        assert_eq!(pair_items(0.1, 0.5, 0.05, 10_000_000), 97);
        assert_eq!(pair_items(0.0, 0.5, 0.05, 300), 300);
        assert_eq!(pair_items(-0.1, 0.5, 0.05, 10_000_000), 97);
    }
}

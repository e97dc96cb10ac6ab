//! Metric A1 on the paper's Table 8 (FOLIO(R; NL) against ∀uto∃val's PL
//! scores), compared with an independent computation: ρ from the textbook
//! formula and p by numerically integrating the t density (Simpson's rule),
//! done outside this crate.

use autoeval_metrics::{pearson, predictive_power, StatsError};

const OURS: [f64; 16] = [
    0.79, 0.56, 0.36, 0.06, 0.35, 0.13, 0.28, 0.18, 0.09, 0.03, 0.49, 0.10, 0.19, 0.07, 0.67, 0.21,
];
const FOLIO: [f64; 16] = [
    0.75, 0.69, 0.56, 0.54, 0.67, 0.58, 0.64, 0.60, 0.59, 0.36, 0.70, 0.61, 0.61, 0.49, 0.73, 0.63,
];

#[test]
fn table8_matches_an_independent_computation() {
    let c = pearson(&OURS, &FOLIO).unwrap();
    assert_eq!(c.n, 16);
    assert!((c.rho - 0.804_345).abs() < 5e-4, "ρ = {}", c.rho);
    assert!((c.p_value - 0.000_172).abs() < 5e-4, "p = {}", c.p_value);
    // P(FOLIO1 ≥ FOLIO2 | ours1 ≥ ours2) over the 240 ordered pairs.
    let (p, both, given) = predictive_power(&FOLIO, &OURS).unwrap();
    assert_eq!((both, given), (107, 120));
    assert!((p - 0.891_667).abs() < 1e-6);
}

#[test]
fn degenerate_inputs_are_errors() {
    assert_eq!(
        pearson(&[1.0, 2.0], &[1.0, 2.0]).unwrap_err(),
        StatsError::TooFew(2)
    );
    assert_eq!(
        pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]).unwrap_err(),
        StatsError::NoVariance("first")
    );
    let perfect = pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]).unwrap();
    assert_eq!((perfect.rho, perfect.p_value), (1.0, 0.0));
    assert_eq!(predictive_power(&[], &[]), None);
}

//! The family of pair orders, controlled by e-Holm: each pair has two
//! one-sided hypotheses ("the first model is no better", "no worse"), each
//! with an e-process (its pair's gambler at a difference of 0). With H
//! hypotheses of which r are rejected, the next is rejected once its
//! e-value has reached (H − r)/α. The chance that any true hypothesis is
//! ever rejected is at most α, however the pairs depend on each other: at
//! the first such rejection every earlier one was of a false hypothesis,
//! so the true ones number at most H − r, and one of their e-processes
//! has reached their count over α, which by Ville's inequality applied to
//! their mean (itself an e-process) happens with probability at most α.
//! This is Holm's procedure on the e-values, a shortcut of closed testing
//! whose local tests are Bonferroni's on e-values (docs/METRICS.md).

use std::cmp::Ordering;

/// The pairs' hypotheses and how many are rejected.
#[derive(Clone, Debug)]
pub struct Family {
    hypotheses: usize,
    rejected: usize,
}

/// A rejection: which pair, which way, and the level its interval is read
/// at from then on (2α/(H − r), where it leaves zero: θ = ½ halves the
/// hedged capital against each side).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rejection {
    /// The pair, as the caller numbered it.
    pub pair: usize,
    /// `Greater` when "no better" was rejected, `Less` for "no worse".
    pub direction: Ordering,
    /// The level of its interval.
    pub level: f64,
}

impl Family {
    /// A family of `hypotheses` one-sided hypotheses (two per asked pair).
    pub fn new(hypotheses: usize) -> Family {
        Family {
            hypotheses,
            rejected: 0,
        }
    }

    /// The e-value the next rejection needs at level `alpha`; `None` once
    /// every hypothesis that can be is rejected.
    pub fn threshold(&self, alpha: f64) -> Option<f64> {
        let left = self
            .hypotheses
            .checked_sub(self.rejected)
            .filter(|&l| l > 0)?;
        Some(left as f64 / alpha)
    }

    /// The next rejection among the undecided pairs' e-values `(pair,
    /// against "no better", against "no worse")`: the largest, if it
    /// reaches the threshold. It counts as rejected at once.
    pub fn next(
        &mut self,
        alpha: f64,
        evidence: impl Iterator<Item = (usize, f64, f64)>,
    ) -> Option<Rejection> {
        let threshold = self.threshold(alpha)?;
        let (pair, up, down) = evidence
            .max_by(|a, b| a.1.max(a.2).total_cmp(&b.1.max(b.2)))
            .filter(|e| e.1.max(e.2) >= threshold)?;
        self.rejected += 1;
        Some(Rejection {
            pair,
            direction: if up >= down {
                Ordering::Greater
            } else {
                Ordering::Less
            },
            level: 2.0 / threshold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rejection_lowers_the_bar_for_the_next() {
        // Two pairs: four hypotheses at α = 0.05, so 80, then 60.
        let mut family = Family::new(4);
        let evidence = [(0, 70.0, 0.1), (1, 0.2, 65.0)];
        assert_eq!(family.threshold(0.05), Some(80.0));
        assert_eq!(family.next(0.05, evidence.into_iter()), None);
        let evidence = [(0, 85.0, 0.1), (1, 0.2, 65.0)];
        let first = family.next(0.05, evidence.into_iter()).unwrap();
        assert_eq!((first.pair, first.direction), (0, Ordering::Greater));
        assert!((first.level - 2.0 / 80.0).abs() < 1e-12);
        // Pair 1 is now judged against 60.
        let second = family.next(0.05, [(1, 0.2, 65.0)].into_iter()).unwrap();
        assert_eq!((second.pair, second.direction), (1, Ordering::Less));
        assert!((second.level - 2.0 / 60.0).abs() < 1e-12);
    }

    #[test]
    fn a_family_with_no_hypothesis_rejects_nothing() {
        let mut family = Family::new(0);
        assert_eq!(
            family.next(0.05, [(0, f64::INFINITY, 0.0)].into_iter()),
            None
        );
    }
}

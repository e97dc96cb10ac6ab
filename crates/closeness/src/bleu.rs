//! BLEU (Papineni et al., 2002) of one candidate against one reference,
//! over FOL tokens, with the n-gram order capped by the shorter sequence as
//! 003 does (so short formulas are not scored 0 for lacking 4-grams), and
//! no smoothing: a missing order makes the score 0.

use std::collections::HashMap;

/// The highest n-gram order.
pub const MAX_ORDER: usize = 4;

fn ngrams<T: std::hash::Hash + Eq>(tokens: &[T], n: usize) -> HashMap<&[T], usize> {
    let mut counts = HashMap::new();
    for gram in tokens.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

/// BLEU of `candidate` against `reference`, in [0, 1]: the geometric mean
/// of the clipped n-gram precisions for n = 1..min(4, |reference|,
/// |candidate|), times the brevity penalty exp(1 − r/c) when the candidate
/// is shorter. Two empty sequences score 1, one empty sequence 0.
pub fn bleu<T: std::hash::Hash + Eq>(reference: &[T], candidate: &[T]) -> f64 {
    if reference.is_empty() || candidate.is_empty() {
        return if reference.is_empty() && candidate.is_empty() {
            1.0
        } else {
            0.0
        };
    }
    let order = MAX_ORDER.min(reference.len()).min(candidate.len());
    let mut log_sum = 0.0;
    for n in 1..=order {
        let reference_counts = ngrams(reference, n);
        let candidate_counts = ngrams(candidate, n);
        let clipped: usize = candidate_counts
            .iter()
            .map(|(gram, &k)| k.min(reference_counts.get(gram).copied().unwrap_or(0)))
            .sum();
        let total = candidate.len() + 1 - n;
        if clipped == 0 {
            return 0.0;
        }
        log_sum += (clipped as f64 / total as f64).ln();
    }
    let (r, c) = (reference.len() as f64, candidate.len() as f64);
    let brevity = if c < r { (1.0 - r / c).exp() } else { 1.0 };
    brevity * (log_sum / order as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn hand_computed_values() {
        assert_eq!(bleu(&t("abcdef"), &t("abcdef")), 1.0);
        // p1..p4 = 5/6, 4/5, 3/4, 2/3: their product is 1/3.
        let v = bleu(&t("abcdef"), &t("abcdeg"));
        assert!((v - (1.0f64 / 3.0).powf(0.25)).abs() < 1e-12, "{v}");
        // Every n-gram matches, but the candidate is one token short of five.
        let v = bleu(&t("abcde"), &t("abcd"));
        assert!((v - (-0.25f64).exp()).abs() < 1e-12, "{v}");
        // Order capped at 2 by the two-token candidate: p1 = 1, p2 = 1, r/c = 3/2.
        let v = bleu(&t("abc"), &t("ab"));
        assert!((v - (-0.5f64).exp()).abs() < 1e-12, "{v}");
        // Clipping: "abab" against "abc": p1 = 2/4, p2 = 1/3, p3 = 0.
        assert_eq!(bleu(&t("abc"), &t("abab")), 0.0);
        assert_eq!(bleu(&t("abc"), &t("")), 0.0);
    }
}

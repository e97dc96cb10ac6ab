//! ROUGE-L (Lin, 2004): the longest common subsequence of reference and
//! candidate tokens, as an F1 of its recall and precision.

use similar::{capture_diff_slices, Algorithm, DiffOp};

/// Length of the longest common subsequence: the equal parts of a
/// shortest edit script (Myers' diff finds one).
pub fn lcs_len<T: std::hash::Hash + Eq + Ord>(a: &[T], b: &[T]) -> usize {
    capture_diff_slices(Algorithm::Myers, a, b)
        .iter()
        .map(|op| match op {
            DiffOp::Equal { len, .. } => *len,
            _ => 0,
        })
        .sum()
}

/// ROUGE-L F1 of `candidate` against `reference`, in [0, 1]. Two empty
/// sequences score 1.
pub fn rouge_l<T: std::hash::Hash + Eq + Ord>(reference: &[T], candidate: &[T]) -> f64 {
    if reference.is_empty() && candidate.is_empty() {
        return 1.0;
    }
    let lcs = lcs_len(reference, candidate) as f64;
    if lcs == 0.0 {
        return 0.0;
    }
    let recall = lcs / reference.len() as f64;
    let precision = lcs / candidate.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn hand_computed_values() {
        assert_eq!(rouge_l(&t("abcd"), &t("abcd")), 1.0);
        // LCS "abd" (or "acd"): recall = precision = 3/4.
        assert_eq!(rouge_l(&t("abcd"), &t("acbd")), 0.75);
        // LCS "ab": recall 2/4, precision 2/2, F1 = 2/3.
        assert!((rouge_l(&t("abcd"), &t("ab")) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(rouge_l(&t("ab"), &t("cd")), 0.0);
        assert_eq!(lcs_len(&t("xaybzc"), &t("abc")), 3);
    }
}

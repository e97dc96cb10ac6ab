//! METEOR (Banerjee and Lavie, 2005) with exact token matches only: FOL
//! names have no stems or synonyms that a formula could mean the same by.
//! Parameters are the usual ones (α = 0.9, β = 3, γ = 0.5, as NLTK's).

use similar::{capture_diff_slices, Algorithm, DiffOp};

const ALPHA: f64 = 0.9;
const BETA: f64 = 3.0;
const GAMMA: f64 = 0.5;

/// Pairs (candidate index, reference index) of matched tokens: first the
/// in-order matches of a longest common subsequence (few chunks), then any
/// remaining equal tokens, each to the first free reference occurrence.
pub fn alignment<T: std::hash::Hash + Eq + Ord>(
    reference: &[T],
    candidate: &[T],
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    let mut ref_used = vec![false; reference.len()];
    let mut cand_used = vec![false; candidate.len()];
    for op in capture_diff_slices(Algorithm::Myers, reference, candidate) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                pairs.push((new_index + k, old_index + k));
                ref_used[old_index + k] = true;
                cand_used[new_index + k] = true;
            }
        }
    }
    for (i, token) in candidate.iter().enumerate() {
        if cand_used[i] {
            continue;
        }
        if let Some(j) = (0..reference.len()).find(|&j| !ref_used[j] && reference[j] == *token) {
            ref_used[j] = true;
            pairs.push((i, j));
        }
    }
    pairs.sort_unstable();
    pairs
}

/// METEOR of `candidate` against `reference`, in [0, 1): the harmonic mean
/// Fmean = P·R / (α·P + (1 − α)·R) of unigram precision and recall, times
/// 1 − γ·(chunks / matches)^β, where a chunk is a run of matches adjacent in
/// both sequences. Even identical sequences lose the penalty of one chunk;
/// [`crate::scores`] normalises by the self-match, as 003 does.
pub fn meteor<T: std::hash::Hash + Eq + Ord>(reference: &[T], candidate: &[T]) -> f64 {
    let pairs = alignment(reference, candidate);
    let matches = pairs.len();
    if matches == 0 {
        return 0.0;
    }
    let chunks = 1 + pairs
        .windows(2)
        .filter(|w| !(w[1].0 == w[0].0 + 1 && w[1].1 == w[0].1 + 1))
        .count();
    let m = matches as f64;
    let precision = m / candidate.len() as f64;
    let recall = m / reference.len() as f64;
    let fmean = precision * recall / (ALPHA * precision + (1.0 - ALPHA) * recall);
    let penalty = GAMMA * (chunks as f64 / m).powf(BETA);
    fmean * (1.0 - penalty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn hand_computed_values() {
        // Identical: P = R = 1, one chunk of four: 1 − 0.5·(1/4)³.
        assert_eq!(meteor(&t("abcd"), &t("abcd")), 1.0 - 0.5 / 64.0);
        // Two tokens swapped: four matches in four chunks, penalty 0.5.
        assert_eq!(meteor(&t("abcd"), &t("acbd")), 0.5);
        // "ab" against "abcd": P = 1, R = 1/2, Fmean = 0.5 / (0.9 + 0.05),
        // one chunk of two: penalty 0.5·(1/2)³ = 1/16.
        let v = meteor(&t("abcd"), &t("ab"));
        assert!((v - 0.5 / 0.95 * (1.0 - 1.0 / 16.0)).abs() < 1e-12, "{v}");
        assert_eq!(meteor(&t("ab"), &t("cd")), 0.0);
    }
}

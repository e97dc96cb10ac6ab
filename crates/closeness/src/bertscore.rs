//! BERTScore (Zhang et al., 2020) from token embeddings: each token of one
//! text is matched greedily to its most similar token of the other, by
//! cosine; recall averages over the reference's tokens, precision over the
//! candidate's. As in the bert_score defaults 003 used: no idf weighting,
//! no baseline rescaling. The embeddings come from a [`TokenEmbedder`],
//! which lives outside this crate because it loads a model.

use thiserror::Error;

/// Why a text could not be embedded.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// Contextual embeddings of a text's tokens, special tokens left out.
pub trait TokenEmbedder: Sync {
    /// One vector per token of `text`.
    fn embed(&self, text: &str) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The encoder, as the output names it.
    fn describe(&self) -> String;
}

/// BERTScore's precision, recall and F1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BertScore {
    /// Mean over candidate tokens of the best cosine with a reference token.
    pub precision: f64,
    /// Mean over reference tokens of the best cosine with a candidate token.
    pub recall: f64,
    /// Harmonic mean of the two.
    pub f1: f64,
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let n = norm(a) * norm(b);
    if n > 0.0 {
        dot / n
    } else {
        0.0
    }
}

/// Mean over `from`'s tokens of the best cosine with any of `to`'s.
fn greedy(from: &[Vec<f32>], to: &[Vec<f32>]) -> f64 {
    if from.is_empty() || to.is_empty() {
        return 0.0;
    }
    let best = |a: &Vec<f32>| to.iter().map(|b| cosine(a, b)).fold(f64::MIN, f64::max);
    from.iter().map(best).sum::<f64>() / from.len() as f64
}

/// BERTScore of a candidate's token embeddings against a reference's.
pub fn bertscore(reference: &[Vec<f32>], candidate: &[Vec<f32>]) -> BertScore {
    let recall = greedy(reference, candidate);
    let precision = greedy(candidate, reference);
    let f1 = if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    };
    BertScore {
        precision,
        recall,
        f1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        // Reference tokens e1, e2; candidate e1 and (e1 + e2)/√2.
        let r = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let c = vec![vec![1.0, 0.0], vec![h, h]];
        let s = bertscore(&r, &c);
        // Recall: e1 finds 1, e2 finds cos 45° = 0.7071; mean 0.8536.
        // Precision: e1 finds 1, the diagonal finds 0.7071; the same mean.
        let half = (1.0 + std::f64::consts::FRAC_1_SQRT_2) / 2.0;
        assert!((s.recall - half).abs() < 1e-6 && (s.precision - half).abs() < 1e-6);
        assert!((s.f1 - half).abs() < 1e-6);
        // A candidate of one token e1: precision 1, recall (1 + 0) / 2.
        let s = bertscore(&r, &[vec![2.0, 0.0]]);
        assert_eq!((s.precision, s.recall), (1.0, 0.5));
        assert!((s.f1 - 2.0 / 3.0).abs() < 1e-12);
        // Identical embeddings score 1; nothing to compare scores 0.
        assert!((bertscore(&r, &r).f1 - 1.0).abs() < 1e-12);
        assert_eq!(bertscore(&r, &[]).f1, 0.0);
    }
}

//! BERTScore (Zhang et al., 2020) from token embeddings: each token of one
//! text is matched greedily to its most similar token of the other, by
//! cosine; recall averages over the reference's tokens, precision over the
//! candidate's. As in the bert_score package 003 used: no idf weighting, no
//! baseline rescaling, and the special tokens ([CLS], [SEP]) may be a best
//! match but carry no weight in the averages. The embeddings come from a
//! [`TokenEmbedder`], which lives outside this crate because it runs a model.

use thiserror::Error;

/// Why a text could not be embedded.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct EmbedError(pub String);

/// A text's tokens as an encoder sees them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenEmbeddings {
    /// One contextual vector per token.
    pub vectors: Vec<Vec<f32>>,
    /// Whether each token is a special one ([CLS], [SEP]), left out of the averages.
    pub special: Vec<bool>,
}

impl TokenEmbeddings {
    /// Ordinary tokens only, none special.
    pub fn plain(vectors: Vec<Vec<f32>>) -> Self {
        let special = vec![false; vectors.len()];
        TokenEmbeddings { vectors, special }
    }
}

/// Contextual embeddings of a text's tokens.
pub trait TokenEmbedder: Sync {
    /// The tokens of `text` with their vectors.
    fn embed(&self, text: &str) -> Result<TokenEmbeddings, EmbedError>;
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

/// Mean over `from`'s ordinary tokens of the best cosine with any of `to`'s.
fn greedy(from: &TokenEmbeddings, to: &TokenEmbeddings) -> f64 {
    let best = |a: &Vec<f32>| {
        to.vectors
            .iter()
            .map(|b| cosine(a, b))
            .fold(f64::MIN, f64::max)
    };
    let (sum, n) = from
        .vectors
        .iter()
        .zip(&from.special)
        .filter(|(_, &special)| !special)
        .fold((0.0, 0usize), |(s, n), (a, _)| (s + best(a), n + 1));
    if n == 0 || to.vectors.is_empty() {
        0.0
    } else {
        sum / n as f64
    }
}

/// BERTScore of a candidate's token embeddings against a reference's.
pub fn bertscore(reference: &TokenEmbeddings, candidate: &TokenEmbeddings) -> BertScore {
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
        let r = TokenEmbeddings::plain(vec![vec![1.0, 0.0], vec![0.0, 1.0]]);
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let c = TokenEmbeddings::plain(vec![vec![1.0, 0.0], vec![h, h]]);
        let s = bertscore(&r, &c);
        // Recall: e1 finds 1, e2 finds cos 45° = 0.7071; mean 0.8536.
        // Precision: e1 finds 1, the diagonal finds 0.7071; the same mean.
        let half = (1.0 + std::f64::consts::FRAC_1_SQRT_2) / 2.0;
        assert!((s.recall - half).abs() < 1e-6 && (s.precision - half).abs() < 1e-6);
        assert!((s.f1 - half).abs() < 1e-6);
        // A candidate of one token e1: precision 1, recall (1 + 0) / 2.
        let one = TokenEmbeddings::plain(vec![vec![2.0, 0.0]]);
        let s = bertscore(&r, &one);
        assert_eq!((s.precision, s.recall), (1.0, 0.5));
        assert!((s.f1 - 2.0 / 3.0).abs() < 1e-12);
        // A special token e2 beside it: a best match for the reference's e2
        // (recall 1), but not averaged over itself (precision still 1).
        let with_special = TokenEmbeddings {
            vectors: vec![vec![2.0, 0.0], vec![0.0, 1.0]],
            special: vec![false, true],
        };
        let s = bertscore(&r, &with_special);
        assert_eq!((s.precision, s.recall, s.f1), (1.0, 1.0, 1.0));
        // Identical embeddings score 1; nothing to compare scores 0.
        assert!((bertscore(&r, &r).f1 - 1.0).abs() < 1e-12);
        assert_eq!(bertscore(&r, &TokenEmbeddings::default()).f1, 0.0);
    }
}

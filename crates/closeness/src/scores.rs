//! Every metric for one (ground truth, candidate) pair, normalised by the
//! ground truth's match with itself as 003 does, so that a formula scores
//! exactly 1 against itself on every metric.

use crate::{
    bertscore, bleu, logical_equivalence, meteor, rouge_l, smatch, tokens, EmbedError,
    TokenEmbedder, TokenEmbeddings,
};
pub use autoeval_proto::Closeness;
use autoeval_syntax::{parse_formula_exact, Mode};

/// `score / self_score`, at most 1; 0 when the self-match is 0.
fn normalised(score: f64, self_score: f64) -> f64 {
    if self_score > 0.0 {
        (score / self_score).min(1.0)
    } else {
        0.0
    }
}

/// Every metric but BERTScore of `candidate` against `reference`, both FOL text.
pub fn closeness(reference: &str, candidate: &str) -> Closeness {
    let (r, c) = (tokens(reference), tokens(candidate));
    let parsed = (
        parse_formula_exact(reference, Mode::Lenient),
        parse_formula_exact(candidate, Mode::Lenient),
    );
    let (le, smatch) = match parsed {
        (Ok(a), Ok(b)) => (
            Some(logical_equivalence(&a, &b)),
            Some(normalised(smatch(&a, &b).f1, smatch(&a, &a).f1)),
        ),
        _ => (None, None),
    };
    Closeness {
        bleu: normalised(bleu(&r, &c), bleu(&r, &r)),
        rouge_l: normalised(rouge_l(&r, &c), rouge_l(&r, &r)),
        meteor: normalised(meteor(&r, &c), meteor(&r, &r)),
        le,
        smatch,
        bertscore: None,
    }
}

/// Every metric, BERTScore too when `encoder` is given. BERTScore needs no
/// self-match normalisation: a text's embeddings match themselves exactly.
pub fn closeness_with(
    reference: &str,
    candidate: &str,
    encoder: Option<&dyn TokenEmbedder>,
) -> Result<Closeness, EmbedError> {
    let embedded = encoder.map(|e| e.embed(reference)).transpose()?;
    closeness_against(reference, embedded.as_ref(), candidate, encoder)
}

/// [`closeness_with`] for a reference already embedded, so that a
/// reference compared with many candidates is encoded once.
pub fn closeness_against(
    reference: &str,
    reference_embedded: Option<&TokenEmbeddings>,
    candidate: &str,
    encoder: Option<&dyn TokenEmbedder>,
) -> Result<Closeness, EmbedError> {
    let mut scores = closeness(reference, candidate);
    if let (Some(e), Some(r)) = (encoder, reference_embedded) {
        scores.bertscore = Some(bertscore(r, &e.embed(candidate)?).f1);
    }
    Ok(scores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_formulas_score_one_on_every_metric() {
        for f in [
            "p",
            "∀x (Eel(x) → Fish(x))",
            "∃ x1.∀ x2.(pred1(x1, p3) ∨ ¬pred2(x2))",
        ] {
            let s = closeness(f, f);
            assert_eq!(
                (s.bleu, s.rouge_l, s.meteor, s.le),
                (1.0, 1.0, 1.0, Some(1.0)),
                "{f}"
            );
        }
    }

    #[test]
    fn an_equivalent_rewrite_keeps_le_and_loses_text_scores() {
        let s = closeness("∀x (A(x) → B(x))", "∀x (¬A(x) ∨ B(x))");
        assert_eq!(s.le, Some(1.0));
        assert!(s.bleu < 1.0 && s.rouge_l < 1.0 && s.meteor < 1.0);
        assert!(s.smatch.unwrap() < 1.0);
        assert_eq!(closeness("p ∧", "p").le, None);
    }
}

//! Metric sensitivity (003 §3.1, Tables 1 and 2, Fig. 1): each perturbation
//! applied to a set of ground-truth formulas, and the mean score of every
//! metric between a formula and its perturbation, normalised by the
//! self-match. The lower a metric's mean, the more sensitive it is to that
//! kind of error.

use crate::perturb::Perturbation;
use crate::scores::{closeness_against, Closeness};
use crate::{EmbedError, TokenEmbedder};
use autoeval_syntax::{print, Formula, Style};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;

/// A metric's score in a [`Closeness`], if it has one.
pub type Getter = fn(&Closeness) -> Option<f64>;

/// The metrics compared, in 003's column order, with a score getter.
pub const METRICS: [(&str, Getter); 6] = [
    ("BLEU", |c| Some(c.bleu)),
    ("LE", |c| c.le),
    ("ROUGE-L", |c| Some(c.rouge_l)),
    ("METEOR", |c| Some(c.meteor)),
    ("BERTScore", |c| c.bertscore),
    ("Smatch++", |c| c.smatch),
];

/// One perturbation's effect on a formula set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sensitivity {
    /// Which perturbation.
    pub perturbation: Perturbation,
    /// Formulas it changed (Table 1's numerator).
    pub applied: usize,
    /// Formulas in the set.
    pub total: usize,
    /// Mean normalised score per metric over the changed formulas (Table 2);
    /// NaN for a metric with no score (BERTScore without an encoder).
    pub mean: BTreeMap<String, f64>,
    /// Mean of the two metrics' average, per pair of metrics (Fig. 1).
    pub pairs: BTreeMap<String, f64>,
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The sensitivity of every metric to every perturbation over `formulas`,
/// BERTScore's too when `encoder` is given.
pub fn sensitivity(
    formulas: &[Formula],
    encoder: Option<&dyn TokenEmbedder>,
) -> Result<Vec<Sensitivity>, EmbedError> {
    // Per formula, the scores of each perturbation that applies; the
    // formula is encoded once for all of them.
    let per_formula: Vec<Vec<(Perturbation, Closeness)>> = formulas
        .par_iter()
        .map(|f| {
            let text = print::formula(f, Style::Unicode);
            let embedded = encoder.map(|e| e.embed(&text)).transpose()?;
            Perturbation::ALL
                .iter()
                .filter_map(|&p| Some((p, p.apply(f)?)))
                .map(|(p, changed)| {
                    let candidate = print::formula(&changed, Style::Unicode);
                    Ok((
                        p,
                        closeness_against(&text, embedded.as_ref(), &candidate, encoder)?,
                    ))
                })
                .collect()
        })
        .collect::<Result<_, EmbedError>>()?;
    Ok(Perturbation::ALL
        .iter()
        .map(|&p| {
            let scores: Vec<&Closeness> = per_formula
                .iter()
                .flatten()
                .filter(|(q, _)| *q == p)
                .map(|(_, c)| c)
                .collect();
            let mut means = BTreeMap::new();
            let mut pairs = BTreeMap::new();
            for (i, (a, get_a)) in METRICS.iter().enumerate() {
                means.insert(a.to_string(), mean(scores.iter().filter_map(|s| get_a(s))));
                for (b, get_b) in &METRICS[i + 1..] {
                    let both = scores
                        .iter()
                        .filter_map(|s| Some((get_a(s)? + get_b(s)?) / 2.0));
                    pairs.insert(format!("{a}-{b}"), mean(both));
                }
            }
            Sensitivity {
                perturbation: p,
                applied: scores.len(),
                total: formulas.len(),
                mean: means,
                pairs,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_syntax::{parse_formula_exact, Mode};

    #[test]
    fn shares_and_means_over_a_small_set() {
        let formulas: Vec<Formula> = ["∀x (P(x) → Q(x))", "P(a) ∧ Q(b)", "R(c)"]
            .iter()
            .map(|s| parse_formula_exact(s, Mode::Lenient).unwrap())
            .collect();
        let table = sensitivity(&formulas, None).unwrap();
        let row = |p| table.iter().find(|s| s.perturbation == p).unwrap();
        // Only the first has a quantifier; only the second an ∧ or ∨.
        assert_eq!(row(Perturbation::QuantifierSwap).applied, 1);
        assert_eq!(row(Perturbation::AndOrSwap).applied, 1);
        assert_eq!(row(Perturbation::NegationFlip).applied, 3);
        // P(a) ∧ Q(b) against P(a) ∨ Q(b): LE 0.5 (they agree on FF and TT).
        assert_eq!(row(Perturbation::AndOrSwap).mean["LE"], 0.5);
        // Renaming keeps LE at 1 on every formula.
        assert_eq!(row(Perturbation::TextMinusVariable).mean["LE"], 1.0);
        let pairs = &row(Perturbation::AndOrSwap).pairs;
        assert_eq!(pairs.len(), 15);
        assert!(row(Perturbation::AndOrSwap).mean["BERTScore"].is_nan());
        // and(P(a), Q(b)) against or(…): 10 triples each, all but one match.
        assert_eq!(row(Perturbation::AndOrSwap).mean["Smatch++"], 0.9);
        let expected = (row(Perturbation::AndOrSwap).mean["BLEU"] + 0.5) / 2.0;
        assert!((pairs["BLEU-LE"] - expected).abs() < 1e-12);
    }
}

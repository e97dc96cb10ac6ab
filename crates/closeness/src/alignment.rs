//! Alignment of metric rankings with a judge's (003 §3.2, Table 3): for
//! each ground truth, its candidates are ranked by a metric (1 = closest)
//! and compared with the judge's ranks by root-mean-square error; a pair
//! of metrics ranks by the mean of its two scores. The lower the RMSE, the
//! closer the metric agrees with the judge.

use crate::scores::{closeness_against, Closeness};
use crate::sensitivity::METRICS;
use crate::{EmbedError, TokenEmbedder};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// One ground truth, its candidates, and the judge's rank of each.
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Ranked {
    /// The ground-truth formula.
    pub reference: String,
    /// Candidate formulas.
    pub candidates: Vec<String>,
    /// The judge's rank of each candidate, 1 the closest.
    pub ranking: Vec<f64>,
}

/// Ranks of `scores`, highest score 1; tied scores share the mean of the
/// ranks they span (003 broke ties at random; the mean keeps runs repeatable).
pub fn ranks(scores: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let mut out = vec![0.0; scores.len()];
    let mut i = 0;
    while i < order.len() {
        let j = (i..order.len())
            .find(|&j| scores[order[j]] != scores[order[i]])
            .unwrap_or(order.len());
        // Positions i..j hold ranks i+1..=j; their mean is (i + 1 + j) / 2.
        let rank = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            out[k] = rank;
        }
        i = j;
    }
    out
}

/// Root-mean-square difference of two equally long rank lists.
pub fn rmse(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n == 0 {
        return f64::NAN;
    }
    let sum: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    (sum / n as f64).sqrt()
}

/// RMSE against the judge per metric (key `BLEU`) and per pair of metrics
/// (key `BLEU-LE`), over every candidate of every record; a metric without
/// scores (BERTScore with no encoder, LE where a formula does not parse)
/// counts the record's candidates as tied.
pub fn alignment(
    records: &[Ranked],
    encoder: Option<&dyn TokenEmbedder>,
) -> Result<BTreeMap<String, f64>, EmbedError> {
    let scored: Vec<Vec<Closeness>> = records
        .par_iter()
        .map(|r| {
            // The reference is encoded once for all its candidates.
            let embedded = encoder.map(|e| e.embed(&r.reference)).transpose()?;
            r.candidates
                .iter()
                .map(|c| closeness_against(&r.reference, embedded.as_ref(), c, encoder))
                .collect::<Result<_, _>>()
        })
        .collect::<Result<_, _>>()?;
    let score = |get: &dyn Fn(&Closeness) -> f64| {
        let (mut metric, mut judge) = (Vec::new(), Vec::new());
        for (record, scores) in records.iter().zip(&scored) {
            let values: Vec<f64> = scores.iter().map(get).collect();
            metric.extend(ranks(&values));
            judge.extend(&record.ranking);
        }
        rmse(&metric, &judge)
    };
    let mut out = BTreeMap::new();
    for (i, (a, get_a)) in METRICS.iter().enumerate() {
        out.insert(a.to_string(), score(&|c| get_a(c).unwrap_or(0.0)));
        for (b, get_b) in &METRICS[i + 1..] {
            let both = |c: &Closeness| (get_a(c).unwrap_or(0.0) + get_b(c).unwrap_or(0.0)) / 2.0;
            out.insert(format!("{a}-{b}"), score(&both));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_rmse_by_hand() {
        assert_eq!(ranks(&[0.2, 0.9, 0.5]), [3.0, 1.0, 2.0]);
        // Two tied for first share ranks 1 and 2.
        assert_eq!(ranks(&[0.7, 0.7, 0.1]), [1.5, 1.5, 3.0]);
        assert_eq!(ranks(&[0.0, 0.0, 0.0]), [2.0, 2.0, 2.0]);
        // Differences 0, 2, 2: √(8/3).
        assert!((rmse(&[1.0, 2.0, 3.0], &[1.0, 4.0, 1.0]) - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn a_judge_that_agrees_with_the_structure_is_matched_by_le() {
        // The judge ranks the equivalent rewrite first, the ∨ for ∧ second
        // and the negation last; LE ranks them 1 (1.0), 2 (0.5), 3 (0.0).
        let record = Ranked {
            reference: "P(a) ∧ Q(b)".into(),
            candidates: vec![
                "¬(P(a) ∧ Q(b))".into(),
                "Q(b) ∧ P(a)".into(),
                "P(a) ∨ Q(b)".into(),
            ],
            ranking: vec![3.0, 1.0, 2.0],
        };
        let table = alignment(&[record], None).unwrap();
        assert_eq!(table["LE"], 0.0);
        // Without an encoder every candidate ties on BERTScore (rank 2): √(2/3).
        assert!((table["BERTScore"] - (2.0f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!(table.len(), 21);
    }
}

//! What a report is made from besides a run's records: another benchmark's
//! scores, read from CSV text, and A1 between them and the run's.

use crate::CorrelationInput;
use autoeval_metrics::summary::Summary;
use autoeval_metrics::{conditional_accuracy, pearson, predictive_power, StatsError};
use std::collections::BTreeMap;

/// A line of a scores file that is not `model,score`.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct ScoresError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub what: String,
}

/// Scores of a benchmark from CSV text of `model,score` lines; a first line
/// whose score is not a number is a header.
pub fn parse_scores(text: &str) -> Result<BTreeMap<String, f64>, ScoresError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut scores = BTreeMap::new();
    for (i, record) in reader.records().enumerate() {
        let line = i + 1;
        let record = record.map_err(|e| ScoresError {
            line,
            what: e.to_string(),
        })?;
        let (Some(model), Some(score)) = (record.get(0), record.get(1)) else {
            return Err(ScoresError {
                line,
                what: "needs two columns, model and score".into(),
            });
        };
        match score.parse::<f64>() {
            Ok(s) => {
                scores.insert(model.to_string(), s);
            }
            Err(_) if i == 0 => {}
            Err(_) => {
                return Err(ScoresError {
                    line,
                    what: format!("{score:?} is not a number"),
                })
            }
        }
    }
    Ok(scores)
}

impl CorrelationInput {
    /// A1 for `dataset` of the run: its App. K.4 scores (zero-shot, round 1,
    /// complexity up to the cut-off) against `theirs`, the benchmark `name`'s.
    pub fn between(
        summary: &Summary,
        dataset: &str,
        cutoff: autoeval_metrics::Cutoff,
        theirs: &BTreeMap<String, f64>,
        name: &str,
    ) -> Result<CorrelationInput, StatsError> {
        let ours = conditional_accuracy(summary, dataset, cutoff.max_complexity);
        let points: Vec<(String, f64, f64)> = ours
            .iter()
            .filter_map(|(m, x)| Some((m.clone(), *x, *theirs.get(m)?)))
            .collect();
        let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
        let ys: Vec<f64> = points.iter().map(|p| p.2).collect();
        let c = pearson(&xs, &ys)?;
        Ok(CorrelationInput {
            other_name: name.to_string(),
            dataset: dataset.to_string(),
            cutoff,
            rho: c.rho,
            p_value: c.p_value,
            predictive_power: predictive_power(&ys, &xs).map(|p| p.0),
            points,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_read_with_or_without_a_header_and_bad_lines_are_named() {
        let with = parse_scores("model,score\na, 0.5\nb,1\n").unwrap();
        assert_eq!(with, BTreeMap::from([("a".into(), 0.5), ("b".into(), 1.0)]));
        assert_eq!(parse_scores("a,0.5\nb,1").unwrap(), with);
        let bad = parse_scores("a,0.5\nb,high\n").unwrap_err();
        assert_eq!(
            (bad.line, bad.what.as_str()),
            (2, "\"high\" is not a number")
        );
        assert_eq!(parse_scores("a,0.5\nb\n").unwrap_err().line, 2);
    }
}

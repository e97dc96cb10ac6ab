//! The report of a run, as a self-contained HTML page (inline SVG and CSS,
//! nothing fetched, opens offline) and as a terminal summary. Pure
//! functions from records to text: the command line writes the files.

mod breaking;
mod charts;
mod decided;
mod digest;
mod examples;
mod inputs;
mod page;
mod pairwise;
pub mod svg;
mod tables;
mod terminal;

pub use digest::{ByMetric, CostRow, RunDigest};
pub use examples::{counterexample_html, failing_examples, marked_pair};
pub use inputs::{parse_scores, ScoresError};
pub use page::html;
pub use tables::usd;
pub use terminal::{terminal_summary, truncation_advice, TRUNCATION_ADVICE_SHARE};

use autoeval_metrics::summary::Summary;
use autoeval_proto::JudgeRecord;

/// A1 for the report: this run's per-model accuracy against another benchmark's scores.
#[derive(Clone, Debug)]
pub struct CorrelationInput {
    /// Name of the other benchmark.
    pub other_name: String,
    /// The dataset our scores come from.
    pub dataset: String,
    /// The highest complexity counted, and what chose it.
    pub cutoff: autoeval_metrics::Cutoff,
    /// (model, ours, other).
    pub points: Vec<(String, f64, f64)>,
    /// Pearson ρ.
    pub rho: f64,
    /// Its p-value.
    pub p_value: f64,
    /// Predictive power, when defined.
    pub predictive_power: Option<f64>,
}

/// Everything a report shows.
pub struct ReportInput<'a> {
    /// Page title.
    pub title: String,
    /// What the report needs of the run's records beyond their summary.
    pub digest: &'a RunDigest,
    /// Their summary.
    pub summary: &'a Summary,
    /// A4 judgements of the run's pairs, if any were asked.
    pub judgements: &'a [JudgeRecord],
    /// A1 per dataset, if another benchmark's scores were given.
    pub correlations: Vec<CorrelationInput>,
    /// Failing examples shown per dataset.
    pub examples_per_dataset: usize,
    /// The run's settings, as (name, value), shown at the top.
    pub settings: Vec<(String, String)>,
    /// The run's models in order: each keeps its colour in every chart.
    pub models: Vec<String>,
    /// What a run `--until decided` decided.
    pub decided: Option<&'a autoeval_sequential::Decisions>,
}

impl ReportInput<'_> {
    /// The colour index of `model`: its place among the run's models (or,
    /// for a model the settings do not name, among the records' models).
    pub fn colour_of(&self, model: &str) -> usize {
        if let Some(i) = self.models.iter().position(|m| m == model) {
            return i;
        }
        self.models.len()
            + self
                .digest
                .models
                .iter()
                .position(|m| m == model)
                .unwrap_or(0)
    }
}

/// A share as a percentage with one decimal, or `–` when undefined.
pub fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", 100.0 * v))
}

//! The report of a run directory: `report.html` from its records, its judge
//! files, its settings and any other benchmark's scores, each read by the
//! library that owns it.

use anyhow::{Context, Result};
use autoeval_metrics::summary::summarize;
use autoeval_proto::ResultRecord;
use autoeval_report::{CorrelationInput, ReportInput};
use autoeval_run_dir::RunDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A1 for one dataset of the run: its App. K.4 scores against those in the file `other`.
pub fn correlation(
    records: &[ResultRecord],
    dataset: &str,
    max_complexity: u32,
    other: &Path,
    name: &str,
) -> Result<CorrelationInput> {
    let theirs = read_scores(other)?;
    CorrelationInput::between(records, dataset, max_complexity, &theirs, name).with_context(|| {
        format!(
            "cannot correlate {dataset} with {}: the run's models and the file's must overlap in at least 3",
            other.display()
        )
    })
}

/// Writes `report.html` for `records` and returns its path.
pub fn write(
    dir: &RunDir,
    records: &[ResultRecord],
    correlations: Vec<CorrelationInput>,
) -> Result<PathBuf> {
    write_with(dir, records, correlations, 4)
}

/// Writes `report.html` with `examples` failing examples per dataset.
pub fn write_with(
    dir: &RunDir,
    records: &[ResultRecord],
    correlations: Vec<CorrelationInput>,
    examples: usize,
) -> Result<PathBuf> {
    let summary = summarize(records);
    let judgements = dir.judgements()?;
    // An imported run has no settings to show.
    let (settings, models) = if dir.config().exists() {
        let s = dir.settings()?;
        (s.describe()?, s.plan.models)
    } else {
        (Vec::new(), Vec::new())
    };
    let page = autoeval_report::html(&ReportInput {
        title: format!(
            "∀uto∃val run {}",
            dir.0.file_name().and_then(|n| n.to_str()).unwrap_or("")
        ),
        records,
        summary: &summary,
        judgements: &judgements,
        correlations,
        examples_per_dataset: examples,
        settings,
        models,
    });
    let path = dir.report();
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Scores of another benchmark from a CSV file of `model,score` lines.
pub fn read_scores(path: &Path) -> Result<BTreeMap<String, f64>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    autoeval_report::parse_scores(&text).with_context(|| format!("in {}", path.display()))
}

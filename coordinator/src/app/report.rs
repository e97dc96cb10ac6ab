//! The report of a run directory: `report.html` from its records, its judge
//! files, its settings and any other benchmark's scores, each read by the
//! library that owns it. The records are read once, a record at a time,
//! into their summary and the report's digest: a report never holds the run.

use anyhow::{Context, Result};
use autoeval_metrics::summary::{Summarizer, Summary};
use autoeval_proto::ResultRecord;
use autoeval_report::{CorrelationInput, ReportInput, RunDigest};
use autoeval_run_dir::RunDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Distinct reasons of failure counted apart; the rest are counted together.
const MOST_CAUSES: usize = 1000;

/// A run directory's records, read once.
pub struct Digested {
    /// Their summary.
    pub summary: Summary,
    /// What the report needs of them beyond the summary.
    pub digest: RunDigest,
    /// Rounds that ended in an API failure or a verifier error.
    pub failed: usize,
    /// Those rounds by reason (the first [`MOST_CAUSES`] reasons met).
    causes: BTreeMap<String, usize>,
}

impl Digested {
    /// The three commonest reasons of failure, with how many rounds each, commonest first.
    pub fn commonest_causes(&self) -> Vec<(String, usize)> {
        let mut causes: Vec<(String, usize)> = self
            .causes
            .iter()
            .map(|(why, n)| (why.clone(), *n))
            .collect();
        causes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        causes.truncate(3);
        causes
    }
}

/// Reads the records of `dir`, a record at a time, into their summary and
/// the digest of a report showing `examples` failing examples per dataset.
pub fn digest(dir: &RunDir, examples: usize) -> Result<Digested> {
    // With the plan known, an item's outcomes are let go once all its units end.
    let mut summarizer = match dir.config().exists().then(|| dir.settings()) {
        Some(Ok(s)) => Summarizer::for_plan(s.plan.units(1), s.plan.rounds),
        _ => Summarizer::new(),
    };
    let mut digested = Digested {
        summary: Summary::default(),
        digest: RunDigest::new(examples),
        failed: 0,
        causes: BTreeMap::new(),
    };
    let mut take = |r: ResultRecord| {
        summarizer.add(&r);
        digested.digest.add(&r);
        if r.verdict.is_infrastructure_failure() {
            digested.failed += 1;
            let why = r.reason.as_deref().unwrap_or("no reason recorded");
            let known = digested.causes.len() < MOST_CAUSES || digested.causes.contains_key(why);
            let why = if known { why } else { "other reasons" };
            *digested.causes.entry(why.to_string()).or_default() += 1;
        }
    };
    if dir.has_results() {
        autoeval_run_dir::for_each_record(&dir.results(), &mut take)?;
    }
    digested.summary = summarizer.finish();
    Ok(digested)
}

/// A1 for one dataset of the run: its App. K.4 scores against those in the file `other`.
pub fn correlation(
    summary: &Summary,
    dataset: &str,
    cutoff: autoeval_metrics::Cutoff,
    other: &Path,
    name: &str,
) -> Result<CorrelationInput> {
    let theirs = read_scores(other)?;
    CorrelationInput::between(summary, dataset, cutoff, &theirs, name).with_context(|| {
        format!(
            "cannot correlate {dataset} with {}: the run's models and the file's must overlap in at least 3",
            other.display()
        )
    })
}

/// Writes `report.html` from the run's digest and returns its path.
pub fn write_with(
    dir: &RunDir,
    digested: &Digested,
    correlations: Vec<CorrelationInput>,
    examples: usize,
) -> Result<PathBuf> {
    let judgements = dir.judgements()?;
    // An imported run has no settings to show.
    let (settings, models) = if dir.config().exists() {
        let s = dir.settings()?;
        (
            s.describe()?,
            s.plan.models.iter().map(|m| m.to_string()).collect(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    // A run `--until decided` says what it decided.
    let decided: Option<autoeval_sequential::Decisions> =
        match std::fs::read_to_string(dir.decided()) {
            Ok(text) => Some(
                serde_json::from_str(&text)
                    .with_context(|| format!("cannot read {}", dir.decided().display()))?,
            ),
            Err(_) => None,
        };
    let page = autoeval_report::html(&ReportInput {
        title: format!(
            "∀uto∃val run {}",
            dir.0.file_name().and_then(|n| n.to_str()).unwrap_or("")
        ),
        digest: &digested.digest,
        summary: &digested.summary,
        judgements: &judgements,
        correlations,
        examples_per_dataset: examples,
        settings,
        models,
        decided: decided.as_ref(),
    });
    let path = dir.report();
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Reads the run's records and writes `report.html` with four failing examples per dataset.
pub fn write(dir: &RunDir) -> Result<PathBuf> {
    write_with(dir, &digest(dir, 4)?, Vec::new(), 4)
}

/// Scores of another benchmark from a CSV file of `model,score` lines.
pub fn read_scores(path: &Path) -> Result<BTreeMap<String, f64>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    autoeval_report::parse_scores(&text).with_context(|| format!("in {}", path.display()))
}

//! `autoeval report`: the HTML report and terminal summary of a run directory.

use crate::run::RunDir;
use anyhow::{Context, Result};
use autoeval_metrics::{pearson, predictive_power, summary::summarize};
use autoeval_proto::{JudgeRecord, ResultRecord, Verdict};
use autoeval_report::{CorrelationInput, ReportInput};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Settings of `autoeval report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory (holds results.jsonl).
    dir: PathBuf,
    /// CSV of another benchmark's scores (model,score): adds A1 against this run's per-model accuracy.
    #[arg(long)]
    other: Option<PathBuf>,
    /// Name of the other benchmark in the report.
    #[arg(long, default_value = "other benchmark")]
    other_name: String,
    /// Failing examples shown per dataset.
    #[arg(long, default_value_t = 4)]
    examples: usize,
}

/// The judgements stored in a run directory (`judge-*.jsonl`).
pub fn read_judgements(dir: &Path) -> Result<Vec<JudgeRecord>> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(out);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("judge-") && n.ends_with(".jsonl"))
        })
        .collect();
    paths.sort();
    for p in paths {
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        out.extend(crate::judge::latest_judgements(&text));
    }
    Ok(out)
}

/// Per-model accuracy over round 1 (API failures left out).
pub fn model_accuracy(records: &[ResultRecord]) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.round == 1 && !r.verdict.is_infrastructure_failure())
    {
        let e = by.entry(r.model.clone()).or_default();
        e.0 += (r.verdict == Verdict::Equivalent) as usize;
        e.1 += 1;
    }
    by.into_iter()
        .map(|(m, (eq, n))| (m, eq as f64 / n as f64))
        .collect()
}

fn correlation(records: &[ResultRecord], other: &Path, name: &str) -> Result<CorrelationInput> {
    let ours = model_accuracy(records);
    let theirs = crate::correlate::read_scores(other)?;
    let points: Vec<(String, f64, f64)> = ours
        .iter()
        .filter_map(|(m, x)| Some((m.clone(), *x, *theirs.get(m)?)))
        .collect();
    let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.2).collect();
    let c = pearson(&xs, &ys).with_context(|| {
        format!(
            "cannot correlate with {}: the run's models and the file's must overlap in at least 3",
            other.display()
        )
    })?;
    Ok(CorrelationInput {
        other_name: name.to_string(),
        rho: c.rho,
        p_value: c.p_value,
        predictive_power: predictive_power(&ys, &xs).map(|p| p.0),
        points,
    })
}

/// Writes `report.html` for `records` and returns its path.
pub fn write(
    dir: &RunDir,
    records: &[ResultRecord],
    correlation: Option<CorrelationInput>,
) -> Result<PathBuf> {
    write_with(dir, records, correlation, 4)
}

fn write_with(
    dir: &RunDir,
    records: &[ResultRecord],
    correlation: Option<CorrelationInput>,
    examples: usize,
) -> Result<PathBuf> {
    let summary = summarize(records);
    let judgements = read_judgements(&dir.0)?;
    let page = autoeval_report::html(&ReportInput {
        title: format!(
            "∀uto∃val run {}",
            dir.0.file_name().and_then(|n| n.to_str()).unwrap_or("")
        ),
        records,
        summary: &summary,
        judgements: &judgements,
        correlation,
        examples_per_dataset: examples,
    });
    let path = dir.report();
    std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// Runs `autoeval report`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let records = dir.records()?;
    let correlation = match &args.other {
        Some(p) => Some(correlation(&records, p, &args.other_name)?),
        None => None,
    };
    let path = write_with(&dir, &records, correlation, args.examples)?;
    eprint!(
        "{}",
        autoeval_report::terminal_summary(&summarize(&records))
    );
    println!("report: {}", path.display());
    Ok(())
}

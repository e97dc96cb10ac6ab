//! The report of a run directory: `report.html` and `summary.json` from its
//! records, its judge files and any other benchmark's scores.

use anyhow::{bail, Context, Result};
use autoeval_metrics::{conditional_accuracy, pearson, predictive_power, summary::summarize};
use autoeval_proto::{JudgeRecord, ResultRecord};
use autoeval_report::{CorrelationInput, ReportInput};
use autoeval_run_dir::RunDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
        out.extend(autoeval_run_dir::latest_judgements(&text));
    }
    Ok(out)
}

/// A1 for one dataset of the run: its App. K.4 scores against the other benchmark's.
pub fn correlation(
    records: &[ResultRecord],
    dataset: &str,
    max_complexity: u32,
    other: &Path,
    name: &str,
) -> Result<CorrelationInput> {
    let ours = conditional_accuracy(records, dataset, max_complexity);
    let theirs = crate::app::report::read_scores(other)?;
    let points: Vec<(String, f64, f64)> = ours
        .iter()
        .filter_map(|(m, x)| Some((m.clone(), *x, *theirs.get(m)?)))
        .collect();
    let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.2).collect();
    let c = pearson(&xs, &ys).with_context(|| {
        format!(
            "cannot correlate {dataset} with {}: the run's models and the file's must overlap in at least 3",
            other.display()
        )
    })?;
    Ok(CorrelationInput {
        other_name: name.to_string(),
        dataset: dataset.to_string(),
        max_complexity,
        rho: c.rho,
        p_value: c.p_value,
        predictive_power: predictive_power(&ys, &xs).map(|p| p.0),
        points,
    })
}

/// (name, value) lines of a run's settings.
type SettingRows = Vec<(String, String)>;

/// The run's settings for the top of the report, and its models in order;
/// nothing when the directory holds no `config.toml` (an imported run).
fn settings_rows(dir: &RunDir) -> Result<(SettingRows, Vec<String>)> {
    if !dir.config().exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let s = dir.settings()?;
    let p = &s.plan;
    let list = |v: Vec<String>| v.join(", ");
    let mut rows = vec![
        (
            "datasets".to_string(),
            list(p.datasets.iter().map(|d| d.name().to_string()).collect()),
        ),
        (
            "items".into(),
            match &p.items_file {
                Some(file) => format!("read from {file}"),
                None => format!(
                    "generated: seed {}, {} per complexity value, {} batch{}",
                    p.seed,
                    p.per_bucket,
                    p.batches,
                    if p.batches == 1 { "" } else { "es" }
                ),
            },
        ),
        (
            "prompts".into(),
            format!(
                "set {}; styles {}",
                p.prompt_set.name(),
                list(p.prompts.iter().map(|&x| x.name().to_string()).collect())
            ),
        ),
        (
            "protocol".into(),
            format!(
                "{} round{} of (A∘I), {} repeat{}{}",
                p.rounds,
                if p.rounds == 1 { "" } else { "s" },
                p.repeats,
                if p.repeats == 1 { "" } else { "s" },
                s.protocol
                    .map_or(String::new(), |_| " (the paper's protocol)".into())
            ),
        ),
        (
            "parsing".into(),
            "strict, the paper's, is the headline; lenient is shown beside it".into(),
        ),
        (
            "prover".into(),
            format!("time limit {} ms per check", s.timeout_ms),
        ),
    ];
    for m in &p.models {
        let (spec, ms) = s.model_settings(m)?;
        let params = ms.params(&autoeval_models::GenerationParams::default());
        let mut parts = Vec::new();
        if spec.is_builtin() {
            parts.push("built in".to_string());
        } else {
            if params.reasoning {
                parts.push(format!(
                    "reasoning model, max completion tokens {}",
                    params.max_tokens
                ));
            } else {
                parts.push(format!(
                    "temperature {}, max tokens {}",
                    params.temperature, params.max_tokens
                ));
            }
            if let Some(seed) = params.seed {
                parts.push(format!("seed {seed}"));
            }
            if let Some(system) = &params.system {
                parts.push(format!("system prompt {system:?}"));
            }
            for (k, v) in &params.extra {
                parts.push(format!("{k} = {v}"));
            }
        }
        rows.push((format!("model {m}"), parts.join("; ")));
    }
    Ok((rows, p.models.clone()))
}

/// Writes `report.html` for `records` and returns its path.
pub fn write(
    dir: &RunDir,
    records: &[ResultRecord],
    correlations: Vec<CorrelationInput>,
) -> Result<PathBuf> {
    write_with(dir, records, correlations, 4)
}

pub fn write_with(
    dir: &RunDir,
    records: &[ResultRecord],
    correlations: Vec<CorrelationInput>,
    examples: usize,
) -> Result<PathBuf> {
    let summary = summarize(records);
    let judgements = read_judgements(&dir.0)?;
    let (settings, models) = settings_rows(dir)?;
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

/// Scores of another benchmark from a CSV of `model,score` lines.
pub fn read_scores(path: &Path) -> Result<BTreeMap<String, f64>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_path(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut scores = BTreeMap::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{}: line {}", path.display(), i + 1))?;
        let (Some(model), Some(score)) = (record.get(0), record.get(1)) else {
            bail!(
                "{}: line {} needs two columns, model and score",
                path.display(),
                i + 1
            );
        };
        match score.parse::<f64>() {
            Ok(s) => {
                scores.insert(model.to_string(), s);
            }
            Err(_) if i == 0 => {} // a header row
            Err(_) => bail!(
                "{}: line {}: {score:?} is not a number",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(scores)
}

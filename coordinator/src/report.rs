//! `autoeval report`: the HTML report and terminal summary of a run directory.

use crate::run::RunDir;
use anyhow::{Context, Result};
use autoeval_metrics::{
    conditional_accuracy, paper_max_complexity, pearson, predictive_power, summary::summarize,
};
use autoeval_proto::{JudgeRecord, ResultRecord};
use autoeval_report::{CorrelationInput, ReportInput};
use std::path::{Path, PathBuf};

/// Settings of `autoeval report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory (holds results.jsonl; with --fleet, where to write the run read from Redis).
    dir: PathBuf,
    /// CSV of another benchmark's scores (model,score): adds A1 per dataset against this run's
    /// zero-shot round-1 accuracy up to the complexity cut-off (App. K.4).
    #[arg(long)]
    other: Option<PathBuf>,
    /// The dataset whose scores are correlated [default: each dataset of the run].
    #[arg(long)]
    dataset: Option<String>,
    /// Highest complexity counted for A1 [default: the paper's, 6 operators for logic, depth 7 for regexes].
    #[arg(long)]
    max_complexity: Option<u32>,
    /// Name of the other benchmark in the report.
    #[arg(long, default_value = "other benchmark")]
    other_name: String,
    /// Failing examples shown per dataset.
    #[arg(long, default_value_t = 4)]
    examples: usize,
    /// A fleet run: read it from Redis.
    #[command(flatten)]
    fleet: crate::fleet::ReadArgs,
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

/// A1 for one dataset of the run: its App. K.4 scores against the other benchmark's.
fn correlation(
    records: &[ResultRecord],
    dataset: &str,
    max_complexity: u32,
    other: &Path,
    name: &str,
) -> Result<CorrelationInput> {
    let ours = conditional_accuracy(records, dataset, max_complexity);
    let theirs = crate::correlate::read_scores(other)?;
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
    let s = crate::run::resolve_settings(crate::run::config::RunConfig::read(&dir.config())?)?;
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

fn write_with(
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

/// Runs `autoeval report`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    if args.fleet.fleet {
        crate::fleet::pull(&dir, &args.fleet)?;
    }
    let records = dir.records()?;
    let mut correlations = Vec::new();
    if let Some(other) = &args.other {
        let datasets: Vec<String> = match &args.dataset {
            Some(d) => vec![d.clone()],
            None => records
                .iter()
                .map(|r| r.dataset.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
        };
        for d in datasets {
            let cut = args
                .max_complexity
                .unwrap_or_else(|| paper_max_complexity(&d));
            let c = correlation(&records, &d, cut, other, &args.other_name)?;
            println!(
                "A1 {d} (zero-shot, round 1, complexity <= {cut}) vs {}: rho {:.3}, p {:.3e}, {} models",
                args.other_name,
                c.rho,
                c.p_value,
                c.points.len()
            );
            correlations.push(c);
        }
    }
    let path = write_with(&dir, &records, correlations, args.examples)?;
    eprint!(
        "{}",
        autoeval_report::terminal_summary(&summarize(&records))
    );
    println!("report: {}", path.display());
    Ok(())
}

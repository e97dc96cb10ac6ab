//! `autoeval closeness`: graded closeness of FOL formulas (paper 003): every
//! metric for given pairs, or the metrics' sensitivity to perturbations.

use anyhow::{bail, Context, Result};
use autoeval_closeness::sensitivity::{Sensitivity, METRICS};
use autoeval_closeness::{closeness, sensitivity};
use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_syntax::{parse_formula_exact, Formula, Mode};
use std::fmt::Write;
use std::path::PathBuf;

/// Settings of `autoeval closeness`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["pairs", "sensitivity"])))]
pub struct Args {
    /// Score pairs: a JSONL file of {"reference": FOL, "candidate": FOL}, or
    /// lines of reference<TAB>candidate. Prints one JSON line per pair.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// Apply 003's perturbations to a formula set and print each metric's mean
    /// score per perturbation (Table 2), the share changed (Table 1), and
    /// two-metric combinations (Fig. 1).
    #[arg(long)]
    sensitivity: bool,
    /// The formula set for --sensitivity: fol or fol-english (generated), or a
    /// file of FOL formulas, one per line (FOLIO's, say).
    #[arg(long, default_value = "fol-english")]
    dataset: String,
    /// Batches generated for a generated set (Table 1 settings otherwise).
    #[arg(long, default_value_t = 10)]
    batches: u64,
    /// Items per complexity value in each batch of a generated set.
    #[arg(long, default_value_t = 5)]
    per_bucket: usize,
    /// Seed of a generated set.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Runs `autoeval closeness`.
pub fn run(args: Args) -> Result<()> {
    if let Some(path) = &args.pairs {
        return score_pairs(path);
    }
    let formulas = formula_set(&args)?;
    eprintln!(
        "closeness: {} formulas from {}; metrics normalised by each formula's match with itself",
        formulas.len(),
        args.dataset
    );
    print!("{}", table(&sensitivity(&formulas, None)?));
    Ok(())
}

fn score_pairs(path: &PathBuf) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the pairs file {}", path.display()))?;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let (reference, candidate) = if line.trim_start().starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(line)
                .with_context(|| format!("{}: line {} is not JSON", path.display(), i + 1))?;
            let field = |k: &str| {
                v[k].as_str().map(String::from).with_context(|| {
                    format!("{}: line {} has no \"{k}\" string", path.display(), i + 1)
                })
            };
            (field("reference")?, field("candidate")?)
        } else {
            match line.split_once('\t') {
                Some((r, c)) => (r.to_string(), c.to_string()),
                None => bail!(
                    "{}: line {} is neither JSON nor reference<TAB>candidate",
                    path.display(),
                    i + 1
                ),
            }
        };
        let scores = closeness(&reference, &candidate);
        println!(
            "{}",
            serde_json::json!({"reference": reference, "candidate": candidate, "scores": scores})
        );
    }
    Ok(())
}

/// The formulas to perturb: generated, or read one per line.
fn formula_set(args: &Args) -> Result<Vec<Formula>> {
    match args.dataset.as_str() {
        "fol" | "fol-english" => {
            let kind: DatasetKind = args.dataset.parse().map_err(anyhow::Error::msg)?;
            let cfg = DatasetConfig {
                seed: args.seed,
                per_bucket: args.per_bucket,
                ..DatasetConfig::table1(kind)
            };
            let mut out = Vec::new();
            for b in 0..args.batches {
                for item in generate_batch(&cfg, b)?.items {
                    out.push(
                        parse_formula_exact(&item.fs, Mode::Lenient).with_context(|| {
                            format!("a generated formula does not parse: {}", item.fs)
                        })?,
                    );
                }
            }
            Ok(out)
        }
        file => {
            let text = std::fs::read_to_string(file).with_context(|| {
                format!("{file} is neither fol, fol-english nor a readable file of formulas")
            })?;
            let mut out = Vec::new();
            for (i, line) in text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
            {
                out.push(
                    parse_formula_exact(line.trim(), Mode::Lenient)
                        .with_context(|| format!("{file}: line {} is not a formula", i + 1))?,
                );
            }
            if out.is_empty() {
                bail!("{file} holds no formulas");
            }
            Ok(out)
        }
    }
}

/// A score with three decimals, or a dash where there is none.
fn fixed(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "–".to_string()
    }
}

/// Tables 1 and 2 and the pairs of Fig. 1 as text.
pub fn table(rows: &[Sensitivity]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Perturbations applied (003 Table 1):");
    for r in rows {
        let _ = writeln!(
            out,
            "  {:<12} {:>6} of {:<6} ({:.1}%)",
            r.perturbation.name(),
            r.applied,
            r.total,
            100.0 * r.applied as f64 / r.total.max(1) as f64
        );
    }
    let _ = write!(
        out,
        "\nMean score against the ground truth, lower is more sensitive (003 Table 2):\n  {:<12}",
        ""
    );
    for (m, _) in METRICS {
        let _ = write!(out, " {m:>9}");
    }
    let _ = writeln!(out, "  most sensitive");
    for r in rows {
        let _ = write!(out, "  {:<12}", r.perturbation.name());
        for (m, _) in METRICS {
            let _ = write!(out, " {:>9}", fixed(r.mean[m]));
        }
        let lowest = METRICS
            .iter()
            .map(|(m, _)| (*m, r.mean[*m]))
            .filter(|(_, v)| v.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("–", |(m, _)| m);
        let _ = writeln!(out, "  {lowest}");
    }
    let names: Vec<&String> = rows
        .first()
        .map(|r| r.pairs.keys().collect())
        .unwrap_or_default();
    let _ = write!(
        out,
        "\nTwo-metric combinations, mean of the two scores (003 Fig. 1):\n  {:<20}",
        ""
    );
    for r in rows {
        let _ = write!(out, " {:>12}", r.perturbation.name());
    }
    let _ = writeln!(out);
    for n in names {
        let _ = write!(out, "  {n:<20}");
        for r in rows {
            let _ = write!(out, " {:>12}", fixed(r.pairs[n]));
        }
        let _ = writeln!(out);
    }
    out
}

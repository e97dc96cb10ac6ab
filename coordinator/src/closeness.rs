//! `autoeval closeness`: graded closeness of FOL formulas (paper 003): every
//! metric for given pairs, or the metrics' sensitivity to perturbations.

use anyhow::{bail, Context, Result};
use autoeval_closeness::alignment::{alignment, Ranked};
use autoeval_closeness::sensitivity::{Sensitivity, METRICS};
use autoeval_closeness::TokenEmbedder;
use autoeval_closeness::{closeness_with, sensitivity};
use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_syntax::{parse_formula_exact, Formula, Mode};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Settings of `autoeval closeness`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["pairs", "sensitivity", "alignment", "bench"])))]
#[command(mut_arg("per_bucket", |a| a.default_value("5")))]
#[command(mut_arg("batches", |a| a.default_value("10")))]
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
    /// Score ranked candidates against a judge's ranking and print the RMSE
    /// per metric and per pair of metrics (003 Table 3): a JSONL file of
    /// {"reference": FOL, "candidates": [FOL, …], "ranking": [1, 3, 2, …]},
    /// the judge's rank of each candidate, 1 the closest.
    #[arg(long, value_name = "FILE")]
    alignment: Option<PathBuf>,
    /// Measure pairs scored per second by each metric over the formula set
    /// and its perturbations (use a release build).
    #[arg(long)]
    bench: bool,
    /// The formula set for --sensitivity and --bench: fol or fol-english
    /// (generated), or a file of FOL formulas, one per line (FOLIO's, say).
    #[arg(long, default_value = "fol-english")]
    dataset: String,
    /// How many items a generated set draws (Table 1 settings otherwise), and their seed.
    #[command(flatten)]
    draw: autoeval_run_settings::DrawArgs,
    /// Directory of a BERT-family encoder (config.json, tokenizer.json,
    /// model.safetensors) for BERTScore; `scripts/bertscore-model` fetches
    /// all-MiniLM-L6-v2 and prints its directory. Without it BERTScore is
    /// left out, and the output says so.
    #[arg(long, value_name = "DIR")]
    bertscore_model: Option<PathBuf>,
}

/// The BERTScore encoder in `dir`, or a note of why there is none.
pub fn load_encoder(dir: Option<&Path>) -> Result<Option<Box<dyn TokenEmbedder>>> {
    let Some(dir) = dir else {
        eprintln!(
            "closeness: BERTScore left out: no encoder configured (--bertscore-model DIR; \
             scripts/bertscore-model fetches one)"
        );
        return Ok(None);
    };
    #[cfg(feature = "bertscore")]
    {
        let read = |f: &str| {
            std::fs::read(dir.join(f)).with_context(|| {
                format!(
                    "cannot read {} (the encoder directory needs config.json, tokenizer.json and model.safetensors)",
                    dir.join(f).display()
                )
            })
        };
        let name = dir
            .file_name()
            .map_or("encoder".into(), |n| n.to_string_lossy().into_owned());
        let encoder = autoeval_bert_encoder::BertEncoder::from_bytes(
            &name,
            &read("config.json")?,
            &read("tokenizer.json")?,
            read("model.safetensors")?,
        )
        .with_context(|| format!("cannot load the encoder in {}", dir.display()))?;
        eprintln!(
            "closeness: BERTScore with {}; 003 used a larger encoder, so its BS values are not comparable with these",
            encoder.describe()
        );
        Ok(Some(Box::new(encoder)))
    }
    #[cfg(not(feature = "bertscore"))]
    bail!(
        "this autoeval was built without BERTScore ({} not used); build it with \
         `cargo build --release --features bertscore`",
        dir.display()
    )
}

/// Runs `autoeval closeness`.
pub fn run(args: Args) -> Result<()> {
    let encoder = load_encoder(args.bertscore_model.as_deref())?;
    if let Some(path) = &args.pairs {
        return score_pairs(path, encoder.as_deref());
    }
    if let Some(path) = &args.alignment {
        return align(path, encoder.as_deref());
    }
    let formulas = formula_set(&args)?;
    if args.bench {
        return crate::bench::closeness::run(&formulas, encoder.as_deref(), 5);
    }
    eprintln!(
        "closeness: {} formulas from {}; metrics normalised by each formula's match with itself",
        formulas.len(),
        args.dataset
    );
    print!("{}", table(&sensitivity(&formulas, encoder.as_deref())?));
    Ok(())
}

fn score_pairs(path: &Path, encoder: Option<&dyn TokenEmbedder>) -> Result<()> {
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
        let scores = closeness_with(&reference, &candidate, encoder)?;
        println!(
            "{}",
            serde_json::json!({"reference": reference, "candidate": candidate, "scores": scores})
        );
    }
    Ok(())
}

/// Table 3: the RMSE between each metric's ranking and the judge's.
fn align(path: &Path, encoder: Option<&dyn TokenEmbedder>) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the alignment file {}", path.display()))?;
    let mut records = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let r: Ranked = serde_json::from_str(line).with_context(|| {
            format!(
                "{}: line {} is not {{\"reference\", \"candidates\", \"ranking\"}}",
                path.display(),
                i + 1
            )
        })?;
        if r.candidates.len() != r.ranking.len() || r.candidates.is_empty() {
            bail!(
                "{}: line {} has {} candidates and {} ranks; each candidate needs one rank",
                path.display(),
                i + 1,
                r.candidates.len(),
                r.ranking.len()
            );
        }
        records.push(r);
    }
    let table = alignment(&records, encoder)?;
    let candidates: usize = records.iter().map(|r| r.candidates.len()).sum();
    println!(
        "RMSE between metric and judge rankings over {} ground truths, {candidates} candidates \
         (lower agrees better; 003 Table 3). Diagonal: one metric; elsewhere the mean of two.",
        records.len()
    );
    print!("  {:<10}", "");
    for (m, _) in METRICS {
        print!(" {m:>9}");
    }
    println!();
    for (i, (a, _)) in METRICS.iter().enumerate() {
        print!("  {a:<10}");
        for (j, (b, _)) in METRICS.iter().enumerate() {
            let key = match j.cmp(&i) {
                std::cmp::Ordering::Less => {
                    print!(" {:>9}", "");
                    continue;
                }
                std::cmp::Ordering::Equal => a.to_string(),
                std::cmp::Ordering::Greater => format!("{a}-{b}"),
            };
            // Without an encoder every candidate ties on BERTScore: no ranking.
            let value = if encoder.is_none() && key.contains("BERTScore") {
                f64::NAN
            } else {
                table[&key]
            };
            print!(" {:>9}", fixed(value));
        }
        println!();
    }
    Ok(())
}

/// The formulas to perturb: generated, or read one per line.
fn formula_set(args: &Args) -> Result<Vec<Formula>> {
    match args.dataset.as_str() {
        "fol" | "fol-english" => {
            let kind: DatasetKind = args.dataset.parse().map_err(anyhow::Error::msg)?;
            let cfg = DatasetConfig {
                seed: args.draw.seed,
                sampling: args.draw.sampling(),
                per_bucket: args.draw.per_bucket(),
                ..DatasetConfig::table1(kind)
            };
            let mut out = Vec::new();
            for b in 0..args.draw.batches() {
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

//! `autoeval reverify`: re-check the public reference implementation's
//! published verdicts with this project's verifiers, and report where they
//! disagree, per dataset and complexity value.

use crate::app::provers::prover_pool;
use anyhow::{Context, Result};
use autoeval_generate::{reference, DatasetKind};
use autoeval_verify::{check, Kind, Settings, Verdict};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// Settings of `autoeval reverify`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Verified files of the reference implementation (items with fs, llm_fs, verification).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Dataset type of every file; guessed per file when absent.
    #[arg(long, value_enum)]
    dataset: Option<DatasetKind>,
    /// Write one JSON line per disagreement here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// How one published verdict compares with ours.
fn outcome(published: Option<bool>, has_error: bool, ours: Verdict) -> &'static str {
    match (published, has_error, ours) {
        (Some(true), _, Verdict::Equivalent) | (Some(false), _, Verdict::NotEquivalent) => "agree",
        (Some(true), _, Verdict::NotEquivalent) => "published equivalent, is not",
        (Some(false), _, Verdict::Equivalent) => "published not equivalent, is",
        (_, true, Verdict::NonCompliant) => "agree",
        (_, true, Verdict::Equivalent | Verdict::NotEquivalent) => "published error, parses",
        (Some(_), false, Verdict::NonCompliant) => "published a verdict, does not parse",
        (_, _, Verdict::Unknown | Verdict::Timeout) => "undecided here",
        // A check never yields an API failure; counted with the verifier's own errors.
        (_, _, Verdict::VerifierError | Verdict::ApiFailure) => "verifier error here",
        (None, false, _) => "no published verdict",
    }
}

/// Runs `autoeval reverify`.
pub fn run(args: Args) -> Result<()> {
    let pool = prover_pool(std::thread::available_parallelism().map_or(1, |n| n.get()))?;
    let settings = Settings {
        alphabet: autoeval_syntax::alphabet(2),
        ..Settings::default()
    };
    let mut out = match &args.out {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    // (dataset, complexity) → outcome → count
    let mut table: BTreeMap<(String, i64), BTreeMap<&'static str, usize>> = BTreeMap::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file = reference::read(&text).with_context(|| format!("in {}", path.display()))?;
        let dataset = args
            .dataset
            .unwrap_or_else(|| reference::detect_kind(&file));
        let kind = Kind::from(dataset);
        let field = dataset.complexity_field();
        for item in &file.data {
            let Some(llm_fs) = &item.llm_fs else { continue };
            let v = item.verification.clone().unwrap_or_default();
            let ours = check(kind, &item.fs, llm_fs, &settings, &pool);
            let result = outcome(v.is_equivalent, v.has_error.is_some(), ours.verdict);
            let complexity = item.extra.get(field).and_then(|v| v.as_i64()).unwrap_or(-1);
            *table
                .entry((dataset.name().to_string(), complexity))
                .or_default()
                .entry(result)
                .or_default() += 1;
            if let (Some(w), true) = (out.as_mut(), result != "agree") {
                let line = json!({
                    "file": path.display().to_string(), "idx": item.idx, "dataset": dataset.name(), field: complexity,
                    "fs": item.fs, "llm_fs": llm_fs, "published": v.is_equivalent, "published_error": v.has_error,
                    "verdict": ours.verdict, "counterexample": ours.counterexample, "reason": ours.reason, "finding": result,
                });
                serde_json::to_writer(&mut *w, &line)?;
                w.write_all(b"\n")?;
            }
        }
    }
    if let Some(w) = out.as_mut() {
        w.flush()?;
    }
    println!(
        "{:<12} {:>10} {:>7} {:>9}  disagreements",
        "dataset", "complexity", "items", "agree"
    );
    for ((dataset, complexity), counts) in &table {
        let total: usize = counts.values().sum();
        let agree = counts.get("agree").copied().unwrap_or(0);
        let rest: Vec<String> = counts
            .iter()
            .filter(|(k, _)| **k != "agree")
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        println!(
            "{dataset:<12} {complexity:>10} {total:>7} {agree:>9}  {}",
            rest.join(", ")
        );
    }
    Ok(())
}

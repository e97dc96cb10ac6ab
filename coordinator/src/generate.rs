//! `autoeval generate`: write a dataset as JSONL or in the reference layout.

use crate::app::items::generate_all;
use anyhow::{Context, Result};
use autoeval_generate::{reference, Batch, DatasetConfig, DatasetKind, Sampling};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

/// Output layout of `generate`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// One JSON object per line.
    Jsonl,
    /// The public reference implementation's dataset JSON.
    Reference,
}

/// Settings of `autoeval generate`; defaults are the paper's Table 1.
#[derive(clap::Args, Debug)]
#[command(mut_arg("per_bucket", |a| a.default_value("50")))]
#[command(mut_arg("batches", |a| a.default_value("10")))]
pub struct Args {
    /// Dataset type.
    #[arg(long, value_enum)]
    dataset: DatasetKind,
    /// How many items, and their seed.
    #[command(flatten)]
    draw: autoeval_run_settings::DrawArgs,
    /// Levels of the grammar tree (Table 1: depth).
    #[arg(long, default_value_t = 40)]
    depth: usize,
    /// Branching factor n (Table 1: n).
    #[arg(long, default_value_t = 200)]
    branching: usize,
    /// Propositions p1…pN for ksat and plogic (Table 1: num_propositions).
    #[arg(long, default_value_t = 12)]
    num_propositions: usize,
    /// Objects for FOL (Table 1: num_objects).
    #[arg(long, default_value_t = 12)]
    num_objects: usize,
    /// Predicates per FOL formula (Table 1: num_predicates).
    #[arg(long, default_value_t = 8)]
    num_predicates: usize,
    /// Smallest predicate arity (Table 1: min_predicate_arity).
    #[arg(long, alias = "min-predicate-arity", default_value_t = 1)]
    min_arity: usize,
    /// Largest predicate arity (Table 1: max_predicate_arity).
    #[arg(long, alias = "max-predicate-arity", default_value_t = 2)]
    max_arity: usize,
    /// Chance that a predicate's argument inside a quantifier's scope is one of
    /// the variables bound there rather than an object (Table 1: 0.25).
    #[arg(long, default_value_t = 0.25)]
    free_variable_prob: f64,
    /// Most quantified variables per formula (Table 1: ∞, the default).
    #[arg(long)]
    max_free_variables: Option<usize>,
    /// Regex alphabet size: symbols 0…n−1 (Table 1: alphabet_size).
    #[arg(long, default_value_t = 2)]
    alphabet_size: usize,
    /// Literals per ksat clause.
    #[arg(long, default_value_t = 3)]
    clause_width: usize,
    /// Output layout.
    #[arg(long, value_enum, default_value_t = Format::Jsonl)]
    format: Format,
    /// Where to write the dataset.
    #[arg(long)]
    out: PathBuf,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
}

impl Args {
    fn config(&self) -> DatasetConfig {
        DatasetConfig {
            seed: self.draw.seed,
            depth: self.depth,
            branching: self.branching,
            per_bucket: self.draw.per_bucket(),
            num_propositions: self.num_propositions,
            num_objects: self.num_objects,
            num_predicates: self.num_predicates,
            min_arity: self.min_arity,
            max_arity: self.max_arity,
            free_variable_prob: self.free_variable_prob,
            max_free_variables: self.max_free_variables,
            alphabet_size: self.alphabet_size,
            clause_width: self.clause_width,
            sampling: self.draw.sampling(),
            ..DatasetConfig::table1(self.dataset)
        }
    }
}

/// Runs `autoeval generate`.
pub fn run(args: Args) -> Result<()> {
    let cfg = args.config();
    let progress = args.output.bar(|| {
        ProgressBar::new(args.draw.batches()).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} batches, {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        )
    });
    progress.set_message(format!("generating {}", cfg.kind.name()));
    let started = std::time::Instant::now();
    let batches = generate_all(&cfg, args.draw.batches(), &progress)?;
    progress.finish_and_clear();
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut out = BufWriter::new(file);
    match args.format {
        Format::Jsonl => {
            for item in batches.iter().flat_map(|b| &b.items) {
                serde_json::to_writer(&mut out, item)?;
                out.write_all(b"\n")?;
            }
        }
        Format::Reference => {
            let items: Vec<_> = batches.iter().flat_map(|b| b.items.clone()).collect();
            serde_json::to_writer_pretty(&mut out, &reference::export(&items, &cfg))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    if !args.output.quiet {
        report(&cfg, &batches, started.elapsed(), &args.out);
        // The other way of drawing, for comparison (App. M).
        let other = DatasetConfig {
            sampling: match cfg.sampling {
                Sampling::Algorithm1 => Sampling::PreferNewTrees,
                Sampling::PreferNewTrees => Sampling::Algorithm1,
            },
            ..cfg.clone()
        };
        let theirs = generate_all(&other, args.draw.batches(), &ProgressBar::hidden())?;
        eprintln!(
            "  {} (not written): {}",
            other.sampling.name(),
            diversity(&other, &theirs)
        );
    }
    Ok(())
}

/// App. M's diversity of a generated dataset, as a phrase.
fn diversity(cfg: &DatasetConfig, batches: &[Batch]) -> String {
    let (unique, n) = autoeval_generate::diversity::unique_skeletons(
        cfg.kind,
        batches.iter().flat_map(|b| &b.items),
    );
    format!(
        "{unique} of {n} items have a unique parse tree once the vocabulary is removed ({:.1}%)",
        100.0 * unique as f64 / n.max(1) as f64
    )
}

fn report(
    cfg: &DatasetConfig,
    batches: &[Batch],
    took: std::time::Duration,
    out: &std::path::Path,
) {
    let total: usize = batches.iter().map(|b| b.items.len()).sum();
    eprintln!(
        "{}: {} items in {} batches ({:.2} s) -> {}",
        cfg.kind.name(),
        total,
        batches.len(),
        took.as_secs_f64(),
        out.display()
    );
    eprintln!(
        "  {} (written): {}",
        cfg.sampling.name(),
        diversity(cfg, batches)
    );
    for (b, batch) in batches.iter().enumerate() {
        if batch.shortfall.is_empty() {
            continue;
        }
        let short: Vec<String> = batch
            .shortfall
            .iter()
            .map(|s| format!("{}={}/{}", s.value, s.got, s.wanted))
            .collect();
        eprintln!(
            "  batch {b}: {} complexity values short of {} distinct items: {}",
            short.len(),
            cfg.per_bucket,
            short.join(" ")
        );
    }
}

//! `autoeval check`: verdicts for a file of formula pairs, in parallel, in input order.

use crate::app::provers::prover_pool;
use anyhow::{Context, Result};
use autoeval_syntax::Mode;
use autoeval_verify::Settings;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

/// Settings of `autoeval check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSONL file of pairs: {"kind": "ksat"|"plogic"|"fol"|"regex", "phi0": …, "phi1": …}; other fields are kept.
    #[arg(long)]
    pairs: PathBuf,
    /// The prover's limits.
    #[command(flatten)]
    prover: autoeval_run_settings::ProverArgs,
    /// Strict refuses →, ↔, ⊕ (and |, +, ? in regexes), which the prompts do not offer.
    #[arg(long, value_enum, default_value_t = Mode::Lenient)]
    mode: Mode,
    /// Where to write the results; standard output when absent.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Checks at once.
    #[command(flatten)]
    checks: autoeval_run_settings::ParallelChecks,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
}

/// Runs `autoeval check`.
pub fn run(args: Args) -> Result<()> {
    let jobs = args.checks.jobs();
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start worker threads")?;
    let pool = prover_pool(jobs)?;
    let settings = Settings {
        mode: args.mode,
        limits: args.prover.into(),
        ..Settings::default()
    };
    let input = std::fs::File::open(&args.pairs)
        .with_context(|| format!("cannot open the pairs file {}", args.pairs.display()))?;
    let out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        ),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let progress = args.output.bar(|| {
        ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {pos} pairs checked ({per_sec}) {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        )
    });
    let counts = autoeval_verify_stage::checks::run_checks(
        BufReader::new(input),
        &mut out,
        &settings,
        &pool,
        &threads,
        |_| progress.inc(1),
    )
    .with_context(|| format!("while checking {}", args.pairs.display()))?;
    progress.finish_and_clear();
    if !args.output.quiet {
        let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
        eprintln!(
            "checked {} pairs ({:?} parsing): {}",
            counts.values().sum::<usize>(),
            settings.mode,
            summary.join(", ")
        );
    }
    Ok(())
}

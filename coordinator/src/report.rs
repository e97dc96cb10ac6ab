//! `autoeval report`: the HTML report and terminal summary of a run directory.

use crate::app::report::{correlation, digest, write_with};
use anyhow::Result;
use autoeval_metrics::{Compared, Cutoff};
use autoeval_run_dir::RunDir;
use std::path::PathBuf;

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
    /// The benchmark compared with, which sets A1's complexity cut-off as the paper does:
    /// folio (6 operators, App. K.4), logieval (30, Tables 10–11), humaneval (regex depth 7)
    /// [default: folio for logic, humaneval for regexes].
    #[arg(long)]
    compared_with: Option<Compared>,
    /// Highest complexity counted for A1, overriding --compared-with's cut-off.
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
    fleet: autoeval_fleet_coordinator::ReadArgs,
}

/// Runs `autoeval report`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    if args.fleet.fleet {
        autoeval_fleet_coordinator::pull(&dir, &args.fleet)?;
    }
    let digested = digest(&dir, args.examples)?;
    let mut correlations = Vec::new();
    if let Some(other) = &args.other {
        let datasets: Vec<String> = match &args.dataset {
            Some(d) => vec![d.clone()],
            None => digested
                .summary
                .groups
                .iter()
                .map(|g| g.key.dataset.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
        };
        for d in datasets {
            let cut = Cutoff::of(&d, args.compared_with, args.max_complexity);
            println!("A1 {d}: zero-shot, round 1, {cut}");
            let c = correlation(&digested.summary, &d, cut, other, &args.other_name)?;
            println!(
                "A1 {d} vs {}: rho {:.3}, p {:.3e}, {} models",
                args.other_name,
                c.rho,
                c.p_value,
                c.points.len()
            );
            correlations.push(c);
        }
    }
    let path = write_with(&dir, &digested, correlations, args.examples)?;
    print!("{}", autoeval_report::terminal_summary(&digested.summary));
    println!("report: {}", path.display());
    Ok(())
}

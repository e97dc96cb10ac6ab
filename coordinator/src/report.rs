//! `autoeval report`: the HTML report and terminal summary of a run directory.

use crate::app::a1::A1Args;
use crate::app::report::{correlation, digest, write_with};
use anyhow::Result;
use autoeval_run_dir::RunDir;
use std::path::PathBuf;

/// Settings of `autoeval report`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory (holds results.jsonl; with --fleet, where to write the run read from Redis).
    dir: PathBuf,
    /// A1 against another benchmark's scores (--other): per dataset, this
    /// run's zero-shot round-1 accuracy up to the complexity cut-off (App. K.4).
    #[command(flatten)]
    a1: A1Args,
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
    if let Some(other) = &args.a1.other {
        let datasets: Vec<String> = match &args.a1.dataset {
            Some(d) => vec![d.name().to_string()],
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
            let cut = args.a1.cutoff(&d);
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

//! `autoeval correlate`: metric A1 between this benchmark's scores and
//! another's. Our scores come from a CSV or, as App. K.4 computes them, from
//! a run directory: one dataset, zero-shot, round 1, up to a complexity cut-off.

use crate::app::a1::A1Args;
use crate::app::report::read_scores;
use anyhow::{bail, Result};
use autoeval_metrics::{conditional_accuracy, pearson, predictive_power};
use autoeval_run_dir::RunDir;
use std::path::PathBuf;

/// Settings of `autoeval correlate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// CSV of this benchmark's scores: model,score (a header row is allowed).
    #[arg(long, required_unless_present = "run", conflicts_with = "run")]
    ours: Option<PathBuf>,
    /// A run directory: our scores are its zero-shot round-1 accuracy per
    /// model on --dataset up to --max-complexity (App. K.4).
    #[arg(long, requires = "dataset")]
    run: Option<PathBuf>,
    /// The other benchmark, the dataset of the run, the cut-off.
    #[command(flatten)]
    a1: A1Args,
}

/// Runs `autoeval correlate`.
pub fn run(args: Args) -> Result<()> {
    let ours = match (&args.ours, &args.run, &args.a1.dataset) {
        (Some(path), _, _) => read_scores(path)?,
        (None, Some(dir), Some(dataset)) => {
            let dataset = dataset.name();
            let cut = args.a1.cutoff(dataset);
            let run = RunDir(dir.clone());
            run.require_results()?;
            let summary = crate::app::report::digest(&run, 0)?.summary;
            let scores = conditional_accuracy(&summary, dataset, cut.max_complexity);
            if scores.is_empty() {
                bail!(
                    "{} has no zero-shot round-1 records of {dataset} with complexity up to {}",
                    dir.display(),
                    cut.max_complexity
                );
            }
            println!("ours: {dataset}, zero-shot, round 1, {cut}");
            scores
        }
        _ => bail!("give --ours FILE.csv, or --run DIR with --dataset"),
    };
    let Some(other) = &args.a1.other else {
        bail!("give --other FILE.csv, the other benchmark's scores");
    };
    let other = read_scores(other)?;
    let models: Vec<&String> = ours.keys().filter(|m| other.contains_key(*m)).collect();
    let missing: Vec<&String> = ours
        .keys()
        .chain(other.keys())
        .filter(|m| !models.contains(m))
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "left out (scored on one side only): {}",
            missing
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let y: Vec<f64> = models.iter().map(|m| ours[*m]).collect();
    let x: Vec<f64> = models.iter().map(|m| other[*m]).collect();
    let c = pearson(&y, &x)?;
    println!("models: {}", c.n);
    println!("pearson rho: {:.3}", c.rho);
    println!("p-value: {:.3e}", c.p_value);
    if let Some((p, both, given)) = predictive_power(&x, &y) {
        println!("predictive power P(other1 >= other2 | ours1 >= ours2): {p:.3} ({both} of {given} ordered pairs)");
    }
    if let Some((p, both, given)) = predictive_power(&y, &x) {
        println!("predictive power P(ours1 >= ours2 | other1 >= other2): {p:.3} ({both} of {given} ordered pairs)");
    }
    Ok(())
}

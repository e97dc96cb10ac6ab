//! `autoeval bench-decided`: the validity simulation of `--until decided`.
//! The procedure is replayed many times over a finished run's records, each
//! replay in another draw order; every outcome is fixed by the records, so
//! the full plan's figures are the truth each stopped interval must cover.
//! The naive procedure (a fixed-sample interval looked at after every wave)
//! is replayed on the same orders beside it.

use anyhow::{bail, Context, Result};
use autoeval_run_dir::{for_each_record, RunDir};
use autoeval_run_settings::DecideArgs;
use autoeval_sequential::naive::FixedSample;
use autoeval_sequential::records::ItemOutcomes;
use autoeval_sequential::simulate::{replay, Replays};
use autoeval_sequential::StratifiedSequence;
use std::path::PathBuf;

/// `autoeval bench-decided`'s arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A finished run whose every unit was run (`--until spent`): its records are the truth.
    pub dir: PathBuf,
    /// Replays, each in its own draw order.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    pub replays: u32,
    /// What is decided, to which precision, at which α.
    #[command(flatten)]
    pub decide: DecideArgs,
    /// Write the figures as JSON here too.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Runs the replays and prints their figures side by side.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let settings = dir.settings()?;
    let mut records = ItemOutcomes::default();
    let n = for_each_record(&dir.results(), |r| records.add(&r))
        .with_context(|| format!("cannot read the records of {}", args.dir.display()))?;
    if n == 0 {
        bail!(
            "{} holds no records: run it to the end first",
            args.dir.display()
        );
    }
    let design = args.decide.design();
    let population = records.population();
    let seed = settings.plan.seed;
    let order =
        |k: u64| autoeval_pipeline::shuffled_strata(population.clone(), seed.wrapping_add(k));
    let rounds = settings.plan.rounds;
    let runs = args.replays as usize;
    println!(
        "bench-decided: {runs} replays over {} ({} records, {} models), α = {}, precision ±{} pp, deciding {:?}",
        args.dir.display(),
        n,
        records.models().len(),
        design.alpha,
        args.decide.precision,
        design.decide
    );
    let valid = replay::<StratifiedSequence>(&records, &design, rounds, runs, order);
    let naive = replay::<FixedSample>(&records, &design, rounds, runs, order);
    println!(
        "  {:<32} {:>14} {:>14} {:>14} {:>14} {:>12} {:>12}",
        "procedure",
        "levels covered",
        "pairs covered",
        "held each wave",
        "wrong order",
        "answers p50",
        "answers p90"
    );
    for (name, r) in [
        ("confidence sequence (anytime)", &valid),
        ("fixed-sample, peeked each wave", &naive),
    ] {
        println!("  {}", line(name, r, design.alpha));
    }
    println!(
        "  want: coverage ≥ {:.3}, wrong order ≤ {:.3}; the plan has {} item answers",
        1.0 - design.alpha,
        design.alpha,
        valid.plan_answers
    );
    if let Some(path) = &args.json {
        let json = serde_json::json!({ "design": design, "anytime": valid, "naive": naive });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// One procedure's figures: coverage and wrong orders, each marked against α.
fn line(name: &str, r: &Replays, alpha: f64) -> String {
    let mark = |ok: bool| if ok { "ok" } else { "FAILS" };
    let covered = |share: f64| format!("{share:.3} {:<5}", mark(share >= 1.0 - alpha));
    format!(
        "{:<32} {:>14} {:>14} {:>14} {:>8.3} {:<5} {:>11.1}% {:>11.1}%",
        name,
        covered(r.coverage()),
        covered(r.pair_coverage()),
        covered(r.held_share()),
        r.wrong_order_share(),
        mark(r.wrong_order_share() <= alpha),
        100.0 * r.answers_share(0.5),
        100.0 * r.answers_share(0.9)
    )
}

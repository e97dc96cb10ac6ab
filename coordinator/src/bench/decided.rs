//! `autoeval bench-decided`: the validity simulation of `--until decided`.
//! The procedure is replayed many times over a finished run's records, each
//! replay in another draw order; every outcome is fixed by the records, so
//! the full plan's figures are the truth each stopped interval must cover.
//! The procedure betting replaced (the empirical-Bernstein sequence) and
//! the naive one (a fixed-sample interval looked at after every wave) are
//! replayed on the same orders beside it, and each question's price is
//! set against the fixed-time oracle's.

use anyhow::{bail, Context, Result};
use autoeval_run_dir::{for_each_record, RunDir};
use autoeval_run_settings::DecideArgs;
use autoeval_sequential::procedure::{Level, Measure};
use autoeval_sequential::records::ItemOutcomes;
use autoeval_sequential::simulate::{replay, Replays};
use autoeval_sequential::{Design, Method};
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
    /// The methods replayed side by side: `betting` (what a run uses),
    /// `bernstein` (the empirical-Bernstein sequence it replaced, with its
    /// waves and Bonferroni over pairs), `naive` (a fixed-sample interval
    /// peeked at after every wave, which must fail the coverage check).
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Method::Betting, Method::Bernstein, Method::Naive])]
    pub methods: Vec<Method>,
    /// The fewest items a wave draws (a run's is its concurrency's worth).
    #[arg(long, default_value_t = Design::default().min_wave, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub min_wave: usize,
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
    let replays: Vec<(Method, usize, Replays)> = args
        .methods
        .iter()
        .map(|&method| {
            let design = match method {
                Method::Betting => Design {
                    min_wave: args.min_wave,
                    ..design.clone()
                },
                Method::Bernstein => design.bernstein(),
                Method::Naive => Design {
                    method: Method::Naive,
                    ..design.bernstein()
                },
            };
            (
                method,
                design.ahead,
                replay(&records, &design, rounds, runs, order),
            )
        })
        .collect();
    println!(
        "  {:<34} {:>14} {:>14} {:>14} {:>14} {:>12} {:>12} {:>10}",
        "procedure",
        "levels covered",
        "pairs covered",
        "held each wave",
        "wrong order",
        "answers p50",
        "answers p90",
        "× oracle"
    );
    for (method, _, r) in &replays {
        println!("  {}", line(method_name(*method), r, design.alpha));
    }
    let plan_answers = replays.first().map_or(0, |r| r.2.plan_answers);
    println!(
        "  want: coverage ≥ {:.3}, wrong order ≤ {:.3}; the plan has {plan_answers} item answers",
        1.0 - design.alpha,
        design.alpha,
    );
    let models = records.models();
    for (method, ahead, r) in &replays {
        print!(
            "{}",
            oracle_table(method_name(*method), r, &models, &population)
        );
        if *ahead > 0 {
            println!(
                "  drawn past a decision (the waves in flight when it was taken), as a share of what it used: median {:.1}%, p95 {:.1}%, worst {:.1}% (want under 10%)",
                100.0 * r.past_share(0.5),
                100.0 * r.past_share(0.95),
                100.0 * r.past_share(1.0)
            );
        }
    }
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "design": design,
            "replays": replays.iter().map(|(m, _, r)| serde_json::json!({"method": m, "figures": r})).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// A method's name in the table.
fn method_name(method: Method) -> &'static str {
    match method {
        Method::Betting => "betting (anytime, what a run uses)",
        Method::Bernstein => "empirical Bernstein (replaced)",
        Method::Naive => "fixed-sample, peeked each wave",
    }
}

/// Each question's oracle, the median items the procedure used and their
/// ratio; then the whole run's answers against the oracle's.
fn oracle_table(
    name: &str,
    r: &Replays,
    models: &[String],
    population: &[autoeval_sequential::procedure::DatasetPlan],
) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n  {name}: each question against the fixed-time oracle"
    );
    let _ = writeln!(
        out,
        "  {:<10} {:<52} {:>8} {:>7} {:>9} {:>7}",
        "dataset", "question", "truth", "oracle", "used p50", "ratio"
    );
    for q in &r.questions {
        let what = match q.measure {
            Measure::Level { model, level } => format!(
                "{} {}",
                match level {
                    Level::Compliance => "A2",
                    Level::Accuracy => "A3",
                },
                models[model]
            ),
            Measure::Order { first, second } => {
                format!("{} − {}", models[first], models[second])
            }
        };
        let _ = writeln!(
            out,
            "  {:<10} {:<52} {:>7.1}% {:>7} {:>9} {:>6.2}×",
            population.get(q.dataset).map_or("?", |d| d.name.as_str()),
            what,
            100.0 * q.truth,
            q.oracle,
            q.median_used(),
            q.ratio()
        );
    }
    let mut ratios: Vec<f64> = r.questions.iter().map(|q| q.ratio()).collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);
    let worst = ratios.last().copied().unwrap_or(0.0);
    let _ = writeln!(
        out,
        "  whole run: {} item answers (median) against the oracle's {}: {:.2}×; per question: median {:.2}×, worst {:.2}×",
        r.median_answers(),
        r.oracle_answers,
        r.median_answers() as f64 / r.oracle_answers.max(1) as f64,
        median,
        worst
    );
    if r.best_found.1 > 0 {
        let _ = writeln!(
            out,
            "  best found: {} of {} (replays × datasets with a unique best)",
            r.best_found.0, r.best_found.1
        );
    }
    out
}

/// One procedure's figures: coverage and wrong orders, each marked against α.
fn line(name: &str, r: &Replays, alpha: f64) -> String {
    let mark = |ok: bool| if ok { "ok" } else { "FAILS" };
    // A kind of question none of which was asked has no coverage to show.
    let covered = |(held, all): (usize, usize)| {
        if all == 0 {
            return "–".to_string();
        }
        let share = held as f64 / all as f64;
        format!("{share:.3} {:<5}", mark(share >= 1.0 - alpha))
    };
    format!(
        "{:<34} {:>14} {:>14} {:>14} {:>8.3} {:<5} {:>11.1}% {:>11.1}% {:>9.2}×",
        name,
        covered(r.covered),
        covered(r.covered_pairs),
        covered(r.held_throughout),
        r.wrong_order_share(),
        mark(r.wrong_order_share() <= alpha),
        100.0 * r.answers_share(0.5),
        100.0 * r.answers_share(0.9),
        r.median_answers() as f64 / r.oracle_answers.max(1) as f64
    )
}

//! `autoeval bench`: generation time per dataset and checks per second per
//! core, measured side by side in one run. Build with `--release`.

use crate::app::items::generate_all;
use crate::app::provers::prover_pool;
use anyhow::Result;
use autoeval_generate::perturb::{self, RegexRewrite, Rewrite};
use autoeval_generate::rng::Rng;
use autoeval_generate::{DatasetConfig, DatasetKind, Item};
use autoeval_syntax::{parse_formula_exact, parse_regex_exact, print, Mode, Style};
use autoeval_verify::{check, Kind, Method, Settings, Verdict};
use indicatif::ProgressBar;
use std::collections::BTreeMap;
use std::time::Instant;

/// Settings of `autoeval bench`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("per_bucket", |a| a.default_value("50")))]
#[command(mut_arg("batches", |a| a.default_value("10")))]
pub struct Args {
    /// How many items are generated per dataset (Table 1 settings otherwise), and their seed.
    #[command(flatten)]
    draw: autoeval_run_settings::DrawArgs,
    /// Pairs checked per kind: half equivalent rewrites, half near misses.
    #[arg(long, default_value_t = 2000)]
    pairs: usize,
    /// Times each pair is checked.
    #[command(flatten)]
    times: super::Times,
}

/// A pair for the checking benchmark.
pub struct Pair {
    /// Verifier family.
    pub kind: Kind,
    /// Ground truth.
    pub phi0: String,
    /// Rewritten formula.
    pub phi1: String,
}

/// Equivalent rewrites and near misses of `items`, alternating, `n` in all.
pub fn pairs_from(items: &[Item], n: usize, seed: u64) -> Vec<Pair> {
    let mut rng = Rng::new(seed, "bench-pairs", 0);
    let mut out = Vec::with_capacity(n);
    let alphabet = autoeval_syntax::alphabet(2);
    for (i, item) in items.iter().cycle().take(n * 4).enumerate() {
        if out.len() >= n {
            break;
        }
        let equivalent = i % 2 == 0;
        let kind = Kind::from(item.dataset);
        let phi1 = if kind == Kind::Regex {
            let Ok(r) = parse_regex_exact(&item.fs, Mode::Strict, &alphabet) else {
                continue;
            };
            let pool: &[RegexRewrite] = if equivalent {
                &RegexRewrite::EQUIVALENT
            } else {
                &RegexRewrite::NEAR_MISS
            };
            perturb::regex(&r, *rng.pick(pool), &alphabet, &mut rng).map(|r| print::regex(&r))
        } else {
            let Ok(f) = parse_formula_exact(&item.fs, Mode::Strict) else {
                continue;
            };
            let pool: &[Rewrite] = if equivalent {
                &Rewrite::EQUIVALENT
            } else {
                &Rewrite::NEAR_MISS
            };
            perturb::logic(&f, *rng.pick(pool), &mut rng)
                .map(|f| print::formula(&f, Style::Unicode))
        };
        if let Some(phi1) = phi1 {
            out.push(Pair {
                kind,
                phi0: item.fs.clone(),
                phi1,
            });
        }
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs `autoeval bench`.
pub fn run(args: Args) -> Result<()> {
    if cfg!(debug_assertions) {
        eprintln!("warning: this is a debug build; figures are only meaningful with --release");
    }
    println!(
        "== generation: Table 1 settings, {} batches per dataset, all cores",
        args.draw.batches()
    );
    let mut data: BTreeMap<DatasetKind, Vec<Item>> = BTreeMap::new();
    let all = Instant::now();
    for kind in DatasetKind::ALL {
        let cfg = DatasetConfig {
            seed: args.draw.seed,
            sampling: args.draw.sampling(),
            per_bucket: args.draw.per_bucket(),
            ..DatasetConfig::table1(kind)
        };
        let t = Instant::now();
        let batches = generate_all(&cfg, args.draw.batches(), &ProgressBar::hidden())?;
        let secs = t.elapsed().as_secs_f64();
        let items: Vec<Item> = batches.into_iter().flat_map(|b| b.items).collect();
        println!(
            "{:<12} {:>7} items  {:>7.2} s  ({:.0} items/s)",
            kind.name(),
            items.len(),
            secs,
            items.len() as f64 / secs
        );
        data.insert(kind, items);
    }
    println!(
        "{:<12} {:>7}        {:>7.2} s",
        "all five",
        "",
        all.elapsed().as_secs_f64()
    );

    println!(
        "\n== checks: one thread and one prover process, {} pairs per kind (rewrites and near misses), median of {} rounds per pair",
        args.pairs, args.times.times
    );
    println!(
        "{:<8} {:>9} {:>10} {:>10} {:>10}  verdicts / methods",
        "kind", "checks/s", "median", "p95", "max"
    );
    let pool = prover_pool(1)?;
    let settings = Settings::default();
    for kind in [
        DatasetKind::Ksat,
        DatasetKind::Plogic,
        DatasetKind::Fol,
        DatasetKind::FolEnglish,
        DatasetKind::Regex,
    ] {
        let pairs = pairs_from(&data[&kind], args.pairs, args.draw.seed);
        let mut times = Vec::with_capacity(pairs.len());
        let mut prover_times: Vec<usize> = Vec::new();
        let mut verdicts: BTreeMap<Verdict, usize> = BTreeMap::new();
        let mut methods: BTreeMap<Method, usize> = BTreeMap::new();
        // Each pair is timed in every round and keeps its median time, which
        // damps the noise of a shared machine; throughput is over all rounds.
        let mut rounds: Vec<Vec<f64>> =
            vec![Vec::with_capacity(args.times.times as usize); pairs.len()];
        let t = Instant::now();
        for round in 0..args.times.times {
            for (p, slot) in pairs.iter().zip(rounds.iter_mut()) {
                let s = Instant::now();
                let o = check(p.kind, &p.phi0, &p.phi1, &settings, &pool);
                slot.push(s.elapsed().as_secs_f64());
                if round == 0 {
                    *verdicts.entry(o.verdict).or_default() += 1;
                    *methods.entry(o.method).or_default() += 1;
                    if o.method == Method::Z3 {
                        prover_times.push(times.len());
                    }
                    times.push(0.0);
                }
            }
        }
        let total = t.elapsed().as_secs_f64() / f64::from(args.times.times);
        for (time, mut slot) in times.iter_mut().zip(rounds) {
            slot.sort_by(f64::total_cmp);
            *time = slot[slot.len() / 2];
        }
        let mut prover_times: Vec<f64> = prover_times.into_iter().map(|i| times[i]).collect();
        times.sort_by(f64::total_cmp);
        prover_times.sort_by(f64::total_cmp);
        let fmt = |s: f64| {
            if s < 1e-3 {
                format!("{:.1} µs", s * 1e6)
            } else {
                format!("{:.2} ms", s * 1e3)
            }
        };
        println!(
            "{:<8} {:>9.0} {:>10} {:>10} {:>10}  {:?} / {:?}",
            kind.name(),
            pairs.len() as f64 / total,
            fmt(percentile(&times, 0.5)),
            fmt(percentile(&times, 0.95)),
            fmt(percentile(&times, 1.0)),
            verdicts,
            methods
        );
        if !prover_times.is_empty() {
            println!(
                "{:<8} {:>9} {:>10} {:>10} {:>10}  ({} checks that reached Z3)",
                "  z3 only",
                "",
                fmt(percentile(&prover_times, 0.5)),
                fmt(percentile(&prover_times, 0.95)),
                fmt(percentile(&prover_times, 1.0)),
                prover_times.len()
            );
        }
    }
    Ok(())
}

//! `autoeval bench-fleet`: units per second through the whole fleet (mock
//! model server, LLM workers, verifier workers, the real broker and Redis)
//! beside the one-machine run of the same plan, measured side by side.

use super::procs::{connection_env, count_lines, in_full_flow, mock, service, sibling, Watch};
use anyhow::{bail, Result};
use autoeval_fleet_coordinator::FleetArgs;
use autoeval_progress::rate;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Settings of `autoeval bench-fleet`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run a simulated campaign of about this many units instead (the
    /// paper's protocol with the reference model, one worker and one
    /// verifier), beside one of about ten thousand: units per second,
    /// Redis's, the coordinator's and the workers' memory, the run
    /// directory's size and the time to write the report.
    #[arg(long, value_name = "N")]
    units: Option<u64>,
    /// Times each timed run is repeated.
    #[command(flatten)]
    times: super::Times,
    /// Items per complexity value of the 0 ms plan (60: about 10,400
    /// units, so that starting and ending weigh little beside the flow).
    #[arg(long, default_value_t = 60)]
    fast_per_bucket: usize,
    /// Items per complexity value of the 200 ms plan (100: about 17,000
    /// units, 55 s a run at the bound: long enough that the first unit's
    /// 0.4 s, starting and ending weigh little).
    #[arg(long, default_value_t = 100)]
    slow_per_bucket: usize,
    /// Where the fleet is.
    #[command(flatten)]
    fleet: FleetArgs,
}

/// What one timed run measured.
struct Timing {
    units: usize,
    /// Units per second over the whole run.
    whole: f64,
    /// Units per second while the run was in full flow: from the first look
    /// at which a tenth of the units were done to the first at which nine
    /// tenths were, counting the units actually done between those looks.
    flowing: f64,
}

/// Runs `autoeval run` over `plan`, looking at its progress every 20 ms.
fn timed_run(
    scratch: &Path,
    name: &str,
    plan: &[String],
    extra: &[String],
    fleet: Option<&FleetArgs>,
) -> Result<Timing> {
    let out = scratch.join(name);
    let mut watch = match fleet {
        Some(f) => Watch::fleet(&f.store.redis, &out)?,
        None => Watch::Local {
            path: out.join("results.jsonl"),
            read: 0,
            lines: 0,
        },
    };
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .arg("run")
        .args(plan)
        .args(extra)
        .envs(fleet.map(connection_env).unwrap_or_default())
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut looks = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        looks.push((started.elapsed().as_secs_f64(), watch.units()));
        std::thread::sleep(Duration::from_millis(20));
    };
    let secs = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("the run {name} failed ({status})");
    }
    let units = count_lines(&out.join("results.jsonl"))?;
    let flowing = in_full_flow(&looks, units);
    let units = units as usize;
    Ok(Timing {
        units,
        whole: units as f64 / secs,
        flowing,
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Medians over repeats: whole-run and full-flow units per second.
struct Rates {
    whole: f64,
    flowing: f64,
}

impl Rates {
    fn of(timings: &[Timing]) -> Rates {
        Rates {
            whole: median(timings.iter().map(|t| t.whole).collect()),
            flowing: median(timings.iter().map(|t| t.flowing).collect()),
        }
    }
}

struct Setup<'a> {
    scratch: &'a Path,
    fleet: &'a FleetArgs,
    repeats: usize,
}

impl Setup<'_> {
    /// Median rates of the fleet and of one machine over `plan`, run in turn.
    fn side_by_side(
        &self,
        tag: &str,
        plan: &[String],
        local_concurrency: usize,
    ) -> Result<(usize, Rates, Rates)> {
        let mut fleet_runs = Vec::new();
        let mut local_runs = Vec::new();
        for k in 0..self.repeats {
            fleet_runs.push(timed_run(
                self.scratch,
                &format!("{tag}-fleet-{k}-{}", std::process::id()),
                plan,
                &["--fleet".to_string()],
                Some(self.fleet),
            )?);
            let local = ["--concurrency".to_string(), local_concurrency.to_string()];
            local_runs.push(timed_run(
                self.scratch,
                &format!("{tag}-local-{k}"),
                plan,
                &local,
                None,
            )?);
        }
        let units = fleet_runs.last().map_or(0, |t| t.units);
        Ok((units, Rates::of(&fleet_runs), Rates::of(&local_runs)))
    }
}

fn plan(model: &str, per_bucket: usize, seed: u64) -> Vec<String> {
    [
        "--model",
        model,
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
        "--per-bucket",
        &per_bucket.to_string(),
        "--seed",
        &seed.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// Runs `autoeval bench-fleet`.
pub fn run(args: Args) -> Result<()> {
    if let Some(units) = args.units {
        return super::campaign::run(units, &args.fleet);
    }
    let worker = sibling("autoeval-worker")?;
    let verifier = sibling("autoeval-verifier")?;
    let scratch = std::env::temp_dir().join(format!("autoeval-bench-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let setup = Setup {
        scratch: &scratch,
        fleet: &args.fleet,
        repeats: usize::from(args.times.times),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "bench-fleet: {cores} cores; broker and Redis on this machine; medians of {} runs of each, fleet and one machine in turn;\n  whole run: from the command's start to its end (generation, publishing and the report included);\n  in full flow: from a tenth of the units done to nine tenths",
        setup.repeats
    );
    let mut models = Vec::new();

    // 1. A 0 ms model: what the fleet's own parts cost per unit.
    let (_m0, model0) = mock(0)?;
    models.push(model0.clone());
    let w = [
        "--model".to_string(),
        model0.clone(),
        "--concurrency".into(),
        "64".into(),
    ];
    let _w0 = service(&worker, &w, setup.fleet)?;
    let v = ["--jobs".to_string(), cores.to_string()];
    let _v0 = service(&verifier, &v, setup.fleet)?;
    let (units, fleet, local) =
        setup.side_by_side("zero", &plan(&model0, args.fast_per_bucket, 1), 64)?;
    println!("  0 ms model, {units} units (1 LLM worker × 64, 1 verifier × {cores} jobs):");
    println!("    {:<13}{:>12}{:>14}", "", "whole run", "in full flow");
    for (name, r) in [("fleet", &fleet), ("one machine", &local)] {
        println!(
            "    {name:<13}{:>12}{:>14}   units/s",
            rate(r.whole),
            rate(r.flowing)
        );
    }
    println!(
        "    fleet / one machine: {:.2} whole, {:.2} in full flow",
        fleet.whole / local.whole,
        fleet.flowing / local.flowing
    );
    drop((_w0, _v0));

    // 2. A 200 ms model: does the fleet keep its calls in flight?
    let (_m2, model2) = mock(200)?;
    models.push(model2.clone());
    let (workers, concurrency) = (2usize, 64usize);
    let mut procs = Vec::new();
    for _ in 0..workers {
        let w = [
            "--model".to_string(),
            model2.clone(),
            "--concurrency".into(),
            concurrency.to_string(),
        ];
        procs.push(service(&worker, &w, setup.fleet)?);
    }
    procs.push(service(&verifier, &v, setup.fleet)?);
    // Each unit is two calls in a row: 0.4 s of model time.
    let bound = (workers * concurrency) as f64 / 0.4;
    let (units, fleet, local) = setup.side_by_side(
        "slow",
        &plan(&model2, args.slow_per_bucket, 2),
        workers * concurrency,
    )?;
    println!("  200 ms model, {units} units ({workers} LLM workers × {concurrency}; bound {workers} × {concurrency} / 0.4 s = {} units/s):", rate(bound));
    println!("    {:<13}{:>18}{:>20}", "", "whole run", "in full flow");
    for (name, r) in [("fleet", &fleet), ("one machine", &local)] {
        println!(
            "    {name:<13}{:>9} ({:>5.1}%){:>11} ({:>5.1}%)   units/s (% of the bound)",
            rate(r.whole),
            100.0 * r.whole / bound,
            rate(r.flowing),
            100.0 * r.flowing / bound
        );
    }
    drop(procs);

    // 3. Memory of one worker with 256 tasks in flight.
    let (_m3, model3) = mock(1000)?;
    models.push(model3.clone());
    let w = [
        "--model".to_string(),
        model3.clone(),
        "--concurrency".into(),
        "256".into(),
    ];
    let big = service(&worker, &w, setup.fleet)?;
    let _v3 = service(&verifier, &v, setup.fleet)?;
    let units = timed_run(
        &scratch,
        &format!("memory-{}", std::process::id()),
        &plan(&model3, 3, 3),
        &["--fleet".to_string()],
        Some(&args.fleet),
    )?
    .units;
    match big.peak_rss_mib() {
        Some(mib) => println!(
            "  worker peak RSS with 256 tasks in flight ({units} units, 1 s model): {mib:.1} MiB"
        ),
        None => println!("  worker peak RSS: not reported by this system"),
    }
    drop(big);
    cleanup(&args.fleet, &scratch, &models);
    Ok(())
}

/// Deletes the runs' Redis keys, the benchmark's model queues and its files.
fn cleanup(fleet: &FleetArgs, scratch: &Path, models: &[String]) {
    // A fleet run's name is in its directory's `run-id`.
    let runs: Vec<String> = std::fs::read_dir(scratch)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read_to_string(e.path().join("run-id")).ok())
                .map(|run| run.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    if let Ok(rt) = tokio::runtime::Runtime::new() {
        rt.block_on(async {
            if let Ok(conn) = autoeval_redis_store::connect(&fleet.store.redis).await {
                for run in &runs {
                    let _ = autoeval_redis_store::RunStore::new(conn.clone(), run)
                        .delete()
                        .await;
                }
            }
            if let Ok(b) = fleet
                .broker
                .connect(&fleet.store.redis, "autoeval-bench")
                .await
            {
                for m in models {
                    let _ = b.delete_queue(&b.topology().translate_queue(m)).await;
                }
                b.close().await;
            }
        });
    }
    let _ = std::fs::remove_dir_all(scratch);
}

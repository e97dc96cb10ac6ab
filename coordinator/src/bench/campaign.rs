//! `autoeval bench-fleet --units N`: a simulated campaign. The paper's
//! protocol with the built-in reference model (no model time at all), one
//! LLM worker and one verifier on this machine, run through the whole
//! fleet at about N units and, beside it, at about ten thousand; for each,
//! units per second, the memory of Redis, the coordinator and the workers,
//! the run directory's size and the time `autoeval report` takes.

use super::procs::{
    connection_env, count_lines, in_full_flow, peak_rss_mib, service, sibling, Proc, Watch,
};
use anyhow::{bail, Context, Result};
use autoeval_fleet_coordinator::FleetArgs;
use autoeval_progress::rate;
use autoeval_redis_store::{Connection, RunStore};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Units of the paper's protocol per batch (five datasets at Table 1 settings).
const PAPER_UNITS_PER_BATCH: u64 = 8_640;
/// How long the campaign's keys stay in Redis once it finished: long
/// enough to measure them, short enough to watch them expire.
const KEEP_S: u64 = 20;

/// What one campaign measured.
struct Measured {
    units: u64,
    secs: f64,
    /// Units per second from a tenth of the units done to nine tenths.
    flowing: f64,
    redis_peak_mib: f64,
    redis_added_mib: f64,
    redis_bytes_per_unit: f64,
    coordinator_mib: f64,
    run_dir_mb: f64,
    report_s: f64,
    run: String,
    dir: PathBuf,
}

/// The `autoeval run` flags of a campaign of about `units` units.
fn plan_for(units: u64) -> Vec<String> {
    let batches_of_ten = 10 * PAPER_UNITS_PER_BATCH;
    let (batches, repeats) = if units >= batches_of_ten {
        (
            10,
            (units as f64 / batches_of_ten as f64).round().max(1.0) as u64,
        )
    } else {
        (
            (units as f64 / PAPER_UNITS_PER_BATCH as f64)
                .round()
                .max(1.0) as u64,
            1,
        )
    };
    let mut plan: Vec<String> = ["--protocol", "paper", "--model", "reference"]
        .map(String::from)
        .to_vec();
    plan.extend(["--batches".into(), batches.to_string()]);
    plan.extend(["--repeats".into(), repeats.to_string()]);
    plan
}

/// The ten-thousand-unit campaign every larger one is set beside.
fn small_plan() -> Vec<String> {
    [
        "--protocol",
        "paper",
        "--model",
        "reference",
        "--batches",
        "1",
        "--per-bucket",
        "58",
    ]
    .map(String::from)
    .to_vec()
}

/// Redis's `used_memory`, in bytes.
fn redis_used(rt: &tokio::runtime::Runtime, conn: &Connection) -> Result<u64> {
    let mut conn = conn.clone();
    let info: String = rt.block_on(redis::cmd("INFO").arg("memory").query_async(&mut conn))?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .context("Redis did not say its used_memory")
}

/// Bytes of every file under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Sum of Redis's `MEMORY USAGE` over the run's keys, in bytes.
fn run_bytes(rt: &tokio::runtime::Runtime, store: &RunStore, conn: &Connection) -> Result<u64> {
    let mut total = 0;
    let mut conn = conn.clone();
    for key in rt.block_on(store.existing_keys())? {
        let n: Option<u64> = rt.block_on(
            redis::cmd("MEMORY")
                .arg("USAGE")
                .arg(&key)
                .arg("SAMPLES")
                .arg(0)
                .query_async(&mut conn),
        )?;
        total += n.unwrap_or(0);
    }
    Ok(total)
}

/// Runs one campaign through the fleet and measures it.
fn campaign(scratch: &Path, name: &str, plan: &[String], fleet: &FleetArgs) -> Result<Measured> {
    let dir = scratch.join(name);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let conn = rt.block_on(autoeval_redis_store::connect(&fleet.store.redis))?;
    let baseline = redis_used(&rt, &conn)?;
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .arg("run")
        .args(plan)
        .args([
            "--fleet",
            "--quiet",
            "--keep-s",
            &KEEP_S.to_string(),
            "--out",
        ])
        .arg(&dir)
        .envs(connection_env(fleet))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let (mut redis_peak, mut coordinator_mib) = (baseline, 0f64);
    let mut watch = Watch::fleet(&fleet.store.redis, &dir)?;
    let mut looks: Vec<(f64, u64)> = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        redis_peak = redis_peak.max(redis_used(&rt, &conn).unwrap_or(0));
        coordinator_mib = coordinator_mib.max(peak_rss_mib(child.id()).unwrap_or(0.0));
        looks.push((started.elapsed().as_secs_f64(), watch.units()));
        std::thread::sleep(Duration::from_millis(100));
    };
    let secs = started.elapsed().as_secs_f64();
    if !status.success() {
        let mut said = String::new();
        if let Some(mut err) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut said);
        }
        bail!("the campaign {name} failed ({status}): {said}");
    }
    let run = std::fs::read_to_string(dir.join("run-id"))?
        .trim()
        .to_string();
    let store = RunStore::new(conn.clone(), &run);
    let units = count_lines(&dir.join("results.jsonl"))?;
    let flowing = in_full_flow(&looks, units);
    let kept = run_bytes(&rt, &store, &conn)?;
    let run_dir_mb = dir_bytes(&dir) as f64 / 1e6;
    let t0 = Instant::now();
    let report = Command::new(std::env::current_exe()?)
        .arg("report")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let report_s = t0.elapsed().as_secs_f64();
    if !report.success() {
        bail!("`autoeval report` of the campaign {name} failed ({report})");
    }
    Ok(Measured {
        units,
        secs,
        flowing,
        redis_peak_mib: redis_peak as f64 / 1048576.0,
        redis_added_mib: redis_peak.saturating_sub(baseline) as f64 / 1048576.0,
        redis_bytes_per_unit: kept as f64 / units.max(1) as f64,
        coordinator_mib,
        run_dir_mb,
        report_s,
        run,
        dir,
    })
}

/// Runs `autoeval bench-fleet --units N`.
pub fn run(units: u64, fleet: &FleetArgs) -> Result<()> {
    let worker = sibling("autoeval-worker")?;
    let verifier = sibling("autoeval-verifier")?;
    let scratch = std::env::temp_dir().join(format!("autoeval-campaign-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "bench-fleet --units {units}: the paper's protocol with the reference model (no model time), 1 LLM worker × 64 and 1 verifier × {cores} jobs on this machine; broker and Redis on this machine too"
    );
    let w: Proc = service(
        &worker,
        &["--model", "reference", "--concurrency", "64"].map(String::from),
        fleet,
    )?;
    let v: Proc = service(&verifier, &["--jobs".to_string(), cores.to_string()], fleet)?;
    let mut rows = Vec::new();
    for (name, plan) in [("small", small_plan()), ("campaign", plan_for(units))] {
        let m = campaign(&scratch, name, &plan, fleet)?;
        let worker_mib = w.peak_rss_mib().unwrap_or(f64::NAN);
        let verifier_mib = v.peak_rss_mib().unwrap_or(f64::NAN);
        rows.push((m, worker_mib, verifier_mib));
    }
    println!(
        "  {:>9} {:>9} {:>9} {:>10} {:>11} {:>10} {:>12} {:>11} {:>11} {:>9} {:>8}",
        "units",
        "run s",
        "units/s",
        "in flow",
        "Redis peak",
        "run added",
        "coordinator",
        "worker",
        "verifier",
        "run dir",
        "report"
    );
    for (m, worker_mib, verifier_mib) in &rows {
        println!(
            "  {:>9} {:>9.1} {:>9} {:>10} {:>7.0} MiB {:>6.0} MiB {:>8.0} MiB {:>7.0} MiB {:>7.0} MiB {:>6.0} MB {:>7.1}s",
            m.units,
            m.secs,
            rate(m.units as f64 / m.secs),
            rate(m.flowing),
            m.redis_peak_mib,
            m.redis_added_mib,
            m.coordinator_mib,
            worker_mib,
            verifier_mib,
            m.run_dir_mb,
            m.report_s
        );
    }
    println!("  (Redis peak: its used_memory at most during the run; run added: above what it held before. RSS: peak resident memory; worker and verifier serve both campaigns, so theirs is the peak so far)");
    for (m, _, _) in &rows {
        println!(
            "  {}: Redis holds {:.0} bytes a unit once the coordinator took the records ({} units)",
            m.run, m.redis_bytes_per_unit, m.units
        );
    }
    // The finished runs' keys expire on their own.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let conn = rt.block_on(autoeval_redis_store::connect(&fleet.store.redis))?;
    let waited = Instant::now();
    for (m, _, _) in &rows {
        let store = RunStore::new(conn.clone(), &m.run);
        let deadline = Instant::now() + Duration::from_secs(KEEP_S + 60);
        // A look that fails (Redis busy freeing a big run) is taken again.
        let look = || {
            rt.block_on(store.existing_keys())
                .map_or(usize::MAX, |k| k.len())
        };
        let mut left = look();
        while left > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(500));
            left = look();
        }
        println!(
            "  {}: {left} keys left {:.0} s after the campaigns ended (--keep-s {KEEP_S})",
            m.run,
            waited.elapsed().as_secs_f64()
        );
        let _ = std::fs::remove_dir_all(&m.dir);
    }
    drop((w, v));
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

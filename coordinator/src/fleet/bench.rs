//! `autoeval bench-fleet`: units per second through the whole fleet (mock
//! model server, LLM workers, verifier workers, the real broker and Redis)
//! beside the one-machine run of the same plan, measured side by side.

use super::FleetArgs;
use crate::run::progress::rate;
use anyhow::{bail, Context, Result};
use autoeval_proto::fleet::translate_queue;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Settings of `autoeval bench-fleet`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Repeats of each timed run; medians are printed.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Items per complexity value of the 0 ms plan (30: about 5,000 units).
    #[arg(long, default_value_t = 30)]
    per_bucket: usize,
    /// Where the fleet is.
    #[command(flatten)]
    fleet: FleetArgs,
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    /// Peak resident memory in MiB.
    fn peak_rss_mib(&self) -> Option<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
    }
}

fn sibling(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let path = exe.with_file_name(name);
    if !path.exists() {
        bail!(
            "{} is not built: build the workspace's binaries first (cargo build --release --workspace --bins)",
            path.display()
        );
    }
    Ok(path)
}

/// Starts a service and waits until `/readyz` answers 200.
fn service(program: &Path, args: &[String]) -> Result<Proc> {
    let mut child = Command::new(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    let proc = Proc(child);
    let health = line
        .trim()
        .strip_prefix("health: ")
        .with_context(|| {
            format!(
                "{} did not say where its health endpoint is",
                program.display()
            )
        })?
        .to_string();
    let addr = health.trim_start_matches("http://").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(&addr) {
        if Instant::now() > deadline {
            bail!("{} did not become ready", program.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(proc)
}

/// Whether `GET /readyz` at `addr` answers 200.
fn ready(addr: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    let mut reply = String::new();
    stream.write_all(b"GET /readyz HTTP/1.0\r\n\r\n").is_ok()
        && stream.read_to_string(&mut reply).is_ok()
        && reply.lines().next().is_some_and(|l| l.contains(" 200 "))
}

fn mock(latency_ms: u64) -> Result<(Proc, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let child = Command::new(std::env::current_exe()?)
        .args([
            "mock-llm",
            "--port",
            &port.to_string(),
            "--latency-ms",
            &latency_ms.to_string(),
        ])
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!("the mock server did not listen");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((
        Proc(child),
        format!("openai-compatible:reference@http://127.0.0.1:{port}/v1"),
    ))
}

/// Units of a plan and the seconds `autoeval run` took over them.
fn timed_run(
    scratch: &Path,
    name: &str,
    plan: &[String],
    extra: &[String],
) -> Result<(usize, f64)> {
    let out = scratch.join(name);
    let started = Instant::now();
    let status = Command::new(std::env::current_exe()?)
        .arg("run")
        .args(plan)
        .args(extra)
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let secs = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("the run {name} failed ({status})");
    }
    let units = std::fs::read_to_string(out.join("results.jsonl"))?
        .lines()
        .count();
    Ok((units, secs))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

struct Setup<'a> {
    scratch: &'a Path,
    fleet: &'a FleetArgs,
    repeats: usize,
}

impl Setup<'_> {
    fn connect(&self) -> Vec<String> {
        vec![
            "--amqp".into(),
            self.fleet.amqp.clone(),
            "--redis".into(),
            self.fleet.redis.clone(),
        ]
    }

    /// Median units/s of the fleet and of one machine over `plan`.
    fn side_by_side(
        &self,
        tag: &str,
        plan: &[String],
        local_concurrency: usize,
    ) -> Result<(usize, f64, f64)> {
        let mut fleet_rates = Vec::new();
        let mut local_rates = Vec::new();
        let mut units = 0;
        for k in 0..self.repeats {
            let mut fleet_flags = vec!["--fleet".to_string()];
            fleet_flags.extend(self.connect());
            let (n, s) = timed_run(
                self.scratch,
                &format!("{tag}-fleet-{k}"),
                plan,
                &fleet_flags,
            )?;
            fleet_rates.push(n as f64 / s);
            let local = ["--concurrency".to_string(), local_concurrency.to_string()];
            let (n, s) = timed_run(self.scratch, &format!("{tag}-local-{k}"), plan, &local)?;
            local_rates.push(n as f64 / s);
            units = n;
        }
        Ok((units, median(fleet_rates), median(local_rates)))
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
    let worker = sibling("autoeval-worker")?;
    let verifier = sibling("autoeval-verifier")?;
    let scratch = std::env::temp_dir().join(format!("autoeval-bench-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let setup = Setup {
        scratch: &scratch,
        fleet: &args.fleet,
        repeats: args.repeats.max(1),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "bench-fleet: {cores} cores; broker and Redis on this machine; medians of {} runs; every run includes generation, publishing and writing the report",
        setup.repeats
    );
    let mut models = Vec::new();

    // 1. A 0 ms model: what the fleet's own parts cost per unit.
    let (_m0, model0) = mock(0)?;
    models.push(model0.clone());
    let mut common = setup.connect();
    let mut w = vec![
        "--model".to_string(),
        model0.clone(),
        "--concurrency".into(),
        "64".into(),
    ];
    w.append(&mut common.clone());
    let _w0 = service(&worker, &w)?;
    let mut v = vec!["--jobs".to_string(), cores.to_string()];
    v.append(&mut common);
    let _v0 = service(&verifier, &v)?;
    let (units, fleet, local) =
        setup.side_by_side("zero", &plan(&model0, args.per_bucket, 1), 64)?;
    println!("  0 ms model, {units} units (1 LLM worker × 64, 1 verifier × {cores}):");
    println!("    fleet        {:>8} units/s", rate(fleet));
    println!(
        "    one machine  {:>8} units/s   (fleet / one machine = {:.2})",
        rate(local),
        fleet / local
    );
    drop((_w0, _v0));

    // 2. A 200 ms model: does the fleet keep its calls in flight?
    let (_m2, model2) = mock(200)?;
    models.push(model2.clone());
    let (workers, concurrency) = (2usize, 64usize);
    let mut procs = Vec::new();
    for _ in 0..workers {
        let mut w = vec![
            "--model".to_string(),
            model2.clone(),
            "--concurrency".into(),
            concurrency.to_string(),
        ];
        w.append(&mut setup.connect());
        procs.push(service(&worker, &w)?);
    }
    let mut v = vec!["--jobs".to_string(), cores.to_string()];
    v.append(&mut setup.connect());
    procs.push(service(&verifier, &v)?);
    // Each unit is two calls in a row: 0.4 s of model time.
    let bound = (workers * concurrency) as f64 / 0.4;
    let (units, fleet, local) =
        setup.side_by_side("slow", &plan(&model2, 25, 2), workers * concurrency)?;
    println!("  200 ms model, {units} units ({workers} LLM workers × {concurrency}; bound {workers} × {concurrency} / 0.4 s = {} units/s):", rate(bound));
    println!(
        "    fleet        {:>8} units/s   ({:.1}% of the bound)",
        rate(fleet),
        100.0 * fleet / bound
    );
    println!(
        "    one machine  {:>8} units/s   ({:.1}% of the bound, concurrency {})",
        rate(local),
        100.0 * local / bound,
        workers * concurrency
    );
    drop(procs);

    // 3. Memory of one worker with 256 tasks in flight.
    let (_m3, model3) = mock(1000)?;
    models.push(model3.clone());
    let mut w = vec![
        "--model".to_string(),
        model3.clone(),
        "--concurrency".into(),
        "256".into(),
    ];
    w.append(&mut setup.connect());
    let big = service(&worker, &w)?;
    let mut v = vec!["--jobs".to_string(), cores.to_string()];
    v.append(&mut setup.connect());
    let _v3 = service(&verifier, &v)?;
    let mut fleet_flags = vec!["--fleet".to_string()];
    fleet_flags.extend(setup.connect());
    let (units, _) = timed_run(&scratch, "memory", &plan(&model3, 3, 3), &fleet_flags)?;
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
    let runs: Vec<String> = std::fs::read_dir(scratch)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    if let Ok(rt) = tokio::runtime::Runtime::new() {
        rt.block_on(async {
            if let Ok(conn) = autoeval_redis_store::connect(&fleet.redis).await {
                for run in &runs {
                    let _ = autoeval_redis_store::RunStore::new(conn.clone(), run)
                        .delete()
                        .await;
                }
            }
            if let Ok(b) = autoeval_amqp::Broker::connect(&fleet.amqp, "autoeval-bench").await {
                for m in models {
                    let _ = b.delete_queue(&translate_queue(m)).await;
                }
                b.close().await;
            }
        });
    }
    let _ = std::fs::remove_dir_all(scratch);
}

//! `autoeval bench-fleet`: units per second through the whole fleet (mock
//! model server, LLM workers, verifier workers, the real broker and Redis)
//! beside the one-machine run of the same plan, measured side by side.

use anyhow::{bail, Context, Result};
use autoeval_fleet_coordinator::FleetArgs;
use autoeval_progress::rate;
use autoeval_proto::fleet::translate_queue;
use autoeval_redis_store::RunStore;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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
    /// Repeats of each timed run; medians are printed.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Items per complexity value of the 0 ms plan (60: about 10,400
    /// units, so that starting and ending weigh little beside the flow).
    #[arg(long, default_value_t = 60)]
    per_bucket: usize,
    /// Items per complexity value of the 200 ms plan (100: about 17,000
    /// units, 55 s a run at the bound: long enough that the first unit's
    /// 0.4 s, starting and ending weigh little).
    #[arg(long, default_value_t = 100)]
    slow_per_bucket: usize,
    /// Where the fleet is.
    #[command(flatten)]
    fleet: FleetArgs,
}

/// A child process killed when dropped.
pub(super) struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    /// Peak resident memory in MiB.
    pub(super) fn peak_rss_mib(&self) -> Option<f64> {
        peak_rss_mib(self.0.id())
    }
}

/// Peak resident memory (VmHWM) of a live process, in MiB.
pub(super) fn peak_rss_mib(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<f64>().ok()? / 1024.0)
}

/// Units per second while a run was in full flow: from the first look
/// (seconds, units done) at which a tenth of `units` were done to the first
/// at which nine tenths were, counting the units actually done between.
pub(super) fn in_full_flow(looks: &[(f64, u64)], units: u64) -> f64 {
    let first_at = |share: f64| {
        looks
            .iter()
            .find(|(_, n)| *n as f64 >= share * units as f64)
            .copied()
    };
    match (first_at(0.1), first_at(0.9)) {
        (Some((t0, n0)), Some((t1, n1))) if t1 > t0 => (n1 - n0) as f64 / (t1 - t0),
        _ => f64::NAN,
    }
}

/// A binary of the workspace built beside this one.
pub(super) fn sibling(name: &str) -> Result<PathBuf> {
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
pub(super) fn service(program: &Path, args: &[String], fleet: &FleetArgs) -> Result<Proc> {
    let mut child = Command::new(program)
        .args(args)
        .envs(connection_env(fleet))
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

/// How far a run under way has got: units recorded so far.
pub(super) enum Watch {
    /// A fleet run: its `done` counter in Redis.
    Fleet(Box<FleetWatch>),
    /// A one-machine run: the lines appended to its results file.
    Local {
        path: PathBuf,
        read: u64,
        lines: u64,
    },
}

/// A fleet run's `done` counter, read once the coordinator has named the
/// run in its directory.
pub(super) struct FleetWatch {
    rt: tokio::runtime::Runtime,
    conn: autoeval_redis_store::Connection,
    out: PathBuf,
    store: Option<RunStore>,
}

impl Watch {
    /// Watches the fleet run the coordinator makes in `out`.
    pub(super) fn fleet(redis: &str, out: &Path) -> Result<Watch> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let conn = rt.block_on(autoeval_redis_store::connect(redis))?;
        Ok(Watch::Fleet(Box::new(FleetWatch {
            rt,
            conn,
            out: out.to_path_buf(),
            store: None,
        })))
    }

    /// Units done so far.
    pub(super) fn units(&mut self) -> u64 {
        match self {
            Watch::Fleet(fleet) => {
                if fleet.store.is_none() {
                    if let Ok(run) = std::fs::read_to_string(fleet.out.join("run-id")) {
                        fleet.store = Some(RunStore::new(fleet.conn.clone(), run.trim()));
                    }
                }
                match &fleet.store {
                    Some(s) => fleet.rt.block_on(s.done()).unwrap_or(0),
                    None => 0,
                }
            }
            Watch::Local { path, read, lines } => {
                // Only the bytes appended since the last look are read.
                use std::io::{Read, Seek, SeekFrom};
                if let Ok(mut f) = std::fs::File::open(&*path) {
                    let mut fresh = Vec::new();
                    if f.seek(SeekFrom::Start(*read)).is_ok() && f.read_to_end(&mut fresh).is_ok() {
                        *read += fresh.len() as u64;
                        *lines += fresh.iter().filter(|&&b| b == b'\n').count() as u64;
                    }
                }
                *lines
            }
        }
    }
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
        Some(f) => Watch::fleet(&f.redis, &out)?,
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
    let units = super::campaign::count_lines(&out.join("results.jsonl"))?;
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

/// The broker's and Redis's URLs for a process of the benchmark: in its
/// environment, where other processes cannot read them, never in argv.
pub(super) fn connection_env(fleet: &FleetArgs) -> Vec<(&'static str, String)> {
    vec![
        ("AUTOEVAL_AMQP", fleet.amqp.clone()),
        ("AUTOEVAL_REDIS", fleet.redis.clone()),
    ]
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
        repeats: args.repeats.max(1),
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
        setup.side_by_side("zero", &plan(&model0, args.per_bucket, 1), 64)?;
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

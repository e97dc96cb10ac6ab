//! `autoeval bench-soak`: one fleet run under a random mix of faults for a
//! given time (LLM workers and verifiers killed and started again, the
//! coordinator killed and started again, the broker's application stopped
//! and started, Redis emptied, a worker silently cut off from the broker
//! and Redis), then what a run that exits 0 must hold: every unit, every
//! round of every chain, none twice, and about one model call per call needed.

use super::procs::{mock, service, sibling, Proc};
use anyhow::{bail, Context, Result};
use autoeval_fleet_coordinator::FleetArgs;
use autoeval_proto::{NextRound, ResultRecord};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod partition;
mod servers;
mod stalls;

use partition::Proxy;
use servers::Servers;
use stalls::Stalls;

/// A fault the soak throws at the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum)]
pub enum Fault {
    /// An LLM worker killed (SIGKILL) and started again.
    Worker,
    /// A verifier killed (SIGKILL) and started again.
    Verifier,
    /// The coordinator killed (SIGKILL) and started again with its command.
    Coordinator,
    /// The broker's application stopped and started (`rabbitmqctl`).
    Broker,
    /// Redis emptied (`FLUSHALL` on the soak's own Redis).
    Redis,
    /// An LLM worker cut off from the broker and Redis, silently (its
    /// connections hold what they are sent), for 10 to 40 s.
    Partition,
    /// A broker node of `--cluster` killed (SIGKILL) or stopped, and
    /// started again 2 to 15 s later.
    Node,
    /// The Redis primary of `--cluster` killed (SIGKILL): the Sentinels
    /// promote the replica, and it comes back as the new one's replica.
    Primary,
}

/// The faults thrown unless `--faults` names others.
const LOCAL_FAULTS: [Fault; 6] = [
    Fault::Worker,
    Fault::Verifier,
    Fault::Coordinator,
    Fault::Broker,
    Fault::Redis,
    Fault::Partition,
];
/// The faults thrown with `--cluster` unless `--faults` names others.
const CLUSTER_FAULTS: [Fault; 5] = [
    Fault::Worker,
    Fault::Verifier,
    Fault::Coordinator,
    Fault::Node,
    Fault::Primary,
];

/// Rounds of each unit, (A∘I)^3: a lost round shows as a gap before a later one.
const ROUNDS: u32 = 3;

/// Settings of `autoeval bench-soak`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("per_bucket", |a| a.default_value("300")))]
#[command(mut_arg("batches", |a| a.default_value("1")))]
pub struct Args {
    /// Minutes the faults go on; size the run with --per-bucket to last as long.
    #[arg(long, default_value_t = 45)]
    minutes: u64,
    /// Faults per minute on average, at random times.
    #[arg(long, default_value_t = 2.0, conflicts_with = "gap_s")]
    faults_per_minute: f64,
    /// The time between two faults drawn evenly from MIN to MAX seconds
    /// (`20-60`), instead of --faults-per-minute.
    #[arg(long, value_name = "MIN-MAX", value_parser = gap_range)]
    gap_s: Option<(u64, u64)>,
    /// The faults mixed, each as likely as the others (default: worker,
    /// verifier, coordinator, broker, redis, partition; with --cluster:
    /// worker, verifier, coordinator, node, primary).
    #[arg(long, value_enum, value_delimiter = ',')]
    faults: Vec<Fault>,
    /// Runs the fleet on a three-node RabbitMQ cluster (`--amqp` its nodes)
    /// and a Redis primary with a replica and three Sentinels
    /// (`redis-sentinel://`), which the soak starts on loopback ports from
    /// Debian's rabbitmq-server and redis-server; their faults are `node`
    /// and `primary`.
    #[arg(long)]
    cluster: bool,
    /// The plan's items (every dataset, zero-shot, three rounds a unit) and
    /// their seed, which also draws the faults' kinds and times: 300 per
    /// complexity value is about 52,000 units, which last the 45 minutes on
    /// two cores.
    #[command(flatten)]
    draw: autoeval_run_settings::DrawArgs,
    /// The mock model's delay per call, in milliseconds.
    #[arg(long, default_value_t = 100)]
    latency_ms: u64,
    /// LLM workers, each with 8 calls at once.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Verifiers, each with one check at once.
    #[arg(long, default_value_t = 2)]
    verifiers: usize,
    /// The broker (its application is stopped with `rabbitmqctl`, so it
    /// must be this machine's). Redis is the soak's own, on a free port.
    /// Unused with --cluster.
    #[command(flatten)]
    broker: autoeval_service::AmqpUrl,
}

/// Reads `MIN-MAX` seconds.
fn gap_range(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("{text:?} is no MIN-MAX in seconds (e.g. 20-60)");
    let (min, max) = text.split_once('-').ok_or_else(bad)?;
    let (min, max): (u64, u64) = (
        min.trim().parse().map_err(|_| bad())?,
        max.trim().parse().map_err(|_| bad())?,
    );
    if min > max || max == 0 {
        return Err(bad());
    }
    Ok((min, max))
}

/// Runs `autoeval bench-soak`.
pub fn run(mut args: Args) -> Result<()> {
    let scratch = std::env::temp_dir().join(format!("autoeval-soak-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut servers = if args.cluster {
        Servers::cluster(&scratch)?
    } else {
        Servers::local(&args.broker.amqp, &scratch)?
    };
    if args.faults.is_empty() {
        args.faults = if args.cluster {
            CLUSTER_FAULTS.to_vec()
        } else {
            LOCAL_FAULTS.to_vec()
        };
    }
    if let Some(f) = args.faults.iter().find(|f| !servers.takes(**f)) {
        bail!(
            "--faults {f:?} is a fault of {}: leave it out",
            if args.cluster {
                "the local servers, not --cluster"
            } else {
                "--cluster only"
            }
        );
    }
    let fleet = FleetArgs {
        broker: autoeval_service::AmqpUrl::at(servers.amqp()),
        store: autoeval_service::RedisUrl {
            redis: servers.redis(),
        },
        ..FleetArgs::default()
    };
    let (_mock, model) = mock(args.latency_ms)?;
    let mut soak = Soak::start(&args, &fleet, &model, &scratch)?;
    println!(
        "bench-soak: {} for {} min ({}), seed {}; run in {}",
        match args.gap_s {
            Some((min, max)) => format!("a fault every {min}-{max} s"),
            None => format!("{} faults a minute", args.faults_per_minute),
        },
        args.minutes,
        args.faults
            .iter()
            .map(|f| format!("{f:?}").to_lowercase())
            .collect::<Vec<_>>()
            .join(", "),
        args.draw.seed,
        soak.out.display()
    );
    let started = Instant::now();
    let stalls = Stalls::watch(soak.out.join("results.jsonl"));
    let thrown = soak.throw_faults(&args, &mut servers, started)?;
    let faulted = started.elapsed();
    soak.lift_partitions();
    let status = soak.wait_for_the_end()?;
    let took = started.elapsed();
    let longest = stalls.longest();
    let counted = Counted::of(&soak.out.join("results.jsonl"), ROUNDS)?;
    let units = planned_units(&soak.out)?;
    let calls = mock_requests(&model)?;
    println!(
        "faults: {} over {:.1} min ({}); the run ended after {:.1} min",
        thrown.values().sum::<usize>(),
        faulted.as_secs_f64() / 60.0,
        thrown
            .iter()
            .map(|(f, n)| format!("{n} {}", format!("{f:?}").to_lowercase()))
            .collect::<Vec<_>>()
            .join(", "),
        took.as_secs_f64() / 60.0
    );
    if faulted < Duration::from_secs(args.minutes * 60) {
        println!(
            "  the run ended before the faults' time: raise --per-bucket to soak for the whole {} min",
            args.minutes
        );
    }
    counted.print(units, calls, status);
    println!(
        "  longest time without a round recorded: {:.1} s (want ≤ 30)",
        longest.as_secs_f64()
    );
    let clean = status.success() && counted.is_whole(units) && longest <= Duration::from_secs(30);
    drop(soak);
    drop(servers);
    if clean {
        let _ = std::fs::remove_dir_all(&scratch);
    } else {
        println!(
            "  kept for a look: {} (the run's directory, and coordinator.log)",
            scratch.display()
        );
    }
    Ok(())
}

/// The fleet under the soak: its processes, and the run's command.
struct Soak {
    /// Each LLM worker, with the proxies before its broker and Redis
    /// (none on a cluster, whose nodes it must reach each).
    workers: Vec<(Proc, Option<(Proxy, Proxy)>)>,
    verifiers: Vec<Proc>,
    coordinator: Child,
    command: Vec<String>,
    fleet: FleetArgs,
    model: String,
    out: PathBuf,
    worker_bin: PathBuf,
    verifier_bin: PathBuf,
    /// When each partition of a worker ends.
    partitions: Vec<(usize, Instant)>,
}

impl Soak {
    fn start(args: &Args, fleet: &FleetArgs, model: &str, scratch: &Path) -> Result<Soak> {
        let out = scratch.join("run");
        let mut soak = Soak {
            workers: Vec::new(),
            verifiers: Vec::new(),
            coordinator: Command::new("true").spawn()?,
            command: Vec::new(),
            fleet: fleet.clone(),
            model: model.to_string(),
            out: out.clone(),
            worker_bin: sibling("autoeval-worker")?,
            verifier_bin: sibling("autoeval-verifier")?,
            partitions: Vec::new(),
        };
        for _ in 0..args.workers {
            let worker = soak.start_worker(args.cluster)?;
            soak.workers.push(worker);
        }
        for _ in 0..args.verifiers {
            let verifier = soak.start_verifier()?;
            soak.verifiers.push(verifier);
        }
        soak.command = [
            "run",
            "--model",
            model,
            "--prompt",
            "zero-shot",
            "--batches",
            &args.draw.batches.unwrap_or(1).to_string(),
            "--per-bucket",
            &args.draw.per_bucket.unwrap_or(300).to_string(),
            "--rounds",
            &ROUNDS.to_string(),
            "--seed",
            &args.draw.seed.to_string(),
            "--fleet",
            "--quiet",
            "--out",
        ]
        .map(String::from)
        .to_vec();
        soak.command.push(out.to_string_lossy().into_owned());
        // The draw's other choices go to the run as they were given.
        use clap::ValueEnum;
        if let Some(protocol) = args.draw.protocol.and_then(|p| p.to_possible_value()) {
            soak.command
                .extend(["--protocol".into(), protocol.get_name().into()]);
        }
        if let Some(sampling) = args.draw.sampling.and_then(|s| s.to_possible_value()) {
            soak.command
                .extend(["--sampling".into(), sampling.get_name().into()]);
        }
        soak.coordinator = soak.start_coordinator()?;
        Ok(soak)
    }

    /// An LLM worker whose broker and Redis connections go through proxies
    /// the soak can cut (on the local servers), or straight to a cluster.
    fn start_worker(&self, cluster: bool) -> Result<(Proc, Option<(Proxy, Proxy)>)> {
        let args = ["--model", &self.model, "--concurrency", "8"].map(String::from);
        if cluster {
            return Ok((service(&self.worker_bin, &args, &self.fleet)?, None));
        }
        let amqp = url::Url::parse(&self.fleet.broker.amqp).context("the broker's URL")?;
        let redis = url::Url::parse(&self.fleet.store.redis).context("Redis's URL")?;
        let (amqp_proxy, amqp) = Proxy::before(&amqp, 5672)?;
        let (redis_proxy, redis) = Proxy::before(&redis, 6379)?;
        let through = FleetArgs {
            broker: autoeval_service::AmqpUrl::at(amqp),
            store: autoeval_service::RedisUrl { redis },
            ..FleetArgs::default()
        };
        let worker = service(&self.worker_bin, &args, &through)?;
        Ok((worker, Some((amqp_proxy, redis_proxy))))
    }

    fn start_verifier(&self) -> Result<Proc> {
        service(
            &self.verifier_bin,
            &["--jobs".to_string(), "1".to_string()],
            &self.fleet,
        )
    }

    fn start_coordinator(&self) -> Result<Child> {
        // Every start's messages, kept beside the run for a soak that went wrong.
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.out.with_file_name("coordinator.log"))?;
        Command::new(std::env::current_exe()?)
            .args(&self.command)
            .envs(super::procs::connection_env(&self.fleet))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("cannot start the coordinator")
    }

    /// Throws faults at random times until the time is up or the run ends;
    /// says how many of each.
    fn throw_faults(
        &mut self,
        args: &Args,
        servers: &mut Servers,
        started: Instant,
    ) -> Result<BTreeMap<Fault, usize>> {
        let mut rng = ChaCha8Rng::seed_from_u64(args.draw.seed);
        let mut thrown = BTreeMap::new();
        let until = started + Duration::from_secs(args.minutes * 60);
        let mean_gap = 60.0 / args.faults_per_minute.max(0.01);
        let gap = |rng: &mut ChaCha8Rng| match args.gap_s {
            Some((min, max)) => {
                Duration::from_secs_f64(min as f64 + (max - min) as f64 * fraction(rng))
            }
            None => Duration::from_secs_f64(2.0 * mean_gap * fraction(rng)),
        };
        let mut next = Instant::now() + gap(&mut rng);
        while Instant::now() < until {
            if let Some(status) = self.coordinator.try_wait()? {
                if finished(status) {
                    break;
                }
                // A coordinator that gave up is started again, as an operator would.
                eprintln!("bench-soak: the coordinator exited ({status}); starting it again");
                self.coordinator = self.start_coordinator()?;
            }
            self.lift_partitions_due();
            if Instant::now() >= next {
                let fault = args.faults[below(&mut rng, args.faults.len())];
                self.throw(fault, args.cluster, servers, &mut rng)?;
                *thrown.entry(fault).or_default() += 1;
                next = Instant::now() + gap(&mut rng);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(thrown)
    }

    fn throw(
        &mut self,
        fault: Fault,
        cluster: bool,
        servers: &mut Servers,
        rng: &mut ChaCha8Rng,
    ) -> Result<()> {
        match fault {
            Fault::Worker => {
                let i = below(rng, self.workers.len());
                self.partitions.retain(|(w, _)| *w != i);
                let fresh = self.start_worker(cluster)?;
                // The old one is killed as it is dropped.
                self.workers[i] = fresh;
            }
            Fault::Verifier => {
                let i = below(rng, self.verifiers.len());
                let fresh = self.start_verifier()?;
                self.verifiers[i] = fresh;
            }
            Fault::Coordinator => {
                let _ = self.coordinator.kill();
                let _ = self.coordinator.wait();
                self.coordinator = self.start_coordinator()?;
            }
            Fault::Partition => {
                let i = below(rng, self.workers.len());
                if let (_, Some((amqp, redis))) = &self.workers[i] {
                    amqp.cut(true);
                    redis.cut(true);
                    let lasts = Duration::from_secs(10 + below(rng, 30) as u64);
                    self.partitions.push((i, Instant::now() + lasts));
                }
            }
            Fault::Broker | Fault::Redis | Fault::Node | Fault::Primary => {
                servers.throw(fault, rng)?
            }
        }
        Ok(())
    }

    fn lift_partitions_due(&mut self) {
        let now = Instant::now();
        for (i, ends) in &self.partitions {
            if *ends <= now {
                if let (_, Some((amqp, redis))) = &self.workers[*i] {
                    amqp.cut(false);
                    redis.cut(false);
                }
            }
        }
        self.partitions.retain(|(_, ends)| *ends > now);
    }

    fn lift_partitions(&mut self) {
        for (_, proxies) in &self.workers {
            if let Some((amqp, redis)) = proxies {
                amqp.cut(false);
                redis.cut(false);
            }
        }
        self.partitions.clear();
    }

    /// Waits for the coordinator to end the run; one that gave up is
    /// started again (at most five times).
    fn wait_for_the_end(&mut self) -> Result<ExitStatus> {
        let mut starts = 0;
        loop {
            let status = self.coordinator.wait()?;
            if finished(status) || starts == 5 {
                return Ok(status);
            }
            eprintln!("bench-soak: the coordinator exited ({status}); starting it again");
            starts += 1;
            self.coordinator = self.start_coordinator()?;
        }
    }
}

impl Drop for Soak {
    fn drop(&mut self) {
        let _ = self.coordinator.kill();
        let _ = self.coordinator.wait();
    }
}

/// Whether the coordinator's exit ends the run: done (0), or done with
/// rounds failed (3, which starting it again would only say again).
fn finished(status: ExitStatus) -> bool {
    matches!(status.code(), Some(0) | Some(3))
}

/// A number in `0..n`, drawn.
pub(super) fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// A number in `0..1`, drawn.
fn fraction(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// What the run's directory holds.
struct Counted {
    rounds: usize,
    twice: usize,
    units: usize,
    /// Rounds missing before a later one of the same unit.
    missing: usize,
    /// Units whose chain should go on and does not.
    unfinished: usize,
    /// Rounds that ended in an API failure or a verifier error, by reason.
    failed: BTreeMap<String, usize>,
}

impl Counted {
    /// Reads every line of `path` itself (a round appended twice counts twice).
    fn of(path: &Path, rounds: u32) -> Result<Counted> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut seen = HashSet::new();
        let mut chains: HashMap<String, BTreeMap<u32, ResultRecord>> = HashMap::new();
        let mut counted = Counted {
            rounds: 0,
            twice: 0,
            units: 0,
            missing: 0,
            unfinished: 0,
            failed: BTreeMap::new(),
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let r: ResultRecord = serde_json::from_str(line)
                .with_context(|| format!("a line of {} is no record", path.display()))?;
            if !seen.insert(r.round_key().to_string()) {
                counted.twice += 1;
                continue;
            }
            counted.rounds += 1;
            if r.verdict.is_infrastructure_failure() {
                let why = r.reason.clone().unwrap_or_default();
                // The reason's first words name the cause; the rest is the case.
                let cause: String = why.chars().take(100).collect();
                *counted
                    .failed
                    .entry(format!("{}: {cause}", r.verdict.name()))
                    .or_default() += 1;
            }
            chains
                .entry(r.unit().to_string())
                .or_default()
                .insert(r.round, r);
        }
        counted.units = chains.len();
        for chain in chains.values() {
            let highest = chain.keys().max().copied().unwrap_or(0);
            counted.missing += highest as usize - chain.len();
            if chain
                .values()
                .next_back()
                .is_some_and(|last| NextRound::after(last, rounds).is_some())
            {
                counted.unfinished += 1;
            }
        }
        Ok(counted)
    }

    /// Whether every planned unit ran its whole chain, each round once and none failed.
    fn is_whole(&self, planned: usize) -> bool {
        self.units == planned
            && self.unfinished == 0
            && self.missing == 0
            && self.twice == 0
            && self.failed.is_empty()
    }

    fn print(&self, planned: usize, calls: u64, status: ExitStatus) {
        println!(
            "  units: {} of {planned} recorded; unfinished chains: {}",
            self.units, self.unfinished
        );
        println!(
            "  rounds: {} recorded, {} missing before a later one (want 0), {} recorded twice (want 0)",
            self.rounds, self.missing, self.twice
        );
        let failed: usize = self.failed.values().sum();
        println!("  rounds failed (an API failure or a verifier error; want 0): {failed}");
        for (why, n) in self.failed.iter().take(5) {
            println!("    {n} × {why}");
        }
        println!(
            "  calls: {calls} for the {} calls the rounds needed: {:.4} a call needed (want ≤ 1.01)",
            2 * self.rounds,
            calls as f64 / (2 * self.rounds).max(1) as f64
        );
        println!(
            "  the run's exit: {status}{}",
            if status.success()
                && self.failed.is_empty()
                && self.missing == 0
                && self.twice == 0
                && self.units == planned
                && self.unfinished == 0
            {
                " with every round of every unit"
            } else {
                ""
            }
        );
    }
}

/// Units the run in `out` plans.
fn planned_units(out: &Path) -> Result<usize> {
    let settings = autoeval_run_dir::RunDir(out.to_path_buf()).settings()?;
    let (items, _) = autoeval_run_dir::count_items(&settings)?;
    Ok(settings.plan.units(items))
}

/// Requests the mock server serving `model` answered.
fn mock_requests(model: &str) -> Result<u64> {
    use std::io::{Read, Write};
    let address = model
        .split_once("@http://")
        .map(|(_, url)| url.trim_end_matches("/v1"))
        .context("the mock model names its server")?;
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.write_all(b"GET /stats HTTP/1.0\r\n\r\n")?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    let body = reply
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .context("the mock server's statistics")?;
    let stats: serde_json::Value = serde_json::from_str(body)?;
    stats["requests"]
        .as_u64()
        .context("the mock server counts its requests")
}

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

use partition::Proxy;

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
}

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
    #[arg(long, default_value_t = 2.0)]
    faults_per_minute: f64,
    /// The faults mixed, each as likely as the others.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "worker,verifier,coordinator,broker,redis,partition"
    )]
    faults: Vec<Fault>,
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
    #[command(flatten)]
    broker: autoeval_service::AmqpUrl,
}

/// Runs `autoeval bench-soak`.
pub fn run(args: Args) -> Result<()> {
    if args.faults.is_empty() {
        bail!("--faults names no fault");
    }
    let scratch = std::env::temp_dir().join(format!("autoeval-soak-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let redis = OwnRedis::start(&scratch)?;
    let fleet = FleetArgs {
        broker: args.broker.clone(),
        store: autoeval_service::RedisUrl { redis: redis.url() },
        ..FleetArgs::default()
    };
    let (_mock, model) = mock(args.latency_ms)?;
    let mut soak = Soak::start(&args, &fleet, &model, &scratch)?;
    println!(
        "bench-soak: {} faults a minute for {} min ({}), seed {}; run in {}",
        args.faults_per_minute,
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
    let thrown = soak.throw_faults(&args, &redis, started)?;
    let faulted = started.elapsed();
    soak.lift_partitions();
    let status = soak.wait_for_the_end()?;
    let took = started.elapsed();
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
    drop(soak);
    drop(redis);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// The fleet under the soak: its processes, and the run's command.
struct Soak {
    workers: Vec<(Proc, Proxy, Proxy)>,
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
            let worker = soak.start_worker()?;
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
    /// the soak can cut.
    fn start_worker(&self) -> Result<(Proc, Proxy, Proxy)> {
        // The proxy stands before the first node (the soak runs one).
        let first = autoeval_proto::fleet::url_list(&self.fleet.broker.amqp)
            .first()
            .map_or(String::new(), |u| u.to_string());
        let amqp = url::Url::parse(&first).context("the broker's URL")?;
        let redis = url::Url::parse(&self.fleet.store.redis).context("Redis's URL")?;
        let (amqp_proxy, amqp) = Proxy::before(&amqp, 5672)?;
        let (redis_proxy, redis) = Proxy::before(&redis, 6379)?;
        let through = FleetArgs {
            broker: autoeval_service::AmqpUrl::at(amqp),
            store: autoeval_service::RedisUrl { redis },
            ..FleetArgs::default()
        };
        let args = ["--model", &self.model, "--concurrency", "8"].map(String::from);
        let worker = service(&self.worker_bin, &args, &through)?;
        Ok((worker, amqp_proxy, redis_proxy))
    }

    fn start_verifier(&self) -> Result<Proc> {
        service(
            &self.verifier_bin,
            &["--jobs".to_string(), "1".to_string()],
            &self.fleet,
        )
    }

    fn start_coordinator(&self) -> Result<Child> {
        Command::new(std::env::current_exe()?)
            .args(&self.command)
            .envs(super::procs::connection_env(&self.fleet))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start the coordinator")
    }

    /// Throws faults at random times until the time is up or the run ends;
    /// says how many of each.
    fn throw_faults(
        &mut self,
        args: &Args,
        redis: &OwnRedis,
        started: Instant,
    ) -> Result<BTreeMap<Fault, usize>> {
        let mut rng = ChaCha8Rng::seed_from_u64(args.draw.seed);
        let mut thrown = BTreeMap::new();
        let until = started + Duration::from_secs(args.minutes * 60);
        let mean_gap = 60.0 / args.faults_per_minute.max(0.01);
        let mut next =
            Instant::now() + Duration::from_secs_f64(2.0 * mean_gap * fraction(&mut rng));
        while Instant::now() < until {
            if let Some(status) = self.coordinator.try_wait()? {
                if status.success() {
                    break;
                }
                // A coordinator that gave up is started again, as an operator would.
                eprintln!("bench-soak: the coordinator exited ({status}); starting it again");
                self.coordinator = self.start_coordinator()?;
            }
            self.lift_partitions_due();
            if Instant::now() >= next {
                let fault = args.faults[below(&mut rng, args.faults.len())];
                self.throw(fault, redis, &mut rng)?;
                *thrown.entry(fault).or_default() += 1;
                next =
                    Instant::now() + Duration::from_secs_f64(2.0 * mean_gap * fraction(&mut rng));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(thrown)
    }

    fn throw(&mut self, fault: Fault, redis: &OwnRedis, rng: &mut ChaCha8Rng) -> Result<()> {
        match fault {
            Fault::Worker => {
                let i = below(rng, self.workers.len());
                self.partitions.retain(|(w, _)| *w != i);
                let fresh = self.start_worker()?;
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
            Fault::Broker => {
                rabbitmqctl(&["stop_app"])?;
                std::thread::sleep(Duration::from_secs(2 + below(rng, 13) as u64));
                rabbitmqctl(&["start_app"])?;
                rabbitmqctl(&["await_startup"])?;
            }
            Fault::Redis => redis.flush()?,
            Fault::Partition => {
                let i = below(rng, self.workers.len());
                let (_, amqp, redis) = &self.workers[i];
                amqp.cut(true);
                redis.cut(true);
                let lasts = Duration::from_secs(10 + below(rng, 30) as u64);
                self.partitions.push((i, Instant::now() + lasts));
            }
        }
        Ok(())
    }

    fn lift_partitions_due(&mut self) {
        let now = Instant::now();
        for (i, ends) in &self.partitions {
            if *ends <= now {
                let (_, amqp, redis) = &self.workers[*i];
                amqp.cut(false);
                redis.cut(false);
            }
        }
        self.partitions.retain(|(_, ends)| *ends > now);
    }

    fn lift_partitions(&mut self) {
        for (_, amqp, redis) in &self.workers {
            amqp.cut(false);
            redis.cut(false);
        }
        self.partitions.clear();
    }

    /// Waits for the coordinator to end the run; one that gave up is
    /// started again (at most five times).
    fn wait_for_the_end(&mut self) -> Result<ExitStatus> {
        let mut starts = 0;
        loop {
            let status = self.coordinator.wait()?;
            if status.success() || starts == 5 {
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

/// A number in `0..n`, drawn.
fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n.max(1) as u64) as usize
}

/// A number in `0..1`, drawn.
fn fraction(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// `rabbitmqctl ARGS`, which must succeed.
fn rabbitmqctl(args: &[&str]) -> Result<()> {
    let done = Command::new("rabbitmqctl")
        .args(args)
        .stdout(Stdio::null())
        .output()
        .context("cannot run rabbitmqctl: the broker fault needs this machine's RabbitMQ (or leave `broker` out of --faults)")?;
    if !done.status.success() {
        bail!(
            "rabbitmqctl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&done.stderr)
        );
    }
    Ok(())
}

/// The soak's own Redis: emptied by a fault without touching any other.
struct OwnRedis {
    port: u16,
    _server: Proc,
}

impl OwnRedis {
    fn start(scratch: &Path) -> Result<OwnRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let server = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(scratch)
            .stdout(Stdio::null())
            .spawn()
            .context("cannot start redis-server (the soak runs a Redis of its own)")?;
        let redis = OwnRedis {
            port,
            _server: Proc::from(server),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while redis.cli(&["ping"]).is_err() {
            if Instant::now() > deadline {
                bail!("the soak's Redis did not answer");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(redis)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn flush(&self) -> Result<()> {
        self.cli(&["FLUSHALL"])
    }

    fn cli(&self, args: &[&str]) -> Result<()> {
        let done = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .context("cannot run redis-cli")?;
        if !done.status.success() || done.stdout.starts_with(b"ERR") {
            bail!("redis-cli {}: failed", args.join(" "));
        }
        Ok(())
    }
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
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let r: ResultRecord = serde_json::from_str(line)
                .with_context(|| format!("a line of {} is no record", path.display()))?;
            if !seen.insert(r.round_key().to_string()) {
                counted.twice += 1;
                continue;
            }
            counted.rounds += 1;
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

    fn print(&self, planned: usize, calls: u64, status: ExitStatus) {
        println!(
            "  units: {} of {planned} recorded; unfinished chains: {}",
            self.units, self.unfinished
        );
        println!(
            "  rounds: {} recorded, {} missing before a later one (want 0), {} recorded twice (want 0)",
            self.rounds, self.missing, self.twice
        );
        println!(
            "  calls: {calls} for the {} calls the rounds needed: {:.4} a call needed (want ≤ 1.01)",
            2 * self.rounds,
            calls as f64 / (2 * self.rounds).max(1) as f64
        );
        println!(
            "  the run's exit: {status}{}",
            if status.success()
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

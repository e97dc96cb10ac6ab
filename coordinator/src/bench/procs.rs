//! What the fleet benchmarks share: the processes they start and stop,
//! watching a run's progress, and reading what it measured.

use anyhow::{bail, Context, Result};
use autoeval_fleet_coordinator::FleetArgs;
use autoeval_redis_store::RunStore;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped.
pub(super) struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl From<Child> for Proc {
    fn from(child: Child) -> Proc {
        Proc(child)
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

pub(super) fn mock(latency_ms: u64) -> Result<(Proc, String)> {
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
        autoeval_models::ModelSpec::on_server("reference", &format!("http://127.0.0.1:{port}/v1"))?
            .to_string(),
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

/// The broker's and Redis's URLs for a process of the benchmark: in its
/// environment, where other processes cannot read them, never in argv.
pub(super) fn connection_env(fleet: &FleetArgs) -> Vec<(&'static str, String)> {
    vec![
        ("AUTOEVAL_AMQP", fleet.broker.amqp.clone()),
        ("AUTOEVAL_REDIS", fleet.store.redis.clone()),
    ]
}
/// Lines of a results file, read a block at a time.
pub(super) fn count_lines(path: &Path) -> Result<u64> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut lines = 0u64;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(lines);
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let n = buf.len();
        reader.consume(n);
    }
}

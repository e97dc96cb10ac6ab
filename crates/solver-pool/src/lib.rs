//! Prover checks in separate processes.
//!
//! Z3 is known to overrun its own timeout on some inputs, and a check can
//! exhaust memory. The pool keeps up to `size` prover processes, sends each
//! check to an idle one, and arms a watchdog with the check's deadline (its
//! timeout plus a grace period). A process that overruns is killed: the check
//! is a `timeout`, the caller goes on, and a fresh process takes its place.
//! Each process runs under an address-space limit, so memory exhaustion also
//! ends only that process. Both are the prover running out of a resource on
//! this check: a `timeout`, in the denominators like any other. Only a
//! process that cannot start is a `verifier_error`.

mod child;
pub mod memory;
mod process;
mod protocol;
mod watchdog;

use autoeval_syntax::Formula;
use autoeval_verify::{Method, Outcome, Prover, ProverLimits, Verdict};
pub use child::serve_stdio;
pub use process::ProverProcess;
use protocol::{read_frame, read_ready, write_frame, Request, Response};
use std::io::BufReader;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use watchdog::Watchdog;

/// Address-space limit of a prover process unless configured otherwise.
pub const DEFAULT_MEMORY_LIMIT_MB: u64 = 4096;

/// How prover processes are started and supervised.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// The executable that serves checks on stdin/stdout (see [`serve_stdio`]).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Most processes at once; checks beyond that wait for one.
    pub size: usize,
    /// Time a process gets past a check's timeout before it is killed.
    pub grace: Duration,
}

struct Worker {
    id: u64,
    child: Arc<Mutex<Child>>,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// It has said [`protocol::READY`].
    ready: bool,
}

/// Where an exchange with a prover process broke off.
enum Broke {
    /// Before the process said it was ready: it could not run a check.
    Starting(std::io::Error),
    /// Before the request reached it: the process was gone already.
    Sending(std::io::Error),
    /// While it checked: it died on this check.
    Checking(Option<std::io::Error>),
}

impl Worker {
    /// Sends one check and reads its outcome, waiting first for the
    /// process to say it is ready if it has not yet.
    fn exchange(&mut self, request: &Request) -> Result<Outcome, Broke> {
        if !self.ready {
            read_ready(&mut self.stdout).map_err(Broke::Starting)?;
            self.ready = true;
        }
        write_frame(&mut self.stdin, request).map_err(Broke::Sending)?;
        match read_frame::<Response>(&mut self.stdout) {
            Ok(Some(response)) => response.outcome().map_err(|e| Broke::Checking(Some(e))),
            Ok(None) => Err(Broke::Checking(None)),
            Err(e) => Err(Broke::Checking(Some(e))),
        }
    }
}

struct Slots {
    idle: Vec<Worker>,
    live: usize,
}

/// A pool of prover processes; implements [`Prover`].
pub struct SolverPool {
    config: PoolConfig,
    slots: Mutex<Slots>,
    freed: Condvar,
    watchdog: Watchdog,
    next_id: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere must not disable the pool; the data stays consistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SolverPool {
    /// A pool of up to `size` processes running `program args…` (an
    /// executable that serves [`serve_stdio`]), each given half a second
    /// past a check's timeout before it is killed.
    pub fn of_program(program: PathBuf, args: Vec<String>, size: usize) -> SolverPool {
        SolverPool::new(PoolConfig {
            program,
            args,
            size,
            grace: Duration::from_millis(500),
        })
    }

    /// A pool that starts processes lazily, as checks arrive.
    pub fn new(config: PoolConfig) -> SolverPool {
        SolverPool {
            config,
            slots: Mutex::new(Slots {
                idle: Vec::new(),
                live: 0,
            }),
            freed: Condvar::new(),
            watchdog: Watchdog::start(),
            next_id: AtomicU64::new(0),
        }
    }

    fn spawn(&self) -> std::io::Result<Worker> {
        let mut child = Command::new(&self.config.program)
            .args(&self.config.args)
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| name.to_str().is_some_and(inherited)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let missing = || std::io::Error::other("prover process has no pipes");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(missing)?);
        Ok(Worker {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            child: Arc::new(Mutex::new(child)),
            stdin,
            stdout,
            ready: false,
        })
    }

    fn acquire(&self) -> std::io::Result<Worker> {
        let mut slots = lock(&self.slots);
        loop {
            if let Some(w) = slots.idle.pop() {
                return Ok(w);
            }
            if slots.live < self.config.size.max(1) {
                slots.live += 1;
                drop(slots);
                return self.spawn().inspect_err(|_| self.retire_slot());
            }
            slots = self.freed.wait(slots).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn release(&self, w: Worker) {
        lock(&self.slots).idle.push(w);
        self.freed.notify_one();
    }

    fn retire_slot(&self) {
        lock(&self.slots).live -= 1;
        self.freed.notify_one();
    }

    /// Kills and reaps a process that can no longer be trusted; says how it ended.
    fn discard(&self, w: Worker) -> String {
        let mut child = lock(&w.child);
        let _ = child.kill();
        let status = child
            .wait()
            .map(|s| s.to_string())
            .unwrap_or_else(|e| e.to_string());
        drop(child);
        self.retire_slot();
        status
    }

    /// Number of prover processes running now.
    pub fn live(&self) -> usize {
        lock(&self.slots).live
    }
}

impl Prover for SolverPool {
    fn prove(&self, phi0: &Formula, phi1: &Formula, limits: ProverLimits) -> Outcome {
        let gave_up = |verdict, reason: String| Outcome {
            reason: Some(reason),
            ..Outcome::new(verdict, Method::Z3)
        };
        let mut w = match self.acquire() {
            Ok(w) => w,
            Err(e) => {
                return gave_up(
                    Verdict::VerifierError,
                    format!(
                        "cannot start the prover {}: {e}",
                        self.config.program.display()
                    ),
                )
            }
        };
        // An undecided check is tried once more on a fresh solver (see
        // `z3_equivalence`), each try within the time limit.
        let allowed = Duration::from_millis(2 * limits.timeout_ms as u64) + self.config.grace;
        let started = Instant::now();
        self.watchdog.arm(w.id, started + allowed, w.child.clone());
        let request = Request {
            phi0: phi0.clone(),
            phi1: phi1.clone(),
            limits,
        };
        let answer = w.exchange(&request);
        let killed = self.watchdog.disarm(w.id);
        let broke = match answer {
            Ok(outcome) if !killed => {
                self.release(w);
                return outcome;
            }
            Ok(_) => Broke::Checking(None),
            Err(broke) => broke,
        };
        let status = self.discard(w);
        let detail = |e: Option<std::io::Error>| e.map(|e| format!(": {e}")).unwrap_or_default();
        match broke {
            Broke::Starting(e) if killed => gave_up(
                Verdict::VerifierError,
                format!(
                    "the prover process did not start within {} ms ({status}){}",
                    started.elapsed().as_millis(),
                    detail(Some(e))
                ),
            ),
            Broke::Starting(e) => gave_up(
                Verdict::VerifierError,
                format!("the prover process could not start ({status}){}", detail(Some(e))),
            ),
            Broke::Sending(e) => gave_up(
                Verdict::VerifierError,
                format!("the prover process was gone before the check ({status}){}", detail(Some(e))),
            ),
            Broke::Checking(_) if killed => gave_up(
                Verdict::Timeout,
                format!(
                    "the prover overran its budget (two tries of {} ms) and was stopped after {} ms",
                    limits.timeout_ms,
                    started.elapsed().as_millis()
                ),
            ),
            // Out of memory under its address-space limit, or a crash on
            // this input: the prover ran out of what it may use, as a
            // timeout does, and the formula stays in the denominators.
            Broke::Checking(e) => gave_up(
                Verdict::Timeout,
                format!(
                    "the prover process died during the check ({status}){}: out of memory or a crash on this check",
                    detail(e)
                ),
            ),
        }
    }
}

impl Drop for SolverPool {
    fn drop(&mut self) {
        for w in lock(&self.slots).idle.drain(..) {
            let mut child = lock(&w.child);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether a prover inherits the variable `name`: what a program needs to
/// run and log, never the rest (the parent's URLs with passwords, API keys,
/// TLS keys), which a child's environment would expose to whoever reads it.
fn inherited(name: &str) -> bool {
    matches!(
        name,
        "PATH" | "HOME" | "TMPDIR" | "LANG" | "NO_COLOR" | "LD_LIBRARY_PATH" | "AUTOEVAL_LOG"
    ) || name.starts_with("LC_")
        || name.starts_with("RUST_")
}

//! `autoeval-verifier-stdio`: reads check requests (JSONL) on stdin and
//! writes results on stdout, in order, checking in parallel.

use anyhow::{Context, Result};
use autoeval_syntax::Mode;
use autoeval_verify::{ProverLimits, Settings};
use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Verifier worker: equivalence checks for a stream of requests.
#[derive(Parser)]
#[command(name = "autoeval-verifier-stdio", version, about)]
struct Args {
    /// Parallel checks, at least 1; all cores when absent.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Prover time limit per check, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u32,
    /// Prover resource limit per check (Z3 rlimit); 0 for none.
    #[arg(long, default_value_t = 50_000_000)]
    rlimit: u32,
    /// Refuse →, ↔, ⊕ (and |, +, ? in regexes), which the prompts do not offer.
    #[arg(long)]
    strict: bool,
    /// Serve prover checks on stdin/stdout instead (started by the worker itself).
    #[arg(long, hide = true)]
    prover_child: bool,
}

fn main() -> std::process::ExitCode {
    autoeval_service::exit_with(run())
}

fn run() -> Result<()> {
    autoeval_telemetry::init_logs("warn");
    let args = Args::parse();
    if args.prover_child {
        return Ok(autoeval_solver_pool::serve_stdio(
            autoeval_solver_pool::DEFAULT_MEMORY_LIMIT_MB,
        )?);
    }
    let jobs = args
        .jobs
        .map(usize::from)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    let exe = std::env::current_exe().context("cannot find this executable to start provers")?;
    let pool =
        autoeval_solver_pool::SolverPool::of_program(exe, vec!["--prover-child".into()], jobs);
    let settings = Settings {
        mode: if args.strict {
            Mode::Strict
        } else {
            Mode::Lenient
        },
        limits: ProverLimits {
            timeout_ms: args.timeout_ms,
            rlimit: args.rlimit,
        },
        ..Settings::default()
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    let counts = autoeval_verify_stage::checks::run_checks(
        stdin,
        stdout,
        &settings,
        &pool,
        &threads,
        |_| {},
    )
    .context("cannot read the requests or write the results")?;
    tracing::info!(?counts, "all requests checked");
    Ok(())
}

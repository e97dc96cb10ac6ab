//! `autoeval-verifier-stdio`: reads check requests (JSONL) on stdin and
//! writes results on stdout, in order, checking in parallel.

use anyhow::{Context, Result};
use autoeval_syntax::Mode;
use autoeval_verify::Settings;
use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Verifier worker: equivalence checks for a stream of requests.
#[derive(Parser)]
#[command(name = "autoeval-verifier-stdio", version, about)]
struct Args {
    /// Checks at once.
    #[command(flatten)]
    checks: autoeval_run_settings::ParallelChecks,
    /// The prover's limits.
    #[command(flatten)]
    prover: autoeval_run_settings::ProverArgs,
    /// Refuse →, ↔, ⊕ (and |, +, ? in regexes), which the prompts do not offer.
    #[arg(long)]
    strict: bool,
    /// The prover processes.
    #[command(flatten)]
    process: autoeval_solver_pool::ProverProcess,
}

fn main() -> std::process::ExitCode {
    autoeval_service::exit_with(run())
}

fn run() -> Result<()> {
    autoeval_telemetry::init_logs("warn");
    let args = Args::parse();
    if let Some(served) = args.process.serve_if_child() {
        return Ok(served?);
    }
    let jobs = args.checks.jobs();
    let threads = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    let pool = args
        .process
        .pool(jobs)
        .context("cannot find this executable to start provers")?;
    let settings = Settings {
        mode: if args.strict {
            Mode::Strict
        } else {
            Mode::Lenient
        },
        limits: args.prover.into(),
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

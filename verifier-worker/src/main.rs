//! `autoeval-verifier`: the fleet's verifier worker. It takes verify tasks
//! from the broker, proves each answer in an isolated, time-limited prover
//! process off the async runtime (so CPU work never starves the broker
//! connection's heartbeats), records the round in Redis once, publishes the
//! next round of (A∘I)^n, and only then acknowledges the task.

mod serve;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Verifier worker of an AutoEval fleet.
#[derive(Parser, Debug)]
#[command(name = "autoeval-verifier", version, about)]
pub struct Args {
    /// Checks at once.
    #[command(flatten)]
    checks: autoeval_run_settings::ParallelChecks,
    /// Tasks to keep in hand (the broker's prefetch holds about twice as
    /// many, in bundles): more than --jobs, so that recording and
    /// acknowledging one bundle overlaps proving the next.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    concurrency: u16,
    /// The prover processes: with --jobs, their memory is what the verifier
    /// may take beside its own, which must fit the container's limit.
    #[command(flatten)]
    prover: autoeval_solver_pool::ProverProcess,
    /// The broker, Redis, and how this process serves.
    #[command(flatten)]
    service: autoeval_service::ServiceArgs,
}

fn main() -> std::process::ExitCode {
    autoeval_service::main_of(|args: Args| {
        if let Some(served) = args.prover.serve_if_child() {
            return Ok(served?);
        }
        let runtime = autoeval_service::runtime(args.service.threads)?;
        runtime.block_on(serve::run(args))
    })
}

//! `autoeval-verifier`: the fleet's verifier worker. It takes verify tasks
//! from the broker, proves each answer in an isolated, time-limited prover
//! process off the async runtime (so CPU work never starves the broker
//! connection's heartbeats), records the round in Redis once, publishes the
//! next round of (A∘I)^n, and only then acknowledges the task.

mod serve;

use anyhow::Result;
use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Verifier worker of an AutoEval fleet.
#[derive(Parser, Debug)]
#[command(version, about)]
pub struct Args {
    /// Broker URL.
    #[arg(
        long,
        env = "AUTOEVAL_AMQP",
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f"
    )]
    amqp: String,
    /// Redis URL.
    #[arg(long, env = "AUTOEVAL_REDIS", default_value = "redis://127.0.0.1:6379")]
    redis: String,
    /// Checks at once, each in its own prover process [default: the number of cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Tasks to keep in hand (the broker's prefetch holds about twice as
    /// many, in bundles): more than --jobs, so that recording and
    /// acknowledging one bundle overlaps proving the next.
    #[arg(long, default_value_t = 64)]
    concurrency: u16,
    /// Threads of the async runtime: one moves the bytes of hundreds of
    /// calls in flight; more only help when one core cannot keep up.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Address of /healthz, /readyz and /metrics (port 0: any free port, printed at start).
    #[arg(long, alias = "metrics-addr", default_value = "127.0.0.1:0")]
    health_addr: String,
    /// Serve prover checks on stdin/stdout instead (started by the worker itself).
    #[arg(long, hide = true)]
    prover_child: bool,
}

fn main() -> Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,lapin=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    if args.prover_child {
        return Ok(autoeval_solver_pool::serve_stdio(
            autoeval_solver_pool::DEFAULT_MEMORY_LIMIT_MB,
        )?);
    }
    let runtime = autoeval_service::runtime(args.threads)?;
    runtime.block_on(serve::run(args))
}

//! `autoeval-worker`: the fleet's LLM worker. It serves the translate
//! queues of the models it is given, runs I then A for each task of a
//! bundle, publishes the bundle's answers to the verify queue and
//! acknowledges the bundle only once that publish is confirmed. Replies are
//! cached in Redis, so a bundle delivered again (after a crash or a lost
//! connection) does not pay twice.
//!
//! Time budget: one task makes two model calls, each of at most
//! `max-attempts` attempts of `request-timeout-s` plus backoff, and its
//! bundle waits in hand while earlier tasks take their turns at the slots;
//! keep that below the broker's `consumer_timeout` (30 minutes by default,
//! told to the worker with `--consumer-timeout-s`; it warns for a run whose
//! bundles could be in hand longer), or the broker closes the channel and
//! redelivers the bundle.

mod runs;
mod serve;

use clap::Parser;

/// LLM worker of an AutoEval fleet.
#[derive(Parser, Debug)]
#[command(version, about)]
pub struct Args {
    /// Model spec this worker serves, exactly as the run names it (repeat for several).
    #[arg(long = "model", required = true)]
    models: Vec<autoeval_models::Model>,
    /// Tasks in flight at once per model; the broker's prefetch holds about
    /// twice as many, in bundles, so that no slot waits on a slow bundle.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..))]
    concurrency: u16,
    /// API keys.
    #[command(flatten)]
    keys: autoeval_run_settings::SecretsArgs,
    /// Tasks of batched models (`batch = true`) this worker carries at once
    /// per model: each is kept in Redis and its delivery acknowledged while
    /// it waits for its batches. Enough to fill a batch or two.
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u32).range(1..))]
    batch_capacity: u32,
    /// Seconds this worker's custody lease lasts unless renewed: once it
    /// lapses (the worker died), another worker of the model adopts its kept tasks.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    custody_lease_s: u64,
    /// The broker, Redis, and how this process serves.
    #[command(flatten)]
    service: autoeval_service::ServiceArgs,
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    autoeval_service::main_of(|args: Args| {
        let runtime = autoeval_service::runtime(args.service.threads)?;
        runtime.block_on(serve::run(args))
    })
}

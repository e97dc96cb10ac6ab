//! `autoeval`: generate benchmark datasets and check formula equivalence.

mod generate;

use clap::{Parser, Subcommand};

/// AutoEval Fleet: the ∀uto∃val benchmark for LLMs.
#[derive(Parser)]
#[command(name = "autoeval", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a dataset of formulas balanced over complexity (paper Algorithm 1).
    Generate(generate::Args),
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AUTOEVAL_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Generate(args) => generate::run(args),
    }
}

//! `autoeval`: generate benchmark datasets and check formula equivalence.

/// `println!` for output a reader may stop reading (`| head`): a closed
/// pipe ends the output quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod app;
mod bench;
mod check;
mod closeness;
mod correlate;
mod export;
mod fleet;
mod generate;
mod import;
mod judge;
mod mock_llm;
mod report;
mod rerun;
mod resume;
mod reverify;
mod run;
mod status;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Has the allocator give freed memory back to the system at once instead
/// of keeping it for later: a run's verifying frees large trees in bursts,
/// and kept, they set its peak memory (the paper's protocol: 258 MiB
/// resident, and 309 MiB with ten times the items; given back, 106 and 120).
/// It must run before the allocator's first arena is made, which is before
/// `main`: the loader runs `.preinit_array` before anything else.
extern "C" fn return_freed_memory_promptly() {
    // mimalloc's `mi_option_arena_eager_commit` and `mi_option_purge_delay`,
    // by their place in the pinned version's `mi_option_t` enum.
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: setting an option is a plain store into mimalloc's option
    // table, which it reads at its next use; no memory is allocated.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".preinit_array")]
static RETURN_FREED_MEMORY_PROMPTLY: extern "C" fn() = return_freed_memory_promptly;

/// AutoEval Fleet: the ∀uto∃val benchmark for LLMs.
///
/// Generates formulas from the benchmark's grammars (3-SAT, propositional
/// logic, first-order logic, regular expressions) and proves whether two
/// formulas mean the same.
#[derive(Parser)]
#[command(
    name = "autoeval",
    version,
    after_help = "Exit status:\n  0    everything went through\n  1    an error, or a model that refused or stopped answering: one line says what to fix (and, for a halt, the `rerun` command that goes on)\n  3    a run finished, but some rounds ended in an API failure or a verifier error: redo them with `autoeval rerun DIR --failed` (adding --fleet for a fleet run)\n  75   a run is paused at its budget: continue it with `autoeval resume DIR --budget-usd MORE` (adding --fleet for a fleet run)\n  130  Ctrl-C stopped the command: a fleet run goes on, and the same command attaches again\n\nExamples:\n  autoeval run\n  autoeval run --model reference-noisy:0.2 --dataset fol --per-bucket 10\n  autoeval report runs/reference-1a2b3c4d\n  autoeval generate --dataset fol --out fol.jsonl\n  autoeval check --pairs pairs.jsonl --out verdicts.jsonl\n  autoeval bench"
)]
#[command(subcommand_required = false, arg_required_else_help = true)]
struct Cli {
    /// The prover processes a command starts (`--prover-memory-mb` before
    /// the command), and the hidden switch they run under.
    #[command(flatten)]
    prover: autoeval_solver_pool::ProverProcess,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run an evaluation, on this machine or on a fleet (--fleet): generate, translate, verify, record, report.
    Run(Box<run::Args>),
    /// Write the HTML report and print the summary of a run directory.
    Report(report::Args),
    /// Redo the rounds of a run that ended in an API failure, a verifier error or a timeout, and the calls a halt never sent.
    Rerun(rerun::Args),
    /// Continue a run (one machine or fleet) paused at its cost or token cap, with a new cap.
    Resume(resume::Args),
    /// Where a fleet run stands: units per shard (done, failed, dead, in hand per stage, waiting), queue depths, dead letters and why.
    Status(status::Args),
    /// Keep the fleet's Redis and broker tidy: `autoeval fleet gc` removes finished runs and unused model queues.
    Fleet(fleet::Args),
    /// Metric A4: ask a model whether φ0 ≡ φ1 for a run's pairs and score it.
    Judge(judge::Args),
    /// Write a run's results as Inspect logs, Parquet, CSV or the reference's verified layout.
    Export(export::Args),
    /// Generate a dataset of formulas balanced over complexity (paper Algorithm 1).
    Generate(generate::Args),
    /// Check pairs of formulas or regular expressions for equivalence.
    Check(check::Args),
    /// Re-check the reference implementation's published verdicts and report disagreements.
    Reverify(reverify::Args),
    /// Graded closeness of FOL formulas (paper 003): metrics for pairs, their sensitivity to perturbations, their alignment with a judge, their speed.
    Closeness(closeness::Args),
    /// Metric A1: Pearson correlation and predictive power against another benchmark's scores.
    Correlate(correlate::Args),
    /// Convert a dataset file of the public reference implementation to JSONL items.
    Import(import::Args),
    /// Measure round trips per second through HTTP against the mock server (use a release build).
    BenchLlm(bench::llm::Args),
    /// Measure units per second through the fleet (broker, Redis, workers, verifiers) beside the one-machine run (use a release build).
    BenchFleet(bench::fleet::Args),
    /// Run one fleet run under a random mix of faults for a given time, then count its units, rounds, rounds missing or recorded twice, and calls per call needed.
    BenchSoak(bench::soak::Args),
    /// Replay `run --until decided` over a finished run's records, in many draw orders: coverage, wrong orders and units used, each question against the fixed-time oracle, beside the procedure it replaced and a naive fixed-sample test.
    BenchDecided(bench::decided::Args),
    /// Serve a built-in model (the reference model, or its noisy, chatty or judge forms) over every API the model client speaks: OpenAI's chat completions and Responses, Azure OpenAI, Anthropic, Gemini and Bedrock, and their batch APIs.
    MockLlm(mock_llm::Args),
    /// Measure generation time and checks per second (use a release build).
    Bench(bench::prover::Args),
}

fn main() -> std::process::ExitCode {
    // Elsewhere the options are set here, after the first arena.
    #[cfg(not(target_os = "linux"))]
    return_freed_memory_promptly();
    if let Err(e) = autoeval_service::variables_from_files() {
        eprintln!("error: {e:#}");
        return std::process::ExitCode::FAILURE;
    }
    autoeval_telemetry::init_logs("warn");
    // One clean line for a failed command, whatever RUST_BACKTRACE says.
    match dispatch() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<app::run::Incomplete>() {
            Some(incomplete) => {
                eprintln!("warning: {incomplete}");
                std::process::ExitCode::from(app::run::EXIT_INCOMPLETE)
            }
            None if e.is::<autoeval_fleet_coordinator::Paused>() => {
                eprintln!("paused: {e}");
                std::process::ExitCode::from(autoeval_fleet_coordinator::EXIT_PAUSED)
            }
            None if e.is::<autoeval_fleet_coordinator::Detached>() => {
                eprintln!("{e}");
                std::process::ExitCode::from(autoeval_fleet_coordinator::EXIT_DETACHED)
            }
            None => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::FAILURE
            }
        },
    }
}

/// The command line parsed; a value its type refused (a model spec, a
/// range) is the one line a user error gets, since the type's message
/// names the forms it takes, without clap's usage tip after it.
fn parse(argv: &[std::ffi::OsString]) -> anyhow::Result<clap::ArgMatches> {
    use clap::CommandFactory;
    match Cli::command().try_get_matches_from(argv) {
        Ok(matches) => Ok(matches),
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            anyhow::bail!("{}", autoeval_models::one_line(&e))
        }
        Err(e) => e.exit(),
    }
}

fn dispatch() -> anyhow::Result<()> {
    use clap::{CommandFactory, FromArgMatches};
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut matches = parse(&argv)?;
    // `run --config FILE`: the file's keys are read as flags before the
    // command line's, and the whole parsed again.
    let mut tables = autoeval_run_settings::ModelTables::new();
    if let Some(("run", given)) = matches.subcommand() {
        let command = Cli::command();
        let run = command.find_subcommand("run").expect("run is a command");
        let (layered, models) = run::with_config_file(argv.clone(), run, given)?;
        if layered.len() != argv.len() {
            matches = parse(&layered)?;
        }
        tables = models;
    }
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Some(served) = cli.prover.serve_if_child() {
        return Ok(served?);
    }
    app::provers::started_as(cli.prover);
    let Some(command) = cli.command else {
        Cli::command().print_help()?;
        std::process::exit(2);
    };
    match command {
        Command::Run(args) => run::run(*args, tables, matches.subcommand_matches("run")),
        Command::Report(args) => report::run(args),
        Command::Rerun(args) => rerun::run(args, matches.subcommand_matches("rerun")),
        Command::Resume(args) => resume::run(args, matches.subcommand_matches("resume")),
        Command::Status(args) => status::run(args, matches.subcommand_matches("status")),
        Command::Fleet(args) => fleet::run(args),
        Command::Judge(args) => judge::run(args),
        Command::Export(args) => export::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Check(args) => check::run(args),
        Command::Import(args) => import::run(args),
        Command::Correlate(args) => correlate::run(args),
        Command::Closeness(args) => closeness::run(args),
        Command::Reverify(args) => reverify::run(args),
        Command::Bench(args) => bench::prover::run(args),
        Command::MockLlm(args) => mock_llm::run(args),
        Command::BenchLlm(args) => bench::llm::run(args),
        Command::BenchFleet(args) => bench::fleet::run(args),
        Command::BenchSoak(args) => bench::soak::run(args),
        Command::BenchDecided(args) => bench::decided::run(args),
    }
}

//! `autoeval rerun DIR [--failed]`: redo exactly the rounds that ended in an
//! API failure, a verifier error or a timeout. Their records are removed and the run resumes;
//! every other round stays as it was, and the response cache means a
//! translation that had succeeded is not paid for again.

use crate::app::one_machine::execute;
use anyhow::Result;
use autoeval_run_dir::resolve as resolve_settings;
use autoeval_run_dir::JsonlStore;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::{CallArgs, ProverArgs, Resolved, RunArgs};
use std::path::PathBuf;

/// Settings of `autoeval rerun`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory.
    dir: PathBuf,
    /// Redo the rounds that ended in an API failure, a verifier error or a
    /// timeout (the only mode, and the default).
    #[arg(long)]
    failed: bool,
    /// The prover's limits for the redone checks: each flag given replaces
    /// the run's, the rest are the run's.
    #[command(flatten)]
    prover: ProverArgs,
    /// How the redone calls are made: each flag given replaces the run's.
    #[command(flatten)]
    calls: CallArgs,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
    /// A fleet run: redo the units whose last round failed or whose tasks
    /// are dead letters, through the fleet.
    #[command(flatten)]
    fleet: autoeval_fleet_coordinator::FleetArgs,
}

/// The run's settings with the flags the command line gave in place of
/// the run's: the run's config read as flags, then the command line's.
fn settings_as_given(dir: &RunDir, matches: Option<&clap::ArgMatches>) -> Result<Resolved> {
    let stored = dir.settings()?;
    let text = stored.to_config_text()?;
    let (args, tables) = RunArgs::from_config_under(&text, &dir.config(), matches)?;
    Ok(resolve_settings(args, tables)?)
}

/// Runs `autoeval rerun`; `matches` tell which flags the command line gave.
pub fn run(args: Args, matches: Option<&clap::ArgMatches>) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let settings = settings_as_given(&dir, matches)?;
    if args.fleet.fleet {
        let display = args.output.display(10);
        let fleet = args
            .fleet
            .at_run_addresses(&dir, |id| crate::app::given_on_line(matches, id))?;
        return crate::app::fleet::on_fleet(
            &dir,
            &settings,
            display,
            &fleet,
            &autoeval_fleet_coordinator::BudgetArgs::default(),
            autoeval_fleet_coordinator::Mode::RedoFailed,
        );
    }
    if dir.is_fleet() {
        // Redone here, its calls would go from this machine straight to the
        // provider, and the fleet's next report would not know them.
        anyhow::bail!(
            "{} is a fleet run: redo it on the fleet with `autoeval rerun {} --failed --fleet` (the fleet's addresses are the ones its directory keeps, unless --amqp and --redis give others)",
            dir.0.display(),
            dir.0.display()
        );
    }
    let removed = JsonlStore::remove(&dir.results(), |r| r.verdict.is_retryable())?;
    let display = args.output.display(10);
    if !args.output.quiet {
        if removed == 0 {
            // A halt or a pause leaves units never sent: those are run.
            eprintln!("rerun: no round ended in an API failure, a verifier error or a timeout; running the units never sent, if any");
        } else {
            eprintln!(
                "rerun: {removed} rounds ended in an API failure, a verifier error or a timeout; running them again"
            );
        }
    }
    execute(&dir, &settings, display, dir.caps()?)
}

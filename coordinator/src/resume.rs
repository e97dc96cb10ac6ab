//! `autoeval resume DIR --fleet --budget-usd MORE`: continues a fleet run
//! paused at its cost or token cap. Once the paused run's queued tasks are
//! set aside and those in hand are done, the new caps are set and exactly
//! the units with no final outcome are published again; replies already
//! paid for come from the response cache.

use crate::run::config::RunConfig;
use crate::run::{progress_display, resolve_settings, RunDir};
use anyhow::{bail, Result};
use std::path::PathBuf;

/// Settings of `autoeval resume`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory.
    dir: PathBuf,
    /// Print nothing but where the report is.
    #[arg(long, short)]
    quiet: bool,
    /// Log lines instead of bars, even on a terminal.
    #[arg(long)]
    plain: bool,
    /// The fleet.
    #[command(flatten)]
    fleet: crate::fleet::FleetArgs,
    /// The new caps; without either the run continues with no cap.
    #[command(flatten)]
    budget: crate::fleet::BudgetArgs,
}

/// Runs `autoeval resume`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    if !dir.config().exists() {
        bail!(
            "{} is not a run directory (no config.toml)",
            args.dir.display()
        );
    }
    if !args.fleet.fleet {
        bail!("resume continues a fleet run paused at its budget: add --fleet (a one-machine run resumes with `autoeval run --out DIR` again)");
    }
    let settings = resolve_settings(RunConfig::read(&dir.config())?)?;
    let display = progress_display(args.quiet, args.plain, 10);
    crate::fleet::execute(
        &dir,
        &settings,
        display,
        &args.fleet,
        &args.budget,
        crate::fleet::Mode::Resume,
    )
}

//! `autoeval resume DIR [--fleet] --budget-usd MORE`: continues a run
//! paused at its cost or token cap. On a fleet, one step in Redis sets the
//! new caps, unpauses the run and takes the tasks its workers set aside;
//! exactly those are published again, and the tasks still queued are done
//! as usual. On this machine, the run goes on from its records with the new
//! caps, charged from what those records paid.

use anyhow::{bail, Result};
use autoeval_run_dir::RunDir;
use std::path::PathBuf;

/// Settings of `autoeval resume`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run directory.
    dir: PathBuf,
    /// How progress is shown.
    #[command(flatten)]
    output: crate::app::output::OutputArgs,
    /// The fleet.
    #[command(flatten)]
    fleet: autoeval_fleet_coordinator::FleetArgs,
    /// The new caps: a cap not given stays as it was; `--no-budget` removes both.
    #[command(flatten)]
    budget: autoeval_fleet_coordinator::BudgetArgs,
}

/// Runs `autoeval resume`; `matches` tell which addresses the command line gave.
pub fn run(args: Args, matches: Option<&clap::ArgMatches>) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    if !args.fleet.fleet && dir.is_fleet() {
        bail!(
            "resume continues a fleet run: add --fleet, `autoeval resume {} --fleet`",
            args.dir.display()
        );
    }
    let settings = dir.settings()?;
    let display = args.output.display(10);
    if !args.fleet.fleet {
        // A run on this machine goes on from its records, every paid reply cached.
        let caps = args.budget.applied_to(dir.caps()?);
        if caps.usd.is_some() {
            autoeval_fleet_coordinator::refuse_unpriced(&settings)?;
        }
        return crate::app::one_machine::execute(&dir, &settings, display, caps);
    }
    let fleet = args
        .fleet
        .at_run_addresses(&dir, |id| crate::app::given_on_line(matches, id))?;
    crate::app::fleet::on_fleet(
        &dir,
        &settings,
        display,
        &fleet,
        &args.budget,
        autoeval_fleet_coordinator::Mode::Resume,
    )
}

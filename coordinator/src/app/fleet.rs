//! A run on the fleet, as `run`, `resume` and `rerun` ask for it: the
//! whole plan, or wave by wave `--until decided`, and its summary and
//! report once every unit has its outcome.

use crate::app::decided::Sequence;
use crate::app::run::finish;
use anyhow::Result;
use autoeval_progress::Display;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::Resolved;

/// Runs `settings` on the fleet as `mode` says, and writes the summary and
/// report as a one-machine run does once every unit has its outcome.
pub fn on_fleet(
    dir: &RunDir,
    settings: &Resolved,
    display: Display,
    fleet: &autoeval_fleet_coordinator::FleetArgs,
    budget: &autoeval_fleet_coordinator::BudgetArgs,
    mode: autoeval_fleet_coordinator::Mode,
) -> Result<()> {
    let mut sequence = match settings.until.design() {
        Some(design) => Some(Sequence::new(dir, settings, display, design)?),
        None => None,
    };
    let asked = autoeval_fleet_coordinator::FleetRun {
        dir,
        settings,
        display,
        fleet,
        budget,
        mode,
    };
    let waves = sequence
        .as_mut()
        .map(|s| s as &mut dyn autoeval_fleet_coordinator::Waves);
    autoeval_fleet_coordinator::execute(asked, waves, |done| {
        finish(
            dir,
            settings,
            done.items,
            done.units,
            done.generate_s,
            &done.times,
            display,
        )
    })?;
    match &sequence {
        Some(sequence) => sequence.tell_decided(),
        None => Ok(()),
    }
}

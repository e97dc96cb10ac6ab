//! A one-machine run as its settings ask: its whole plan, or until what it
//! was asked to decide is decided.

use crate::app::{decided, run};
use anyhow::Result;
use autoeval_engine::budget::Caps;
use autoeval_progress::Display;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::Resolved;

/// Runs (or resumes) the run in `dir` to its end and writes its summary and report.
pub fn execute(dir: &RunDir, settings: &Resolved, display: Display, caps: Caps) -> Result<()> {
    match settings.until.design() {
        Some(design) => decided::execute(dir, settings, display, caps, design),
        None => run::execute(dir, settings, display, caps),
    }
}

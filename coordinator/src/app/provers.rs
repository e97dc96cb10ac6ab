//! Provers in processes of their own, as every command that proves starts them.

use anyhow::{Context, Result};
use autoeval_solver_pool::{ProverProcess, SolverPool};
use std::sync::OnceLock;

/// The prover processes' flags this process was started with.
static STARTED_AS: OnceLock<ProverProcess> = OnceLock::new();

/// Keeps the prover processes' flags of this process's command line, which
/// every pool it starts passes on (set once, before any command runs).
pub fn started_as(flags: ProverProcess) {
    let _ = STARTED_AS.set(flags);
}

/// A pool of prover processes, each this executable under its hidden
/// `--prover-child` switch, with this process's memory limit.
pub fn prover_pool(size: usize) -> Result<SolverPool> {
    STARTED_AS
        .get()
        .copied()
        .unwrap_or_default()
        .pool(size)
        .context("cannot find this executable to start provers")
}

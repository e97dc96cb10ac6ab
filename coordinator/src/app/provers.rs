//! Provers in processes of their own, as every command that proves starts them.

use anyhow::{Context, Result};
use autoeval_solver_pool::SolverPool;

/// A pool of prover processes running this executable's hidden `prover-child` command.
pub fn prover_pool(size: usize) -> Result<SolverPool> {
    let program =
        std::env::current_exe().context("cannot find this executable to start provers")?;
    Ok(SolverPool::of_program(
        program,
        vec!["prover-child".into()],
        size,
    ))
}

//! How a binary that starts provers is told to be one, and how much memory
//! each may take: one group of flags, flattened by every such binary
//! (`autoeval`, the verifier, the stdio verifier), so the hidden switch and
//! the memory flag are each declared once.

use crate::{serve_stdio, SolverPool, DEFAULT_MEMORY_LIMIT_MB};
use std::io;

/// The prover processes a binary starts, as flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args)]
pub struct ProverProcess {
    /// Address space of each prover process, in MiB (0 for no limit).
    #[arg(long, default_value_t = DEFAULT_MEMORY_LIMIT_MB)]
    pub prover_memory_mb: u64,
    /// Serve prover checks on stdin/stdout: how this executable runs the
    /// provers it starts.
    #[arg(long, hide = true)]
    pub prover_child: bool,
}

impl Default for ProverProcess {
    fn default() -> ProverProcess {
        ProverProcess {
            prover_memory_mb: DEFAULT_MEMORY_LIMIT_MB,
            prover_child: false,
        }
    }
}

impl ProverProcess {
    /// Serves checks until stdin closes when this process is a prover
    /// child; `None` when it is not one.
    pub fn serve_if_child(&self) -> Option<io::Result<()>> {
        self.prover_child
            .then(|| serve_stdio(self.prover_memory_mb))
    }

    /// A pool of `size` provers, each this executable started as a child
    /// under these flags.
    pub fn pool(&self, size: usize) -> io::Result<SolverPool> {
        let program = std::env::current_exe()?;
        Ok(SolverPool::of_program(program, self.child_args(), size))
    }

    /// The arguments that start this executable as a prover child.
    fn child_args(&self) -> Vec<String> {
        vec![
            "--prover-child".into(),
            "--prover-memory-mb".into(),
            self.prover_memory_mb.to_string(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Binary {
        #[command(flatten)]
        prover: ProverProcess,
    }

    #[test]
    fn a_child_is_started_with_the_flags_its_parent_reads() {
        let parent = Binary::parse_from(["x", "--prover-memory-mb", "512"]).prover;
        assert!(!parent.prover_child);
        let mut argv = vec!["x".to_string()];
        argv.extend(parent.child_args());
        let child = Binary::parse_from(argv).prover;
        assert!(child.prover_child);
        assert_eq!(child.prover_memory_mb, 512);
    }
}

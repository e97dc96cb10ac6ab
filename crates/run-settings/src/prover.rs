//! The prover's limits and the checks run at once, as flags: groups that
//! `check`, the verifier and the stdio verifier flatten, with the defaults
//! every check uses.

use autoeval_proto::{ProverLimits, DEFAULT_CHECK_RLIMIT, DEFAULT_CHECK_TIMEOUT_MS};
use serde::{Deserialize, Serialize};

/// How long, and how much, one check may prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ProverArgs {
    /// Prover time limit per check, in milliseconds (at most an hour).
    #[arg(
        long,
        default_value_t = DEFAULT_CHECK_TIMEOUT_MS,
        value_parser = crate::options::within(1_u32, 3_600_000)
    )]
    pub timeout_ms: u32,
    /// Prover resource limit per check (Z3 rlimit); 0 for none.
    #[arg(long, default_value_t = DEFAULT_CHECK_RLIMIT)]
    pub rlimit: u32,
}

/// How many checks run at once: one flag, `--jobs`, for `run`, `check`,
/// the verifier and the stdio verifier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::Args, Serialize, Deserialize)]
pub struct ParallelChecks {
    /// Checks at once, each in its own prover process; one per core when not given.
    // `--verifiers`, its name in `run` before it was one flag, is a hidden
    // alias for a release, as it is a key of settings written before.
    #[arg(long, alias = "verifiers", value_parser = crate::options::within(1_u16, 4_096))]
    #[serde(alias = "verifiers", skip_serializing_if = "Option::is_none")]
    pub jobs: Option<u16>,
}

impl ParallelChecks {
    /// The checks at once: as given, or one per core.
    pub fn jobs(&self) -> usize {
        self.jobs
            .map(usize::from)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl Default for ProverArgs {
    fn default() -> ProverArgs {
        let ProverLimits { timeout_ms, rlimit } = ProverLimits::default();
        ProverArgs { timeout_ms, rlimit }
    }
}

impl From<ProverArgs> for ProverLimits {
    fn from(args: ProverArgs) -> ProverLimits {
        let ProverArgs { timeout_ms, rlimit } = args;
        ProverLimits { timeout_ms, rlimit }
    }
}

//! How a run checks answers: its provers, their limits, and what a copied
//! formula counts as. What reaches the verify stage is [`VerifySettings`].

use crate::{ParallelChecks, ProverArgs, VerifySettings};
use autoeval_proto::CopyPolicy;
use serde::{Deserialize, Serialize};

/// How answers are checked.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CheckArgs {
    /// Checks at once.
    #[command(flatten)]
    #[serde(flatten)]
    pub parallel: ParallelChecks,
    /// The prover's limits.
    #[command(flatten)]
    #[serde(flatten)]
    pub prover: ProverArgs,
    /// When the English copies the formula: flag it, or count the round as non-compliant.
    #[arg(long, value_enum, default_value_t = CopyPolicy::Flag)]
    pub copy_policy: CopyPolicy,
}

impl CheckArgs {
    /// Verifier threads and prover processes: as given, or one per core.
    pub fn jobs(&self) -> usize {
        self.parallel.jobs()
    }

    /// What the verify stage reads of them, on either mode.
    pub fn verify_settings(&self) -> VerifySettings {
        VerifySettings {
            prover: self.prover,
            copy_policy: self.copy_policy,
        }
    }
}

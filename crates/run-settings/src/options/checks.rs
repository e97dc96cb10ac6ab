//! How a run checks answers: its provers, their limits, and what a copied
//! formula counts as. What reaches the verify stage is [`VerifySettings`].

use super::within;
use crate::{ProverArgs, VerifySettings};
use autoeval_proto::CopyPolicy;
use serde::{Deserialize, Serialize};

/// How answers are checked.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CheckArgs {
    /// Verifier threads and prover processes, one per core when not given.
    #[arg(long, value_parser = within(1_usize, 4_096))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifiers: Option<usize>,
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
    pub fn verifiers(&self) -> usize {
        self.verifiers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    /// What the verify stage reads of them, on either mode.
    pub fn verify_settings(&self) -> VerifySettings {
        VerifySettings {
            prover: self.prover,
            copy_policy: self.copy_policy,
        }
    }
}

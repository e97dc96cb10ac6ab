//! The settings a run's stages are built from, typed per stage, in one
//! value a coordinator hands to workers on other machines: the prompts
//! both stages name, the translate stage's, the verify stage's.
//! Machine-local things (keys, caches, concurrency) are each worker's own
//! and come in when the stages are built.

use crate::ProverArgs;
use autoeval_models::{Model, ModelSettings, PriceTable};
use autoeval_prompts::{PromptSet, TemplateError, Templates};
use autoeval_proto::CopyPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a run's stages behave, whichever machine runs them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StageSettings {
    /// The prompts the translate stage asks and the records name.
    pub prompts: PromptSettings,
    /// The translate stage's (and an A4 judge's): how each model is asked.
    pub translate: TranslateSettings,
    /// The verify stage's: the copy policy and the prover's limit.
    pub verify: VerifySettings,
}

/// How the verify stage proves and records, on either mode.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifySettings {
    /// The prover's limits per check.
    pub prover: ProverArgs,
    /// What a copied formula counts as.
    pub copy_policy: CopyPolicy,
}

impl Default for VerifySettings {
    /// What a run that gives no flag checks with: its flags' defaults.
    fn default() -> VerifySettings {
        crate::RunArgs::default().checks.verify_settings()
    }
}

/// The prompts of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PromptSettings {
    /// The prompt set.
    pub set: PromptSet,
    /// Templates replacing the set's, as `(name, text)` (they change the set's id).
    pub overrides: Vec<(String, String)>,
}

/// How the translate stage asks its models.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslateSettings {
    /// Attempts per model call.
    pub max_attempts: u32,
    /// Each model's settings, resolved, by model (a map written with the
    /// specs as written for keys, each read back checked).
    pub models: BTreeMap<Model, ModelSettings>,
    /// Prices of the run's models.
    pub prices: PriceTable,
}

impl PromptSettings {
    /// The prompt templates, overrides applied.
    pub fn templates(&self) -> Result<Templates, TemplateError> {
        Templates::of_set(self.set).with_overrides(self.overrides.clone())
    }
}

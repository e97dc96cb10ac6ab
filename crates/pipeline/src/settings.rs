//! The verifier's part of a run's settings: read from the same JSON the
//! translate stage's settings are written as, so that a verifier needs
//! nothing of the model client to build its stage.

use crate::stages::VerifyStage;
use autoeval_prompts::{PromptSet, TemplateError, Templates};
use autoeval_proto::CopyPolicy;
use autoeval_verify::{Prover, ProverLimits, Settings};
use serde::Deserialize;
use std::sync::Arc;

/// What the verify stage reads of a run's stage settings (the fields of
/// the same names; the rest are the translate stage's).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct VerifySettings {
    /// The prompt set, whose id the records carry.
    pub prompt_set: PromptSet,
    /// Templates replacing the set's, as `(name, text)` (they change the set's id).
    pub template_overrides: Vec<(String, String)>,
    /// Copy-check policy.
    pub copy_policy: CopyPolicy,
    /// Prover time limit per check, in ms.
    pub timeout_ms: u32,
}

impl VerifySettings {
    /// The verifier's settings of a run.
    pub fn verifier(&self) -> Settings {
        Settings {
            limits: ProverLimits {
                timeout_ms: self.timeout_ms,
                ..Settings::default().limits
            },
            ..Settings::default()
        }
    }

    /// The verify stage, proving with `prover`.
    pub fn stage(
        &self,
        prover: Arc<dyn Prover + Send + Sync>,
    ) -> Result<VerifyStage, TemplateError> {
        let templates =
            Templates::of_set(self.prompt_set).with_overrides(self.template_overrides.clone())?;
        Ok(VerifyStage {
            settings: self.verifier(),
            prover,
            copy_policy: self.copy_policy,
            prompt_set: templates.set_id().to_string(),
            as_reference: self.prompt_set == PromptSet::Reference,
        })
    }
}

//! The verify stage built from a run's stage settings, the same way on one
//! machine and on a verifier worker.

use crate::stage::VerifyStage;
use autoeval_prompts::{PromptSet, TemplateError};
use autoeval_run_settings::{StageSettings, VerifySettings};
use autoeval_verify::{Prover, Settings};
use std::sync::Arc;

/// The verifier's settings for a run's verify stage.
pub fn verifier(settings: &VerifySettings) -> Settings {
    Settings {
        limits: settings.prover.into(),
        ..Settings::default()
    }
}

/// The verify stage of a run, proving with `prover`.
pub fn verify_stage(
    stages: &StageSettings,
    prover: Arc<dyn Prover + Send + Sync>,
) -> Result<VerifyStage, TemplateError> {
    let templates = stages.prompts.templates()?;
    Ok(VerifyStage {
        settings: verifier(&stages.verify),
        prover,
        copy_policy: stages.verify.copy_policy,
        prompt_set: templates.set_id().to_string(),
        as_reference: stages.prompts.set == PromptSet::Reference,
    })
}

//! Stages built from a run's [`StageSettings`]: the translate stage's
//! part comes from the translate crate, the verifier's part from here.

use crate::stages::Stages;
use autoeval_translate::{Local, SettingsError, StageSettings};
use autoeval_verify::{Prover, ProverLimits, Settings};
use std::sync::Arc;

/// The verifier's settings of a run.
pub fn verifier_settings(settings: &StageSettings) -> Settings {
    Settings {
        limits: ProverLimits {
            timeout_ms: settings.timeout_ms,
            ..Settings::default().limits
        },
        ..Settings::default()
    }
}

/// The stages for `models` of the run, proving with `prover`.
pub fn stages(
    settings: &StageSettings,
    models: &[String],
    local: &Local,
    prover: Arc<dyn Prover + Send + Sync>,
) -> Result<Stages, SettingsError> {
    Ok(Stages {
        translator: settings.translator(models, local)?,
        settings: verifier_settings(settings),
        prover,
        copy_policy: settings.copy_policy,
    })
}

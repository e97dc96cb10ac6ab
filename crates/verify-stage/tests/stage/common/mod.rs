//! What the verify stage's tests share.

use autoeval_prompts::PromptSet;
use autoeval_proto::CopyPolicy;
use autoeval_run_settings::{PromptSettings, StageSettings, TranslateSettings, VerifySettings};
use autoeval_verify::InProcessZ3;
use autoeval_verify_stage::{verify_stage, VerifyStage};
use std::sync::Arc;

/// The verify stage of a run under prompt set `set`, proving in this process.
pub fn stage_for(set: PromptSet) -> VerifyStage {
    let stages = StageSettings {
        prompts: PromptSettings {
            set,
            overrides: Vec::new(),
        },
        translate: TranslateSettings {
            max_attempts: 1,
            models: Default::default(),
            prices: Default::default(),
        },
        verify: VerifySettings {
            copy_policy: CopyPolicy::Flag,
            ..VerifySettings::default()
        },
    };
    verify_stage(&stages, Arc::new(InProcessZ3)).expect("the stage's settings are valid")
}

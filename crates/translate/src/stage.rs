//! The translate stage: the backends and prompts of a run, and one task
//! translated there and back.

use crate::{round_trip, Request};
use autoeval_llm_client::Backend;
use autoeval_prompts::{Family, Templates};
use autoeval_proto::{RoundTrip, TranslateTask, VerifyTask};
use std::collections::BTreeMap;

/// What the translate stage needs: a backend per model and the prompts.
pub struct Translator {
    /// Backends by model spec as written.
    pub backends: BTreeMap<String, Backend>,
    /// Prompt templates.
    pub templates: Templates,
}

impl Translator {
    /// Why the run must stop, if a model's backend halted: every attempt
    /// so far failed the same way.
    pub fn halted(&self) -> Option<String> {
        self.backends.iter().find_map(|(model, b)| {
            b.halt().map(|h| {
                format!(
                    "stopped after {} attempts to reach {model} failed the same way: {}; {}",
                    h.attempts, h.cause, h.fix
                )
            })
        })
    }
}

/// Stage one: the model informalizes the task's formula, then formalizes its English back.
pub async fn translate(task: TranslateTask, stages: &Translator) -> VerifyTask {
    let family = Family::from(task.item.dataset);
    let translation = match stages.backends.get(&task.model) {
        Some(backend) => {
            let alphabet: Vec<char> = task.alphabet.chars().collect();
            let request = Request {
                family,
                phi0: &task.input,
                shots: task.prompt,
                alphabet: &alphabet,
                unit: task.unit().to_string(),
                round: task.round,
            };
            round_trip(backend, &stages.templates, &request).await
        }
        None => RoundTrip {
            api_failure: Some(format!("no backend for model {}", task.model)),
            ..RoundTrip::default()
        },
    };
    VerifyTask { task, translation }
}

impl autoeval_engine::Translate for Translator {
    async fn translate(&self, task: TranslateTask) -> VerifyTask {
        translate(task, self).await
    }

    fn halted(&self) -> Option<String> {
        Translator::halted(self)
    }
}

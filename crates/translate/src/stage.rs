//! The translate stage: the backends and prompts of a run, and one task
//! translated there and back.

use crate::{round_trip, Request};
use autoeval_llm_client::Backend;
use autoeval_prompts::{Family, Templates};
use autoeval_proto::{RoundTrip, TranslateTask, VerifyTask};
use std::collections::BTreeMap;
use std::time::Duration;

/// What the translate stage needs: a backend per model and the prompts.
pub struct Translator {
    /// Backends by model spec as written.
    pub backends: BTreeMap<String, Backend>,
    /// Prompt templates.
    pub templates: Templates,
    /// The longest a task may take (calls, retries and waits included),
    /// when a broker would deliver a task held longer again: past it the
    /// round is an API failure, redone by `rerun`.
    pub task_deadline: Option<Duration>,
}

impl Translator {
    /// Why the run must stop, if a model's backend halted: its provider
    /// refused in a way every request would repeat, or every attempt so far
    /// failed the same way.
    pub fn halted(&self) -> Option<String> {
        self.backends
            .iter()
            .find_map(|(model, b)| b.halt().map(|h| h.line(model)))
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
            let trip = round_trip(backend, &stages.templates, &request);
            // A batched task is kept in custody, not held by the broker: its batch may take a day.
            let deadline = stages
                .task_deadline
                .filter(|_| backend.batch_settings().is_none());
            match deadline {
                None => trip.await,
                Some(deadline) => match tokio::time::timeout(deadline, trip).await {
                    Ok(done) => done,
                    // The calls stop here; a reply paid meanwhile is cached
                    // for the rerun.
                    Err(_) => RoundTrip {
                        api_failure: Some(format!(
                            "the round trip ran past {} s, its share of the broker's consumer timeout; `rerun --failed` redoes it",
                            deadline.as_secs()
                        )),
                        ..RoundTrip::default()
                    },
                },
            }
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

    fn serves(&self, model: &str) -> bool {
        self.backends.contains_key(model)
    }

    fn batched(&self, model: &str) -> bool {
        self.backends
            .get(model)
            .is_some_and(|b| b.batch_settings().is_some())
    }

    fn refusal(&self, model: &str) -> String {
        let given: Vec<&str> = self.backends.keys().map(String::as_str).collect();
        format!(
            "this worker was not given model {model} (it serves {}); the task is not sent",
            if given.is_empty() {
                "none of the run's models".to_string()
            } else {
                given.join(", ")
            }
        )
    }
}

//! What a run evaluates: datasets, models, prompt styles and how many
//! items, rounds and repeats. Settings a protocol gives its own defaults
//! stay unset until [`PlanArgs::resolve`] fills them in.

use super::DrawArgs;
use crate::{Protocol, Result};
use autoeval_generate::DatasetKind;
use autoeval_models::Model;
use autoeval_pipeline::RunPlan;
use autoeval_prompts::{PromptSet, Shots};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The models of a run that names none: a perfect translator beside one
/// that errs on a tenth of the items, so the first report shows its plots
/// telling two models apart.
pub const DEFAULT_MODELS: [&str; 2] = ["reference", "reference-noisy:0.1"];

/// What is evaluated.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PlanArgs {
    /// Dataset type (repeat for several).
    // `datasets`, `models` and `prompts`: as config.toml named them before
    // its keys were the flags, so that such a file still reads.
    #[arg(long = "dataset", alias = "datasets", value_enum, default_values_t = DatasetKind::ALL)]
    #[serde(rename = "dataset")]
    pub datasets: Vec<DatasetKind>,
    /// Model (repeat for several), with settings after a `?` (--help lists them).
    #[arg(long = "model", alias = "models", default_values = DEFAULT_MODELS, long_help = autoeval_models::spec_help())]
    #[serde(rename = "model")]
    pub models: Vec<Model>,
    /// Prompt style (repeat for both); when none is given, both, or
    /// zero-shot alone under --protocol.
    #[arg(long = "prompt", alias = "prompts", value_enum)]
    #[serde(rename = "prompt", skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Shots>,
    /// How many items, and their seed.
    #[command(flatten)]
    #[serde(flatten)]
    pub draw: DrawArgs,
    /// Rounds n of (A∘I)^n; a round runs only if the one before kept the meaning.
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// Times each item is asked of each model in each style.
    #[arg(long, default_value_t = 1)]
    pub repeats: u32,
    /// Prompt set: paper (App. F's prompts) or extended (every name of φ0 in both prompts,
    /// English predicate meanings, the regex alphabet); paper when not given, the public
    /// implementation's (reference) under --protocol reference.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_set: Option<PromptSet>,
    /// Evaluate the items of a file instead of generated ones: this project's JSONL
    /// (`autoeval generate`) or the reference implementation's dataset JSON.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<PathBuf>,
}

impl PlanArgs {
    /// The plan: what was given, and for the rest the protocol's defaults
    /// when one is named, the built-in ones otherwise. `items_digest` names
    /// the contents of the items file.
    pub fn resolve(&self, items_digest: Option<String>) -> Result<RunPlan> {
        let protocol = self.draw.protocol.is_some();
        let items_file = match (&self.items, items_digest) {
            (Some(path), Some(digest)) => Some(format!("{}#{digest}", path.display())),
            (Some(path), None) => Some(path.display().to_string()),
            _ => None,
        };
        let prompts = match (self.prompts.is_empty(), protocol) {
            (false, _) => self.prompts.clone(),
            (true, true) => vec![Shots::ZeroShot],
            (true, false) => Shots::ALL.to_vec(),
        };
        let plan = RunPlan {
            datasets: self.datasets.clone(),
            models: self.models.clone(),
            prompts,
            per_bucket: self
                .draw
                .per_bucket
                .unwrap_or(if protocol { 50 } else { 4 }),
            batches: self.draw.batches.unwrap_or(if protocol { 10 } else { 3 }),
            rounds: self.rounds,
            repeats: self.repeats,
            seed: self.draw.seed,
            sampling: self.draw.sampling(),
            prompt_set: self.prompt_set.unwrap_or(match self.draw.protocol {
                Some(Protocol::Reference) => PromptSet::Reference,
                _ => PromptSet::Paper,
            }),
            items_file,
        };
        plan.validate()?;
        Ok(plan)
    }

    /// The arguments that give `plan` again under `protocol`, from `items`.
    pub fn of_plan(plan: &RunPlan, protocol: Option<Protocol>, items: Option<PathBuf>) -> PlanArgs {
        PlanArgs {
            datasets: plan.datasets.clone(),
            models: plan.models.clone(),
            prompts: plan.prompts.clone(),
            draw: DrawArgs {
                per_bucket: Some(plan.per_bucket),
                batches: Some(plan.batches),
                seed: plan.seed,
                sampling: Some(plan.sampling),
                protocol,
            },
            rounds: plan.rounds,
            repeats: plan.repeats,
            prompt_set: Some(plan.prompt_set),
            items,
        }
    }
}

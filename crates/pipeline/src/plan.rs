//! From a run's settings to its items and first-round tasks.

use crate::message::{task_item, TranslateTask};
use autoeval_generate::{generate_batch, ConfigError, DatasetConfig, DatasetKind, Item, Shortfall};
use autoeval_prompts::{PromptSet, Shots};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What a run evaluates: the cross product of its datasets' items, models,
/// prompt styles and repeats, each for `rounds` rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// Dataset types.
    pub datasets: Vec<DatasetKind>,
    /// Model specs as written.
    pub models: Vec<String>,
    /// Prompt styles.
    pub prompts: Vec<Shots>,
    /// Batches per dataset (the spread bands are across batches and repeats).
    pub batches: u64,
    /// Items per complexity value in each batch.
    pub per_bucket: usize,
    /// n of (A∘I)^n.
    pub rounds: u32,
    /// Times each item is asked of each model in each style.
    pub repeats: u32,
    /// Seed of the generated datasets.
    pub seed: u64,
    /// The prompt set the models are asked with.
    #[serde(default)]
    pub prompt_set: PromptSet,
    /// Items read from a file instead of generated: its path and a digest of
    /// its contents, so another file (or an edited one) is another plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_file: Option<String>,
}

/// Why a plan cannot run.
#[derive(Debug, Clone, Error)]
pub enum PlanError {
    /// A setting is out of range.
    #[error("{0}")]
    Invalid(String),
    /// The dataset generator refused its settings.
    #[error(transparent)]
    Generate(#[from] ConfigError),
}

impl RunPlan {
    /// Refuses empty or out-of-range settings, saying which to change.
    pub fn validate(&self) -> Result<(), PlanError> {
        let bad = |s: &str| Err(PlanError::Invalid(s.to_string()));
        if self.datasets.is_empty() {
            return bad("no dataset: name at least one with --dataset");
        }
        if self.models.is_empty() {
            return bad("no model: name at least one with --model");
        }
        if self.prompts.is_empty() {
            return bad("no prompt style: name at least one with --prompt");
        }
        if self.rounds == 0 || self.repeats == 0 {
            return bad("--rounds and --repeats must be at least 1");
        }
        if self.items_file.is_none() && (self.batches == 0 || self.per_bucket == 0) {
            return bad("--batches, --per-bucket, --rounds and --repeats must be at least 1");
        }
        Ok(())
    }

    /// The generator settings for one dataset: Table 1 with this plan's seed and bucket size.
    pub fn dataset_config(&self, kind: DatasetKind) -> DatasetConfig {
        DatasetConfig {
            seed: self.seed,
            per_bucket: self.per_bucket,
            ..DatasetConfig::table1(kind)
        }
    }

    /// Work units: items × models × prompt styles × repeats.
    pub fn units(&self, items: usize) -> usize {
        items * self.models.len() * self.prompts.len() * self.repeats as usize
    }
}

/// A bucket that came up short, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchShortfall {
    /// Dataset.
    pub dataset: DatasetKind,
    /// Batch number.
    pub batch: u64,
    /// The complexity value and its counts.
    pub shortfall: Shortfall,
}

/// The items of every dataset and batch of the plan, and the buckets that came up short.
pub fn generate_items(plan: &RunPlan) -> Result<(Vec<Item>, Vec<BatchShortfall>), PlanError> {
    plan.validate()?;
    let mut items = Vec::new();
    let mut short = Vec::new();
    for &kind in &plan.datasets {
        let cfg = plan.dataset_config(kind);
        for b in 0..plan.batches {
            let batch = generate_batch(&cfg, b)?;
            short.extend(batch.shortfall.into_iter().map(|shortfall| BatchShortfall {
                dataset: kind,
                batch: b,
                shortfall,
            }));
            items.extend(batch.items);
        }
    }
    Ok((items, short))
}

/// Round-one tasks for every work unit, in item order.
pub fn initial_tasks(plan: &RunPlan, items: &[Item]) -> Vec<TranslateTask> {
    let mut tasks = Vec::with_capacity(plan.units(items.len()));
    for item in items {
        let task_item = task_item(item);
        let alphabet: String = plan
            .dataset_config(item.dataset)
            .alphabet()
            .into_iter()
            .collect();
        for model in &plan.models {
            for &prompt in &plan.prompts {
                for repeat in 0..plan.repeats {
                    tasks.push(TranslateTask {
                        item: task_item.clone(),
                        alphabet: alphabet.clone(),
                        model: model.clone(),
                        prompt,
                        repeat,
                        round: 1,
                        rounds: plan.rounds,
                        input: item.fs.clone(),
                    });
                }
            }
        }
    }
    tasks
}

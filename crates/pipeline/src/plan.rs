//! From a run's settings to its items and first-round tasks.

use autoeval_generate::{
    generate_batch, ConfigError, DatasetConfig, DatasetKind, Item, Sampling, Shortfall,
};
use autoeval_prompts::PromptSet;
use autoeval_proto::wire::TaskItem;
use autoeval_proto::{Shots, TranslateTask};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What a run evaluates: the cross product of its datasets' items, models,
/// prompt styles and repeats, each for `rounds` rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// Dataset types.
    pub datasets: Vec<DatasetKind>,
    /// Models, each named by its spec as written.
    pub models: Vec<autoeval_models::Model>,
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
    /// How items are drawn; written only where it is not the default, so
    /// that plans made before it keep their names.
    #[serde(default, skip_serializing_if = "is_default")]
    pub sampling: Sampling,
    /// The prompt set the models are asked with.
    #[serde(default)]
    pub prompt_set: PromptSet,
    /// Items read from a file instead of generated: its path and a digest of
    /// its contents, so another file (or an edited one) is another plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_file: Option<String>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
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
            sampling: self.sampling,
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
    let mut items = Vec::new();
    let mut short = Vec::new();
    for batch in item_batches(plan)? {
        let batch = batch?;
        items.extend(batch.items);
        short.extend(batch.shortfall);
    }
    Ok((items, short))
}

/// The items of one dataset's batch, and its buckets that came up short.
#[derive(Debug, Default)]
pub struct ItemBatch {
    /// Its items, in generation order.
    pub items: Vec<Item>,
    /// Its buckets that came up short.
    pub shortfall: Vec<BatchShortfall>,
}

/// The plan's items one dataset batch at a time, in the order
/// [`generate_items`] gives them, each generated only when asked for: a
/// run holds one batch of items, not all of them.
pub fn item_batches(
    plan: &RunPlan,
) -> Result<impl Iterator<Item = Result<ItemBatch, PlanError>> + Send + 'static, PlanError> {
    plan.validate()?;
    let configs: Vec<(DatasetKind, DatasetConfig)> = plan
        .datasets
        .iter()
        .map(|&kind| (kind, plan.dataset_config(kind)))
        .collect();
    let batches = plan.batches;
    Ok(configs.into_iter().flat_map(move |(kind, cfg)| {
        (0..batches).map(move |b| {
            let batch = generate_batch(&cfg, b)?;
            Ok(ItemBatch {
                items: batch.items,
                shortfall: batch
                    .shortfall
                    .into_iter()
                    .map(|shortfall| BatchShortfall {
                        dataset: kind,
                        batch: b,
                        shortfall,
                    })
                    .collect(),
            })
        })
    }))
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
                        model: model.to_string(),
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

/// The item as tasks carry it.
pub fn task_item(item: &Item) -> TaskItem {
    let metrics = match serde_json::to_value(&item.metrics) {
        Ok(serde_json::Value::Object(m)) => TaskItem::metrics_from_json(&m),
        _ => Vec::new(),
    };
    TaskItem {
        id: item.id.clone(),
        dataset: item.dataset,
        batch: item.batch,
        complexity: item.complexity(),
        fs: item.fs.clone(),
        metrics,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use autoeval_proto::wire::{decode, encode, Header, MessageKind};
    use autoeval_proto::{RoundTrip, VerifyTask};

    #[test]
    fn tasks_cross_the_wire_unchanged() {
        for kind in DatasetKind::ALL {
            let cfg = DatasetConfig {
                per_bucket: 1,
                ..DatasetConfig::table1(kind)
            };
            let item = generate_batch(&cfg, 0).unwrap().items.remove(0);
            let task = TranslateTask {
                item: task_item(&item),
                alphabet: "01".into(),
                model: "reference".into(),
                prompt: Shots::FewShot,
                repeat: 2,
                round: 1,
                rounds: 3,
                input: item.fs.clone(),
            };
            // The record's metrics are the item's, as the generator wrote them.
            let written = serde_json::to_value(&item.metrics).unwrap();
            assert_eq!(serde_json::Value::Object(task.item.metrics_json()), written);
            let verify = VerifyTask {
                task,
                translation: RoundTrip {
                    english: Some("some English".into()),
                    cost: Some(0.25),
                    ..RoundTrip::default()
                },
            };
            let header = Header {
                kind: MessageKind::Verify,
                run: "r".into(),
            };
            let bytes = encode(&header, &verify).unwrap();
            let (_, back): (Header, VerifyTask) = decode(&bytes, MessageKind::Verify).unwrap();
            assert_eq!(back, verify);
        }
    }
}

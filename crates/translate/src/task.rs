//! The tasks of the translate stage: what it takes and what it hands to the verifiers.

use crate::RoundTrip;
use autoeval_generate::Item;
use autoeval_prompts::Shots;
use autoeval_proto::wire::TaskItem;
use autoeval_proto::UnitKey;
use serde::{Deserialize, Serialize};

/// Ask a model to translate one formula there and back (round `round` of `rounds`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslateTask {
    /// The item, with φ0 and its metrics.
    pub item: TaskItem,
    /// Regex alphabet of the item's dataset, e.g. `"01"`.
    pub alphabet: String,
    /// Model spec as written.
    pub model: String,
    /// Zero- or few-shot.
    pub prompt: Shots,
    /// Repeat number, from 0.
    pub repeat: u32,
    /// This round, from 1.
    pub round: u32,
    /// Rounds asked for: n of (A∘I)^n.
    pub rounds: u32,
    /// The formula to translate: φ0 in round 1, then the previous round's φ.
    pub input: String,
}

impl TranslateTask {
    /// The work unit this task belongs to.
    pub fn unit(&self) -> UnitKey {
        UnitKey {
            id: self.item.id.clone(),
            model: self.model.clone(),
            prompt: shots_name(self.prompt).to_string(),
            repeat: self.repeat,
        }
    }
}

/// The name of a prompt style in files and on the command line.
pub fn shots_name(shots: Shots) -> &'static str {
    match shots {
        Shots::ZeroShot => "zero-shot",
        Shots::FewShot => "few-shot",
    }
}

/// A translated task, ready to be parsed and proved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyTask {
    /// What was asked.
    pub task: TranslateTask,
    /// What the model answered, with its accounting.
    pub translation: RoundTrip,
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
    use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
    use autoeval_proto::wire::{decode, encode, Header, MessageKind};

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

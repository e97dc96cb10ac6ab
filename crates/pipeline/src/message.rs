//! The messages that flow between stages.

use autoeval_generate::Item;
use autoeval_prompts::Shots;
use autoeval_proto::UnitKey;
use autoeval_translate::RoundTrip;
use serde::{Deserialize, Serialize};

/// Ask a model to translate one formula there and back (round `round` of `rounds`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranslateTask {
    /// The item, with φ0 and its metrics.
    pub item: Item,
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

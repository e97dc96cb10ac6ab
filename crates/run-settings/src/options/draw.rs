//! How items are drawn: how many, from which seed, by which sampling, under
//! which protocol; the flags every command that generates items shares. A
//! command with a default of its own sets it on its flags (`mut_arg`),
//! where its help shows it.

use crate::Protocol;
use autoeval_generate::Sampling;
use serde::{Deserialize, Serialize};

/// How many items are drawn.
#[derive(Clone, Debug, Default, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct DrawArgs {
    /// Items per complexity value in each batch (Table 1: sample_count); for
    /// a run, 4 when not given and 50 under --protocol.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_bucket: Option<usize>,
    /// Batches per dataset, each balanced on its own (a run's report bands
    /// span them); for a run, 3 when not given and 10 under --protocol.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batches: Option<u64>,
    /// Seed of the generated items: the same seed gives the same bytes on every machine.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How items are drawn: algorithm-1 (the paper's Algorithm 1 exactly: up to n distinct
    /// completions per form, buckets drawn uniformly) or prefer-new-trees (4 completions per
    /// form, new parse trees first: more diverse); algorithm-1 under --protocol,
    /// prefer-new-trees otherwise.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampling>,
    /// Take the defaults of a published protocol. paper: the paper's (the five datasets at
    /// Table 1 settings drawn by Algorithm 1, 50 items per complexity value, 10 batches; for
    /// a run also zero-shot, Pass@1, App. F's prompts, strict reading as the headline,
    /// temperature 0.1 for API models and 1 for local open models, no token cap for local
    /// servers, as the public code sent them none, and one no translation reaches for API
    /// models: 16384, 8192 for Anthropic). reference: the paper's, with the public
    /// implementation's prompts and reading of answers. Flags still override.
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
}

impl DrawArgs {
    /// How items are drawn: as given, else Algorithm 1 under a protocol
    /// and prefer-new-trees otherwise.
    pub fn sampling(&self) -> Sampling {
        self.sampling.unwrap_or(match self.protocol {
            Some(_) => Sampling::Algorithm1,
            None => Sampling::PreferNewTrees,
        })
    }

    /// Items per complexity value, which the command's own default fills in.
    pub fn per_bucket(&self) -> usize {
        self.per_bucket
            .expect("a command that draws items sets a default on --per-bucket")
    }

    /// Batches per dataset, which the command's own default fills in.
    pub fn batches(&self) -> u64 {
        self.batches
            .expect("a command that draws items sets a default on --batches")
    }
}

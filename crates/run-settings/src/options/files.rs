//! The files a run reads beside its settings: templates, prices, keys and
//! its reply cache.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where API keys are read from beside the environment: the one flag a
/// run, a judge and a worker share.
#[derive(Clone, Debug, Default, PartialEq, clap::Args, Serialize, Deserialize)]
pub struct SecretsArgs {
    /// JSON file of API keys ({"OPENAI_API_KEY": "…"}), read after the environment.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secrets: Option<PathBuf>,
}

/// The files a run reads.
#[derive(Clone, Debug, Default, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct FileArgs {
    /// Directory of NAME.txt prompt templates replacing built-in ones.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub templates: Option<PathBuf>,
    /// JSON price table {"model": {"input": USD/Mtok, "output": USD/Mtok}} extending the built-in one.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prices: Option<PathBuf>,
    /// API keys.
    #[command(flatten)]
    #[serde(flatten)]
    pub keys: SecretsArgs,
    /// Response cache directory, shared between runs if you like; the run
    /// directory's `cache` when not given.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<PathBuf>,
}

//! `autoeval run`'s settings as option groups: each a `clap::Args` that
//! the config file writes with its flags for keys, its defaults, ranges
//! and resolution written once as code. What is evaluated ([`PlanArgs`]),
//! how models are called ([`CallArgs`]), how answers are checked
//! ([`CheckArgs`]), the files a run reads ([`FileArgs`]), what it writes
//! beside its records ([`WrittenArgs`]) and when it stops ([`UntilArgs`]). A config file is read as flags
//! ([`file_as_flags`]): its keys are the flags, and the parser layers them.

mod calls;
mod checks;
mod draw;
pub mod file_as_flags;
mod files;
mod plan;
mod range;
mod until;
mod written;

pub use calls::{CallArgs, DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE};
pub use checks::CheckArgs;
pub use draw::DrawArgs;
pub use files::{FileArgs, SecretsArgs};
pub use plan::{PlanArgs, DEFAULT_MODELS};
pub use range::within;
pub use until::{DecideArgs, Until, UntilArgs};
pub use written::WrittenArgs;

use crate::{Result, SettingsError};
use autoeval_models::ModelSettings;
use clap::{Args, FromArgMatches};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Every setting of a run, as flags and as config file keys alike.
#[derive(Clone, Debug, PartialEq, clap::Args, Serialize)]
pub struct RunArgs {
    /// What is evaluated.
    #[command(flatten)]
    #[serde(flatten)]
    pub plan: PlanArgs,
    /// How models are called.
    #[command(flatten)]
    #[serde(flatten)]
    pub calls: CallArgs,
    /// How answers are checked.
    #[command(flatten)]
    #[serde(flatten)]
    pub checks: CheckArgs,
    /// The files the run reads.
    #[command(flatten)]
    #[serde(flatten)]
    pub files: FileArgs,
    /// What the run writes beside its records.
    #[command(flatten)]
    #[serde(flatten)]
    pub written: WrittenArgs,
    /// When the run stops.
    #[command(flatten)]
    #[serde(flatten)]
    pub until: UntilArgs,
}

/// Each model's own settings, as a config file's `[model."SPEC"]` tables hold them.
pub type ModelTables = BTreeMap<String, ModelSettings>;

impl Default for RunArgs {
    /// The settings no flag and no file gave: each group's defaults, as the
    /// parser fills them in (so they are written once, in the declarations).
    fn default() -> RunArgs {
        RunArgs::parse_from(std::iter::empty::<String>())
            .expect("the defaults pass their own parsers")
    }
}

impl RunArgs {
    /// The settings `tokens` (flags as a command line writes them) give.
    pub fn parse_from<T: Into<String>>(tokens: impl IntoIterator<Item = T>) -> Result<RunArgs> {
        let command = RunArgs::augment_args(clap::Command::new("run").no_binary_name(true));
        let tokens: Vec<String> = tokens.into_iter().map(Into::into).collect();
        let matches = command
            .try_get_matches_from(tokens)
            .map_err(|e| SettingsError::Invalid(autoeval_models::one_line(&e)))?;
        RunArgs::from_arg_matches(&matches)
            .map_err(|e| SettingsError::Invalid(autoeval_models::one_line(&e)))
    }

    /// The settings a config file's `text` holds, and its per-model
    /// tables; `path` names it in errors. Its keys are read as the flags
    /// they name, through the flags' own parsers.
    pub fn from_config(text: &str, path: &Path) -> Result<(RunArgs, ModelTables)> {
        RunArgs::from_config_under(text, path, None)
    }

    /// The settings a config file's `text` holds, with the flags of these
    /// groups that the command line behind `given` gave in place of the
    /// file's; and its per-model tables.
    pub fn from_config_under(
        text: &str,
        path: &Path,
        given: Option<&clap::ArgMatches>,
    ) -> Result<(RunArgs, ModelTables)> {
        let command = RunArgs::augment_args(clap::Command::new("run"));
        let file = file_as_flags::read(text, path)?;
        let on_line = |id: &str| given.is_some_and(|m| file_as_flags::given(m, id));
        let mut tokens = file_as_flags::tokens(&file.flags, &command, path, on_line)?;
        if let Some(m) = given {
            tokens.extend(file_as_flags::given_tokens(m, &command));
        }
        let args = RunArgs::parse_from(tokens).map_err(|e| {
            SettingsError::Invalid(format!("{} is not a valid run config: {e}", path.display()))
        })?;
        Ok((args, file.models))
    }

    /// The settings as a config file writes them, with `models`' tables.
    pub fn to_toml(&self, models: &ModelTables) -> Result<String> {
        let encode = |e: toml::ser::Error| {
            SettingsError::Invalid(format!("cannot write the settings as TOML: {e}"))
        };
        let mut table = toml::Table::try_from(self).map_err(encode)?;
        if !models.is_empty() {
            // `model` is then the tables' key: the list is written as `models`.
            if let Some(list) = table.remove("model") {
                table.insert("models".into(), list);
            }
            let tables = toml::Table::try_from(models).map_err(encode)?;
            table.insert("model".into(), toml::Value::Table(tables));
        }
        toml::to_string(&table).map_err(encode)
    }
}

//! Why a run's settings cannot be read or resolved, each error naming the
//! file or flag to fix.

use std::path::PathBuf;

/// Why the settings of a run cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// A file the settings name cannot be read.
    #[error("cannot read {what} {}", path.display())]
    Read {
        /// What the file is, e.g. "the items file".
        what: &'static str,
        /// Where it is.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A config file that is not TOML of the run's keys.
    #[error("{} is not a valid run config (keys are the long flag names, e.g. per-bucket = 5)", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What the TOML reader said.
        #[source]
        source: toml::de::Error,
    },
    /// An items file, or one of its lines, that holds no items.
    #[error("{}: {what}", path.display())]
    Items {
        /// The file.
        path: PathBuf,
        /// What is wrong, e.g. "line 3 is not an item", with what the reader said.
        what: String,
    },
    /// A template directory whose templates do not make prompts.
    #[error("in the templates of {}", dir.display())]
    Templates {
        /// The directory.
        dir: PathBuf,
        /// What the templates said.
        #[source]
        source: autoeval_prompts::TemplateError,
    },
    /// A price table that is not one.
    #[error("{} is not a price table: {{\"model\": {{\"input\": USD per Mtok, \"output\": USD per Mtok}}}}", path.display())]
    Prices {
        /// The file.
        path: PathBuf,
        /// What the JSON reader said.
        #[source]
        source: serde_json::Error,
    },
    /// A model spec that does not parse.
    #[error(transparent)]
    Model(#[from] autoeval_models::SpecError),
    /// A plan that cannot run (no dataset, no model, …).
    #[error(transparent)]
    Plan(#[from] autoeval_pipeline::PlanError),
    /// Settings that contradict each other or are out of range.
    #[error("{0}")]
    Invalid(String),
}

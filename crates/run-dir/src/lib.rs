//! A run directory: its layout (`config.toml`, `results.jsonl`, the judge
//! files, the report), the JSONL store its records are appended to, and the
//! claim a run lays on it. One machine writes here as it goes; a fleet run
//! writes here what it reads back from Redis.

mod judges;
mod store;

pub use autoeval_run_settings::model_file_name;
pub use judges::{judge_file, latest_judgements, rewrite_judgements, JudgeFile};
pub use store::{read_all, replace_jsonl, JsonlStore, StoreError};

use anyhow::{bail, Context, Result};
use autoeval_run_settings::{resolve, Resolved, RunConfig};
use std::path::PathBuf;

/// The files of a run directory.
pub struct RunDir(pub PathBuf);

impl RunDir {
    /// `config.toml`: the resolved settings.
    pub fn config(&self) -> PathBuf {
        self.0.join("config.toml")
    }
    /// The run's settings as `config.toml` holds them, with an error that
    /// says when this is no run directory.
    pub fn read_config(&self) -> Result<RunConfig> {
        if !self.config().exists() {
            bail!(
                "{} is not a run directory (no config.toml)",
                self.0.display()
            );
        }
        RunConfig::read(&self.config())
    }
    /// `settings.json`: the settings as they were resolved when the run was
    /// claimed (the items file's digest included), read back as they are.
    pub fn resolved(&self) -> PathBuf {
        self.0.join("settings.json")
    }
    /// The run's settings, resolved once: as `settings.json` holds them, or,
    /// in a directory an older build made, resolved from `config.toml`.
    pub fn settings(&self) -> Result<Resolved> {
        let path = self.resolved();
        if path.exists() {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            return serde_json::from_str(&text)
                .with_context(|| format!("{} holds no run settings", path.display()));
        }
        resolve(self.read_config()?)
    }
    /// `results.jsonl`: one line per recorded round.
    pub fn results(&self) -> PathBuf {
        self.0.join("results.jsonl")
    }
    /// `summary.json`.
    pub fn summary(&self) -> PathBuf {
        self.0.join("summary.json")
    }
    /// `report.html`.
    pub fn report(&self) -> PathBuf {
        self.0.join("report.html")
    }

    /// The records of the run, with an error that says when this is no run directory.
    pub fn records(&self) -> Result<Vec<autoeval_proto::ResultRecord>> {
        read_all(&self.results()).with_context(|| {
            format!(
                "{} is not a run directory (no results.jsonl)",
                self.0.display()
            )
        })
    }
}

/// The run's name in Redis and on the broker: its directory's name.
pub fn run_name(dir: &RunDir) -> Result<String> {
    dir.0
        .canonicalize()
        .ok()
        .as_deref()
        .unwrap_or(&dir.0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| {
            format!(
                "{} has no directory name to name the run by",
                dir.0.display()
            )
        })
}

/// Refuses to mix two different plans in one directory; records the
/// settings otherwise, as a config file and as resolved.
pub fn claim_dir(dir: &RunDir, settings: &Resolved) -> Result<()> {
    std::fs::create_dir_all(&dir.0)
        .with_context(|| format!("cannot create the run directory {}", dir.0.display()))?;
    if dir.config().exists() {
        let before = dir.settings()?;
        if before.plan != settings.plan {
            anyhow::bail!(
                "{} holds a run with other settings (datasets, models, prompts, batches, per-bucket, rounds, repeats or seed); \
                 use another --out, or repeat that run's settings (its config.toml) to resume it",
                dir.0.display()
            );
        }
    }
    let text = toml::to_string(&settings.to_config()).context("cannot encode the settings")?;
    std::fs::write(dir.config(), text)
        .with_context(|| format!("cannot write {}", dir.config().display()))?;
    let resolved = serde_json::to_string_pretty(settings).context("cannot encode the settings")?;
    std::fs::write(dir.resolved(), resolved)
        .with_context(|| format!("cannot write {}", dir.resolved().display()))
}

/// How a run stops when a backend halted, on one machine or a fleet alike:
/// the cause in one line, and the command that finishes the run once it is fixed.
pub fn halted_error(why: &str, dir: &RunDir, fleet: bool) -> anyhow::Error {
    anyhow::anyhow!(
        "{why}. Nothing is lost: once this is fixed, `autoeval rerun {} --failed{}` redoes the calls that failed and runs those never sent",
        dir.0.display(),
        if fleet { " --fleet" } else { "" }
    )
}

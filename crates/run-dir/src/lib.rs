//! A run directory: its layout (`config.toml`, `results.jsonl`, the judge
//! files, the report), the JSONL store its records are appended to, and the
//! claim a run lays on it. One machine writes here as it goes; a fleet run
//! writes here what it reads back from Redis.

mod batches;
mod caps;
mod chains;
mod fleet_file;
mod inputs;
mod judges;
mod store;

pub use autoeval_run_settings::model_file_name;
pub use batches::BatchFile;
pub use chains::{broken_chains, mend_chains_at, name_chains};
pub use fleet_file::FleetAddresses;
pub use inputs::{
    count_items, item_batches, load_items, price_table, read_config, read_config_file, resolve,
    stage_settings,
};
pub use judges::{judge_file, latest_judgements, rewrite_judgements, JudgeFile};
pub use store::{
    compress, compressed, for_each_record, read_all, replace_jsonl, replace_results, results_exist,
    JsonlStore, StoreError,
};

use autoeval_run_settings::{ModelTables, Resolved, RunArgs, SettingsError};
use std::path::{Path, PathBuf};

/// Why a run directory cannot be read or claimed.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// The directory holds no run: `missing` is not there.
    #[error("{} is not a run directory (no {missing})", dir.display())]
    NotARun {
        /// The directory.
        dir: PathBuf,
        /// The file it lacks.
        missing: &'static str,
    },
    /// A file of the run cannot be read or written.
    #[error("cannot {verb} {}", path.display())]
    Io {
        /// "read", "write" or "create".
        verb: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `settings.json` holds no settings this build reads.
    #[error("{} holds no run settings", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the JSON reader said.
        #[source]
        source: serde_json::Error,
    },
    /// The settings cannot be written as TOML or JSON.
    #[error("cannot encode the settings: {0}")]
    Encode(String),
    /// The directory holds a run of another plan.
    #[error(
        "{} holds a run with other settings ({}); \
         use another --out, or repeat that run's settings (its config.toml) to resume it",
        dir.display(),
        differences.join("; ")
    )]
    OtherPlan {
        /// The directory.
        dir: PathBuf,
        /// Each setting that differs, with both values.
        differences: Vec<String>,
    },
    /// The directory was made by a build whose layout this one does not read.
    #[error(
        "{} was made by {} (run layout {}; this build reads layout {}): run it again into a new directory",
        dir.display(),
        if found.is_some() { "another build of autoeval" } else { "an earlier build of autoeval" },
        found.map_or_else(|| "unmarked".to_string(), |n| n.to_string()),
        autoeval_proto::SCHEMA_VERSION
    )]
    OtherSchema {
        /// The directory.
        dir: PathBuf,
        /// The layout its `schema-version` names, if it names one.
        found: Option<u32>,
    },
    /// The path has no last component to name the run by.
    #[error("{} has no directory name to name the run by", dir.display())]
    Unnamed {
        /// The path.
        dir: PathBuf,
    },
    /// The settings it holds do not resolve.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The results file cannot be read.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What reading a run directory gives.
pub type Result<T, E = RunDirError> = std::result::Result<T, E>;

fn io(verb: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> RunDirError {
    let path = path.to_path_buf();
    move |source| RunDirError::Io { verb, path, source }
}

/// The files of a run directory.
pub struct RunDir(pub PathBuf);

impl RunDir {
    /// `config.toml`: the resolved settings.
    pub fn config(&self) -> PathBuf {
        self.0.join("config.toml")
    }
    /// `schema-version`: the layout of records and files the run was made
    /// with ([`autoeval_proto::SCHEMA_VERSION`]).
    pub fn schema_file(&self) -> PathBuf {
        self.0.join("schema-version")
    }
    /// Refuses a run this build's layout does not describe: one whose
    /// `schema-version` is missing or names another layout.
    pub fn check_schema(&self) -> Result<()> {
        let found = std::fs::read_to_string(self.schema_file())
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if found == Some(autoeval_proto::SCHEMA_VERSION) {
            return Ok(());
        }
        Err(RunDirError::OtherSchema {
            dir: self.0.clone(),
            found,
        })
    }
    /// Marks the directory with this build's layout.
    pub fn mark_schema(&self) -> Result<()> {
        let path = self.schema_file();
        std::fs::write(&path, format!("{}\n", autoeval_proto::SCHEMA_VERSION))
            .map_err(io("write", &path))
    }
    /// The run's settings as `config.toml` holds them, with an error that
    /// says when this is no run directory.
    pub fn read_config(&self) -> Result<(RunArgs, ModelTables)> {
        if !self.config().exists() {
            return Err(RunDirError::NotARun {
                dir: self.0.clone(),
                missing: "config.toml",
            });
        }
        self.check_schema()?;
        Ok(read_config(&self.config())?)
    }
    /// `settings.json`: the settings as they were resolved when the run was
    /// claimed (the items file's digest included), read back as they are.
    pub fn resolved(&self) -> PathBuf {
        self.0.join("settings.json")
    }
    /// The run's settings, resolved once: as `settings.json` holds them, or,
    /// in a directory `report --fleet` filled from the fleet's Redis (which
    /// keeps the config alone), resolved from `config.toml`.
    pub fn settings(&self) -> Result<Resolved> {
        let path = self.resolved();
        if path.exists() {
            self.check_schema()?;
            let text = std::fs::read_to_string(&path).map_err(io("read", &path))?;
            return serde_json::from_str(&text)
                .map_err(|source| RunDirError::Unreadable { path, source });
        }
        let (args, tables) = self.read_config()?;
        Ok(resolve(args, tables)?)
    }
    /// `run-id`: the fleet run's name in Redis and on the broker.
    pub fn run_id_file(&self) -> PathBuf {
        self.0.join("run-id")
    }
    /// `batches.jsonl`: the provider batches the run submitted, and how they ended.
    pub fn batches(&self) -> PathBuf {
        self.0.join("batches.jsonl")
    }

    /// `results.jsonl`: one line per recorded round.
    pub fn results(&self) -> PathBuf {
        self.0.join("results.jsonl")
    }
    /// Whether the run has results, plain or compressed (`results.jsonl.zst`).
    pub fn has_results(&self) -> bool {
        results_exist(&self.results())
    }
    /// `decided.json`: what a run `--until decided` decided, and after how much.
    pub fn decided(&self) -> PathBuf {
        self.0.join("decided.json")
    }
    /// `summary.json`.
    pub fn summary(&self) -> PathBuf {
        self.0.join("summary.json")
    }
    /// `report.html`.
    pub fn report(&self) -> PathBuf {
        self.0.join("report.html")
    }

    /// An error that says this is no run directory, when it has no results.
    pub fn require_results(&self) -> Result<()> {
        if self.has_results() {
            return Ok(());
        }
        Err(RunDirError::NotARun {
            dir: self.0.clone(),
            missing: "results.jsonl",
        })
    }

    /// The records of the run, with an error that says when this is no run directory.
    pub fn records(&self) -> Result<Vec<autoeval_proto::ResultRecord>> {
        self.require_results()?;
        Ok(read_all(&self.results())?)
    }
}

/// The run's name in Redis and on the broker, as the directory's `run-id`
/// holds it; without one, the directory's name (another machine's copy of
/// a run, named as the run's directory is).
pub fn run_name(dir: &RunDir) -> Result<String> {
    let path = dir.run_id_file();
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Ok(_) => dir_name(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => dir_name(dir),
        Err(e) => Err(io("read", &path)(e)),
    }
}

/// The directory's own name.
pub fn dir_name(dir: &RunDir) -> Result<String> {
    dir.0
        .canonicalize()
        .ok()
        .as_deref()
        .unwrap_or(&dir.0)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| RunDirError::Unnamed { dir: dir.0.clone() })
}

/// The name a fleet run goes by, made and written to `run-id` the first
/// time: the directory's name and eight random hex digits, so that two
/// directories of one name (two people's `--out results`) never share a
/// run, while the same directory always finds its run again.
pub fn claim_run_name(dir: &RunDir) -> Result<String> {
    let path = dir.run_id_file();
    if path.exists() {
        return run_name(dir);
    }
    let name = format!("{}-{:08x}", dir_name(dir)?, random_u32());
    std::fs::write(&path, format!("{name}\n")).map_err(io("write", &path))?;
    Ok(name)
}

/// A number no other process is likely to draw: the system's per-process
/// random hash keys over the time and this process's id.
fn random_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish() as u32
}

/// Each setting of the plan that differs, named as its flag: the value
/// asked now and the directory's.
fn plan_differences(
    before: &autoeval_pipeline::RunPlan,
    now: &autoeval_pipeline::RunPlan,
) -> Vec<String> {
    let fields = |plan| match serde_json::to_value(plan) {
        Ok(serde_json::Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    let (before, now) = (fields(before), fields(now));
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(now.keys()).collect();
    let shown = |v: Option<&serde_json::Value>| v.map_or("none".to_string(), |v| v.to_string());
    keys.into_iter()
        .filter(|key| before.get(*key) != now.get(*key))
        .map(|key| {
            format!(
                "{}: {} asked, {} in the directory",
                key.replace('_', "-"),
                shown(now.get(key)),
                shown(before.get(key))
            )
        })
        .collect()
}

/// `settings` with each file it reads named by an absolute path, so that
/// the run's directory reads the same from any working directory (`rerun`
/// and `status` are often run from another).
fn with_absolute_paths(settings: &Resolved) -> Resolved {
    let absolute = |p: &mut Option<PathBuf>| {
        if let Some(path) = p.as_mut() {
            if let Ok(full) = std::path::absolute(&*path) {
                *path = full;
            }
        }
    };
    let mut settings = settings.clone();
    let files = &mut settings.files;
    for path in [
        &mut settings.items,
        &mut files.templates,
        &mut files.prices,
        &mut files.keys.secrets,
        &mut files.cache,
    ] {
        absolute(path);
    }
    settings
}

/// Refuses to mix two different plans in one directory; records the
/// settings otherwise, as a config file and as resolved.
pub fn claim_dir(dir: &RunDir, settings: &Resolved) -> Result<()> {
    std::fs::create_dir_all(&dir.0).map_err(io("create", &dir.0))?;
    if dir.config().exists() {
        let before = dir.settings()?;
        if before.plan != settings.plan {
            return Err(RunDirError::OtherPlan {
                dir: dir.0.clone(),
                differences: plan_differences(&before.plan, &settings.plan),
            });
        }
    } else {
        dir.mark_schema()?;
    }
    let settings = &with_absolute_paths(settings);
    let text = settings.to_config_text()?;
    std::fs::write(dir.config(), text).map_err(io("write", &dir.config()))?;
    let resolved =
        serde_json::to_string_pretty(settings).map_err(|e| RunDirError::Encode(e.to_string()))?;
    std::fs::write(dir.resolved(), resolved).map_err(io("write", &dir.resolved()))
}

/// How a run stops when a backend halted, on one machine or a fleet alike:
/// the cause in one line, and the command that finishes the run once it is fixed.
#[derive(Debug, thiserror::Error)]
#[error(
    "{why}. Nothing is lost: once this is fixed, `autoeval rerun {} --failed{}` redoes the calls that failed and runs those never sent",
    dir.display(),
    if *fleet { " --fleet" } else { "" }
)]
pub struct Halted {
    /// The backend's cause, in one line.
    pub why: String,
    /// The run's directory.
    pub dir: PathBuf,
    /// Whether the run is a fleet's.
    pub fleet: bool,
}

/// The error a run stops with when a backend halted.
pub fn halted_error(why: &str, dir: &RunDir, fleet: bool) -> Halted {
    Halted {
        why: why.to_string(),
        dir: dir.0.clone(),
        fleet,
    }
}

//! The settings of a run, resolved once: option groups ([`RunArgs`]) that
//! the command line and a config file read as flags give, then
//! [`RunArgs::resolve`] fills in what a protocol decides ([`Resolved`]). Every
//! command that reads a run uses the resolved settings;
//! [`stage_settings_with`] turns them into what a stage (here or on a fleet
//! worker) is built from. Pure: the files named (config, items, templates,
//! prices) are read by the run directory's crate and handed in as text.

mod config;
mod describe;
mod error;
mod names;
pub mod options;
mod prover;
mod stages;

pub use config::{Protocol, Resolved};
pub use error::SettingsError;
pub use names::{model_file_name, recorded_model_file_name};
pub use options::{
    CallArgs, CheckArgs, DecideArgs, DrawArgs, FileArgs, ModelTables, PlanArgs, RunArgs,
    SecretsArgs, Until, UntilArgs, WrittenArgs, DEFAULT_MODELS,
};
pub use prover::{ParallelChecks, ProverArgs};
pub use stages::{PromptSettings, StageSettings, TranslateSettings, VerifySettings};

use autoeval_models::PriceTable;
use autoeval_pipeline::generate_items;
use std::collections::BTreeMap;
use std::path::Path;

/// What reading or resolving settings gives.
pub type Result<T, E = SettingsError> = std::result::Result<T, E>;

/// The digest an items file is named by in the resolved settings: the
/// first six bytes of its contents' SHA-256, in hex.
pub fn items_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(bytes);
    d.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// The items an items file's `text` holds: JSONL items, or the reference
/// implementation's JSON. `path` names the file in errors.
pub fn parse_items(text: &str, path: &Path) -> Result<Vec<autoeval_generate::Item>> {
    let items_error = |what: String, why: &dyn std::fmt::Display| SettingsError::Items {
        path: path.to_path_buf(),
        what: format!("{what}: {why}"),
    };
    if let Some(first) = text
        .lines()
        .next()
        .filter(|l| l.trim_start().starts_with('{'))
    {
        if let Ok(item) = serde_json::from_str::<autoeval_generate::Item>(first) {
            let mut items = vec![item];
            for (i, line) in text
                .lines()
                .enumerate()
                .skip(1)
                .filter(|(_, l)| !l.trim().is_empty())
            {
                items.push(
                    serde_json::from_str(line)
                        .map_err(|e| items_error(format!("line {} is not an item", i + 1), &e))?,
                );
            }
            return Ok(items);
        }
    }
    let file = autoeval_generate::reference::read(text)
        .map_err(|e| items_error("neither items JSONL nor a reference dataset".into(), &e))?;
    let kind = autoeval_generate::reference::detect_kind(&file);
    autoeval_generate::reference::import(&file, kind)
        .map_err(|e| items_error("cannot import it".into(), &e))
}

/// The run's items from those of its items file at `path`: only its
/// datasets', at least one. Items must have distinct ids: a unit is named
/// by its item's id, so a repeated one would be two units under one name.
pub fn items_of_run(
    settings: &Resolved,
    path: &Path,
    items: Vec<autoeval_generate::Item>,
) -> Result<Vec<autoeval_generate::Item>> {
    let wanted = &settings.plan.datasets;
    let items: Vec<_> = items
        .into_iter()
        .filter(|i| wanted.contains(&i.dataset))
        .collect();
    if items.is_empty() {
        return Err(SettingsError::Invalid(format!(
            "{} holds no items of the datasets asked for",
            path.display()
        )));
    }
    refuse_repeated_ids(path, &items)?;
    Ok(items)
}

/// The run's generated items one batch at a time, each made only when
/// asked for (a run without an items file).
pub fn generated_batches(
    settings: &Resolved,
) -> Result<Box<dyn Iterator<Item = Result<autoeval_pipeline::ItemBatch>> + Send>> {
    let batches = autoeval_pipeline::item_batches(&settings.plan)?;
    Ok(Box::new(batches.map(|b| b.map_err(SettingsError::from))))
}

/// The run's generated items, with the complexity values a dataset could not fill.
pub fn generated_items(
    settings: &Resolved,
) -> Result<(
    Vec<autoeval_generate::Item>,
    Vec<autoeval_pipeline::BatchShortfall>,
)> {
    Ok(generate_items(&settings.plan)?)
}

/// Refuses items whose ids repeat, naming the first few.
fn refuse_repeated_ids(path: &Path, items: &[autoeval_generate::Item]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let mut repeated = std::collections::BTreeSet::new();
    for item in items {
        if !seen.insert(item.id.as_str()) {
            repeated.insert(item.id.as_str());
        }
    }
    if repeated.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = repeated.iter().take(5).copied().collect();
    Err(SettingsError::Invalid(format!(
        "{} repeats {} item id{} ({}{}); every item needs its own id, since results are kept per id",
        path.display(),
        repeated.len(),
        if repeated.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if repeated.len() > shown.len() { ", …" } else { "" }
    )))
}

/// What the stages need of these settings, in the form workers on other
/// machines receive: `overrides` are the templates directory's files (as
/// name and text), `prices` the price table.
pub fn stage_settings_with(
    s: &Resolved,
    overrides: Vec<(String, String)>,
    prices: PriceTable,
) -> Result<StageSettings> {
    let mut models = BTreeMap::new();
    for m in &s.plan.models {
        models.insert(m.clone(), s.model_settings(m).1);
    }
    let stage = StageSettings {
        prompts: PromptSettings {
            set: s.plan.prompt_set,
            overrides,
        },
        translate: TranslateSettings {
            max_attempts: s.calls.max_attempts,
            models,
            prices,
        },
        verify: s.checks.verify_settings(),
    };
    if let Some(tdir) = &s.files.templates {
        stage
            .prompts
            .templates()
            .map_err(|source| SettingsError::Templates {
                dir: tdir.clone(),
                source,
            })?;
    }
    Ok(stage)
}

/// The shipped price table, extended with a price file's `text` if one is
/// given (`path` names it in errors).
pub fn price_table_with(file: Option<(&Path, &str)>) -> Result<PriceTable> {
    let prices = PriceTable::builtin();
    let Some((path, text)) = file else {
        return Ok(prices);
    };
    prices
        .extended_with(text)
        .map_err(|source| SettingsError::Prices {
            path: path.to_path_buf(),
            source,
        })
}

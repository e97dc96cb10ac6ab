//! The settings of a run, resolved once: the built-in defaults, then a
//! TOML file, then flags ([`RunConfig`], each layer over the last), then
//! [`resolve`] fills in what is left and reads an items file for its digest
//! ([`Resolved`]). Every command that reads a run uses the resolved settings;
//! [`stage_settings`] turns them into what a stage (here or on a fleet
//! worker) is built from.

#[cfg(feature = "cli")]
mod cli;
mod config;
mod declare;
mod describe;
mod error;
mod names;
mod stages;

pub use config::{Protocol, Resolved, DEFAULT_MODELS};
pub use declare::RunConfig;
pub use error::SettingsError;
pub use names::model_file_name;
pub use stages::{PromptSettings, StageSettings, TranslateSettings, VerifySettings};

use autoeval_models::PriceTable;
use autoeval_pipeline::generate_items;
use std::collections::BTreeMap;
use std::path::Path;

/// What reading or resolving settings gives.
pub type Result<T, E = SettingsError> = std::result::Result<T, E>;

fn read_error(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SettingsError {
    let path = path.to_path_buf();
    move |source| SettingsError::Read { what, path, source }
}

/// The settings with defaults filled in; an items file is read for its digest.
pub fn resolve(config: RunConfig) -> Result<Resolved> {
    let digest = match &config.items {
        Some(path) => {
            use sha2::{Digest, Sha256};
            let bytes = std::fs::read(path).map_err(read_error("the items file", path))?;
            let d = Sha256::digest(&bytes);
            Some(d.iter().take(6).map(|b| format!("{b:02x}")).collect())
        }
        None => None,
    };
    config.resolve_with(digest)
}

/// The items of a file: JSONL items, or the reference implementation's JSON.
fn read_items(path: &Path) -> Result<Vec<autoeval_generate::Item>> {
    let text = std::fs::read_to_string(path).map_err(read_error("the items file", path))?;
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
    let file = autoeval_generate::reference::read(&text)
        .map_err(|e| items_error("neither items JSONL nor a reference dataset".into(), &e))?;
    let kind = autoeval_generate::reference::detect_kind(&file);
    autoeval_generate::reference::import(&file, kind)
        .map_err(|e| items_error("cannot import it".into(), &e))
}

/// The run's items, read or generated, with the complexity values a
/// dataset could not fill. Items must have distinct ids: a unit is named by
/// its item's id, so a repeated one would be two units under one name.
pub fn load_items(
    settings: &Resolved,
) -> Result<(
    Vec<autoeval_generate::Item>,
    Vec<autoeval_pipeline::BatchShortfall>,
)> {
    match &settings.items {
        Some(path) => {
            let wanted = &settings.plan.datasets;
            let items: Vec<_> = read_items(path)?
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
            Ok((items, Vec::new()))
        }
        None => Ok(generate_items(&settings.plan)?),
    }
}

/// The run's items one batch at a time, as [`load_items`] gives them: a
/// generated dataset's batches each made only when asked for, an items
/// file read whole as one batch.
pub fn item_batches(
    settings: &Resolved,
) -> Result<Box<dyn Iterator<Item = Result<autoeval_pipeline::ItemBatch>> + Send>> {
    if settings.items.is_some() {
        let (items, shortfall) = load_items(settings)?;
        let one = autoeval_pipeline::ItemBatch { items, shortfall };
        return Ok(Box::new(std::iter::once(Ok(one))));
    }
    let batches = autoeval_pipeline::item_batches(&settings.plan)?;
    Ok(Box::new(batches.map(|b| b.map_err(SettingsError::from))))
}

/// How many items the run has, and the complexity values a dataset could
/// not fill, found by making every batch once and keeping none of them.
pub fn count_items(settings: &Resolved) -> Result<(usize, Vec<autoeval_pipeline::BatchShortfall>)> {
    let mut items = 0;
    let mut short = Vec::new();
    for batch in item_batches(settings)? {
        let batch = batch?;
        items += batch.items.len();
        short.extend(batch.shortfall);
    }
    Ok((items, short))
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

/// What the stages need of these settings, in the form workers on other machines receive.
pub fn stage_settings(s: &Resolved) -> Result<StageSettings> {
    let mut template_overrides = Vec::new();
    if let Some(tdir) = &s.templates {
        let unreadable = read_error("the templates directory", tdir);
        let entries: Vec<_> = std::fs::read_dir(tdir)
            .and_then(|dir| dir.collect::<std::io::Result<Vec<_>>>())
            .map_err(unreadable)?;
        for entry in entries {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "txt") {
                let Some(name) = path.file_stem().map(|n| n.to_string_lossy().to_string()) else {
                    continue;
                };
                let text =
                    std::fs::read_to_string(&path).map_err(read_error("the template", &path))?;
                template_overrides.push((name, text));
            }
        }
    }
    let mut models = BTreeMap::new();
    for m in &s.plan.models {
        models.insert(m.clone(), s.model_settings(m)?.1);
    }
    let stage = StageSettings {
        prompts: PromptSettings {
            set: s.plan.prompt_set,
            overrides: template_overrides,
        },
        translate: TranslateSettings {
            max_attempts: s.max_attempts,
            models,
            prices: price_table(s.prices.as_deref())?,
        },
        verify: VerifySettings {
            copy_policy: s.copy_policy,
            // Checked when the settings were resolved.
            timeout_ms: u32::try_from(s.timeout_ms)
                .map_err(|_| SettingsError::Invalid("--timeout-ms is out of range".into()))?,
        },
    };
    if let Some(tdir) = &s.templates {
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

/// The shipped price table, extended with the user's file if one is given.
pub fn price_table(file: Option<&Path>) -> Result<PriceTable> {
    let prices = PriceTable::builtin();
    let Some(p) = file else {
        return Ok(prices);
    };
    let text = std::fs::read_to_string(p).map_err(read_error("the price table", p))?;
    prices
        .extended_with(&text)
        .map_err(|source| SettingsError::Prices {
            path: p.to_path_buf(),
            source,
        })
}

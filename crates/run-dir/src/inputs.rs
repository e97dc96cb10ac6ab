//! What a run reads besides its directory: the config file, the items file
//! (for its items and its digest), the templates directory and the price
//! table. The settings crate turns their text into settings; this reads it.

use autoeval_generate::Item;
use autoeval_models::PriceTable;
use autoeval_pipeline::{BatchShortfall, ItemBatch};
use autoeval_run_settings::{
    generated_batches, generated_items, items_digest, items_of_run, parse_items, price_table_with,
    stage_settings_with, ModelTables, Resolved, RunArgs, SettingsError, StageSettings,
};
use std::path::Path;

/// What reading or resolving settings gives.
type Result<T, E = SettingsError> = std::result::Result<T, E>;

fn read_error(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> SettingsError {
    let path = path.to_path_buf();
    move |source| SettingsError::Read { what, path, source }
}

/// The text of `path`, read as `what`.
fn read_text(what: &'static str, path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(read_error(what, path))
}

/// Reads a TOML config file of a run's settings alone.
pub fn read_config(path: &Path) -> Result<(RunArgs, ModelTables)> {
    RunArgs::from_config(&read_text("the config file", path)?, path)
}

/// Reads a TOML config file as flags and per-model tables, for a command
/// that layers it under its own command line.
pub fn read_config_file(
    path: &Path,
) -> Result<autoeval_run_settings::options::file_as_flags::ConfigFile> {
    autoeval_run_settings::options::file_as_flags::read(&read_text("the config file", path)?, path)
}

/// The settings with defaults filled in, with the config file's per-model
/// `tables`; an items file is read for its digest.
pub fn resolve(args: RunArgs, tables: ModelTables) -> Result<Resolved> {
    let digest = match &args.plan.items {
        Some(path) => {
            let bytes = std::fs::read(path).map_err(read_error("the items file", path))?;
            Some(items_digest(&bytes))
        }
        None => None,
    };
    args.resolve(tables, digest)
}

/// The run's items, read or generated, with the complexity values a
/// dataset could not fill.
pub fn load_items(settings: &Resolved) -> Result<(Vec<Item>, Vec<BatchShortfall>)> {
    match &settings.items {
        Some(path) => {
            let items = parse_items(&read_text("the items file", path)?, path)?;
            Ok((items_of_run(settings, path, items)?, Vec::new()))
        }
        None => generated_items(settings),
    }
}

/// The run's items one batch at a time, as [`load_items`] gives them: a
/// generated dataset's batches each made only when asked for, an items
/// file read whole as one batch.
pub fn item_batches(
    settings: &Resolved,
) -> Result<Box<dyn Iterator<Item = Result<ItemBatch>> + Send>> {
    if settings.items.is_some() {
        let (items, shortfall) = load_items(settings)?;
        let one = ItemBatch { items, shortfall };
        return Ok(Box::new(std::iter::once(Ok(one))));
    }
    generated_batches(settings)
}

/// How many items the run has, and the complexity values a dataset could
/// not fill, found by making every batch once and keeping none of them.
pub fn count_items(settings: &Resolved) -> Result<(usize, Vec<BatchShortfall>)> {
    let mut items = 0;
    let mut short = Vec::new();
    for batch in item_batches(settings)? {
        let batch = batch?;
        items += batch.items.len();
        short.extend(batch.shortfall);
    }
    Ok((items, short))
}

/// What the stages need of these settings, in the form workers on other
/// machines receive: the templates directory's `.txt` files and the price
/// file read in.
pub fn stage_settings(s: &Resolved) -> Result<StageSettings> {
    let overrides = match &s.files.templates {
        Some(tdir) => read_templates(tdir)?,
        None => Vec::new(),
    };
    stage_settings_with(s, overrides, price_table(s.files.prices.as_deref())?)
}

/// The `.txt` files of a templates directory, as (name, text).
fn read_templates(tdir: &Path) -> Result<Vec<(String, String)>> {
    let entries: Vec<_> = std::fs::read_dir(tdir)
        .and_then(|dir| dir.collect::<std::io::Result<Vec<_>>>())
        .map_err(read_error("the templates directory", tdir))?;
    let mut templates = Vec::new();
    for entry in entries {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "txt") {
            let Some(name) = path.file_stem().map(|n| n.to_string_lossy().to_string()) else {
                continue;
            };
            templates.push((name, read_text("the template", &path)?));
        }
    }
    Ok(templates)
}

/// The shipped price table, extended with the user's file if one is given.
pub fn price_table(file: Option<&Path>) -> Result<PriceTable> {
    match file {
        Some(path) => price_table_with(Some((path, &read_text("the price table", path)?))),
        None => price_table_with(None),
    }
}

//! The settings of a run, resolved once: the built-in defaults, then a
//! TOML file, then flags ([`RunConfig`], each layer over the last), then
//! [`resolve`] fills in what is left and reads an items file for its digest
//! ([`Resolved`]). Every command that reads a run uses the resolved settings;
//! [`stage_settings`] turns them into what a stage (here or on a fleet
//! worker) is built from.

#[cfg(feature = "cli")]
mod cli;
mod config;
mod names;

pub use config::{Protocol, Resolved, RunConfig, DEFAULT_MODELS};
pub use names::model_file_name;

use anyhow::{Context, Result};
use autoeval_models::PriceTable;
use autoeval_pipeline::generate_items;
use autoeval_translate::StageSettings;
use std::collections::BTreeMap;
use std::path::Path;

/// The settings with defaults filled in; an items file is read for its digest.
pub fn resolve(config: RunConfig) -> Result<Resolved> {
    let digest = match &config.items {
        Some(path) => {
            use sha2::{Digest, Sha256};
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read the items file {}", path.display()))?;
            let d = Sha256::digest(&bytes);
            Some(d.iter().take(6).map(|b| format!("{b:02x}")).collect())
        }
        None => None,
    };
    config.resolve_with(digest)
}

/// The items of a file: JSONL items, or the reference implementation's JSON.
fn read_items(path: &Path) -> Result<Vec<autoeval_generate::Item>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the items file {}", path.display()))?;
    if text.trim_start().starts_with('{') && text.lines().count() > 0 {
        let first = text.lines().next().unwrap_or("");
        if let Ok(item) = serde_json::from_str::<autoeval_generate::Item>(first) {
            let mut items = vec![item];
            for (i, line) in text
                .lines()
                .enumerate()
                .skip(1)
                .filter(|(_, l)| !l.trim().is_empty())
            {
                items.push(serde_json::from_str(line).with_context(|| {
                    format!("{}: line {} is not an item", path.display(), i + 1)
                })?);
            }
            return Ok(items);
        }
    }
    let file = autoeval_generate::reference::read(&text).with_context(|| {
        format!(
            "{} is neither items JSONL nor a reference dataset",
            path.display()
        )
    })?;
    let kind = autoeval_generate::reference::detect_kind(&file);
    autoeval_generate::reference::import(&file, kind)
        .with_context(|| format!("in {}", path.display()))
}

/// The run's items, read or generated, with the complexity values a dataset could not fill.
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
                anyhow::bail!(
                    "{} holds no items of the datasets asked for",
                    path.display()
                );
            }
            Ok((items, Vec::new()))
        }
        None => Ok(generate_items(&settings.plan)?),
    }
}

/// What the stages need of these settings, in the form workers on other machines receive.
pub fn stage_settings(s: &Resolved) -> Result<StageSettings> {
    let mut template_overrides = Vec::new();
    if let Some(tdir) = &s.templates {
        for entry in std::fs::read_dir(tdir)
            .with_context(|| format!("cannot read the templates directory {}", tdir.display()))?
        {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "txt") {
                let name = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string();
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                template_overrides.push((name, text));
            }
        }
    }
    let mut models = BTreeMap::new();
    for m in &s.plan.models {
        models.insert(m.clone(), s.model_settings(m)?.1);
    }
    let stage = StageSettings {
        prompt_set: s.plan.prompt_set,
        template_overrides,
        copy_policy: s.copy_policy,
        timeout_ms: u32::try_from(s.timeout_ms).unwrap_or(u32::MAX),
        max_attempts: s.max_attempts,
        models,
        prices: price_table(s.prices.as_deref())?,
    };
    if let Some(tdir) = &s.templates {
        stage
            .templates()
            .with_context(|| format!("in the templates of {}", tdir.display()))?;
    }
    Ok(stage)
}

/// The shipped price table, extended with the user's file if one is given.
pub fn price_table(file: Option<&Path>) -> Result<PriceTable> {
    let prices = PriceTable::builtin();
    let Some(p) = file else {
        return Ok(prices);
    };
    let text = std::fs::read_to_string(p)
        .with_context(|| format!("cannot read the price table {}", p.display()))?;
    prices.extended_with(&text).with_context(|| {
        format!(
            "{} is not a price table: {{\"model\": {{\"input\": USD per Mtok, \"output\": USD per Mtok}}}}",
            p.display()
        )
    })
}

//! The public reference implementation's dataset JSON.
//!
//! A dataset file is an object with `info` (seed and parameters), `metadata`
//! (counts per metric value) and `data`, a list of items with `idx`, `fs`
//! and metric fields. Its formulas use `∧`, `v` for disjunction, `¬`,
//! `∀ x1.` and `∃ x1.`, and predicate arguments without spaces. Files the
//! reference has verified add `llm_fs` and `verification` (`is_equivalent`,
//! `has_error`) to each item.

use crate::{DatasetConfig, DatasetKind, Item, Metrics};
use autoeval_syntax::{
    alphabet, canonical, parse_formula_exact, parse_regex_exact, print, Formula, Mode, ParseError,
    Style,
};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use thiserror::Error;

/// Why a reference file could not be read.
#[derive(Debug, Error)]
pub enum ImportError {
    /// Not JSON, or not the reference's layout.
    #[error("not a reference dataset file: {0}")]
    Format(#[from] serde_json::Error),
    /// An item's formula does not parse.
    #[error("item {idx}: formula {fs:?} does not parse: {source}")]
    Formula {
        /// The item's `idx`.
        idx: i64,
        /// The formula text.
        fs: String,
        /// Why it was refused.
        source: ParseError,
    },
}

/// The reference's per-item verification record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Verification {
    /// The published verdict; `None` when the reference could not decide.
    #[serde(default)]
    pub is_equivalent: Option<bool>,
    /// The reference's error text, e.g. when `llm_fs` did not parse.
    #[serde(default)]
    pub has_error: Option<String>,
}

/// One item of a reference file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ReferenceItem {
    /// The item's index in the file's dataset.
    #[serde(default)]
    pub idx: i64,
    /// The ground-truth formula, in the reference's notation.
    pub fs: String,
    /// The model's formula, in verified files.
    #[serde(default)]
    pub llm_fs: Option<String>,
    /// The published verdict, in verified files.
    #[serde(default)]
    pub verification: Option<Verification>,
    /// Every other field (metrics and more), kept as read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A reference file: its `info` block and its items.
#[derive(Clone, Debug, Deserialize)]
pub struct ReferenceFile {
    /// Seed and parameters, kept as read.
    #[serde(default)]
    pub info: Value,
    /// The items.
    pub data: Vec<ReferenceItem>,
}

/// Reads a reference dataset or verified file.
pub fn read(json: &str) -> Result<ReferenceFile, ImportError> {
    Ok(serde_json::from_str(json)?)
}

/// Guesses the dataset type of a reference file: regex files carry DFA
/// metrics, first-order formulas have predicates or quantifiers.
pub fn detect_kind(file: &ReferenceFile) -> DatasetKind {
    let Some(first) = file.data.first() else {
        return DatasetKind::Plogic;
    };
    if first.extra.contains_key("num_nodes") {
        return DatasetKind::Regex;
    }
    let first_order = file.data.iter().take(50).any(|item| {
        parse_formula_exact(&item.fs, Mode::Lenient).is_ok_and(|f| {
            let mut fo = false;
            f.visit(&mut |n| {
                fo |= matches!(n, Formula::Quant { .. })
                    || matches!(n, Formula::Atom { args, .. } if !args.is_empty())
            });
            fo
        })
    });
    if first_order {
        DatasetKind::Fol
    } else {
        DatasetKind::Plogic
    }
}

/// Converts a reference file's items into this project's items, with metrics
/// recomputed on each formula except the generation level (`depth`), which
/// is read from the file.
pub fn import(file: &ReferenceFile, kind: DatasetKind) -> Result<Vec<Item>, ImportError> {
    let alphabet = alphabet(10);
    file.data
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let err = |source| ImportError::Formula {
                idx: item.idx,
                fs: item.fs.clone(),
                source,
            };
            let (fs, mut metrics) = if kind == DatasetKind::Regex {
                let r = parse_regex_exact(&item.fs, Mode::Lenient, &alphabet).map_err(err)?;
                let used = r.symbols();
                let sigma = if used.is_empty() { vec!['0'] } else { used };
                (print::regex(&r), crate::metrics::regex(&r, &sigma))
            } else {
                let f = canonical(&parse_formula_exact(&item.fs, Mode::Lenient).map_err(err)?);
                (
                    print::formula(&f, Style::Unicode),
                    crate::metrics::logic(&f, kind),
                )
            };
            // The level is the file's to tell; a file without one gets the
            // parse height, the nearest the formula alone can say.
            metrics.depth = item
                .extra
                .get("depth")
                .and_then(Value::as_u64)
                .and_then(|d| u32::try_from(d).ok())
                .or(metrics.height)
                .unwrap_or(0);
            Ok(Item {
                id: format!("{}-ref-{}", kind.name(), item.idx),
                dataset: kind,
                batch: 0,
                index,
                fs,
                metrics,
            })
        })
        .collect()
}

/// The reference's name for a metric field, and its value in `m`.
fn reference_fields(kind: DatasetKind, m: &Metrics) -> Vec<(&'static str, Value)> {
    if kind == DatasetKind::Regex {
        vec![
            ("depth", json!(m.depth)),
            ("num_nodes", json!(m.num_nodes)),
            ("num_edges", json!(m.num_edges)),
            ("density", json!(m.density)),
        ]
    } else {
        vec![
            ("depth", json!(m.depth)),
            ("num_operators", json!(m.num_operators)),
            ("num_propositions", json!(m.num_propositions)),
            ("num_quantifiers", json!(m.num_quantifiers.unwrap_or(0))),
            ("num_predicates", json!(m.num_predicates.unwrap_or(0))),
        ]
    }
}

/// Writes items in the reference's dataset layout.
pub fn export(items: &[Item], cfg: &DatasetConfig) -> Value {
    let kind = cfg.kind;
    let field_names: Vec<&str> = reference_fields(kind, &Metrics::default())
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let mut data = Vec::with_capacity(items.len());
    let mut metadata: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
    for (idx, item) in items.iter().enumerate() {
        let fs = if kind == DatasetKind::Regex {
            item.fs.clone()
        } else {
            parse_formula_exact(&item.fs, Mode::Lenient)
                .map(|f| print::formula(&f, Style::Reference))
                .unwrap_or_else(|_| item.fs.clone())
        };
        let mut obj = Map::new();
        obj.insert("idx".into(), json!(idx));
        obj.insert("fs".into(), json!(fs));
        for (name, value) in reference_fields(kind, &item.metrics) {
            *metadata
                .entry(name)
                .or_default()
                .entry(value.to_string())
                .or_default() += 1;
            obj.insert(name.into(), value);
        }
        data.push(Value::Object(obj));
    }
    let metadata: Map<String, Value> = metadata
        .into_iter()
        .map(|(field, counts)| {
            let mut m: Map<String, Value> =
                counts.into_iter().map(|(k, v)| (k, json!(v))).collect();
            m.insert("total".into(), json!(items.len()));
            (field.to_string(), Value::Object(m))
        })
        .collect();
    let mut info = json!({
        "type": "dataset",
        "dataset": kind.name(),
        "seed": cfg.seed,
        "max_depth": cfg.depth,
        "n": cfg.branching,
        "sample_count": cfg.per_bucket,
        "filter_field": kind.complexity_field(),
        "variable_info": {"num_variables": if kind.is_first_order() { Value::Null } else { json!(cfg.num_propositions) }},
        "fields": field_names,
    });
    if kind.is_first_order() {
        info["predicate_info"] = json!({
            "num_predicates": cfg.num_predicates,
            "constants": {"num_variables": cfg.num_objects},
            "min_arity": cfg.min_arity,
            "max_arity": cfg.max_arity,
        });
    } else if kind == DatasetKind::Regex {
        info["alphabet_size"] = json!(cfg.alphabet_size);
    }
    json!({"info": info, "metadata": metadata, "data": data})
}

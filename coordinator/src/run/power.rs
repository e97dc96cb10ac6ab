//! The power part of `autoeval run --dry-run`: how small a difference
//! between two models the planned items would detect, and how many items a
//! wanted difference needs.

use autoeval_generate::Item;
use autoeval_metrics::paired::{detectable_difference, items_needed};
use autoeval_run_settings::Resolved;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Two-sided level of the tests.
const ALPHA: f64 = 0.05;
/// Wanted power.
const POWER: f64 = 0.8;

/// What the power lines are computed for.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    /// The accuracy both models are assumed to score near.
    pub baseline: f64,
    /// A difference in accuracy to plan for, when given.
    pub detect: Option<f64>,
}

/// The power lines of the plan of `items`.
pub fn lines(settings: &Resolved, items: &[Item], ask: Ask) -> String {
    let mut per_dataset: BTreeMap<String, (usize, BTreeSet<u32>)> = BTreeMap::new();
    for item in items {
        let (n, values) = per_dataset
            .entry(item.dataset.name().to_string())
            .or_default();
        *n += 1;
        values.insert(item.complexity());
    }
    // The report separates two arms after Holm's adjustment over every pair:
    // the most separated pair must pass α/m, the others more.
    let arms = settings.plan.models.len() * settings.plan.prompts.len();
    let pairs = (arms * arms.saturating_sub(1) / 2).max(1);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\npower: the smallest difference in A3 between two models this plan detects \
         (paired on the same items, two-sided α = {ALPHA}, {:.0}% power, both near {:.0}% accuracy: --baseline); \
         repeats do not add items; \"after Holm\" is at α/{pairs}, as the report's first step over the {pairs} pair{} of {arms} models and styles",
        100.0 * POWER,
        100.0 * ask.baseline,
        if pairs == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        out,
        "{:<12} {:>7} {:>11} {:>16} {:>13} {:>26}",
        "dataset", "items", "complexity", "overall", "after Holm", "within one complexity value"
    );
    for (dataset, (n, values)) in &per_dataset {
        let per_value = n / values.len().max(1);
        let shown = |items: usize, alpha: f64| {
            detectable_difference(items, ask.baseline, alpha, POWER)
                .map_or("–".into(), |d| format!("±{:.1} pp", 100.0 * d))
        };
        let _ = writeln!(
            out,
            "{dataset:<12} {n:>7} {:>11} {:>16} {:>13} {:>26}",
            values.len(),
            shown(*n, ALPHA),
            shown(*n, ALPHA / pairs as f64),
            shown(per_value, ALPHA)
        );
    }
    if let Some(wanted) = ask.detect {
        match items_needed(wanted, ask.baseline, ALPHA, POWER) {
            Some(needed) => {
                let batches = settings.plan.batches.max(1);
                let after_holm = items_needed(wanted, ask.baseline, ALPHA / pairs as f64, POWER)
                    .unwrap_or(needed);
                let _ = writeln!(
                    out,
                    "to detect {:.1} pp: {needed} items per dataset overall ({after_holm} after Holm over {pairs} pair{}), or {needed} per complexity value to detect it within each value",
                    100.0 * wanted,
                    if pairs == 1 { "" } else { "s" }
                );
                for (dataset, (n, values)) in &per_dataset {
                    let per_value = (needed as usize).div_ceil(values.len().max(1));
                    let per_bucket = per_value.div_ceil(batches as usize);
                    let _ = writeln!(
                        out,
                        "  {dataset:<12} {per_value} items per complexity value ({} values): --per-bucket {per_bucket} with --batches {batches} (planned now: {n} items)",
                        values.len(),
                    );
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "--detect wants a difference above 0, and --baseline a share between 0 and 1"
                );
            }
        }
    }
    out
}

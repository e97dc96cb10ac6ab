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

/// The difference two models are assumed to lie apart when `--detect` is not given.
const ASSUMED_DIFFERENCE: f64 = 0.05;

/// What a run `--until decided` is likely to draw: per dataset, the items
/// at which its intervals would decide a level near the baseline and order
/// two models `--detect` apart, and the share of the plan that makes.
pub fn decided_lines(settings: &Resolved, items: &[Item], ask: Ask) -> String {
    use autoeval_sequential::foresee;
    let Some(design) = settings.until.design() else {
        return String::new();
    };
    let mut per_dataset: BTreeMap<String, usize> = BTreeMap::new();
    for item in items {
        *per_dataset
            .entry(item.dataset.name().to_string())
            .or_default() += 1;
    }
    let models = settings.plan.models.len();
    let pairs = (models * models.saturating_sub(1) / 2 * per_dataset.len()).max(1);
    let difference = ask.detect.unwrap_or(ASSUMED_DIFFERENCE);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nuntil decided: items each dataset is likely to draw, by the run's own intervals (α = {}), \
         models near {:.0}% accuracy (--baseline), a pair {:.1} pp apart ({}); a wave may overshoot by a tenth",
        design.alpha,
        100.0 * ask.baseline,
        100.0 * difference,
        if ask.detect.is_some() { "--detect" } else { "assumed: --detect sets it" }
    );
    let _ = writeln!(
        out,
        "{:<12} {:>7} {:>20} {:>20} {:>14}",
        "dataset",
        "items",
        format!("levels to ±{:.1} pp", 100.0 * design.precision),
        "order of a pair",
        "share of plan"
    );
    let (mut drawn, mut planned) = (0usize, 0usize);
    // Which question is likely to need most of some dataset's plan.
    let (mut levels_heavy, mut pairs_heavy) = (false, false);
    for (dataset, &n) in &per_dataset {
        let level = design
            .decide
            .levels()
            .then(|| foresee::items_for_level(&design, ask.baseline, n).unwrap_or(n));
        let order = design.decide.pairs().then(|| {
            foresee::items_for_order(&design, ask.baseline, difference, pairs, n).unwrap_or(n)
        });
        let heavy = |k: Option<usize>| k.is_some_and(|k| k as f64 >= 0.9 * n as f64);
        levels_heavy |= heavy(level);
        pairs_heavy |= heavy(order);
        let needed = level.unwrap_or(0).max(order.unwrap_or(0)).min(n);
        drawn += needed;
        planned += n;
        let shown = |k: Option<usize>| k.map_or("–".to_string(), |k| k.to_string());
        let _ = writeln!(
            out,
            "{dataset:<12} {n:>7} {:>20} {:>20} {:>13.0}%",
            shown(level),
            shown(order),
            100.0 * needed as f64 / n.max(1) as f64
        );
    }
    let share = drawn as f64 / planned.max(1) as f64;
    let _ = writeln!(
        out,
        "likely: {drawn} of the plan's {planned} items, so about {:.0}% of its units, requests and cost",
        100.0 * share
    );
    if share >= 0.9 {
        let _ = writeln!(out, "{}", fewer_hint(&design, levels_heavy, pairs_heavy));
    }
    out
}

/// What draws fewer items when a decided run is likely to spend its plan:
/// its levels need most of a dataset (`levels_heavy`), or its pairs do.
fn fewer_hint(
    design: &autoeval_sequential::Design,
    levels_heavy: bool,
    pairs_heavy: bool,
) -> String {
    let mut ways = Vec::new();
    if levels_heavy {
        ways.push(format!(
            "levels to ±{:.1} pp need most of this plan: a wider --precision draws fewer, and `--decide order` or `--decide best` asks no level",
            100.0 * design.precision
        ));
    }
    if pairs_heavy {
        ways.push(
            "pairs this close need most of this plan: `--decide best` asks fewer of them, and a larger plan leaves more unspent"
                .to_string(),
        );
    }
    format!("hint: {}", ways.join("; "))
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
        // A difference of accuracies is at most 100 pp: past that, the
        // items are too few to detect any.
        let shown = |items: usize, alpha: f64| match detectable_difference(
            items,
            ask.baseline,
            alpha,
            POWER,
        ) {
            Some(d) if d <= 1.0 => format!("±{:.1} pp", 100.0 * d),
            Some(_) => "none (too few)".into(),
            None => "–".into(),
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

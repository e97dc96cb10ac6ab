//! `autoeval run --dry-run`: what a run would ask and cost, before anything is paid for.
//!
//! Prompts are rendered exactly as the run would send them. The English of
//! the I step and the answer of the A step are unknown before a model
//! answers, so the built-in reference model's answers stand in for their
//! length; tokens are estimated at one per four bytes of UTF-8.

use anyhow::{Context, Result};
use autoeval_generate::Item;
use autoeval_models::Usage;
use autoeval_pipeline::initial_tasks;
use autoeval_prompts::Family;
use autoeval_run_dir::{price_table, stage_settings};
use autoeval_run_settings::Resolved;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bytes of text per estimated token.
const BYTES_PER_TOKEN: usize = 4;

/// Estimated tokens of `text`.
fn tokens(text: &str) -> u64 {
    text.len().div_ceil(BYTES_PER_TOKEN) as u64
}

/// What one model would be asked.
#[derive(Default)]
struct Estimate {
    units: usize,
    requests: u64,
    usage: Usage,
}

/// What each model of the plan would be asked, by the reference model's
/// answers to the plan's prompts.
fn estimates(settings: &Resolved, items: &[Item]) -> Result<BTreeMap<String, Estimate>> {
    let templates = stage_settings(settings)?.prompts.templates()?;
    let rounds = u64::from(settings.plan.rounds);
    let mut per_model: BTreeMap<String, Estimate> = BTreeMap::new();
    for task in initial_tasks(&settings.plan, items) {
        let family = Family::from(task.item.dataset);
        let alphabet: Vec<char> = task.alphabet.chars().collect();
        let i = templates.informalize(family, &task.input, task.prompt, &alphabet)?;
        let english = autoeval_reference_model::answer(&i.text, None);
        let a = templates.autoformalize(family, &task.input, &english, task.prompt, &alphabet)?;
        let answer = autoeval_reference_model::answer(&a.text, None);
        let e = per_model.entry(task.model.clone()).or_default();
        e.units += 1;
        e.requests += 2 * rounds;
        e.usage.prompt_tokens += rounds * (tokens(&i.text) + tokens(&a.text));
        e.usage.completion_tokens += rounds * (tokens(&english) + tokens(&answer));
    }
    Ok(per_model)
}

/// The plan of a run as a table: per model, units, requests (at most: a
/// later round runs only when the one before kept the meaning), estimated
/// tokens and cost.
pub fn plan(settings: &Resolved, items: &[Item]) -> Result<String> {
    let prices = price_table(settings.files.prices.as_deref())?;
    let per_model = estimates(settings, items)?;
    let rounds = u64::from(settings.plan.rounds);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "dry run: {} items of {} dataset{}; nothing is sent\n",
        items.len(),
        settings.plan.datasets.len(),
        if settings.plan.datasets.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    let w = per_model
        .keys()
        .map(|m| m.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let _ = writeln!(
        out,
        "{:<w$}  {:>7} {:>9} {:>13} {:>13} {:>11} {:>11}  sent",
        "model", "units", "requests", "prompt tok", "answer tok", "direct USD", "batch USD"
    );
    let (mut total, mut total_batch, mut total_planned) = (0.0, 0.0, 0.0);
    let mut unknown = Vec::new();
    for (model, e) in &per_model {
        let of_plan = settings
            .plan
            .models
            .iter()
            .find(|m| m.as_str() == model)
            .context("a task names a model of the plan")?;
        let (spec, model_settings) = settings.model_settings(of_plan);
        let batched = model_settings.batching().is_some();
        let moved = settings.addresses.get(model).map(String::as_str);
        let prices = autoeval_translate::prices_at(&spec, moved, &prices);
        let (cost, batch_cost) = if spec.is_builtin() {
            (Some(0.0), Some(0.0))
        } else {
            (
                prices.cost_of(&spec, e.usage),
                prices.batch_cost_of(&spec, e.usage),
            )
        };
        let (shown, shown_batch) = match cost.zip(batch_cost) {
            Some((c, b)) => {
                total += c;
                total_batch += b;
                total_planned += if batched { b } else { c };
                (autoeval_report::usd(Some(c)), autoeval_report::usd(Some(b)))
            }
            None => {
                unknown.push(spec.model());
                ("unknown".into(), "unknown".into())
            }
        };
        let _ = writeln!(
            out,
            "{:<w$}  {:>7} {:>9} {:>13} {:>13} {:>11} {:>11}  {}",
            model,
            e.units,
            e.requests,
            e.usage.prompt_tokens,
            e.usage.completion_tokens,
            shown,
            shown_batch,
            if batched { "batch" } else { "direct" }
        );
    }
    let _ = writeln!(
        out,
        "\nrequests are at most {} per unit ({} round{} of I and A); tokens are estimates \
         (one per {BYTES_PER_TOKEN} bytes, answers as long as the reference model's)",
        2 * rounds,
        rounds,
        if rounds == 1 { "" } else { "s" }
    );
    let taken = prices.taken.as_deref().unwrap_or("unknown date");
    if unknown.is_empty() {
        let _ = writeln!(
            out,
            "estimated cost: {} USD as planned (direct {} USD, through the batch APIs {} USD) at list prices taken {taken}",
            autoeval_report::usd(Some(total_planned)),
            autoeval_report::usd(Some(total)),
            autoeval_report::usd(Some(total_batch)),
        );
    } else {
        // A sum that leaves models out is no estimate of the run's cost.
        let _ = writeln!(
            out,
            "estimated cost: unknown: no price for {} (add one with --prices FILE); the priced models come to {} USD as planned (direct {} USD, batch {} USD) at list prices taken {taken}",
            unknown.join(", "),
            autoeval_report::usd(Some(total_planned)),
            autoeval_report::usd(Some(total)),
            autoeval_report::usd(Some(total_batch)),
        );
    }
    let _ = writeln!(
        out,
        "a model sends through its provider's batch API (half the list price, answers within 24 h) with `batch = true` in its [model.\"SPEC\"] table"
    );
    Ok(out)
}

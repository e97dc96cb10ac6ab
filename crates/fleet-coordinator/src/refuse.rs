//! Runs the fleet refuses before anything is published: a cost cap it could
//! not keep, settings its workers would not take.

use anyhow::{bail, Result};
use autoeval_run_dir::stage_settings;
use autoeval_run_settings::Resolved;

/// A cost cap cannot be kept for a model the price table does not price:
/// its calls would count as free.
pub fn unpriced(settings: &Resolved) -> Result<()> {
    let prices = stage_settings(settings)?.translate.prices;
    for model in &settings.plan.models {
        let spec = model.spec();
        let moved = settings.addresses.get(model.as_str()).map(String::as_str);
        let prices = autoeval_translate::prices_at(spec, moved, &prices);
        if !spec.is_builtin() && prices.price_of(spec).is_none() {
            let elsewhere = spec.base_url().or(moved).map_or(String::new(), |a| {
                format!(" (its requests go to {a}, where a provider's list price may not hold)")
            });
            bail!(
                "--budget-usd needs a price for {model}, and the price table has none for {:?}{elsewhere}; give one with --prices FILE ({{\"{}\": {{\"input\": USD_PER_MTOK, \"output\": USD_PER_MTOK}}}}) or cap tokens with --budget-tokens",
                spec.model(),
                spec.model()
            );
        }
    }
    Ok(())
}

/// Settings a worker would refuse to take from a run are refused here,
/// before anything is published.
pub(crate) fn past_bounds(settings: &Resolved) -> Result<()> {
    let stages = stage_settings(settings)?;
    for (model, s) in &stages.translate.models {
        if let Some(why) = s.past_fleet_bounds(model) {
            bail!("model {model}: {why}; a fleet's workers take no such setting from a run (run it on one machine, or put it in the model spec's ?… tail, which the worker is started with)");
        }
    }
    Ok(())
}

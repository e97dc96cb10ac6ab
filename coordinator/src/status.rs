//! `autoeval status RUN`: where a fleet run stands, per shard and stage:
//! units done, failed and dead from Redis and the dead-letter queue, tasks
//! in hand per stage as the workers tell Redis, queue depths from the broker.

use anyhow::Result;
use autoeval_fleet_coordinator::{dead_units, open, tally, FleetArgs};
use autoeval_pipeline::initial_tasks;
use autoeval_proto::fleet::{translate_queue, VERIFY_QUEUE};
use autoeval_proto::{meta, UnitKey};
use autoeval_run_dir::run_name;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::load_items;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Settings of `autoeval status`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run's directory (as `autoeval run --fleet --out` made it).
    pub dir: PathBuf,
    /// Where the fleet is.
    #[command(flatten)]
    pub fleet: FleetArgs,
}

#[derive(Default)]
struct Shard {
    units: usize,
    done: usize,
    failed: usize,
    dead: usize,
}

/// Runs `autoeval status`.
pub fn run(args: Args) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let settings = dir.settings()?;
    let run = run_name(&dir)?;
    let (items, _) = load_items(&settings)?;
    let units: Vec<UnitKey> = initial_tasks(&settings.plan, &items)
        .iter()
        .map(|t| t.unit())
        .collect();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let (broker, store) = open(&args.fleet, &run).await?;
        let meta = store.meta().await?;
        if meta.is_empty() {
            anyhow::bail!(
                "the fleet's Redis holds no run named {run}; `autoeval rerun {} --fleet` restores it from the directory and finishes it",
                args.dir.display()
            );
        }
        let finals = store.finals().await?;
        let dead = dead_units(&broker, &run).await?;
        let held = store.held().await?;
        let mut shards: BTreeMap<u32, Shard> = BTreeMap::new();
        for unit in &units {
            let s = shards.entry(unit.shard()).or_default();
            s.units += 1;
            match finals.get(unit) {
                Some(v) if v.is_retryable() => s.failed += 1,
                Some(_) => s.done += 1,
                None if dead.contains(unit) => s.dead += 1,
                None => {}
            }
        }
        let (recorded, equivalent, measured) = tally(&store.counts().await?);
        out!(
            "run {run}: {} units, {recorded} rounds recorded",
            units.len()
        );
        if let Some(r) = meta
            .get(meta::RECONCILED)
            .and_then(|v| v.parse::<meta::Reconciled>().ok())
        {
            out!(
                "  reconciled {} time{}, last {} s ago: {}",
                r.count,
                if r.count == 1 { "" } else { "s" },
                unix_now().saturating_sub(r.at),
                r.why
            );
        }
        let budget = store.budget().await?;
        if let Some(why) = &budget.paused {
            out!(
                "  PAUSED: {why}; {} tasks set aside. Continue with `autoeval resume {} --fleet --budget-usd MORE`",
                budget.parked,
                args.dir.display()
            );
        }
        if budget.cap_usd.is_some() || budget.cap_tokens.is_some() || budget.spent_tokens > 0 {
            let cap = |c: Option<String>| c.unwrap_or_else(|| "no cap".into());
            out!(
                "  spent ${:.4} (cap {}), {} tokens (cap {})",
                budget.spent_usd,
                cap(budget.cap_usd.map(|c| format!("${c:.4}"))),
                budget.spent_tokens,
                cap(budget.cap_tokens.map(|c| c.to_string()))
            );
        }
        if measured > 0 {
            out!(
                "  accuracy so far {:.1}% of {measured} measured rounds",
                100.0 * equivalent as f64 / measured as f64
            );
        }
        // Held: tasks a live worker has taken and not yet settled; waiting:
        // the rest of the units with no outcome, queued between stages.
        out!(
            "  {:<6} {:>7} {:>7} {:>7} {:>7} {:>12} {:>10} {:>8}",
            "shard", "units", "done", "failed", "dead", "translating", "verifying", "waiting"
        );
        let in_hand = |stage: &str, shard: u32| {
            held.get(&(stage.to_string(), shard)).copied().unwrap_or(0) as usize
        };
        for (n, s) in &shards {
            let (translating, verifying) = (in_hand("translate", *n), in_hand("verify", *n));
            let waiting = s
                .units
                .saturating_sub(s.done + s.failed + s.dead + translating + verifying);
            out!(
                "  {n:<6} {:>7} {:>7} {:>7} {:>7} {translating:>12} {verifying:>10} {waiting:>8}",
                s.units, s.done, s.failed, s.dead
            );
        }
        let judging: u64 = held
            .iter()
            .filter(|((stage, _), _)| stage == "judge")
            .map(|(_, n)| n)
            .sum();
        if judging > 0 {
            out!("  judge questions in hand: {judging}");
        }
        let queues: Vec<String> = settings
            .plan
            .models
            .iter()
            .map(|m| translate_queue(m))
            .chain([VERIFY_QUEUE.to_string()])
            .collect();
        let width = queues.iter().map(String::len).max().unwrap_or(0);
        out!("  {:<width$} {:>7} {:>9}", "queue", "ready", "consumers");
        for q in &queues {
            match broker.depth(q).await? {
                Some((ready, consumers)) => out!("  {q:<width$} {ready:>7} {consumers:>9}"),
                None => out!("  {q:<width$}       - (no worker has declared it)"),
            }
        }
        let letters = broker.dead_letters(usize::MAX).await?;
        let mut reasons: BTreeMap<(String, String), usize> = BTreeMap::new();
        for l in &letters {
            let whose = if l.run == run {
                "this run".to_string()
            } else if l.run.is_empty() {
                "no run".into()
            } else {
                format!("run {}", l.run)
            };
            *reasons.entry((whose, l.reason.clone())).or_default() += 1;
        }
        out!("  dead letters: {}", letters.len());
        for ((whose, reason), n) in reasons {
            out!("    {n:>6} ({whose}): {reason}");
        }
        broker.close().await;
        anyhow::Ok(())
    })?;
    Ok(())
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

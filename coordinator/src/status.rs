//! `autoeval status RUN`: where a fleet run stands, per shard and stage:
//! units done, failed and dead from Redis and the dead-letter queue, tasks
//! in hand per stage as the workers tell Redis, queue depths from the broker.

use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_fleet_coordinator::{dead_units, open, tally, FleetArgs};
use autoeval_pipeline::initial_tasks;
use autoeval_proto::{meta, UnitKey};
use autoeval_redis_store::RunStore;
use autoeval_run_dir::item_batches;
use autoeval_run_dir::run_name;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::Resolved;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Settings of `autoeval status`: the run, and where its fleet is.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run's directory (as `autoeval run --fleet --out` made it).
    pub dir: PathBuf,
    /// The broker.
    #[command(flatten)]
    pub broker: autoeval_service::AmqpUrl,
    /// Redis.
    #[command(flatten)]
    pub store: autoeval_service::RedisUrl,
    /// Taken and ignored, as the other commands spell a fleet run: a run's
    /// directory says where it was made.
    #[arg(long, hide = true)]
    pub fleet: bool,
}

#[derive(Default)]
struct Shard {
    units: usize,
    done: usize,
    failed: usize,
    dead: usize,
}

/// Runs `autoeval status`; `matches` tell which addresses the command line gave.
pub fn run(args: Args, matches: Option<&clap::ArgMatches>) -> Result<()> {
    let dir = RunDir(args.dir.clone());
    let settings = dir.settings()?;
    if !dir.is_fleet() {
        return on_one_machine(&dir, &settings);
    }
    let run = run_name(&dir)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let asked = FleetArgs {
            broker: args.broker.clone(),
            store: args.store.clone(),
            ..FleetArgs::default()
        };
        let fleet = asked.at_run_addresses(&dir, |id| crate::app::given_on_line(matches, id))?;
        let (broker, store) = open(&fleet, &run).await?;
        let meta = store.meta().await?;
        if meta.is_empty() {
            anyhow::bail!(
                "the Redis asked, {}, holds no run named {run}: if the run was made with another Redis, name it (`--redis URL` or AUTOEVAL_REDIS); if its keys expired there, `autoeval rerun {} --fleet` with that same Redis restores the run from the directory and finishes it",
                autoeval_proto::fleet::redact_url(&fleet.store.redis),
                args.dir.display()
            );
        }
        let dead = dead_units(&broker, &run).await?;
        let held = store.held().await?;
        let (units, shards) = shard_outcomes(&settings, &store, &dead).await?;
        let (recorded, equivalent, measured) = tally(&store.counts().await?);
        out!("run {run}: {units} units, {recorded} rounds recorded");
        say_reconciled(&meta);
        say_budget(&store, &args.dir, units).await?;
        if measured > 0 {
            out!(
                "  accuracy so far {:.1}% of {measured} measured rounds",
                100.0 * equivalent as f64 / measured as f64
            );
        }
        say_work(&store, &settings).await?;
        say_shards(&shards, &held);
        say_broken_chains(&dir)?;
        if shards.values().any(|s| s.failed > 0) {
            say_failures(&dir, &store).await?;
            out!(
                "  redo them once the cause is fixed: `autoeval rerun {} --failed --fleet`",
                args.dir.display()
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
        say_queues(&broker, &settings).await?;
        say_processes(&store).await?;
        say_dead_letters(&broker, &run).await?;
        broker.close().await;
        anyhow::Ok(())
    })?;
    Ok(())
}

/// Where a run made on one machine stands, from its directory alone: the
/// rounds recorded, and the chains with a gap.
fn on_one_machine(dir: &RunDir, settings: &Resolved) -> Result<()> {
    let mut recorded = autoeval_pipeline::RecordedUnits::new(settings.plan.rounds);
    let rounds = if dir.has_results() {
        autoeval_run_dir::for_each_record(&dir.results(), |r| recorded.add(&r))?
    } else {
        0
    };
    out!(
        "run {} (on one machine): {rounds} rounds recorded, {} units recorded to their end",
        dir.0.display(),
        recorded.finished()
    );
    say_broken_chains(dir)
}

/// The units whose chain has a gap in the run directory, if any, and the
/// command that redoes them.
fn say_broken_chains(dir: &RunDir) -> Result<()> {
    let chains = autoeval_run_dir::broken_chains(&dir.results())?;
    if !chains.is_empty() {
        out!(
            "  chains with a gap: {} (a round missing before a later one recorded: {}); `autoeval resume {}{}` redoes them from the missing round",
            chains.len(),
            autoeval_run_dir::name_chains(&chains),
            dir.0.display(),
            if dir.is_fleet() { " --fleet" } else { "" }
        );
    }
    Ok(())
}

/// Where each live process is connected: its broker node and Redis primary.
async fn say_processes(store: &RunStore) -> Result<()> {
    let processes = store.processes().await?;
    if processes.is_empty() {
        return Ok(());
    }
    out!("  processes (broker node, Redis server):");
    for p in processes {
        let again = match p.reconnections {
            0 => String::new(),
            n => format!(" (connected again {n}×)"),
        };
        let followed = match p.failovers {
            0 => String::new(),
            1 => " (followed 1 failover)".to_string(),
            n => format!(" (followed {n} failovers)"),
        };
        let broker = p.broker.as_deref().unwrap_or("not connected yet");
        out!(
            "    {}: {broker}{again}, Redis {}{followed}",
            p.process,
            p.redis
        );
    }
    Ok(())
}

/// Tasks in hand, by (stage, shard), as the workers tell Redis.
type Held = BTreeMap<(String, u32), u64>;

/// The run's units and, per shard, their outcomes in Redis: a batch of
/// items at a time.
async fn shard_outcomes(
    settings: &Resolved,
    store: &RunStore,
    dead: &BTreeSet<UnitKey>,
) -> Result<(usize, BTreeMap<u32, Shard>)> {
    let mut shards: BTreeMap<u32, Shard> = BTreeMap::new();
    let mut units = 0;
    for batch in item_batches(settings)? {
        let batch = batch?;
        let keys: Vec<UnitKey> = initial_tasks(&settings.plan, &batch.items)
            .iter()
            .map(|t| t.unit())
            .collect();
        units += keys.len();
        let finals = store.finals_of(&keys).await?;
        for (unit, outcome) in keys.iter().zip(finals) {
            let s = shards.entry(unit.shard()).or_default();
            s.units += 1;
            match outcome {
                Some(v) if v.is_retryable() => s.failed += 1,
                Some(_) => s.done += 1,
                None if dead.contains(unit) => s.dead += 1,
                None => {}
            }
        }
    }
    Ok((units, shards))
}

/// When the run was last reconciled, and why.
fn say_reconciled(meta: &BTreeMap<String, String>) {
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
}

/// A halt or a pause at a cap, and what the run has spent.
async fn say_budget(store: &RunStore, dir: &std::path::Path, units: usize) -> Result<()> {
    let budget = store.budget().await?;
    if let Some(why) = &budget.halted {
        // A halt holds the run as a pause does, but no cap lifts it.
        out!(
            "  HALTED: {why}; {} tasks set aside. Once this is fixed, `autoeval rerun {} --failed --fleet` runs them",
            budget.parked,
            dir.display()
        );
    } else if let Some(why) = &budget.paused {
        out!(
            "  PAUSED: {why}; {} tasks set aside. Continue with `autoeval resume {} --fleet {}`",
            budget.parked,
            dir.display(),
            autoeval_fleet_coordinator::raised_caps(&budget, store.final_count().await?, units)
        );
    }
    if budget.cap_usd.is_some() || budget.cap_tokens.is_some() || budget.spent_tokens > 0 {
        let cap = |c: Option<String>| c.map_or_else(|| "no cap".into(), |c| format!("cap {c}"));
        out!(
            "  spent ${:.4} ({}), {} tokens ({})",
            budget.spent_usd,
            cap(budget.cap_usd.map(|c| format!("${c:.4}"))),
            budget.spent_tokens,
            cap(budget.cap_tokens.map(|c| c.to_string()))
        );
    }
    Ok(())
}

/// The fleet's work so far: round trips, busy time, rate-limit waits,
/// provider batches and each model's concurrency.
async fn say_work(store: &RunStore, settings: &Resolved) -> Result<()> {
    let work = store.work().await?;
    out!(
        "  {} round trips translated; busy s over the fleet: translate {:.1}, verify {:.1}, record {:.1}",
        work.translated, work.translate_s, work.verify_s, work.record_s
    );
    for wait in store.rate_waits().await? {
        out!("  {wait}");
    }
    let batches = autoeval_models::BatchJournal::batches(&store.journal()).await?;
    if let Some(line) = autoeval_models::BatchCounts::of(&batches).line(unix_now()) {
        out!("  {line}");
        // The oldest first; a campaign may have hundreds in flight.
        let in_flight: Vec<_> = batches.iter().filter(|b| b.end.is_none()).collect();
        if in_flight.len() > 10 {
            out!("    the oldest 10 of {} in flight:", in_flight.len());
        }
        for b in in_flight.iter().take(10) {
            out!(
                "    in flight: {} ({}, {} requests, submitted {} s ago)",
                b.id,
                b.model,
                b.requests,
                unix_now().saturating_sub(b.submitted_at)
            );
        }
    }
    for (model, (limit, processes)) in store.concurrency().await? {
        if settings.plan.models.iter().any(|m| *m == model) {
            out!(
                "  concurrency: {model} sends up to {limit} requests at once over {processes} worker{}",
                if processes == 1 { "" } else { "s" }
            );
        }
    }
    Ok(())
}

/// Each shard's units by where they stand.
fn say_shards(shards: &BTreeMap<u32, Shard>, held: &Held) {
    // Taken: tasks a live worker or verifier has taken from its queue and
    // not yet settled, whether running or prefetched; queued: the rest of
    // the units with no outcome, in the queues between stages.
    out!("  (taken: running or prefetched by a live process; queued: in the broker)");
    out!(
        "  {:<6} {:>7} {:>7} {:>7} {:>7} {:>13} {:>15} {:>8}",
        "shard",
        "units",
        "done",
        "failed",
        "dead",
        "taken:workers",
        "taken:verifiers",
        "queued"
    );
    let in_hand = |stage: &str, shard: u32| {
        held.get(&(stage.to_string(), shard)).copied().unwrap_or(0) as usize
    };
    for (n, s) in shards {
        // A holder tells Redis once a second: just after a shard ends, its
        // last count may still stand, but no more units are in hand than lack an outcome.
        let open = s.units.saturating_sub(s.done + s.failed + s.dead);
        let translating = in_hand("translate", *n).min(open);
        let verifying = in_hand("verify", *n).min(open - translating);
        let waiting = open - translating - verifying;
        out!(
            "  {n:<6} {:>7} {:>7} {:>7} {:>7} {translating:>13} {verifying:>15} {waiting:>8}",
            s.units,
            s.done,
            s.failed,
            s.dead
        );
    }
}

/// The failed units by reason, the commonest first.
async fn say_failures(dir: &RunDir, store: &RunStore) -> Result<()> {
    // Why, from the failed rounds themselves: the commonest first.
    // A failed round ends its unit: each is counted once, from the
    // run directory or, not yet taken into it, from Redis.
    let mut why: BTreeMap<String, (u32, BTreeMap<u32, usize>)> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    let mut count = |r: autoeval_proto::ResultRecord| {
        if r.verdict.is_retryable() && seen.insert(r.round_key()) {
            let reason = r
                .reason
                .clone()
                .unwrap_or_else(|| "no reason recorded".into());
            let e = why.entry(reason).or_default();
            e.0 += 1;
            *e.1.entry(r.unit().shard()).or_default() += 1;
        }
    };
    if dir.has_results() {
        autoeval_run_dir::for_each_record(&dir.results(), &mut count)?;
    }
    store.scan_records(&mut count).await?;
    let mut why: Vec<_> = why.into_iter().collect();
    why.sort_by_key(|(_, (n, _))| std::cmp::Reverse(*n));
    out!("  failed units by reason (shard: units):");
    for (reason, (n, per_shard)) in why {
        let shards: Vec<String> = per_shard.iter().map(|(s, k)| format!("{s}: {k}")).collect();
        out!("    {n:>6} {reason} [{}]", shards.join(", "));
    }
    Ok(())
}

/// The run's stage queues: ready tasks, consumers, and what to start
/// where nothing takes them.
async fn say_queues(broker: &Broker, settings: &Resolved) -> Result<()> {
    let queues = autoeval_fleet_coordinator::stage_queues(
        broker.topology(),
        settings.plan.models.iter().map(|m| m.as_str()),
    );
    let width = queues.iter().map(|(q, _)| q.len()).max().unwrap_or(0);
    out!("  {:<width$} {:>7} {:>9}", "queue", "ready", "consumers");
    for (q, serve) in &queues {
        match broker.depth(q).await? {
            Some((ready, 0)) if ready > 0 => out!(
                "  {q:<width$} {ready:>7} {:>9}  nothing takes these: start `{serve}`",
                0
            ),
            Some((ready, consumers)) => out!("  {q:<width$} {ready:>7} {consumers:>9}"),
            None => out!("  {q:<width$}       - (no worker has declared it: start `{serve}`)"),
        }
    }
    Ok(())
}

/// This run's dead letters by reason, and how many are other runs'.
async fn say_dead_letters(broker: &Broker, run: &str) -> Result<()> {
    let letters = broker.dead_letters(usize::MAX).await?;
    // This run's letters by reason; the rest of the queue in one line.
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut others = std::collections::BTreeSet::new();
    for l in &letters {
        if l.run == run {
            *reasons.entry(l.reason.clone()).or_default() += 1;
        } else {
            others.insert(l.run.clone());
        }
    }
    out!("  dead letters: {}", reasons.values().sum::<usize>());
    for (reason, n) in reasons {
        out!("    {n:>6}: {reason}");
    }
    if !others.is_empty() {
        out!(
            "  the dead-letter queue holds {} more of {} other run{} (status on their own directories says why)",
            letters.len() - letters.iter().filter(|l| l.run == run).count(),
            others.len(),
            if others.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

//! A fleet run from start to end: the directory claimed, the run
//! registered and published, followed to its end, its records written.

use crate::publish::register;
use crate::session::{follow_to_end, wait_for_models, FleetRun, Session};
use crate::waves::{follow_waves, Waves};
use crate::{arrivals, follow, pending, reconcile, refuse};
use crate::{raised_caps, unix_now, BudgetArgs, Detached, Ending, FleetArgs, Mode, Paused};
use anyhow::{bail, Context, Result};
use autoeval_amqp::Broker;
use autoeval_engine::local::StageTimes;
use autoeval_progress::Display;
use autoeval_proto::meta;
use autoeval_proto::RoundKey;
use autoeval_redis_store::{CapsSet, RunStore, Work};
use autoeval_run_dir::count_items;
use autoeval_run_dir::{claim_dir, claim_run_name, JsonlStore, RunDir};
use autoeval_run_settings::Resolved;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A fleet run whose every unit has its outcome, for the command line to
/// write its summary and report.
#[derive(Debug)]
pub struct Finished {
    /// Items of the run.
    pub items: usize,
    /// Work units.
    pub units: usize,
    /// Seconds spent generating (or reading) the items.
    pub generate_s: f64,
    /// The run's wall time and records.
    pub times: StageTimes,
}

/// Follows the run to its end, the whole plan at once or wave by wave as
/// `waves` chooses: how it ended, the arrivals, and the units and items in
/// play (`items` for the whole plan).
async fn follow_as_asked(
    session: &Session<'_>,
    waves: Option<&mut dyn Waves>,
    (arrivals, items): (arrivals::Arrivals, usize),
    metrics: &autoeval_telemetry::Metrics,
    reconciler: &mut reconcile::Reconciler<'_>,
) -> Result<(Result<Ending>, arrivals::Arrivals, usize, usize)> {
    let Some(waves) = waves else {
        let units = session.units;
        let awaited = (units, follow::Awaited::all(units));
        let (ending, arrivals) =
            follow_to_end(session, awaited, arrivals, metrics, reconciler).await;
        return Ok((ending, arrivals, units, items));
    };
    let followed = follow_waves(session, waves, arrivals, metrics, reconciler).await?;
    let drawn = waves.items_drawn();
    Ok((
        Ok(followed.ending),
        followed.arrivals,
        followed.units,
        drawn,
    ))
}

/// Runs the plan on the fleet (or, as its mode says, redoes its failed
/// units or resumes it) and writes the results; once every unit has a final
/// outcome (or the rest are dead letters), `finish` writes the summary and
/// report. With `waves`, the run is published wave by wave as they choose
/// (a run `--until decided`), not as a whole plan.
pub fn execute(
    asked: FleetRun<'_>,
    waves: Option<&mut dyn Waves>,
    finish: impl FnOnce(Finished) -> Result<()>,
) -> Result<()> {
    let FleetRun {
        dir,
        settings,
        display,
        fleet,
        budget,
        ..
    } = asked;
    let Claimed {
        run,
        items,
        units,
        generate_s,
        log,
    } = claim(dir, settings, budget, fleet)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started = Instant::now();
    let metrics = Arc::new(autoeval_telemetry::Metrics::new("coordinator"));
    let (ending, recorded, work, units, items) = runtime.block_on(async {
        let health = serve_health(&metrics, fleet, display).await?;
        let conn = autoeval_redis_store::connect(&fleet.store.redis).await?;
        autoeval_service::spawn_presence(conn.clone(), "autoeval-coordinator", metrics.clone());
        let store = RunStore::new(conn, &run);
        register(&store, settings, units, items).await?;
        // This session's busy times are what the fleet's processes did since.
        let work_before = store.work().await.unwrap_or_default();
        let recorded_before = store.marked().await.unwrap_or_default();
        let mut reconciler = reconcile::Reconciler::new(settings, units, items);
        if let Some(why) = reconciler.restore(&store, &log).await? {
            if display != Display::Quiet {
                eprintln!("fleet: run {run}: {why}");
            }
        }
        // Rounds recorded while no coordinator followed come into the directory first.
        let mut arrivals = arrivals::Arrivals::new(log);
        arrivals.take(&store).await?;
        let broker = Arc::new(
            fleet
                .broker
                .connect(&fleet.store.redis, "autoeval-coordinator")
                .await?,
        );
        let session = Session {
            asked: &asked,
            broker: &broker,
            store: &store,
            run: &run,
            units,
        };
        let forgotten = publish_as_asked(&session, arrivals.log(), waves.is_none()).await?;
        health.set_ready(true);
        let (ending, mut arrivals, units, items) = follow_as_asked(
            &session,
            waves,
            (arrivals, items),
            &metrics,
            &mut reconciler,
        )
        .await?;
        arrivals.take(&store).await?;
        // This session's rounds: those marked since it began, the ones a
        // redo forgot counted again.
        let marked = store.marked().await.unwrap_or_default();
        let recorded = marked.saturating_sub(recorded_before.saturating_sub(forgotten));
        let work = follow::settled_work(&store, &work_before, recorded_before).await;
        let work = work_since(&work, &work_before);
        let ending = ending?;
        if let Ending::Complete = ending {
            // Every round is in the directory: Redis may let the run go.
            store.finish(fleet.keep_s).await?;
        }
        anyhow::Ok((ending, recorded as usize, work, units, items))
    })?;
    refuse_unfinished(&ending, &run, dir, units)?;
    // Busy seconds summed over the fleet's processes, as they reported them
    // (each reports once a second, so the last second may be missing).
    let times = StageTimes {
        wall_s: started.elapsed().as_secs_f64(),
        records: recorded,
        translate_s: work.translate_s,
        verify_s: work.verify_s,
        record_s: work.record_s,
    };
    let finished = finish(Finished {
        items,
        units,
        generate_s,
        times,
    });
    linger(&runtime, fleet);
    if let Ending::Dead(n) = ending {
        bail!(
            "{n} units have tasks in the dead-letter queue; see why with `autoeval status {}`, and once the cause is fixed run `autoeval rerun {} --failed --fleet`",
            dir.0.display(),
            dir.0.display()
        );
    }
    finished
}

/// The coordinator's health and metrics, served at `--health-addr` when one is given.
async fn serve_health(
    metrics: &Arc<autoeval_telemetry::Metrics>,
    fleet: &FleetArgs,
    display: Display,
) -> Result<autoeval_service::Health> {
    let health = autoeval_service::Health::with_metrics(metrics.clone());
    if let Some(addr) = &fleet.health.health_addr {
        let bound = health.serve(addr).await?;
        if display != Display::Quiet {
            eprintln!("fleet: health at http://{bound}");
        }
    }
    Ok(health)
}

/// A run directory claimed for a fleet run, with what the run is.
struct Claimed {
    /// The run's name in Redis.
    run: String,
    /// Its items and units.
    items: usize,
    units: usize,
    /// Seconds spent counting (generating) the items.
    generate_s: f64,
    /// The run's record: every round taken from Redis is appended here, and
    /// what it holds is what a restore puts back if Redis loses the run.
    log: JsonlStore,
}

/// Refuses settings the fleet cannot run, claims the directory and names
/// the run, and counts its items.
fn claim(
    dir: &RunDir,
    settings: &Resolved,
    budget: &BudgetArgs,
    fleet: &FleetArgs,
) -> Result<Claimed> {
    if budget.budget_usd.is_some() {
        refuse::unpriced(settings)?;
    }
    refuse::past_bounds(settings)?;
    claim_dir(dir, settings)?;
    // Named before the directory is marked as a fleet run's.
    let run = claim_run_name(dir)?;
    dir.mark_fleet(&fleet.addresses())?;
    let t0 = Instant::now();
    // Counted here and made again, a batch at a time, as they are published.
    let (items, _) = count_items(settings)?;
    let generate_s = t0.elapsed().as_secs_f64();
    let units = settings.plan.units(items);
    let log = JsonlStore::open(&dir.results())?;
    Ok(Claimed {
        run,
        items,
        units,
        generate_s,
        log,
    })
}

/// Does what the mode asks before the run is followed: forgets the failures
/// a redo redoes, sets the caps given (lifting a pause or a halt), and
/// publishes what is still to do, unless it was published before; a run
/// published wave by wave (`whole` false) publishes only what a resume
/// set aside here, its waves later. Returns how many recorded rounds it
/// forgot.
async fn publish_as_asked(session: &Session<'_>, log: &JsonlStore, whole: bool) -> Result<u64> {
    let (asked, store) = (session.asked, session.store);
    let mode = asked.mode;
    let mut forgotten = 0;
    if mode == Mode::RedoFailed {
        forgotten = forget_failures(store, session.broker, log, asked.display).await?;
        // A backend that halted in a worker is built afresh for the redo,
        // whether or not the halt set tasks aside.
        store.start_backends_afresh().await?;
    }
    // With resume: the tasks workers set aside while the run was paused.
    let mut parked = None;
    // Redoing a run a backend halted lifts the halt: the tasks it set
    // aside are pending, and published with the rest.
    let lift_halt = mode == Mode::RedoFailed && store.budget().await?.halted.is_some();
    if asked.budget.given() || mode == Mode::Resume || lift_halt {
        let go_on = mode == Mode::Resume || lift_halt;
        parked = set_caps(session, go_on).await?;
    }
    let meta = store.meta().await?;
    let publish = match mode {
        Mode::Run | Mode::RedoFailed if !whole => false,
        Mode::Run => !meta.contains_key(meta::PUBLISHED),
        Mode::RedoFailed => true,
        // What was set aside, and nothing else: the rest is on its way.
        Mode::Resume => parked.as_ref().is_some_and(|p| !p.is_empty()),
    };
    if publish {
        publish_run(session, log, parked.as_deref()).await?;
    } else if asked.display != Display::Quiet && whole {
        let (run, units) = (session.run, session.units);
        eprintln!("fleet: run {run}: {units} units, published before; following");
    }
    Ok(forgotten)
}

/// Publishes what the run still needs once workers serve its models: its
/// pending units, or on resume only what was set aside (`parked`).
async fn publish_run(
    session: &Session<'_>,
    log: &JsonlStore,
    parked: Option<&[RoundKey]>,
) -> Result<()> {
    let Session {
        asked,
        broker,
        store,
        run,
        units,
    } = *session;
    let FleetRun {
        dir,
        settings,
        display,
        mode,
        ..
    } = *asked;
    let then = format!("`autoeval rerun {} --failed --fleet`", dir.0.display());
    wait_for_models(session, &then).await?;
    let only = pending::Only {
        rounds: match (mode, parked) {
            (Mode::Resume, Some(parked)) => Some(parked.iter().cloned().collect()),
            _ => None,
        },
        ..pending::Only::default()
    };
    let published = pending::publish_pending(broker, store, settings, log, &only).await?;
    if display != Display::Quiet {
        eprintln!(
            "fleet: run {run}: {units} units; {} finished, {} published",
            published.finished, published.tasks
        );
    }
    // Confirmed: what was set aside may leave its set now.
    if let Some(parked) = parked {
        store.unpark(parked).await?;
    }
    store
        .set_meta(&[(meta::PUBLISHED, unix_now().to_string())])
        .await?;
    Ok(())
}

/// Sets the run's caps (and lets a paused run go on, with `go_on`); the
/// tasks set aside while it was paused. Caps already spent, or a pause
/// not lifted, are refused with the caps that would let it go on.
async fn set_caps(session: &Session<'_>, go_on: bool) -> Result<Option<Vec<RoundKey>>> {
    let (store, run, units) = (session.store, session.run, session.units);
    let (dir, budget) = (session.asked.dir, session.asked.budget);
    match store.set_caps(budget.usd(), budget.tokens(), go_on).await? {
        CapsSet::Spent => {
            let b = store.budget().await?;
            let done = store.done().await?;
            // The same caps a pause proposes: enough, at the rate so far, for the rest.
            bail!(
                "the run has already spent ${:.4} and {} tokens, as much as the caps given allow; nothing was changed. Give caps above that, e.g. `autoeval resume {} --fleet {}`",
                b.spent_usd,
                b.spent_tokens,
                dir.0.display(),
                raised_caps(&b, done, units)
            );
        }
        CapsSet::Paused => {
            let b = store.budget().await?;
            let done = store.done().await?;
            bail!(
                "run {run} is paused at its budget; continue it with `autoeval resume {} --fleet {}`",
                dir.0.display(),
                raised_caps(&b, done, units)
            )
        }
        CapsSet::Running => Ok(None),
        CapsSet::Resumed(tasks) => Ok(Some(tasks)),
    }
}

/// Why a run that did not finish stops here: detached, halted or paused.
/// What was recorded is written; the report waits for the whole run.
fn refuse_unfinished(ending: &Ending, run: &str, dir: &RunDir, units: usize) -> Result<()> {
    match ending {
        Ending::Detached => Err(Detached {
            run: run.to_string(),
            dir: dir.0.display().to_string(),
        }
        .into()),
        Ending::Halted { why } => Err(autoeval_run_dir::halted_error(why, dir, true).into()),
        Ending::Paused { why, done, more } => Err(Paused {
            run: run.to_string(),
            why: why.clone(),
            done: *done,
            units,
            dir: dir.0.display().to_string(),
            more: more.clone(),
            fleet: true,
        }
        .into()),
        Ending::Complete | Ending::Dead(_) => Ok(()),
    }
}

/// This session's work: what the fleet's processes did since `before`.
fn work_since(work: &Work, before: &Work) -> Work {
    Work {
        translated: work.translated.saturating_sub(before.translated),
        proved: work.proved.saturating_sub(before.proved),
        translate_s: (work.translate_s - before.translate_s).max(0.0),
        verify_s: (work.verify_s - before.verify_s).max(0.0),
        record_s: (work.record_s - before.record_s).max(0.0),
    }
}

/// Keeps serving the final metrics for `--linger-s` (or until SIGTERM), so
/// that Prometheus scrapes the end of the run.
fn linger(runtime: &tokio::runtime::Runtime, fleet: &FleetArgs) {
    if fleet.linger_s > 0 && fleet.health.health_addr.is_some() {
        runtime.block_on(async {
            let mut stop = autoeval_service::shutdown_signal();
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(fleet.linger_s)) => {}
                _ = stop.changed() => {}
            }
        });
    }
}

/// Drops the rounds that ended in a retryable failure, from Redis and from
/// the run directory, and takes the run's dead letters out, so publishing
/// the pending tasks redoes exactly those units. Returns how many rounds
/// it forgot.
async fn forget_failures(
    store: &RunStore,
    broker: &Broker,
    log: &JsonlStore,
    display: Display,
) -> Result<u64> {
    let mut failed: HashSet<RoundKey> = HashSet::new();
    if autoeval_run_dir::results_exist(log.path()) {
        autoeval_run_dir::for_each_record(log.path(), |r| {
            if r.verdict.is_retryable() {
                failed.insert(r.round_key());
            }
        })?;
    }
    for round in &failed {
        store.forget(round).await?;
    }
    log.forget(&failed)?;
    let dead = broker.take_dead_letters(store.run()).await?;
    if display != Display::Quiet {
        let held: usize = dead.iter().map(|d| d.units.len()).sum();
        let dead_letters = match dead.len() {
            0 => String::new(),
            n => format!(", and {n} dead letters held {held} units"),
        };
        eprintln!(
            "rerun: {} rounds ended in an API failure, a verifier error or a timeout{dead_letters}; publishing their units again",
            failed.len(),
        );
    }
    Ok(failed.len() as u64)
}

//! The fleet's coordinator, as a library the command line calls: it
//! registers the run in Redis, publishes its tasks to the broker, follows
//! the results the verifiers record and writes the same `results.jsonl` as
//! a one-machine run; the command line then writes the summary and report.

mod arrivals;
mod follow;
mod gauges;
pub mod gc;
pub mod judge;
mod pending;
mod reconcile;
mod refuse;
pub use refuse::unpriced as refuse_unpriced;

use anyhow::{bail, Context, Result};
use autoeval_amqp::{bundle_messages, Broker, Meta};
use autoeval_engine::local::StageTimes;
use autoeval_progress::{Display, Progress};
use autoeval_proto::fleet::{translate_key, translate_queue};
use autoeval_proto::meta;
use autoeval_proto::wire::MessageKind;
use autoeval_proto::TranslateTask;
use autoeval_proto::{ResultRecord, RoundKey};
use autoeval_redis_store::{Budget, Cap, CapsSet, RunStore, Work};
use autoeval_run_dir::{claim_dir, claim_run_name, run_name, JsonlStore, RunDir};
use autoeval_run_settings::Resolved;
use autoeval_run_settings::{count_items, stage_settings};
pub use follow::{dead_units, tally, Ending};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the fleet is.
#[derive(Debug, Default, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct FleetArgs {
    /// Run on the fleet: publish the tasks to the broker for `autoeval-worker`
    /// and `autoeval-verifier` processes, and follow the results in Redis.
    #[cfg_attr(feature = "cli", arg(long))]
    pub fleet: bool,
    /// Broker URL.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            env = "AUTOEVAL_AMQP",
            hide_env_values = true,
            default_value = "amqp://guest:guest@127.0.0.1:5672/%2f"
        )
    )]
    pub amqp: String,
    /// Redis URL.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            env = "AUTOEVAL_REDIS",
            hide_env_values = true,
            default_value = "redis://127.0.0.1:6379"
        )
    )]
    pub redis: String,
    /// Seconds to wait for a worker serving each model before publishing
    /// anyway (tasks for a model nobody serves become dead letters).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 60))]
    pub worker_wait_s: u64,
    /// Serve /healthz, /readyz and /metrics here while the coordinator runs
    /// (ready once the run is registered and published).
    #[cfg_attr(feature = "cli", arg(long, alias = "metrics-addr"))]
    pub health_addr: Option<String>,
    /// After the run ends, keep serving /metrics this many seconds (or until
    /// SIGTERM), so that Prometheus scrapes the end of the run.
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 0))]
    pub linger_s: u64,
    /// Once every unit has its outcome and the results are in the run's
    /// directory, the run's keys in Redis expire after this many seconds
    /// (`autoeval fleet gc` removes finished runs at once).
    #[cfg_attr(feature = "cli", arg(long, default_value_t = KEEP_S))]
    pub keep_s: u64,
}

/// How long a finished run's keys stay in Redis by default: a day, for
/// `status` and `judge --fleet` after the run.
pub const KEEP_S: u64 = 86_400;

/// A fleet run's caps.
#[derive(Debug, Default, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct BudgetArgs {
    /// Most the run may spend on model calls, in US dollars (as the price
    /// table prices them): at the cap the run pauses (exit 75), and
    /// `autoeval resume DIR [--fleet] --budget-usd MORE` continues it.
    #[cfg_attr(feature = "cli", arg(long, value_name = "USD"))]
    pub budget_usd: Option<f64>,
    /// Most prompt plus completion tokens the run may pay for; at the cap it pauses.
    #[cfg_attr(feature = "cli", arg(long, value_name = "TOKENS"))]
    pub budget_tokens: Option<u64>,
    /// Remove the run's caps (a cap not given otherwise stays as it was).
    #[cfg_attr(feature = "cli", arg(long, conflicts_with_all = ["budget_usd", "budget_tokens"]))]
    pub no_budget: bool,
}

impl BudgetArgs {
    /// True when a cap is given.
    pub fn capped(&self) -> bool {
        self.budget_usd.is_some() || self.budget_tokens.is_some()
    }

    /// True when the caps are to change.
    fn given(&self) -> bool {
        self.capped() || self.no_budget
    }

    /// The cost cap as the store takes it: a cap not given is kept.
    fn usd(&self) -> Cap<f64> {
        match (self.budget_usd, self.no_budget) {
            (Some(v), _) => Cap::To(v),
            (None, true) => Cap::Remove,
            (None, false) => Cap::Keep,
        }
    }

    /// The token cap as the store takes it.
    fn tokens(&self) -> Cap<u64> {
        match (self.budget_tokens, self.no_budget) {
            (Some(v), _) => Cap::To(v),
            (None, true) => Cap::Remove,
            (None, false) => Cap::Keep,
        }
    }

    /// A one-machine run's caps: `kept` (those it was given before),
    /// changed as these arguments say (a cap given replaces its kind,
    /// `--no-budget` removes both).
    pub fn applied_to(&self, kept: autoeval_engine::budget::Caps) -> autoeval_engine::budget::Caps {
        if self.no_budget {
            return autoeval_engine::budget::Caps::default();
        }
        autoeval_engine::budget::Caps {
            usd: self.budget_usd.or(kept.usd),
            tokens: self.budget_tokens.or(kept.tokens),
        }
    }
}

/// What `execute` is asked to do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Run the plan (or follow it, when it was published before).
    Run,
    /// Redo the units whose last round failed or whose tasks are dead letters.
    RedoFailed,
    /// Continue a run paused at a cap, with the caps given.
    Resume,
}

/// Exit status of a run paused at its budget (EX_TEMPFAIL: try again later).
pub const EXIT_PAUSED: u8 = 75;

/// A fleet run stopped at its budget, not failed: `resume` continues it.
#[derive(Debug)]
pub struct Paused {
    /// The run.
    pub run: String,
    /// Why.
    pub why: String,
    /// Units with a final outcome.
    pub done: u64,
    /// Units in the run.
    pub units: usize,
    /// Its directory.
    pub dir: String,
    /// Caps that would let it go on, as flags.
    pub more: String,
    /// Whether the run is a fleet's (resumed through it).
    pub fleet: bool,
}

impl std::fmt::Display for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} is paused: {}; {} of {} units are done. Continue it with `autoeval resume {}{} {}` (or caps of your choosing)",
            self.run,
            self.why,
            self.done,
            self.units,
            self.dir,
            if self.fleet { " --fleet" } else { "" },
            self.more
        )
    }
}

/// Caps for the whole run at twice the rate spent so far (`done` of
/// `units` cost what `budget` spent; units differ in cost, and the first
/// done may be the cheap ones), and never less than twice the caps it has,
/// as the flags of `resume`: a hint that works when pasted.
pub fn raised_caps(budget: &Budget, done: u64, units: usize) -> String {
    let whole = if done == 0 {
        2.0
    } else {
        (units as f64 / done as f64).max(1.0) * 2.0
    };
    let usd = |cap: f64| (2.0 * cap).max(budget.spent_usd * whole).max(0.01);
    let tokens = |cap: u64| {
        ((2 * cap) as f64)
            .max(budget.spent_tokens as f64 * whole)
            .ceil() as u64
    };
    match (budget.cap_usd, budget.cap_tokens) {
        (Some(u), Some(t)) => format!("--budget-usd {:.2} --budget-tokens {}", usd(u), tokens(t)),
        (None, Some(t)) => format!("--budget-tokens {}", tokens(t)),
        (Some(u), None) => format!("--budget-usd {:.2}", usd(u)),
        (None, None) => format!("--budget-usd {:.2}", usd(0.0).max(1.0)),
    }
}

impl std::error::Error for Paused {}

/// Exit status of a coordinator stopped with Ctrl-C (128 + SIGINT).
pub const EXIT_DETACHED: u8 = 130;

/// The coordinator stopped following a run (Ctrl-C); the fleet goes on with it.
#[derive(Debug)]
pub struct Detached {
    /// The run.
    pub run: String,
    /// Its directory.
    pub dir: String,
}

impl std::fmt::Display for Detached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stopped following run {}; the fleet goes on with it. The same command attaches again and writes the report at the end; `autoeval status {} --fleet` shows where it is",
            self.run, self.dir
        )
    }
}

impl std::error::Error for Detached {}

/// Where a fleet run's results are, for the commands that read a run.
#[derive(Debug, Default, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ReadArgs {
    /// Read the run from the fleet's Redis first, into its directory (made if
    /// missing): its settings when the directory has none, every recorded
    /// round, and every judgement made with `judge --fleet`.
    #[cfg_attr(feature = "cli", arg(long))]
    pub fleet: bool,
    /// Redis URL.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            env = "AUTOEVAL_REDIS",
            hide_env_values = true,
            default_value = "redis://127.0.0.1:6379"
        )
    )]
    pub redis: String,
    /// The run's name in Redis (`results-1a2b3c4d`), when the directory is
    /// not the coordinator's and more than one run was made from a
    /// directory of its name.
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME"))]
    pub run_id: Option<String>,
}

/// Brings a run directory up to date from the fleet's Redis, as [`ReadArgs`]
/// says: its settings, the rounds Redis holds that the coordinator has not
/// yet taken into its directory, and the judgements. Every other round is
/// in the coordinator's run directory, never in Redis.
pub fn pull(dir: &RunDir, from: &ReadArgs) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let (run, meta, untaken, marked, judged) = runtime.block_on(async {
        let conn = autoeval_redis_store::connect(&from.redis).await?;
        let run = find_run(&conn, dir, from).await?;
        let store = RunStore::new(conn, &run);
        let meta = store.meta().await?;
        if meta.is_empty() {
            bail!(
                "the fleet's Redis at {} holds no run named {run}",
                autoeval_proto::fleet::redact_url(&from.redis)
            );
        }
        let untaken = stored_records(&store).await?;
        let marked = store.marked().await?;
        let mut judged = Vec::new();
        for judge in meta.keys().filter_map(|k| meta::judge_of(k)) {
            let judge = judge.context("the run's Redis names a judge wrongly")?;
            let fresh = store.judgements(&judge).await?;
            judged.push((judge, fresh));
        }
        anyhow::Ok((run, meta, untaken, marked, judged))
    })?;
    std::fs::create_dir_all(&dir.0)
        .with_context(|| format!("cannot create the run directory {}", dir.0.display()))?;
    // The directory finds its run again without asking Redis.
    if !dir.run_id_file().exists() {
        std::fs::write(dir.run_id_file(), format!("{run}\n"))
            .with_context(|| format!("cannot write {}", dir.run_id_file().display()))?;
    }
    if let (false, Some(config)) = (dir.config().exists(), meta.get(meta::CONFIG)) {
        std::fs::write(dir.config(), config)
            .with_context(|| format!("cannot write {}", dir.config().display()))?;
    }
    // A round the directory holds already stays as it is.
    let log = JsonlStore::open(&dir.results())?;
    let mut added = 0;
    for r in &untaken {
        if log.append(r)? {
            added += 1;
        }
    }
    let held = log.len();
    drop(log);
    let mut judgements = 0;
    for (judge, fresh) in judged {
        let path = autoeval_run_dir::judge_file(dir, &judge.spec, &judge.style);
        let mut text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for j in &fresh {
            text.push_str(&serde_json::to_string(j)?);
            text.push('\n');
        }
        // What the file held first, then the fleet's: the first answer of a pair stands.
        let merged = autoeval_run_dir::latest_judgements(&text);
        judgements += merged.len();
        autoeval_run_dir::rewrite_judgements(&path, &merged)?;
    }
    eprintln!(
        "fleet: run {run}: {added} rounds not yet in a run directory and {judgements} judgements read from Redis into {}",
        dir.0.display()
    );
    if (held as u64) < marked {
        eprintln!(
            "fleet: run {run} has {marked} rounds recorded and {} holds {held}: the rest are in the run directory of the coordinator that followed the run (its results.jsonl)",
            dir.0.display()
        );
    }
    Ok(())
}

/// The run a directory reads from Redis: the one `--run-id` names, the
/// one its `run-id` file names, the one named as the directory is, or the
/// one run made from a directory of that name (`results-1a2b3c4d` for
/// `results`); several such runs are named, for `--run-id` to choose.
async fn find_run(
    conn: &autoeval_redis_store::Connection,
    dir: &RunDir,
    from: &ReadArgs,
) -> Result<String> {
    if let Some(run) = &from.run_id {
        return Ok(run.clone());
    }
    if dir.run_id_file().exists() {
        return Ok(run_name(dir)?);
    }
    let name = autoeval_run_dir::dir_name(dir)?;
    let registered = |run: &str| {
        let store = RunStore::new(conn.clone(), run);
        async move { store.meta().await.map(|m| m.contains_key(meta::PLAN)) }
    };
    if registered(&name).await? {
        return Ok(name);
    }
    let mut runs = autoeval_redis_store::runs_made_from(conn, &name).await?;
    match runs.len() {
        0 => bail!(
            "the fleet's Redis at {} holds no run named {name} or made from a directory of that name",
            autoeval_proto::fleet::redact_url(&from.redis)
        ),
        1 => Ok(runs.remove(0)),
        _ => bail!(
            "the fleet's Redis holds {} runs made from directories named {name}: {}; choose one with --run-id",
            runs.len(),
            runs.join(", ")
        ),
    }
}

/// The run's rounds whose records are still in Redis (not yet taken into
/// the coordinator's run directory), sorted by unit and round.
pub async fn stored_records(store: &RunStore) -> Result<Vec<ResultRecord>> {
    let mut all = Vec::new();
    store.scan_records(|r| all.push(r)).await?;
    all.sort_by_key(|a| (a.unit(), a.round));
    Ok(all)
}

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

/// Runs the plan on the fleet (or, as `mode` says, redoes its failed units
/// or resumes it) and writes the results; once every unit has a final
/// outcome (or the rest are dead letters), `finish` writes the summary and report.
#[allow(clippy::too_many_arguments)]
pub fn execute(
    dir: &RunDir,
    settings: &Resolved,
    display: Display,
    fleet: &FleetArgs,
    budget: &BudgetArgs,
    mode: Mode,
    finish: impl FnOnce(Finished) -> Result<()>,
) -> Result<()> {
    if budget.budget_usd.is_some() {
        refuse::unpriced(settings)?;
    }
    refuse::past_bounds(settings)?;
    claim_dir(dir, settings)?;
    // Named before the directory is marked: a marked one without a name is an older build's.
    let run = claim_run_name(dir)?;
    dir.mark_fleet()?;
    let t0 = Instant::now();
    // Counted here and made again, a batch at a time, as they are published.
    let (items, _) = count_items(settings)?;
    let generate_s = t0.elapsed().as_secs_f64();
    let units = settings.plan.units(items);
    // The run's record: every round taken from Redis is appended here, and
    // what it holds is what a restore puts back if Redis loses the run.
    let log = JsonlStore::open(&dir.results())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let started = Instant::now();
    let metrics = Arc::new(autoeval_telemetry::Metrics::new("coordinator"));
    let (ending, recorded, work) = runtime.block_on(async {
        let health = autoeval_service::Health::with_metrics(metrics.clone());
        if let Some(addr) = &fleet.health_addr {
            let bound = health.serve(addr).await?;
            if display != Display::Quiet {
                eprintln!("fleet: health at http://{bound}");
            }
        }
        let store = RunStore::new(autoeval_redis_store::connect(&fleet.redis).await?, &run);
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
        let broker = Broker::connect(&fleet.amqp, "autoeval-coordinator")
            .await?;
        if mode == Mode::RedoFailed {
            forget_failures(&store, &broker, arrivals.log(), display).await?;
            // A backend that halted in a worker is built afresh for the redo,
            // whether or not the halt set tasks aside.
            store.start_backends_afresh().await?;
        }
        // With resume: the tasks workers set aside while the run was paused.
        let mut parked = None;
        // Redoing a run a backend halted lifts the halt: the tasks it set
        // aside are pending, and published with the rest.
        let lift_halt = mode == Mode::RedoFailed && store.budget().await?.halted.is_some();
        if budget.given() || mode == Mode::Resume || lift_halt {
            match store
                .set_caps(
                    budget.usd(),
                    budget.tokens(),
                    mode == Mode::Resume || lift_halt,
                )
                .await?
            {
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
                CapsSet::Running => {}
                CapsSet::Resumed(tasks) => parked = Some(tasks),
            }
        }
        let meta = store.meta().await?;
        let publish = match mode {
            Mode::Run => !meta.contains_key(meta::PUBLISHED),
            Mode::RedoFailed => true,
            // What was set aside, and nothing else: the rest is on its way.
            Mode::Resume => parked.as_ref().is_some_and(|p| !p.is_empty()),
        };
        if publish {
            let queues: Vec<(String, String)> = settings
                .plan
                .models
                .iter()
                .map(|m| (m.clone(), translate_queue(m)))
                .collect();
            wait_for_workers(
                (&broker, &store),
                &queues,
                (
                    fleet.worker_wait_s,
                    &format!("`autoeval rerun {} --failed --fleet`", dir.0.display()),
                ),
                display,
            )
            .await?;
            let only = pending::Only {
                rounds: match (mode, &parked) {
                    (Mode::Resume, Some(parked)) => Some(parked.iter().cloned().collect()),
                    _ => None,
                },
                ..pending::Only::default()
            };
            let published =
                pending::publish_pending(&broker, &store, settings, arrivals.log(), &only).await?;
            if display != Display::Quiet {
                eprintln!(
                    "fleet: run {run}: {units} units; {} finished, {} published",
                    published.finished, published.tasks
                );
            }
            // Confirmed: what was set aside may leave its set now.
            if let Some(parked) = &parked {
                store.unpark(parked).await?;
            }
            store
                .set_meta(&[(meta::PUBLISHED, unix_now().to_string())])
                .await?;
        } else if display != Display::Quiet {
            eprintln!("fleet: run {run}: {units} units, published before; following");
        }
        health.set_ready(true);
        let progress = Progress::new(units, display);
        let mut watch = follow::Watch {
            progress: &progress,
            arrivals,
            gauges: gauges::RunGauges::new(&metrics, &run, units),
        };
        let ending = tokio::select! {
            ending = follow::follow(&store, broker, fleet, units, &mut watch, &mut reconciler) => ending,
            _ = tokio::signal::ctrl_c() => Ok(Ending::Detached),
        };
        progress.finish();
        let mut arrivals = watch.arrivals;
        arrivals.take(&store).await?;
        let work = follow::settled_work(&store, &work_before, recorded_before).await;
        let work = Work {
            translated: work.translated.saturating_sub(work_before.translated),
            proved: work.proved.saturating_sub(work_before.proved),
            translate_s: (work.translate_s - work_before.translate_s).max(0.0),
            verify_s: (work.verify_s - work_before.verify_s).max(0.0),
            record_s: (work.record_s - work_before.record_s).max(0.0),
        };
        let ending = ending?;
        if let Ending::Complete = ending {
            // Every round is in the directory: Redis may let the run go.
            store.finish(fleet.keep_s).await?;
        }
        anyhow::Ok((ending, arrivals.len(), work))
    })?;
    if let Ending::Detached = ending {
        return Err(Detached {
            run,
            dir: dir.0.display().to_string(),
        }
        .into());
    }
    if let Ending::Halted { why } = &ending {
        // What was recorded is written; the rest waits for the cause to be fixed.
        return Err(autoeval_run_dir::halted_error(why, dir, true).into());
    }
    if let Ending::Paused { why, done, more } = ending {
        // What was recorded is written; the report waits for the whole run.
        return Err(Paused {
            run,
            why,
            done,
            units,
            dir: dir.0.display().to_string(),
            more,
            fleet: true,
        }
        .into());
    }
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
    if fleet.linger_s > 0 && fleet.health_addr.is_some() {
        // The health server goes on serving the final metrics meanwhile.
        runtime.block_on(async {
            let mut stop = autoeval_service::shutdown_signal();
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(fleet.linger_s)) => {}
                _ = stop.changed() => {}
            }
        });
    }
    if let Ending::Dead(n) = ending {
        bail!(
            "{n} units have tasks in the dead-letter queue; see why with `autoeval status {}`, and once the cause is fixed run `autoeval rerun {} --failed --fleet`",
            dir.0.display(),
            dir.0.display()
        );
    }
    finished
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Registers the run, refusing a name that holds another plan.
async fn register(store: &RunStore, settings: &Resolved, units: usize, items: usize) -> Result<()> {
    let plan = serde_json::to_string(&settings.plan)?;
    let meta = store.meta().await?;
    if meta.get(meta::PLAN).is_some_and(|p| *p != plan) {
        bail!(
            "Redis holds a run named {} with other settings; use another --out",
            store.run()
        );
    }
    let stages = serde_json::to_string(&stage_settings(settings)?)?;
    let config = toml::to_string(&settings.to_config()).context("cannot encode the settings")?;
    let mut fields = vec![
        (meta::PLAN, plan),
        (meta::STAGES, stages),
        (meta::CONFIG, config),
        (meta::UNITS, units.to_string()),
        (meta::ITEMS, items.to_string()),
    ];
    if !meta.contains_key(meta::CREATED) {
        fields.push((meta::CREATED, unix_now().to_string()));
    }
    store.set_meta(&fields).await?;
    Ok(store.start_arrivals().await?)
}

/// Waits until each `(model, queue)` has a consumer, for at most `wait_s` seconds.
async fn wait_for_workers(
    (broker, store): (&Broker, &RunStore),
    queues: &[(String, String)],
    (wait_s, then): (u64, &str),
    display: Display,
) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(wait_s);
    for (model, queue) in queues {
        let mut told = false;
        loop {
            let served = broker
                .depth(queue)
                .await?
                .is_some_and(|(_, consumers)| consumers > 0);
            if served {
                break;
            }
            // What is served instead: a misspelt spec shows beside the right one.
            let others = match store.served_models().await {
                Ok(m) if m.is_empty() => "no worker serves any model now".to_string(),
                Ok(m) => format!("workers serve: {}", m.join(", ")),
                Err(_) => String::new(),
            };
            if Instant::now() >= deadline {
                eprintln!(
                    "fleet: no worker serves {model} ({others}); its tasks go to the dead-letter queue until one does: start `autoeval-worker --model '{model}'`, then {then}"
                );
                break;
            }
            if !told && display != Display::Quiet {
                eprintln!("fleet: waiting for a worker serving {model} ({others})");
                told = true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    Ok(())
}

/// Publishes translate tasks in bundles of one model and shard.
async fn publish_tasks(broker: &Broker, run: &str, tasks: Vec<TranslateTask>) -> Result<()> {
    let messages = bundle_messages(run, MessageKind::Translate, tasks, |t| {
        (translate_key(&t.model), t.round_key())
    })?;
    publish(broker, messages.into_iter().map(Ok)).await
}

/// Publishes `(routing key, body, meta)` messages with many confirms in
/// flight at once, a new publish starting as soon as any earlier one is confirmed.
async fn publish(
    broker: &Broker,
    messages: impl Iterator<Item = Result<(String, Vec<u8>, Meta)>>,
) -> Result<()> {
    use futures_util::StreamExt;
    const IN_FLIGHT: usize = 256;
    let mut sends = futures_util::stream::iter(messages.map(|m| async move {
        let (key, bytes, meta) = m?;
        broker
            .publish(&key, &bytes, &meta)
            .await
            .map_err(anyhow::Error::from)
    }))
    .buffer_unordered(IN_FLIGHT);
    while let Some(sent) = sends.next().await {
        sent?;
    }
    Ok(())
}

/// Drops the rounds that ended in a retryable failure, from Redis and from
/// the run directory, and takes the run's dead letters out, so publishing
/// the pending tasks redoes exactly those units.
async fn forget_failures(
    store: &RunStore,
    broker: &Broker,
    log: &JsonlStore,
    display: Display,
) -> Result<()> {
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
        eprintln!(
            "rerun: {} rounds ended in an API failure, a verifier error or a timeout, and {} dead letters held {} units; publishing their units again",
            failed.len(),
            dead.len(),
            dead.iter().map(|d| d.units.len()).sum::<usize>()
        );
    }
    Ok(())
}

/// Shared by `status`: a handle on the fleet's broker and a run's store.
pub async fn open(fleet: &FleetArgs, run: &str) -> Result<(Arc<Broker>, RunStore)> {
    let store = RunStore::new(autoeval_redis_store::connect(&fleet.redis).await?, run);
    let broker = Broker::connect(&fleet.amqp, "autoeval-status").await?;
    Ok((Arc::new(broker), store))
}

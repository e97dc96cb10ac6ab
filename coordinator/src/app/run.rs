//! The one-machine run and its end, shared by `run`, `rerun` and `resume`:
//! the stages over the in-process engine, and the summary and report written
//! once every unit has its outcome (here or on a fleet).

use crate::app::provers::prover_pool;
use anyhow::{bail, Context, Result};
use autoeval_engine::budget::{Capped, Caps, Spent};
use autoeval_engine::local::{run_local, Concurrency, StageTimes};
use autoeval_engine::Translate;
use autoeval_llm_client::{DiskCache, ResponseCache};
use autoeval_pipeline::{initial_tasks, RecordedUnits};
use autoeval_progress::{Display, Progress};
use autoeval_run_dir::{claim_dir, JsonlStore, RunDir};
use autoeval_run_dir::{count_items, item_batches, stage_settings};
use autoeval_run_settings::Resolved;
use autoeval_translate::{Local, StageBackends, Translator};
use autoeval_verify_stage::VerifyStage;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Exit status of a run that finished with rounds that tell nothing about
/// the model (API failures, verifier errors): they are worth redoing.
pub const EXIT_INCOMPLETE: u8 = 3;

/// A run that finished, but with rounds to redo.
#[derive(Debug)]
pub struct Incomplete {
    /// Rounds that ended in an API failure or a verifier error.
    pub failed: usize,
    /// The run directory.
    pub dir: PathBuf,
    /// Whether the run runs on a fleet (redone through it).
    pub fleet: bool,
    /// The commonest reasons they failed, with how many rounds each.
    pub causes: Vec<(String, usize)>,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rounds ended in an API failure or a verifier error and are not counted{}; once the cause is fixed, redo them with `autoeval rerun {} --failed{}`",
            self.failed,
            if self.causes.is_empty() {
                String::new()
            } else {
                let each: Vec<String> = self
                    .causes
                    .iter()
                    .map(|(why, n)| format!("{why} ({n})"))
                    .collect();
                format!(" (most often: {})", each.join("; "))
            },
            self.dir.display(),
            if self.fleet { " --fleet" } else { "" }
        )
    }
}

impl std::error::Error for Incomplete {}

/// The stages for these settings: backends and prompts, and the verifier.
pub(crate) fn build_stages(
    dir: &RunDir,
    s: &Resolved,
    waits: Arc<autoeval_models::Waits>,
    journal: Arc<autoeval_run_dir::BatchFile>,
) -> Result<(Translator, VerifyStage)> {
    let cache_dir = s.files.cache.clone().unwrap_or_else(|| dir.0.join("cache"));
    let cache: Arc<dyn ResponseCache> = Arc::new(DiskCache::new(&cache_dir)?);
    let local = Local {
        concurrency: None,
        cache: Some(cache),
        secrets_file: s.files.keys.secrets.clone(),
        // Told of each rate-limit wait, which the progress line names.
        observer: Some(waits),
        // One schedule per model for the whole run: its limits and any 429 are the run's.
        gate: Some(Arc::new(autoeval_llm_client::LocalGate::default())),
        journal: Some(journal),
        // A one-machine run keeps no budget; its batches' costs are in its journal.
        batch_spend: None,
        base_urls: autoeval_llm_client::BaseUrls::from_env(),
        // Runs ask only translation prompts; the A4 judge is `autoeval judge`'s.
        judge: None,
    };
    let settings = stage_settings(s)?;
    let translator = settings.translator(&s.plan.models, &local)?;
    let verifier =
        autoeval_verify_stage::verify_stage(&settings, Arc::new(prover_pool(s.checks.jobs())?))?;
    Ok((translator, verifier))
}

/// The run's journal of provider batches, opened.
pub(crate) fn open_journal(dir: &RunDir) -> Result<Arc<autoeval_run_dir::BatchFile>> {
    Ok(Arc::new(
        autoeval_run_dir::BatchFile::open(&dir.batches())
            .with_context(|| format!("cannot open {}", dir.batches().display()))?,
    ))
}

/// Round trips in flight: as asked, or more where batched calls need them.
pub(crate) fn translate_slots(settings: &Resolved, translator: &Translator) -> usize {
    // Batched calls wait hours for their batch, not seconds for a reply:
    // enough round trips must be in flight to fill the batches.
    settings.calls.concurrency.max(batch_slots(translator))
}

/// Round trips in flight that fill every batched model's batches twice over; 0 when none is batched.
fn batch_slots(translator: &Translator) -> usize {
    translator
        .backends
        .values()
        .filter_map(|b| b.batch_settings())
        .map(|s| 2 * s.size)
        .sum()
}

/// `1 model`, `2 models`.
fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Peak resident memory of this process in MiB, where the system tells.
fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// `settings` with where this machine's environment sends each model's
/// requests, when it moves a provider's address: recorded in
/// `settings.json` and named in the report.
pub(crate) fn with_this_machines_addresses(settings: &Resolved) -> Resolved {
    let moved = autoeval_llm_client::BaseUrls::from_env();
    settings.clone().with_addresses(|spec| {
        moved
            .of(spec)
            .filter(|a| Some(a.as_str()) != spec.provider().default_base_url())
    })
}

/// Makes every chain of the run in `dir` whole before it goes on: a unit
/// with a round missing before a later one recorded (lost, or removed by
/// hand) has its later rounds forgotten, and goes on from the missing round.
pub(crate) fn mend_chains(dir: &RunDir, display: Display) -> Result<()> {
    let chains = autoeval_run_dir::mend_chains_at(&dir.results())?;
    if !chains.is_empty() && display != Display::Quiet {
        eprintln!(
            "run: {} unit{} had a round missing before a later one ({}); redoing {} from that round",
            chains.len(),
            if chains.len() == 1 { "" } else { "s" },
            autoeval_run_dir::name_chains(&chains),
            if chains.len() == 1 { "it" } else { "them" }
        );
    }
    Ok(())
}

/// Runs (or resumes) the run in `dir` to the end and writes its summary and report.
pub fn execute(dir: &RunDir, settings: &Resolved, display: Display, caps: Caps) -> Result<()> {
    let settings = &with_this_machines_addresses(settings);
    claim_dir(dir, settings)?;
    dir.keep_caps(caps)?;
    let t0 = Instant::now();
    // Counted first and made again as the run goes: the run holds a few
    // batches of items at a time, never all of them.
    let (items, short) = count_items(settings)?;
    let generate_s = t0.elapsed().as_secs_f64();
    tracing::info!(items, shortfalls = short.len(), "generated");
    mend_chains(dir, display)?;
    let mut recorded = RecordedUnits::new(settings.plan.rounds);
    // What the records paid is what a cap was spent on before.
    let mut spent = Spent::default();
    // Each round is done once: the run goes on from what the file holds.
    let store = Arc::new(JsonlStore::open_for_new_rounds(&dir.results(), |r| {
        spent = spent.plus(Spent::recorded(&r));
        recorded.add(&r)
    })?);
    let units = settings.plan.units(items);
    let finished = recorded.finished();
    let to_do = units.saturating_sub(finished);
    if display != Display::Quiet {
        eprintln!(
            "run: {items} items, {units} units ({} × {} × {}); {finished} already done, {to_do} to do; results in {}",
            counted(settings.plan.models.len(), "model"),
            counted(settings.plan.prompts.len(), "prompt style"),
            counted(settings.plan.repeats as usize, "repeat"),
            dir.results().display()
        );
    }
    let plan = settings.plan.clone();
    let tasks = item_batches(settings)?
        .map_while(|batch| {
            batch
                .map_err(|e| tracing::error!(error = %e, "cannot make the items again; the run stops short"))
                .ok()
        })
        .flat_map(move |batch| initial_tasks(&plan, &batch.items))
        .filter_map(move |task| recorded.next(task));
    let waits = Arc::new(autoeval_models::Waits::default());
    let journal = open_journal(dir)?;
    let (translator, verifier) = build_stages(dir, settings, waits.clone(), journal.clone())?;
    let translate_slots = translate_slots(settings, &translator);
    let translator = Arc::new(Capped::new(Arc::new(translator), caps, spent));
    // Kept to ask, once the run ends, whether it paused or halted.
    let stage = translator.clone();
    let progress = Arc::new(Progress::new(to_do, display));
    progress.name_rate_waits(waits);
    {
        let journal = journal.clone();
        progress.follow_batches(move || journal.counts());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let times = runtime.block_on(run_local(
        &dir.0.display().to_string(),
        tasks,
        translator,
        Arc::new(verifier),
        store.clone(),
        progress.clone(),
        Concurrency {
            translate: translate_slots,
            verify: settings.checks.jobs(),
        },
    ));
    progress.finish();
    let times = times?;
    if let Some(why) = stage.paused() {
        let done = recorded_units(dir, settings.plan.rounds)?;
        // A cap reached by the last unit leaves nothing to resume.
        if (done as usize) < units {
            return Err(one_machine_pause(dir, why, caps, stage.spent(), done, units).into());
        }
    }
    if let Some(why) = stage.halted() {
        return Err(autoeval_run_dir::halted_error(&why, dir, false).into());
    }
    drop(store);
    finish(dir, settings, items, units, generate_s, &times, display)
}

/// Writes the summary and report of a run whose results are all in
/// `results.jsonl`, prints the terminal summary, and says whether rounds are
/// left to redo.
pub fn finish(
    dir: &RunDir,
    settings: &Resolved,
    items: usize,
    units: usize,
    generate_s: f64,
    times: &StageTimes,
    display: Display,
) -> Result<()> {
    let digested = crate::app::report::digest(dir, 4)?;
    let summary = &digested.summary;
    let run_info = serde_json::json!({
        "schema_version": autoeval_proto::SCHEMA_VERSION,
        "settings": settings,
        "items": items,
        "units": units,
        "this_session": {
            "generate_s": generate_s,
            "stages": times,
            "rounds_per_s": times.records as f64 / times.wall_s.max(1e-9),
            "peak_memory_mib": peak_memory_mib(),
        },
        "summary": summary,
    });
    std::fs::write(dir.summary(), serde_json::to_string_pretty(&run_info)?)
        .with_context(|| format!("cannot write {}", dir.summary().display()))?;
    let report = crate::app::report::write_with(dir, &digested, Vec::new(), 4)?;
    if display != Display::Quiet {
        eprintln!(
            "run: {} rounds recorded in {:.1} s ({}/s; busy s: generate {generate_s:.2}, translate {:.2}, verify {:.2}, record {:.2}); peak memory {}",
            times.records,
            times.wall_s,
            autoeval_progress::rate(times.records as f64 / times.wall_s.max(1e-9)),
            times.translate_s,
            times.verify_s,
            times.record_s,
            peak_memory_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB")),
        );
        print!("{}", autoeval_report::terminal_summary(summary));
    }
    println!("report: {}", report.display());
    if settings.written.parquet {
        let path = dir.0.join(crate::app::parquet::FILE);
        let rows = crate::app::parquet::write_file(dir, &path)?;
        if display != Display::Quiet {
            eprintln!("run: {rows} rows written as Parquet to {}", path.display());
        }
    }
    if settings.written.compress {
        if let Some((before, after)) = autoeval_run_dir::compress(&dir.results())? {
            if display != Display::Quiet {
                eprintln!(
                    "run: results compressed into {} ({:.1} MB, from {:.1} MB)",
                    autoeval_run_dir::compressed(&dir.results()).display(),
                    after as f64 / 1e6,
                    before as f64 / 1e6
                );
            }
        }
    }
    if summary.broken_chains > 0 {
        let chains = autoeval_run_dir::broken_chains(&dir.results())?;
        bail!(
            "{} unit{} of {} have a round missing before a later one recorded ({}): the run is not complete; `autoeval resume {}{}` redoes them from the missing round",
            chains.len(),
            if chains.len() == 1 { "" } else { "s" },
            dir.0.display(),
            autoeval_run_dir::name_chains(&chains),
            dir.0.display(),
            if dir.is_fleet() { " --fleet" } else { "" }
        );
    }
    // Said last, whatever the display: scores the cap decided are no scores.
    for advice in autoeval_report::truncation_advice(summary) {
        eprintln!("{advice}");
    }
    if digested.failed > 0 {
        return Err(Incomplete {
            failed: digested.failed,
            dir: dir.0.clone(),
            fleet: dir.is_fleet(),
            causes: digested.commonest_causes(),
        }
        .into());
    }
    Ok(())
}

/// Units of the run in `dir` recorded to their end.
fn recorded_units(dir: &RunDir, rounds: u32) -> Result<u64> {
    let mut recorded = RecordedUnits::new(rounds);
    autoeval_run_dir::for_each_record(&dir.results(), |r| recorded.add(&r))?;
    Ok(recorded.finished() as u64)
}

/// How a one-machine run stops at its cap: paused, with the caps that
/// would let it go on.
pub(crate) fn one_machine_pause(
    dir: &RunDir,
    why: String,
    caps: Caps,
    spent: Spent,
    done: u64,
    units: usize,
) -> autoeval_fleet_coordinator::Paused {
    let budget = autoeval_redis_store::Budget {
        cap_usd: caps.usd,
        cap_tokens: caps.tokens,
        spent_usd: spent.usd,
        spent_tokens: spent.tokens,
        ..autoeval_redis_store::Budget::default()
    };
    autoeval_fleet_coordinator::Paused {
        run: dir.0.display().to_string(),
        why,
        done,
        units,
        dir: dir.0.display().to_string(),
        more: autoeval_fleet_coordinator::raised_caps(&budget, done, units),
        fleet: false,
    }
}

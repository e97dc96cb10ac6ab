//! A one-machine run `--until decided`: the plan's items drawn wave by
//! wave (autoeval-sequential decides which), each wave run to its end on
//! the in-process engine, its outcomes read back from the records, until
//! everything asked is decided or the plan is spent. A resumed run replays
//! the same waves from the seed and the records, so it decides the same
//! and pays for no unit twice.

use crate::app::run::{build_stages, finish, one_machine_pause, open_journal, translate_slots};
use anyhow::{Context, Result};
use autoeval_engine::budget::{Capped, Caps, Spent};
use autoeval_engine::local::{run_local, Concurrency, StageTimes};
use autoeval_engine::Translate;
use autoeval_pipeline::{draw_order, initial_tasks, RecordedUnits};
use autoeval_progress::{Display, Progress};
use autoeval_run_dir::{claim_dir, for_each_record, item_batches, JsonlStore, RunDir};
use autoeval_run_settings::Resolved;
use autoeval_sequential::records::ItemOutcomes;
use autoeval_sequential::{Decisions, Design, Procedure, Wave};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// What the records of the run hold so far, read back after each wave.
struct Recorded {
    units: RecordedUnits,
    outcomes: ItemOutcomes,
    spent: Spent,
}

fn read_back(dir: &RunDir, rounds: u32) -> Result<Recorded> {
    let mut read = Recorded {
        units: RecordedUnits::new(rounds),
        outcomes: ItemOutcomes::default(),
        spent: Spent::default(),
    };
    if dir.results().exists() {
        for_each_record(&dir.results(), |r| {
            read.spent = read.spent.plus(Spent::recorded(&r));
            read.outcomes.add(&r);
            read.units.add(&r);
        })?;
    }
    Ok(read)
}

/// Runs (or resumes) the run in `dir` until `design`'s questions are decided.
pub fn execute(
    dir: &RunDir,
    settings: &Resolved,
    display: Display,
    caps: Caps,
    design: Design,
) -> Result<()> {
    claim_dir(dir, settings)?;
    dir.keep_caps(caps)?;
    let t0 = Instant::now();
    let mut items = Vec::new();
    for batch in item_batches(settings)? {
        items.extend(batch?.items);
    }
    let generate_s = t0.elapsed().as_secs_f64();
    let plan = &settings.plan;
    let by_id: HashMap<&str, &autoeval_generate::Item> =
        items.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut procedure: Procedure =
        Procedure::new(design, plan.models.len(), draw_order(plan, &items));
    let units_per_answer = plan.prompts.len() * plan.repeats as usize;
    if display != Display::Quiet {
        eprintln!(
            "run: until decided ({}); {} items, {} units in the plan; results in {}",
            procedure.design_line(),
            items.len(),
            plan.units(items.len()),
            dir.results().display()
        );
    }
    // Opened once so that the run directory is checked and claimed as a
    // plain run's is; each wave's records are read back from the file.
    drop(JsonlStore::open_for_new_rounds(&dir.results(), |_| {})?);
    let waits = Arc::new(autoeval_models::Waits::default());
    let (translator, verifier) = build_stages(dir, settings, waits.clone(), open_journal(dir)?)?;
    let translate_slots = translate_slots(settings, &translator);
    let before = read_back(dir, plan.rounds)?;
    let translator = Arc::new(Capped::new(Arc::new(translator), caps, before.spent));
    let verifier = Arc::new(verifier);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut times = StageTimes::default();
    let mut recorded = before;
    while let Some(wave) = procedure.next_wave() {
        let tasks = wave_tasks(settings, &wave, &by_id, &recorded.units);
        if !tasks.is_empty() {
            if display != Display::Quiet {
                eprintln!(
                    "{}",
                    procedure.wave_line(&wave, units_per_answer, tasks.len())
                );
            }
            let progress = Arc::new(Progress::new(tasks.len(), display));
            progress.name_rate_waits(waits.clone());
            let wave_times = runtime.block_on(run_local(
                &dir.0.display().to_string(),
                tasks,
                translator.clone(),
                verifier.clone(),
                Arc::new(JsonlStore::open_for_new_rounds(&dir.results(), |_| {})?),
                progress.clone(),
                Concurrency {
                    translate: translate_slots,
                    verify: settings.checks.verifiers(),
                },
            ));
            progress.finish();
            times = times.plus(&wave_times?);
            recorded = read_back(dir, plan.rounds)?;
        }
        if let Some(why) = translator.paused() {
            let done = recorded.units.finished() as u64;
            let units = procedure.answers() * units_per_answer;
            return Err(one_machine_pause(dir, why, caps, translator.spent(), done, units).into());
        }
        if let Some(why) = translator.halted() {
            return Err(autoeval_run_dir::halted_error(&why, dir, false).into());
        }
        let models = &plan.models;
        procedure.observe(&wave, |m, item| {
            recorded
                .outcomes
                .outcome(models[m].as_str(), item, plan.rounds)
                .unwrap_or_default()
        });
    }
    let decisions = Decisions::of(&procedure, &names(settings), units_per_answer);
    std::fs::write(dir.decided(), serde_json::to_string_pretty(&decisions)?)
        .with_context(|| format!("cannot write {}", dir.decided().display()))?;
    // The summary counts the items drawn and the units they made, not the plan's.
    let drawn: usize = (0..plan.datasets.len())
        .map(|d| procedure.items_drawn(d).0)
        .sum();
    finish(
        dir,
        settings,
        drawn,
        decisions.units,
        generate_s,
        &times,
        display,
    )?;
    if display != Display::Quiet {
        print!("{}", decisions.terminal());
    }
    Ok(())
}

/// The models' and datasets' names, for what is decided.
fn names(settings: &Resolved) -> autoeval_sequential::Names {
    autoeval_sequential::Names {
        models: settings.plan.models.iter().map(|m| m.to_string()).collect(),
        datasets: settings
            .plan
            .datasets
            .iter()
            .map(|d| d.name().to_string())
            .collect(),
    }
}

/// Round-one tasks of the wave's units not recorded to their end yet.
fn wave_tasks(
    settings: &Resolved,
    wave: &Wave,
    by_id: &HashMap<&str, &autoeval_generate::Item>,
    recorded: &RecordedUnits,
) -> Vec<autoeval_proto::TranslateTask> {
    let mut tasks = Vec::new();
    for part in &wave.parts {
        let mut plan = settings.plan.clone();
        plan.models = part
            .models
            .iter()
            .map(|&m| settings.plan.models[m].clone())
            .collect();
        let items: Vec<autoeval_generate::Item> = part
            .items
            .iter()
            .filter_map(|(_, id)| by_id.get(id.as_str()).map(|i| (*i).clone()))
            .collect();
        tasks.extend(
            initial_tasks(&plan, &items)
                .into_iter()
                .filter_map(|t| recorded.next(t)),
        );
    }
    tasks
}

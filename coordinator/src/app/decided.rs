//! A run `--until decided`: the plan's items drawn wave by wave
//! (autoeval-sequential decides which), each wave run to its end (on this
//! machine by the in-process engine, on the fleet by the coordinator,
//! which asks [`Sequence`] for each wave), its outcomes read back from the
//! records, until everything asked is decided or the plan is spent. A
//! resumed run replays the same waves from the seed and the records, so it
//! decides the same and pays for no unit twice.

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
use autoeval_sequential::spend::SpendByModel;
use autoeval_sequential::{Decisions, Design, Procedure, Wave};
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What the records of the run hold so far, read back after each wave.
struct Recorded {
    units: RecordedUnits,
    outcomes: ItemOutcomes,
    spent: Spent,
    /// What each model paid, for what a decided run says it used.
    by_model: SpendByModel,
}

fn read_back(results: &Path, rounds: u32) -> Result<Recorded> {
    let mut read = Recorded {
        units: RecordedUnits::new(rounds),
        outcomes: ItemOutcomes::default(),
        spent: Spent::default(),
        by_model: SpendByModel::default(),
    };
    if results.exists() {
        for_each_record(results, |r| {
            read.spent = read.spent.plus(Spent::recorded(&r));
            read.by_model.add(&r);
            read.outcomes.add(&r);
            read.units.add(&r);
        })?;
    }
    Ok(read)
}

/// The sequential procedure over a run's items, the same on one machine
/// and on the fleet: which units each wave adds, what the records say of
/// them once run, and what was decided.
pub struct Sequence<'a> {
    dir: &'a RunDir,
    settings: &'a Resolved,
    display: Display,
    items: HashMap<String, autoeval_generate::Item>,
    procedure: Procedure,
    /// The waves handed out and not yet observed, oldest first (each is
    /// observed once its records are read).
    in_flight: VecDeque<Wave>,
    /// Seconds spent generating the items.
    generate_s: f64,
}

impl<'a> Sequence<'a> {
    /// The procedure `design` asks for over the items of `settings`' plan,
    /// its start told unless `display` is quiet.
    pub fn new(
        dir: &'a RunDir,
        settings: &'a Resolved,
        display: Display,
        design: Design,
    ) -> Result<Self> {
        let t0 = Instant::now();
        let mut items = Vec::new();
        for batch in item_batches(settings)? {
            items.extend(batch?.items);
        }
        let generate_s = t0.elapsed().as_secs_f64();
        let plan = &settings.plan;
        let design = Design {
            min_wave: least_wave(settings),
            ..design
        };
        let procedure = Procedure::new(design, plan.models.len(), draw_order(plan, &items));
        if display != Display::Quiet {
            eprintln!(
                "run: until decided ({}); {} items, {} units in the plan; results in {}",
                procedure.design_line(),
                items.len(),
                plan.units(items.len()),
                dir.results().display()
            );
        }
        Ok(Sequence {
            dir,
            settings,
            display,
            items: items.into_iter().map(|i| (i.id.clone(), i)).collect(),
            procedure,
            in_flight: VecDeque::new(),
            generate_s,
        })
    }

    /// Units each item answer makes: its prompt styles and repeats.
    fn units_per_answer(&self) -> usize {
        self.settings.plan.prompts.len() * self.settings.plan.repeats as usize
    }

    /// Takes in the outcomes of the oldest wave in flight, from the records.
    fn observe_oldest(&mut self, recorded: &Recorded) {
        let Some(wave) = self.in_flight.pop_front() else {
            return;
        };
        let plan = &self.settings.plan;
        self.procedure.observe(&wave, |m, item| {
            recorded
                .outcomes
                .outcome(plan.models[m].as_str(), item, plan.rounds)
                .unwrap_or_default()
        });
    }

    /// The waves to run next (as many as the procedure lets run ahead of
    /// those observed), each with the round-one tasks of its every unit;
    /// none once everything asked is decided or the plan is spent.
    fn next_waves(&mut self) -> Vec<(Wave, Vec<autoeval_proto::TranslateTask>)> {
        let waves = self.procedure.hand_out();
        self.in_flight.extend(waves.iter().cloned());
        waves
            .into_iter()
            .map(|wave| {
                let tasks = wave_tasks(self.settings, &wave, &self.items);
                (wave, tasks)
            })
            .collect()
    }

    /// Tells the wave and the tasks it still needs, unless quiet.
    fn tell(&self, wave: &Wave, tasks: usize) {
        if self.display != Display::Quiet {
            eprintln!(
                "{}",
                self.procedure
                    .wave_line(wave, self.units_per_answer(), tasks)
            );
        }
    }

    /// What was decided, with what it paid beside the plan, written to
    /// the run's `decided.json`.
    fn decide(&self, recorded: &Recorded) -> Result<Decisions> {
        let mut decisions = self.decisions();
        let plan_units = decisions.plan_units / self.settings.plan.models.len().max(1);
        decisions.spend = Some(recorded.by_model.beside_plan(plan_units));
        std::fs::write(
            self.dir.decided(),
            serde_json::to_string_pretty(&decisions)?,
        )
        .with_context(|| format!("cannot write {}", self.dir.decided().display()))?;
        Ok(decisions)
    }

    /// What the procedure decided.
    fn decisions(&self) -> Decisions {
        Decisions::of(
            &self.procedure,
            &names(self.settings),
            self.units_per_answer(),
        )
    }

    /// Prints what was decided (as `decided.json` holds it), unless quiet.
    pub fn tell_decided(&self) -> Result<()> {
        if self.display != Display::Quiet {
            let text = std::fs::read_to_string(self.dir.decided())
                .with_context(|| format!("cannot read {}", self.dir.decided().display()))?;
            let decisions: Decisions = serde_json::from_str(&text)?;
            print!("{}", decisions.terminal());
        }
        Ok(())
    }
}

impl autoeval_fleet_coordinator::Waves for Sequence<'_> {
    fn hand_out(&mut self, results: &Path) -> Result<Vec<Vec<autoeval_proto::TranslateTask>>> {
        let waves = self.next_waves();
        if waves.is_empty() {
            return Ok(Vec::new());
        }
        let recorded = read_back(results, self.settings.plan.rounds)?;
        Ok(waves
            .into_iter()
            .map(|(wave, tasks)| {
                let left = tasks
                    .iter()
                    .filter(|t| recorded.units.next((*t).clone()).is_some())
                    .count();
                self.tell(&wave, left);
                tasks
            })
            .collect())
    }

    fn observe(&mut self, results: &Path) -> Result<()> {
        let recorded = read_back(results, self.settings.plan.rounds)?;
        self.observe_oldest(&recorded);
        Ok(())
    }

    fn finish(&mut self, results: &Path) -> Result<()> {
        self.decide(&read_back(results, self.settings.plan.rounds)?)?;
        Ok(())
    }

    fn items_drawn(&self) -> usize {
        (0..self.settings.plan.datasets.len())
            .map(|d| self.procedure.items_drawn(d).0)
            .sum()
    }
}

/// Runs (or resumes) the run in `dir` until `design`'s questions are decided.
pub fn execute(
    dir: &RunDir,
    settings: &Resolved,
    display: Display,
    caps: Caps,
    design: Design,
) -> Result<()> {
    use autoeval_fleet_coordinator::Waves;
    let settings = &crate::app::run::with_this_machines_addresses(settings);
    claim_dir(dir, settings)?;
    dir.keep_caps(caps)?;
    crate::app::run::mend_chains(dir, display)?;
    let mut sequence = Sequence::new(dir, settings, display, design)?;
    let plan = &settings.plan;
    // Opened once so that the run directory is checked and claimed as a
    // plain run's is; each wave's records are read back from the file.
    drop(JsonlStore::open_for_new_rounds(&dir.results(), |_| {})?);
    let waits = Arc::new(autoeval_models::Waits::default());
    let (translator, verifier) = build_stages(dir, settings, waits.clone(), open_journal(dir)?)?;
    let translate_slots = translate_slots(settings, &translator);
    let before = read_back(&dir.results(), plan.rounds)?;
    let translator = Arc::new(Capped::new(Arc::new(translator), caps, before.spent));
    let verifier = Arc::new(verifier);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut times = StageTimes::default();
    let mut recorded = before;
    // One machine draws the same waves as the fleet, run one after another.
    let mut waves = VecDeque::new();
    loop {
        waves.extend(sequence.next_waves());
        let Some((wave, tasks)) = waves.pop_front() else {
            break;
        };
        let tasks: Vec<_> = tasks
            .into_iter()
            .filter_map(|t| recorded.units.next(t))
            .collect();
        if !tasks.is_empty() {
            sequence.tell(&wave, tasks.len());
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
                    verify: settings.checks.jobs(),
                },
            ));
            progress.finish();
            times = times.plus(&wave_times?);
            recorded = read_back(&dir.results(), plan.rounds)?;
        }
        if let Some(why) = translator.paused() {
            let done = recorded.units.finished() as u64;
            let units = sequence.procedure.answers() * sequence.units_per_answer();
            return Err(one_machine_pause(dir, why, caps, translator.spent(), done, units).into());
        }
        if let Some(why) = translator.halted() {
            return Err(autoeval_run_dir::halted_error(&why, dir, false).into());
        }
        sequence.observe_oldest(&recorded);
    }
    let decisions = sequence.decide(&recorded)?;
    // The summary counts the items drawn and the units they made, not the plan's.
    finish(
        dir,
        settings,
        sequence.items_drawn(),
        decisions.units,
        sequence.generate_s,
        &times,
        display,
    )?;
    sequence.tell_decided()
}

/// The fewest items a wave draws: enough units to keep the run's
/// concurrency busy (a setting, so one machine and the fleet draw the
/// same waves).
fn least_wave(settings: &Resolved) -> usize {
    let plan = &settings.plan;
    let units_per_item = plan.models.len() * plan.prompts.len() * plan.repeats as usize;
    settings
        .calls
        .concurrency
        .div_ceil(units_per_item.max(1))
        .max(1)
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

/// Round-one tasks of every unit of the wave.
fn wave_tasks(
    settings: &Resolved,
    wave: &Wave,
    by_id: &HashMap<String, autoeval_generate::Item>,
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
            .filter_map(|(_, id)| by_id.get(id.as_str()).cloned())
            .collect();
        tasks.extend(initial_tasks(&plan, &items));
    }
    tasks
}

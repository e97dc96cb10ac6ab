//! `autoeval export DIR --format inspect`: the run as Inspect evaluation
//! logs, one per (dataset, model, prompt style), written a sample at a time.
//!
//! A unit's rounds can lie anywhere in `results.jsonl` (round 2 is appended
//! long after round 1), so a first pass copies the records to a scratch
//! file beside the logs and keeps only where each unit's rounds are in it,
//! with the run's summary; the second writes each log, reading a unit's
//! rounds back from the scratch file. Memory holds that index, not the
//! records.

use anyhow::{Context, Result};
use autoeval_export::inspect::{LogKey, LogWriter, RunInfo};
use autoeval_metrics::summary::{Summarizer, Summary};
use autoeval_proto::{DatasetKind, ResultRecord};
use autoeval_run_dir::RunDir;
use autoeval_run_settings::{model_file_name, stage_settings, Resolved};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where one round's record lies in the scratch file: its round, offset and length.
type Place = (u32, u64, usize);

/// Each log's units (item id, repeat), each with the places of its rounds.
type Index = BTreeMap<LogKey, BTreeMap<(String, u32), Vec<Place>>>;

/// Writes the logs of the run in `dir` into `out`; gives how many.
pub fn write_logs(dir: &RunDir, out: &Path) -> Result<usize> {
    let settings = dir
        .settings()
        .context("an Inspect log rebuilds the prompts from the run's settings")?;
    let templates = stage_settings(&settings)?.templates()?;
    let alphabets: BTreeMap<String, Vec<char>> = DatasetKind::ALL
        .iter()
        .map(|&k| {
            let alphabet = settings.plan.dataset_config(k).alphabet();
            (k.name().to_string(), alphabet)
        })
        .collect();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let scratch_path = out.join(".records.jsonl.part");
    let (index, summary) = index_records(dir, &settings, &scratch_path)?;
    let scratch = File::open(&scratch_path)
        .with_context(|| format!("cannot read {}", scratch_path.display()))?;
    let run = autoeval_run_dir::run_name(dir)?;
    let created = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let info = RunInfo {
        run: &run,
        created: &created,
        rounds: settings.plan.rounds,
        repeats: settings.plan.repeats,
        templates: &templates,
        alphabets: &alphabets,
        version: env!("CARGO_PKG_VERSION"),
        summary: &summary,
    };
    for (key, units) in &index {
        let path = out.join(key.file_name(&model_file_name(&key.model)));
        let file =
            File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let mut log = LogWriter::new(BufWriter::new(file), key.clone());
        for places in units.values() {
            log.add(&read_unit(&scratch, places)?, &info)?;
        }
        log.finish(&info)?
            .flush()
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}: {} samples", path.display(), units.len());
    }
    drop(scratch);
    std::fs::remove_file(&scratch_path)
        .with_context(|| format!("cannot remove {}", scratch_path.display()))?;
    Ok(index.len())
}

/// Copies the run's records to `scratch`, indexing where each unit's rounds
/// are, and sums them into the run's summary as `autoeval report` does.
fn index_records(dir: &RunDir, settings: &Resolved, scratch: &Path) -> Result<(Index, Summary)> {
    let file =
        File::create(scratch).with_context(|| format!("cannot write {}", scratch.display()))?;
    let mut out = BufWriter::new(file);
    let mut summarizer = Summarizer::for_plan(settings.plan.units(1), settings.plan.rounds);
    let mut index = Index::new();
    let mut offset = 0u64;
    let mut failed = None;
    dir.require_results()?;
    autoeval_run_dir::for_each_record(&dir.results(), |r: ResultRecord| {
        if failed.is_some() {
            return;
        }
        summarizer.add(&r);
        let line = match serde_json::to_vec(&r) {
            Ok(line) => line,
            Err(e) => return failed = Some(anyhow::Error::from(e)),
        };
        if let Err(e) = out.write_all(&line) {
            return failed = Some(e.into());
        }
        index
            .entry(LogKey::of(&r))
            .or_default()
            .entry((r.id.clone(), r.repeat))
            .or_default()
            .push((r.round, offset, line.len()));
        offset += line.len() as u64;
    })?;
    if let Some(e) = failed {
        return Err(e.context(format!("cannot write {}", scratch.display())));
    }
    out.flush()
        .with_context(|| format!("cannot write {}", scratch.display()))?;
    Ok((index, summarizer.finish()))
}

/// A unit's records, read back from the scratch file, rounds in order.
fn read_unit(scratch: &File, places: &[Place]) -> Result<Vec<ResultRecord>> {
    let mut places = places.to_vec();
    places.sort_unstable();
    places
        .iter()
        .map(|&(_, offset, len)| {
            let mut line = vec![0; len];
            scratch
                .read_exact_at(&mut line, offset)
                .context("cannot read the scratch copy of the records")?;
            Ok(serde_json::from_slice(&line)?)
        })
        .collect()
}

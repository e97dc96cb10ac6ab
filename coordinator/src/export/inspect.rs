//! `autoeval export DIR --format inspect`: the run as Inspect evaluation
//! logs, one per (dataset, model, prompt style), written a sample at a time.
//!
//! A unit's rounds can lie anywhere in `results.jsonl` (round 2 is appended
//! long after round 1), so a first pass copies the records to a scratch
//! file beside the logs and keeps only where each round is in it (32 bytes
//! a round), with the run's summary; sorted by log and unit, that index
//! lets the second pass write each log a unit at a time, reading its rounds
//! back from the scratch file. Memory holds the index, not the records.

use anyhow::{Context, Result};
use autoeval_export::inspect::{LogKey, LogWriter, RunInfo};
use autoeval_metrics::summary::{Summarizer, Summary};
use autoeval_proto::{DatasetKind, ResultRecord};
use autoeval_run_dir::stage_settings;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::{recorded_model_file_name, Resolved};
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where one round's record lies in the scratch file, and whose it is.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    /// Its log, as an index into the run's log keys.
    log: u32,
    /// Its unit: a hash of (item id, repeat); units of one hash are told
    /// apart again when read back.
    unit: u64,
    round: u32,
    offset: u64,
    len: u32,
}

/// The run's logs, and every round's place, sorted by log, unit and round.
struct Index {
    logs: Vec<LogKey>,
    places: Vec<Place>,
}

/// Writes the logs of the run in `dir` into `out`; gives how many.
pub fn write_logs(dir: &RunDir, out: &Path) -> Result<usize> {
    let settings = dir
        .settings()
        .context("an Inspect log rebuilds the prompts from the run's settings")?;
    let templates = stage_settings(&settings)?.prompts.templates()?;
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
    // Each judged round's judgements, from every judge file of the run.
    let mut judgements: BTreeMap<autoeval_proto::RoundKey, Vec<autoeval_proto::JudgeRecord>> =
        BTreeMap::new();
    for j in dir.judgements()? {
        let pair = autoeval_proto::fleet::judged_pair(&j);
        judgements.entry(pair).or_default().push(j);
    }
    let info = RunInfo {
        run: &run,
        judgements: &judgements,
        created: &created,
        rounds: settings.plan.rounds,
        repeats: settings.plan.repeats,
        templates: &templates,
        alphabets: &alphabets,
        version: env!("CARGO_PKG_VERSION"),
        summary: &summary,
    };
    for places in index.places.chunk_by(|a, b| a.log == b.log) {
        let key = &index.logs[places[0].log as usize];
        let path = out.join(key.file_name(&recorded_model_file_name(&key.model)));
        let file =
            File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let mut writer = LogWriter::new(BufWriter::new(file), key.clone());
        let mut units = 0;
        for rounds in places.chunk_by(|a, b| a.unit == b.unit) {
            for unit in read_units(&scratch, rounds)? {
                writer.add(&unit, &info)?;
                units += 1;
            }
        }
        writer
            .finish(&info)?
            .flush()
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}: {units} samples", path.display());
    }
    drop(scratch);
    std::fs::remove_file(&scratch_path)
        .with_context(|| format!("cannot remove {}", scratch_path.display()))?;
    Ok(index.logs.len())
}

/// Copies the run's records to `scratch`, indexing where each round is,
/// and sums them into the run's summary as `autoeval report` does.
fn index_records(dir: &RunDir, settings: &Resolved, scratch: &Path) -> Result<(Index, Summary)> {
    let file =
        File::create(scratch).with_context(|| format!("cannot write {}", scratch.display()))?;
    let mut out = BufWriter::new(file);
    let mut summarizer = Summarizer::for_plan(settings.plan.units(1), settings.plan.rounds);
    let mut logs: HashMap<LogKey, u32> = HashMap::new();
    let mut places = Vec::new();
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
        let next = u32::try_from(logs.len()).unwrap_or(u32::MAX);
        places.push(Place {
            log: *logs.entry(LogKey::of(&r)).or_insert(next),
            unit: unit_hash(&r.id, r.repeat),
            round: r.round,
            offset,
            len: u32::try_from(line.len()).unwrap_or(u32::MAX),
        });
        offset += line.len() as u64;
    })?;
    if let Some(e) = failed {
        return Err(e.context(format!("cannot write {}", scratch.display())));
    }
    out.flush()
        .with_context(|| format!("cannot write {}", scratch.display()))?;
    // Logs in key order, each log's units by hash, rounds in order.
    let mut keys: Vec<(LogKey, u32)> = logs.into_iter().collect();
    keys.sort();
    let mut rank = vec![0; keys.len()];
    for (i, (_, log)) in keys.iter().enumerate() {
        rank[*log as usize] = i as u32;
    }
    for p in &mut places {
        p.log = rank[p.log as usize];
    }
    places.sort_unstable();
    let logs = keys.into_iter().map(|(key, _)| key).collect();
    Ok((Index { logs, places }, summarizer.finish()))
}

/// A hash of a unit within its log (one process's: the index lives no longer).
fn unit_hash(id: &str, repeat: u32) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    (id, repeat).hash(&mut h);
    h.finish()
}

/// The records at `places` (one unit hash, rounds in order), read back
/// from the scratch file, as units: more than one only if two units'
/// hashes met.
fn read_units(scratch: &File, places: &[Place]) -> Result<Vec<Vec<ResultRecord>>> {
    let mut units: Vec<Vec<ResultRecord>> = Vec::new();
    for p in places {
        let mut line = vec![0; p.len as usize];
        scratch
            .read_exact_at(&mut line, p.offset)
            .context("cannot read the scratch copy of the records")?;
        let r: ResultRecord = serde_json::from_slice(&line)?;
        match units
            .iter_mut()
            .find(|u| u[0].id == r.id && u[0].repeat == r.repeat)
        {
            Some(unit) => unit.push(r),
            None => units.push(vec![r]),
        }
    }
    Ok(units)
}

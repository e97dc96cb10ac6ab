//! The results file: one JSON line per recorded round, appended as rounds
//! finish. A crash can cut only the last line short; opening the file drops
//! that line and the unit is simply done again.

use autoeval_engine::{RecordStore, StoreError as EngineError};
use autoeval_proto::{ResultRecord, UnitKey};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The results file cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[error("result store: {0}")]
pub struct StoreError(pub String);

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> EngineError {
        EngineError::fatal(e.0)
    }
}

/// A JSONL file of records: one machine's [`RecordStore`].
pub struct JsonlStore {
    path: PathBuf,
    /// The file, and the (unit, round) of every record in it.
    file: Mutex<(File, HashSet<(UnitKey, u32)>)>,
    records: Vec<ResultRecord>,
}

fn err(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("cannot {what} {}: {e}", path.display()))
}

impl JsonlStore {
    /// Opens (or creates) the file, reads its records and cuts off a torn last line.
    pub fn open(path: &Path) -> Result<JsonlStore, StoreError> {
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| err(path, "open", e))?;
        let (records, good_len) = read_records(&file, path)?;
        let len = file.metadata().map_err(|e| err(path, "inspect", e))?.len();
        if good_len < len {
            tracing::warn!(path = %path.display(), bytes = len - good_len, "dropping a torn last line left by a crash");
            file.set_len(good_len)
                .map_err(|e| err(path, "truncate", e))?;
        }
        file.seek(SeekFrom::End(0))
            .map_err(|e| err(path, "seek in", e))?;
        let stored = records.iter().map(|r| (r.unit(), r.round)).collect();
        Ok(JsonlStore {
            path: path.to_path_buf(),
            file: Mutex::new((file, stored)),
            records,
        })
    }

    /// Rewrites the file without the records `drop` selects (atomically: a
    /// new file is written and renamed over the old one).
    pub fn remove(path: &Path, drop: impl Fn(&ResultRecord) -> bool) -> Result<usize, StoreError> {
        let store = JsonlStore::open(path)?;
        let keep: Vec<&ResultRecord> = store.records.iter().filter(|r| !drop(r)).collect();
        let removed = store.records.len() - keep.len();
        replace_jsonl(path, keep)?;
        Ok(removed)
    }
}

/// Replaces the file at `path` with one JSON line per item, atomically: a
/// new file is written, synced and renamed over the old one.
pub fn replace_jsonl<'a, T: serde::Serialize + 'a>(
    path: &Path,
    items: impl IntoIterator<Item = &'a T>,
) -> Result<(), StoreError> {
    let tmp = path.with_extension("jsonl.tmp");
    let mut out = std::io::BufWriter::new(File::create(&tmp).map_err(|e| err(&tmp, "create", e))?);
    for item in items {
        serde_json::to_writer(&mut out, item).map_err(|e| err(&tmp, "write", e))?;
        out.write_all(b"\n").map_err(|e| err(&tmp, "write", e))?;
    }
    out.into_inner()
        .map_err(|e| err(&tmp, "flush", e))?
        .sync_all()
        .map_err(|e| err(&tmp, "sync", e))?;
    std::fs::rename(&tmp, path).map_err(|e| err(path, "replace", e))
}

/// The records of a file, each (unit, round) once, and the length of its complete lines.
fn read_records(file: &File, path: &Path) -> Result<(Vec<ResultRecord>, u64), StoreError> {
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    let mut seen = HashSet::new();
    let mut good_len = 0u64;
    let mut line = String::new();
    let mut number = 0;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| err(path, "read", e))?;
        if n == 0 || !line.ends_with('\n') {
            break;
        }
        number += 1;
        let record: ResultRecord = serde_json::from_str(line.trim_end()).map_err(|e| {
            StoreError(format!(
                "{} line {number} is not a result record ({e}); move the file away to start over",
                path.display()
            ))
        })?;
        good_len += n as u64;
        if seen.insert((record.unit(), record.round)) {
            records.push(record);
        }
    }
    Ok((records, good_len))
}

impl JsonlStore {
    /// The records the file held when it was opened.
    pub fn load(&self) -> Result<Vec<ResultRecord>, StoreError> {
        Ok(self.records.clone())
    }

    /// Appends one record unless its (unit, round) is in the file already; true when it was new.
    pub fn append(&self, record: &ResultRecord) -> Result<bool, StoreError> {
        let mut line =
            serde_json::to_string(record).map_err(|e| err(&self.path, "encode a record for", e))?;
        line.push('\n');
        let mut guard = self
            .file
            .lock()
            .map_err(|_| StoreError("the results file lock is poisoned".into()))?;
        let (file, stored) = &mut *guard;
        if stored.contains(&(record.unit(), record.round)) {
            return Ok(false);
        }
        // One write per line: a crash leaves whole lines and at most one torn one.
        file.write_all(line.as_bytes())
            .map_err(|e| err(&self.path, "append to", e))?;
        stored.insert((record.unit(), record.round));
        Ok(true)
    }
}

/// One machine's record store: the run's file, one line per round. A
/// line is one write, so a crash leaves whole lines and at most one torn one.
impl RecordStore for JsonlStore {
    async fn record_all(
        &self,
        _run: &str,
        records: &[ResultRecord],
        _rounds: u32,
    ) -> Result<Vec<bool>, EngineError> {
        records
            .iter()
            .map(|r| self.append(r).map_err(EngineError::from))
            .collect()
    }

    async fn stored(
        &self,
        _run: &str,
        unit: &UnitKey,
        round: u32,
    ) -> Result<Option<ResultRecord>, EngineError> {
        // Asked only of a task given back (rare on one machine): read the file.
        Ok(read_all(&self.path)?
            .into_iter()
            .find(|r| r.round == round && &r.unit() == unit))
    }

    async fn scan(
        &self,
        _run: &str,
        each: impl FnMut(ResultRecord) + Send,
    ) -> Result<(), EngineError> {
        read_all(&self.path)?.into_iter().for_each(each);
        Ok(())
    }
}

/// Reads a finished run's records.
pub fn read_all(path: &Path) -> Result<Vec<ResultRecord>, StoreError> {
    let file = File::open(path).map_err(|e| err(path, "open", e))?;
    Ok(read_records(&file, path)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_is_stored_once_however_often_it_is_appended() {
        let dir = std::env::temp_dir().join(format!("autoeval-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        let record = |round| ResultRecord {
            id: "plogic-0-0-1".into(),
            model: "reference".into(),
            prompt: "zero-shot".into(),
            round,
            ..ResultRecord::default()
        };
        let store = JsonlStore::open(&path).unwrap();
        assert!(store.append(&record(1)).unwrap());
        assert!(!store.append(&record(1)).unwrap());
        assert!(store.append(&record(2)).unwrap());
        drop(store);
        // After reopening, the file's rounds still count as stored.
        let store = JsonlStore::open(&path).unwrap();
        assert!(!store.append(&record(2)).unwrap());
        drop(store);
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

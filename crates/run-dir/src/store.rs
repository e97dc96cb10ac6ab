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

/// A round's compact key: a digest of its (unit, round).
fn round_digest(r: &ResultRecord) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (r.unit(), r.round).hash(&mut h);
    h.finish()
}

/// A JSONL file of records: one machine's [`RecordStore`]. It holds the
/// file and a digest of each round in it, never the records themselves.
pub struct JsonlStore {
    path: PathBuf,
    /// The file, and the digest of every (unit, round) in it.
    file: Mutex<(File, HashSet<u64>)>,
}

fn err(path: &Path, what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError(format!("cannot {what} {}: {e}", path.display()))
}

impl JsonlStore {
    /// Opens (or creates) the file and cuts off a torn last line.
    pub fn open(path: &Path) -> Result<JsonlStore, StoreError> {
        JsonlStore::open_with(path, |_| {})
    }

    /// Opens (or creates) the file, hands each record in it to `each` (each
    /// round once, the first written), and cuts off a torn last line.
    pub fn open_with(
        path: &Path,
        mut each: impl FnMut(ResultRecord),
    ) -> Result<JsonlStore, StoreError> {
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| err(path, "open", e))?;
        let mut stored = HashSet::new();
        let good_len = read_records(&file, path, &mut stored, &mut each)?;
        let len = file.metadata().map_err(|e| err(path, "inspect", e))?.len();
        if good_len < len {
            tracing::warn!(path = %path.display(), bytes = len - good_len, "dropping a torn last line left by a crash");
            file.set_len(good_len)
                .map_err(|e| err(path, "truncate", e))?;
        }
        file.seek(SeekFrom::End(0))
            .map_err(|e| err(path, "seek in", e))?;
        Ok(JsonlStore {
            path: path.to_path_buf(),
            file: Mutex::new((file, stored)),
        })
    }

    /// Rewrites the file without the records `drop` selects (atomically: a
    /// new file is written and renamed over the old one), a record at a time.
    pub fn remove(path: &Path, drop: impl Fn(&ResultRecord) -> bool) -> Result<usize, StoreError> {
        let tmp = path.with_extension("jsonl.tmp");
        let mut out =
            std::io::BufWriter::new(File::create(&tmp).map_err(|e| err(&tmp, "create", e))?);
        let mut removed = 0;
        let mut failed = None;
        for_each_record(path, |r| {
            if drop(&r) {
                removed += 1;
                return;
            }
            if failed.is_none() {
                failed = serde_json::to_writer(&mut out, &r)
                    .map_err(|e| err(&tmp, "write", e))
                    .and_then(|()| out.write_all(b"\n").map_err(|e| err(&tmp, "write", e)))
                    .err();
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        out.into_inner()
            .map_err(|e| err(&tmp, "flush", e))?
            .sync_all()
            .map_err(|e| err(&tmp, "sync", e))?;
        std::fs::rename(&tmp, path).map_err(|e| err(path, "replace", e))?;
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

/// Hands each record of a file to `each`, each (unit, round) once (the
/// first written), and gives the length of its complete lines.
fn read_records(
    file: &File,
    path: &Path,
    seen: &mut HashSet<u64>,
    each: &mut impl FnMut(ResultRecord),
) -> Result<u64, StoreError> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
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
        if seen.insert(round_digest(&record)) {
            each(record);
        }
    }
    Ok(good_len)
}

impl JsonlStore {
    /// Appends one record unless its (unit, round) is in the file already; true when it was new.
    pub fn append(&self, record: &ResultRecord) -> Result<bool, StoreError> {
        let mut line =
            serde_json::to_string(record).map_err(|e| err(&self.path, "encode a record for", e))?;
        line.push('\n');
        let digest = round_digest(record);
        let mut guard = self
            .file
            .lock()
            .map_err(|_| StoreError("the results file lock is poisoned".into()))?;
        let (file, stored) = &mut *guard;
        if stored.contains(&digest) {
            return Ok(false);
        }
        // One write per line: a crash leaves whole lines and at most one torn one.
        file.write_all(line.as_bytes())
            .map_err(|e| err(&self.path, "append to", e))?;
        stored.insert(digest);
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
        let mut found = None;
        for_each_record(&self.path, |r| {
            if found.is_none() && r.round == round && &r.unit() == unit {
                found = Some(r);
            }
        })?;
        Ok(found)
    }

    async fn scan(
        &self,
        _run: &str,
        each: impl FnMut(ResultRecord) + Send,
    ) -> Result<(), EngineError> {
        for_each_record(&self.path, each)?;
        Ok(())
    }
}

/// Hands every record of a results file to `each`, a record at a time (each
/// round once, the first written); gives how many there were.
pub fn for_each_record(
    path: &Path,
    mut each: impl FnMut(ResultRecord),
) -> Result<usize, StoreError> {
    let file = File::open(path).map_err(|e| err(path, "open", e))?;
    let mut n = 0;
    read_records(&file, path, &mut HashSet::new(), &mut |r| {
        n += 1;
        each(r)
    })?;
    Ok(n)
}

/// Reads a finished run's records.
pub fn read_all(path: &Path) -> Result<Vec<ResultRecord>, StoreError> {
    let mut all = Vec::new();
    for_each_record(path, |r| all.push(r))?;
    Ok(all)
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

//! The results file: one JSON line per recorded round, appended as rounds
//! finish. A crash can cut only the last line short; opening the file drops
//! that line and the unit is simply done again.

use autoeval_engine::{RecordStore, StoreError as EngineError};
use autoeval_proto::{ResultRecord, RoundKey, UnitKey};
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
    digest_of(&r.unit(), r.round)
}

fn digest_of(unit: &UnitKey, round: u32) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (unit, round).hash(&mut h);
    h.finish()
}

/// A JSONL file of records: one machine's [`RecordStore`]. It holds the
/// file and, unless its writer never repeats a round, a digest of each
/// round in it; never the records themselves.
pub struct JsonlStore {
    path: PathBuf,
    file: Mutex<Appending>,
}

/// The open file and what is known of the rounds in it.
struct Appending {
    file: File,
    /// The digest of every (unit, round) in the file, when appends are checked.
    seen: Option<HashSet<u64>>,
    /// Rounds in the file.
    count: usize,
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
    /// round once, the first written), and cuts off a torn last line. A
    /// round appended again is passed over.
    pub fn open_with(
        path: &Path,
        each: impl FnMut(ResultRecord),
    ) -> Result<JsonlStore, StoreError> {
        JsonlStore::open_checked(path, Some(HashSet::new()), each)
    }

    /// As [`JsonlStore::open_with`], for a writer that never appends a round
    /// the file holds (a one-machine run, which goes on from what `each`
    /// was given): every append is written, and no digest per round is
    /// kept, so the store's memory does not grow with the run.
    pub fn open_for_new_rounds(
        path: &Path,
        each: impl FnMut(ResultRecord),
    ) -> Result<JsonlStore, StoreError> {
        JsonlStore::open_checked(path, None, each)
    }

    fn open_checked(
        path: &Path,
        mut seen: Option<HashSet<u64>>,
        mut each: impl FnMut(ResultRecord),
    ) -> Result<JsonlStore, StoreError> {
        // A finished run's compressed results are appended to as plain lines again.
        decompress(path)?;
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| err(path, "open", e))?;
        let mut count = 0;
        let good_len = read_records(
            BufReader::with_capacity(1 << 16, &file),
            path,
            seen.as_mut(),
            &mut |r| {
                count += 1;
                each(r)
            },
        )?;
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
            file: Mutex::new(Appending { file, seen, count }),
        })
    }

    /// Rewrites the file without the records `drop` selects (atomically: a
    /// new file is written and renamed over the old one), a record at a time.
    pub fn remove(path: &Path, drop: impl Fn(&ResultRecord) -> bool) -> Result<usize, StoreError> {
        let mut removed = 0;
        let tmp = write_beside(path, |out, tmp| {
            let mut written = Ok(());
            for_each_record(path, |r| {
                if drop(&r) {
                    removed += 1;
                } else if written.is_ok() {
                    written = write_line(out, &r, tmp);
                }
            })?;
            written
        })?;
        if removed == 0 {
            // Nothing to drop: the file stays as it was, compressed or not.
            return remove_if_there(&tmp).map(|()| 0);
        }
        std::fs::rename(&tmp, path).map_err(|e| err(path, "replace", e))?;
        remove_if_there(&compressed(path))?;
        Ok(removed)
    }
}

/// Where the compressed form of the results file `path` is: `results.jsonl.zst`.
pub fn compressed(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".zst");
    PathBuf::from(name)
}

/// Whether the results file `path` is there, plain or compressed.
pub fn results_exist(path: &Path) -> bool {
    path.exists() || compressed(path).exists()
}

fn remove_if_there(path: &Path) -> Result<(), StoreError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(err(path, "remove", e)),
    }
}

/// Compresses the results file `path` into `results.jsonl.zst` (written
/// whole, synced and renamed into place) and removes the plain file; gives
/// the sizes before and after. Nothing to do without a plain file.
pub fn compress(path: &Path) -> Result<Option<(u64, u64)>, StoreError> {
    let Ok(plain) = File::open(path) else {
        return Ok(None);
    };
    let target = compressed(path);
    replace_atomically(&target, |out, tmp| {
        let mut encoder =
            zstd::Encoder::new(&mut *out, 9).map_err(|e| err(tmp, "compress into", e))?;
        std::io::copy(&mut BufReader::new(plain), &mut encoder)
            .map_err(|e| err(path, "compress", e))?;
        encoder
            .finish()
            .map(|_| ())
            .map_err(|e| err(tmp, "compress into", e))
    })?;
    let before = std::fs::metadata(path).map_or(0, |m| m.len());
    let after = std::fs::metadata(&target).map_or(0, |m| m.len());
    remove_if_there(path)?;
    Ok(Some((before, after)))
}

/// Turns `results.jsonl.zst` back into the plain results file `path`, when
/// only the compressed one is there, so that rounds can be appended.
fn decompress(path: &Path) -> Result<(), StoreError> {
    let source = compressed(path);
    if path.exists() || !source.exists() {
        return Ok(());
    }
    replace_atomically(path, |out, _| {
        std::io::copy(&mut compressed_reader(&source)?, out)
            .map(|_| ())
            .map_err(|e| err(&source, "decompress", e))
    })?;
    remove_if_there(&source)
}

/// A reader of the decompressed text of a `.zst` file.
fn compressed_reader(path: &Path) -> Result<zstd::Decoder<'static, BufReader<File>>, StoreError> {
    let file = File::open(path).map_err(|e| err(path, "open", e))?;
    zstd::Decoder::new(file).map_err(|e| err(path, "decompress", e))
}

/// Writes, with `write`, a synced new file beside `path` (`path.tmp`),
/// and gives its path; on failure nothing is left behind.
fn write_beside(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<File>, &Path) -> Result<(), StoreError>,
) -> Result<PathBuf, StoreError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut out = std::io::BufWriter::new(File::create(&tmp).map_err(|e| err(&tmp, "create", e))?);
    let written = write(&mut out, &tmp).and_then(|()| {
        out.into_inner()
            .map_err(|e| err(&tmp, "flush", e))?
            .sync_all()
            .map_err(|e| err(&tmp, "sync", e))
    });
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Replaces `path` with what `write` writes: a crash leaves the old file or
/// the new one, whole.
fn replace_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<File>, &Path) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let tmp = write_beside(path, write)?;
    std::fs::rename(&tmp, path).map_err(|e| err(path, "replace", e))
}

/// One JSON line of `item` on `out`.
fn write_line(
    out: &mut impl Write,
    item: &impl serde::Serialize,
    tmp: &Path,
) -> Result<(), StoreError> {
    serde_json::to_writer(&mut *out, item).map_err(|e| err(tmp, "write", e))?;
    out.write_all(b"\n").map_err(|e| err(tmp, "write", e))
}

/// Replaces the file at `path` with one JSON line per item, atomically: a
/// new file is written, synced and renamed over the old one.
pub fn replace_jsonl<'a, T: serde::Serialize + 'a>(
    path: &Path,
    items: impl IntoIterator<Item = &'a T>,
) -> Result<(), StoreError> {
    replace_atomically(path, |out, tmp| {
        items
            .into_iter()
            .try_for_each(|item| write_line(out, item, tmp))
    })
}

/// Replaces a run's results with `records`, as [`replace_jsonl`] does, and
/// removes a compressed copy, which would hold only what they replace.
pub fn replace_results(path: &Path, records: &[ResultRecord]) -> Result<(), StoreError> {
    replace_jsonl(path, records)?;
    remove_if_there(&compressed(path))
}

/// Hands each record of a file to `each` (with `seen`, each (unit, round)
/// once, the first written), and gives the length of its complete lines.
fn read_records(
    mut reader: impl BufRead,
    path: &Path,
    mut seen: Option<&mut HashSet<u64>>,
    each: &mut impl FnMut(ResultRecord),
) -> Result<u64, StoreError> {
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
        let first = seen
            .as_deref_mut()
            .is_none_or(|seen| seen.insert(round_digest(&record)));
        if first {
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
        let mut guard = self
            .file
            .lock()
            .map_err(|_| StoreError("the results file lock is poisoned".into()))?;
        let open = &mut *guard;
        if let Some(seen) = &open.seen {
            if seen.contains(&round_digest(record)) {
                return Ok(false);
            }
        }
        // One write per line: a crash leaves whole lines and at most one torn one.
        open.file
            .write_all(line.as_bytes())
            .map_err(|e| err(&self.path, "append to", e))?;
        if let Some(seen) = &mut open.seen {
            seen.insert(round_digest(record));
        }
        open.count += 1;
        Ok(true)
    }
}

impl JsonlStore {
    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rounds in the file.
    pub fn len(&self) -> usize {
        self.file.lock().map_or(0, |g| g.count)
    }

    /// Whether the file holds no round.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes what was appended durable: the data reaches the disk.
    pub fn sync(&self) -> Result<(), StoreError> {
        let guard = self
            .file
            .lock()
            .map_err(|_| StoreError("the results file lock is poisoned".into()))?;
        guard
            .file
            .sync_data()
            .map_err(|e| err(&self.path, "sync", e))
    }

    /// Removes the records of `rounds` (forgotten, to be done again), so
    /// that their next records are appended; says how many it removed.
    pub fn forget(&self, rounds: &HashSet<RoundKey>) -> Result<usize, StoreError> {
        if rounds.is_empty() {
            return Ok(0);
        }
        let mut guard = self
            .file
            .lock()
            .map_err(|_| StoreError("the results file lock is poisoned".into()))?;
        let removed = JsonlStore::remove(&self.path, |r| rounds.contains(&r.round_key()))?;
        if removed > 0 {
            let file = OpenOptions::new()
                .read(true)
                .append(true)
                .open(&self.path)
                .map_err(|e| err(&self.path, "open", e))?;
            let open = &mut *guard;
            open.file = file;
            open.count = open.count.saturating_sub(removed);
            if let Some(seen) = &mut open.seen {
                for round in rounds {
                    seen.remove(&digest_of(&round.unit, round.round));
                }
            }
        }
        Ok(removed)
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
/// round once, the first written), from `results.jsonl.zst` when only that
/// is there; gives how many there were.
pub fn for_each_record(
    path: &Path,
    mut each: impl FnMut(ResultRecord),
) -> Result<usize, StoreError> {
    let mut n = 0;
    let mut count = |r| {
        n += 1;
        each(r)
    };
    let zst = compressed(path);
    let (reader, source): (Box<dyn BufRead>, &Path) = if !path.exists() && zst.exists() {
        let decoder = compressed_reader(&zst)?;
        (Box::new(BufReader::with_capacity(1 << 16, decoder)), &zst)
    } else {
        let file = File::open(path).map_err(|e| err(path, "open", e))?;
        (Box::new(BufReader::with_capacity(1 << 16, file)), path)
    };
    read_records(reader, source, Some(&mut HashSet::new()), &mut count)?;
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

    #[test]
    fn a_store_for_new_rounds_writes_every_append_and_hands_over_what_the_file_held() {
        let dir = std::env::temp_dir().join(format!("autoeval-new-{}", std::process::id()));
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
        let store = JsonlStore::open_for_new_rounds(&path, |_| {}).unwrap();
        assert!(store.append(&record(1)).unwrap());
        assert!(store.append(&record(2)).unwrap());
        assert_eq!(store.len(), 2);
        drop(store);
        let mut held = Vec::new();
        let store = JsonlStore::open_for_new_rounds(&path, |r| held.push(r.round)).unwrap();
        assert_eq!(
            held,
            vec![1, 2],
            "what the file holds is handed over at opening"
        );
        assert_eq!(store.len(), 2);
        // Nothing is kept per round to refuse a repeat: the writer never makes one.
        assert!(store.append(&record(2)).unwrap());
        assert_eq!(store.len(), 3);
        drop(store);
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn compressed_results_read_the_same_and_take_new_rounds() {
        let dir = std::env::temp_dir().join(format!("autoeval-zst-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(compressed(&path));
        let record = |round| ResultRecord {
            id: "plogic-0-0-1".into(),
            model: "reference".into(),
            prompt: "zero-shot".into(),
            round,
            phi0: "(p1 ∧ p2)".into(),
            ..ResultRecord::default()
        };
        let store = JsonlStore::open(&path).unwrap();
        for round in 1..=3 {
            store.append(&record(round)).unwrap();
        }
        drop(store);
        let plain = read_all(&path).unwrap();
        let (before, after) = compress(&path).unwrap().expect("a file to compress");
        assert!(!path.exists() && compressed(&path).exists());
        assert!(after < before, "{after} of {before} bytes");
        assert!(results_exist(&path));
        // Read as they were, a record at a time.
        assert_eq!(read_all(&path).unwrap(), plain);
        // Opened to go on, the run appends to the plain file again, and a
        // round already there still counts as stored.
        let store = JsonlStore::open(&path).unwrap();
        assert!(path.exists() && !compressed(&path).exists());
        assert!(!store.append(&record(2)).unwrap());
        assert!(store.append(&record(4)).unwrap());
        drop(store);
        assert_eq!(read_all(&path).unwrap().len(), 4);
        // Removing nothing leaves a compressed file as it was; removing
        // rounds from it leaves one plain file.
        compress(&path).unwrap();
        assert_eq!(JsonlStore::remove(&path, |_| false).unwrap(), 0);
        assert!(!path.exists() && compressed(&path).exists());
        let removed = JsonlStore::remove(&path, |r| r.round == 4).unwrap();
        assert_eq!(removed, 1);
        assert!(path.exists() && !compressed(&path).exists());
        assert_eq!(read_all(&path).unwrap(), plain);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

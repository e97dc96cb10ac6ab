//! The response cache on disk, for one machine: one SQLite database.

use autoeval_models::{CacheFuture, CacheUnavailable, CachedReply, ResponseCache};
use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};

use std::time::Duration;

/// The database's file in the cache directory.
pub const CACHE_FILE: &str = "replies.sqlite3";

/// How long a write waits for another process sharing the cache.
const BUSY_WAIT: Duration = Duration::from_secs(30);

/// Why a cache directory cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum CacheOpenError {
    /// The directory cannot be made or read.
    #[error("cannot open the reply cache {dir}: {source}")]
    Dir {
        /// The cache directory.
        dir: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The database cannot be opened or set up.
    #[error("cannot open the reply cache {path}: {source}")]
    Database {
        /// The database's file.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// The directory holds a cache of one file per reply.
    #[error(
        "the reply cache {dir} holds replies one file each, as an earlier build kept them, \
         which this build does not read; delete that directory or name another with --cache"
    )]
    OldLayout {
        /// The cache directory.
        dir: PathBuf,
    },
}

/// Replies by key in one SQLite database (`replies.sqlite3`) in write-ahead
/// log mode: a reply is committed before `put` returns, so a process killed
/// at any point keeps every reply it stored and never half of one, and
/// several runs on one machine may share the directory. Writes go to one
/// thread of their own, which commits all that wait together (a group
/// commit), and reads to another, which answers all that wait together:
/// the calls in flight never wait on the disk one by one, and the async
/// runtime's threads never wait on it at all.
pub struct DiskCache {
    reads: std::sync::mpsc::Sender<Read>,
    writes: std::sync::mpsc::Sender<Write>,
}

/// A key to look up, and who waits for what it holds.
struct Read {
    key: String,
    found: tokio::sync::oneshot::Sender<Option<String>>,
}

/// A reply to store, and who waits for it to be committed.
struct Write {
    key: String,
    text: String,
    committed: tokio::sync::oneshot::Sender<()>,
}

/// The most replies one transaction commits.
const GROUP: usize = 4_096;

impl DiskCache {
    /// The cache in `dir`, created when missing.
    pub fn new(dir: impl Into<PathBuf>) -> Result<DiskCache, CacheOpenError> {
        let dir = dir.into();
        let dir_error = |source| CacheOpenError::Dir {
            dir: dir.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(dir_error)?;
        if holds_one_file_per_reply(&dir).map_err(dir_error)? {
            return Err(CacheOpenError::OldLayout { dir });
        }
        let path = dir.join(CACHE_FILE);
        let database = |source| CacheOpenError::Database {
            path: path.clone(),
            source,
        };
        let writer = open(&path).map_err(database)?;
        let reader = open(&path).map_err(database)?;
        let (writes, queue) = std::sync::mpsc::channel();
        let shown = path.clone();
        std::thread::Builder::new()
            .name("reply-cache".into())
            .spawn(move || commit_in_groups(writer, &queue, &shown))
            .map_err(dir_error)?;
        let (reads, asked) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("reply-cache-reads".into())
            .spawn(move || answer_in_groups(&reader, &asked, &path))
            .map_err(dir_error)?;
        Ok(DiskCache { reads, writes })
    }

    /// The reply stored under `key`, read by the reading thread; an entry
    /// that cannot be read is a miss.
    async fn read(&self, key: &str) -> Option<CachedReply> {
        let (found, answer) = tokio::sync::oneshot::channel();
        let read = Read {
            key: key.to_string(),
            found,
        };
        self.reads.send(read).ok()?;
        serde_json::from_str(&answer.await.ok()??).ok()
    }

    /// Stores `reply` under `key`; returns once it is committed.
    async fn write(&self, key: &str, reply: &CachedReply) {
        let text = match serde_json::to_string(reply) {
            Ok(text) => text,
            Err(e) => {
                tracing::warn!(error = %e, "cannot encode a reply for the cache");
                return;
            }
        };
        let (committed, done) = tokio::sync::oneshot::channel();
        let write = Write {
            key: key.to_string(),
            text,
            committed,
        };
        if self.writes.send(write).is_ok() {
            // The writer acknowledges every write it takes, stored or not.
            let _ = done.await;
        }
    }
}

/// `first` and whatever else waits in `queue` behind it, up to [`GROUP`].
fn with_those_waiting<T>(first: T, queue: &std::sync::mpsc::Receiver<T>) -> Vec<T> {
    let mut group = vec![first];
    while group.len() < GROUP {
        match queue.try_recv() {
            Ok(next) => group.push(next),
            Err(_) => break,
        }
    }
    group
}

/// The reading thread's loop: takes every read waiting (up to [`GROUP`])
/// and answers each, so that a call's lookup costs one hand-over, not one
/// thread of its own. An entry that cannot be read is a miss, logged.
fn answer_in_groups(db: &Connection, asked: &std::sync::mpsc::Receiver<Read>, path: &Path) {
    while let Ok(first) = asked.recv() {
        let group = with_those_waiting(first, asked);
        let mut select = match db.prepare_cached("SELECT reply FROM replies WHERE key = ?1") {
            Ok(select) => select,
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "cannot read the reply cache");
                continue;
            }
        };
        for r in group {
            let text = select
                .query_row([&r.key], |row| row.get(0))
                .optional()
                .unwrap_or_else(|e| {
                    tracing::warn!(error = %e, path = %path.display(), "cannot read the reply cache");
                    None
                });
            let _ = r.found.send(text);
        }
    }
}

/// The writer's loop: takes every write waiting (up to [`GROUP`]), stores
/// them in one transaction, and tells each writer once it is committed. A
/// write that cannot be stored is logged; its caller goes on (the reply
/// stands, the cache only misses it later).
fn commit_in_groups(mut db: Connection, queue: &std::sync::mpsc::Receiver<Write>, path: &Path) {
    while let Ok(first) = queue.recv() {
        let group = with_those_waiting(first, queue);
        let stored = db.transaction().and_then(|tx| {
            {
                let mut insert = tx.prepare_cached(
                    "INSERT OR REPLACE INTO replies (key, reply) VALUES (?1, ?2)",
                )?;
                for w in &group {
                    insert.execute((&w.key, &w.text))?;
                }
            }
            tx.commit()
        });
        if let Err(e) = stored {
            tracing::warn!(error = %e, path = %path.display(), replies = group.len(), "cannot store replies in the cache");
        }
        for w in group {
            let _ = w.committed.send(());
        }
    }
}

/// The database at `path`, set up: write-ahead logging with
/// `synchronous=NORMAL`. What survives, as SQLite documents it for that
/// mode: a process killed however it ends keeps every committed reply
/// (each `put` returns after its commit); a power cut or a crash of the
/// machine keeps the database whole but may roll back the replies
/// committed since the last checkpoint, which a resumed run asks for again.
/// The log is synced only at checkpoints, so the calls in flight never wait
/// on a flush; checkpoints seldom; and the table of replies.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let db = Connection::open(path)?;
    db.busy_timeout(BUSY_WAIT)?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    db.pragma_update(None, "synchronous", "NORMAL")?;
    db.pragma_update(None, "wal_autocheckpoint", 16_384)?;
    db.pragma_update(None, "cache_size", -65_536)?;
    db.execute(
        // A rowid table: replies (a few KiB each) are appended in order,
        // and only the small key index takes random inserts.
        "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)",
        [],
    )?;
    Ok(db)
}

/// Whether `dir` holds the layout of an earlier build: a two-character
/// shard folder with a `KEY.json` reply in it.
fn holds_one_file_per_reply(dir: &Path) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let shard = entry.file_name();
        if shard.len() != 2 || !entry.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(entry.path())? {
            if file?.path().extension().is_some_and(|e| e == "json") {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

impl ResponseCache for DiskCache {
    // A disk is never "away": an entry that cannot be read is a miss, one
    // that cannot be written is logged.
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> CacheFuture<'a, Result<Option<CachedReply>, CacheUnavailable>> {
        Box::pin(async move { Ok(self.read(key).await) })
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        reply: &'a CachedReply,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(async move {
            self.write(key, reply).await;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(text: &str) -> CachedReply {
        CachedReply {
            text: text.into(),
            prompt_tokens: 3,
            completion_tokens: 5,
            reasoning_tokens: 0,
            too_long: false,
            finish_reason: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("autoeval-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[tokio::test]
    async fn a_reply_stored_is_read_back_by_another_opening_of_the_directory() {
        let dir = scratch("reopen");
        let cache = DiskCache::new(&dir).unwrap();
        assert_eq!(cache.get("k1").await.unwrap(), None);
        cache.put("k1", &reply("first")).await.unwrap();
        cache.put("k1", &reply("again")).await.unwrap();
        // Another process (or a resumed run) opens the same directory.
        let other = DiskCache::new(&dir).unwrap();
        assert_eq!(other.get("k1").await.unwrap(), Some(reply("again")));
        other.put("k2", &reply("second")).await.unwrap();
        assert_eq!(cache.get("k2").await.unwrap(), Some(reply("second")));
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with(CACHE_FILE))
            .collect();
        assert!(files.is_empty(), "only the database and its log: {files:?}");
        let mode: (String, i64) = {
            let db = open(&dir.join(CACHE_FILE)).unwrap();
            let journal = db
                .query_row("PRAGMA journal_mode", [], |r| r.get(0))
                .unwrap();
            let sync = db
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap();
            (journal, sync)
        };
        // What the comment on `open` promises: WAL, synchronous=NORMAL (1).
        assert_eq!(mode, ("wal".to_string(), 1));
    }

    #[test]
    fn a_directory_of_one_file_per_reply_is_refused_with_what_to_do() {
        let dir = scratch("old");
        std::fs::create_dir_all(dir.join("ab")).unwrap();
        std::fs::write(dir.join("ab/abcdef.json"), "{}").unwrap();
        let Err(e) = DiskCache::new(&dir) else {
            panic!("an old cache directory opened");
        };
        let text = e.to_string();
        assert!(
            text.contains("one file each") && text.contains("--cache"),
            "{text}"
        );
    }
}

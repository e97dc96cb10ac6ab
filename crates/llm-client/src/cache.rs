//! The response cache on disk, for one machine.

use autoeval_models::{CacheFuture, CacheUnavailable, CachedReply, ResponseCache};
use std::path::PathBuf;

/// One JSON file per key under a directory (`ab/abcdef….json`), written to a
/// temporary file and renamed, so a crash never leaves half a reply.
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir`, created when missing.
    pub fn new(dir: impl Into<PathBuf>) -> std::io::Result<DiskCache> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(DiskCache { dir })
    }

    fn path(&self, key: &str) -> PathBuf {
        let shard = key.get(..2).unwrap_or("00");
        self.dir.join(shard).join(format!("{key}.json"))
    }
}

impl ResponseCache for DiskCache {
    // A disk is never "away": a file that cannot be read is a miss, one
    // that cannot be written is logged.
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> CacheFuture<'a, Result<Option<CachedReply>, CacheUnavailable>> {
        Box::pin(async move { Ok(self.read(key)) })
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        reply: &'a CachedReply,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(async move {
            self.write(key, reply);
            Ok(())
        })
    }
}

impl DiskCache {
    fn read(&self, key: &str) -> Option<CachedReply> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn write(&self, key: &str, reply: &CachedReply) {
        let path = self.path(key);
        let write = || -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            let tmp = path.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(reply)?)?;
            std::fs::rename(&tmp, &path)
        };
        if let Err(e) = write() {
            tracing::warn!(error = %e, path = %path.display(), "cannot store a reply in the cache");
        }
    }
}

//! The response cache in Redis, one hash per run shared by every worker, so
//! a task that is delivered again (or redone by a rerun) is answered without
//! paying the provider again.

use autoeval_models::{CacheFuture, CacheUnavailable, CachedReply, ResponseCache};
use autoeval_proto::fleet::run_key;
use redis::aio::ConnectionManager;
use redis::AsyncCommands;

/// Replies of one run, in the hash `autoeval:{RUN}:cache`.
pub struct RedisCache {
    conn: ConnectionManager,
    hash: String,
}

impl RedisCache {
    /// The cache of `run` over an open connection.
    pub fn new(conn: ConnectionManager, run: &str) -> RedisCache {
        RedisCache {
            conn,
            hash: run_key(run, "cache"),
        }
    }
}

impl ResponseCache for RedisCache {
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> CacheFuture<'a, Result<Option<CachedReply>, CacheUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = conn
                .hget(&self.hash, key)
                .await
                .map_err(|e| CacheUnavailable(e.to_string()))?;
            // An entry this build cannot read is a miss, asked again.
            Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
        })
    }

    fn put<'a>(
        &'a self,
        key: &'a str,
        reply: &'a CachedReply,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(async move {
            let text = serde_json::to_string(reply).map_err(|e| CacheUnavailable(e.to_string()))?;
            let mut conn = self.conn.clone();
            conn.hset::<_, _, _, ()>(&self.hash, key, text)
                .await
                .map_err(|e| CacheUnavailable(e.to_string()))
        })
    }
}

//! The response cache in Redis, one hash per run shared by every worker, so
//! a task that is delivered again (or redone by a rerun) is answered without
//! paying the provider again.

use autoeval_models::{CacheFuture, CachedReply, ResponseCache};
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
    fn get<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Option<CachedReply>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = match conn.hget(&self.hash, key).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the response cache");
                    return None;
                }
            };
            serde_json::from_str(&text?).ok()
        })
    }

    fn put<'a>(&'a self, key: &'a str, reply: &'a CachedReply) -> CacheFuture<'a, ()> {
        Box::pin(async move {
            let Ok(text) = serde_json::to_string(reply) else {
                return;
            };
            let mut conn = self.conn.clone();
            if let Err(e) = conn.hset::<_, _, _, ()>(&self.hash, key, text).await {
                tracing::warn!(error = %e, "cannot store a reply in the response cache");
            }
        })
    }
}

//! The response cache in Redis, shared by every worker, so a task that is
//! delivered again is answered without paying the provider again.

use autoeval_llm_client::{CacheFuture, CachedReply, ResponseCache};
use autoeval_proto::fleet::cache_key;
use redis::aio::ConnectionManager;
use redis::AsyncCommands;

/// Replies under `autoeval:cache:KEY`.
pub struct RedisCache {
    conn: ConnectionManager,
}

impl RedisCache {
    /// A cache over an open connection.
    pub fn new(conn: ConnectionManager) -> RedisCache {
        RedisCache { conn }
    }
}

impl ResponseCache for RedisCache {
    fn get<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Option<CachedReply>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = match conn.get(cache_key(key)).await {
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
            if let Err(e) = conn.set::<_, _, ()>(cache_key(key), text).await {
                tracing::warn!(error = %e, "cannot store a reply in the response cache");
            }
        })
    }
}

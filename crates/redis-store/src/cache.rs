//! The response cache in Redis, one hash per run shared by every worker, so
//! a task that is delivered again (or redone by a rerun) is answered without
//! paying the provider again.

use crate::Connection;
use autoeval_models::{CacheFuture, CacheUnavailable, CachedReply, CallClaim, ResponseCache};
use autoeval_proto::fleet::run_key;
use redis::{AsyncCommands, Script};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

// KEYS[1]: the claim; ARGV[1]: its holder's token; ARGV[2]: milliseconds to
// keep it (renew) or nothing (release). Only the holder moves its claim.
const HOLDER: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])
";

/// Replies of one run, in the hash `autoeval:{RUN}:cache`; a call in
/// progress is claimed in `autoeval:{RUN}:claim:<key>`, which expires unless
/// its holder renews it.
pub struct RedisCache {
    conn: Connection,
    hash: String,
    claims: String,
    holder: Script,
}

impl RedisCache {
    /// The cache of `run` over an open connection.
    pub fn new(conn: Connection, run: &str) -> RedisCache {
        RedisCache {
            conn,
            hash: run_key(run, "cache"),
            claims: run_key(run, "claim"),
            holder: Script::new(HOLDER),
        }
    }

    fn claim_key(&self, key: &str) -> String {
        format!("{}:{key}", self.claims)
    }

    /// As `claim`'s holder: keeps it for `ttl` more, or gives it up (`None`).
    async fn as_holder(
        &self,
        key: &str,
        claim: &CallClaim,
        ttl: Option<Duration>,
    ) -> Result<(), CacheUnavailable> {
        let mut conn = self.conn.clone();
        let mut call = self.holder.prepare_invoke();
        call.key(self.claim_key(key)).arg(&claim.0);
        if let Some(ttl) = ttl {
            call.arg(millis(ttl));
        }
        call.invoke_async::<i64>(&mut conn).await.map_err(away)?;
        Ok(())
    }
}

/// A token no other claim (or charge) holds: this process, a counter and the time.
pub(crate) fn fresh_token() -> CallClaim {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    CallClaim(format!(
        "{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

fn away(e: redis::RedisError) -> CacheUnavailable {
    CacheUnavailable(e.to_string())
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl ResponseCache for RedisCache {
    fn new_claim(&self) -> CallClaim {
        fresh_token()
    }

    fn claim<'a>(
        &'a self,
        key: &'a str,
        claim: &'a CallClaim,
        ttl: Duration,
    ) -> CacheFuture<'a, Result<bool, CacheUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let set: Option<String> = redis::cmd("SET")
                .arg(self.claim_key(key))
                .arg(&claim.0)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut conn)
                .await
                .map_err(away)?;
            if set.is_some() {
                return Ok(true);
            }
            // Held already: by this claim when an earlier try of it landed
            // while its answer was lost (a Redis that stalled past the
            // client's timeout), which must not wait for itself.
            let holder: Option<String> = redis::cmd("GET")
                .arg(self.claim_key(key))
                .query_async(&mut conn)
                .await
                .map_err(away)?;
            Ok(holder.as_deref() == Some(claim.0.as_str()))
        })
    }

    fn renew<'a>(
        &'a self,
        key: &'a str,
        claim: &'a CallClaim,
        ttl: Duration,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(self.as_holder(key, claim, Some(ttl)))
    }

    fn release<'a>(
        &'a self,
        key: &'a str,
        claim: &'a CallClaim,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(self.as_holder(key, claim, None))
    }

    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> CacheFuture<'a, Result<Option<CachedReply>, CacheUnavailable>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let text: Option<String> = conn.hget(&self.hash, key).await.map_err(away)?;
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
            // A long reply takes a while to write out: off the async runtime.
            let text = if reply.text.len() > 64 << 10 {
                let reply = reply.clone();
                tokio::task::spawn_blocking(move || serde_json::to_string(&reply))
                    .await
                    .map_err(|e| CacheUnavailable(e.to_string()))?
            } else {
                serde_json::to_string(reply)
            }
            .map_err(|e| CacheUnavailable(e.to_string()))?;
            let mut conn = self.conn.clone();
            conn.hset::<_, _, _, ()>(&self.hash, key, text)
                .await
                .map_err(away)
        })
    }
}

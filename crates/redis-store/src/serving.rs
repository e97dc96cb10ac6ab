//! Which model specs the fleet's workers serve: each worker stamps its
//! specs every second with Redis's clock, so a coordinator waiting for a
//! worker of a misspelt spec can list the specs that are served.

use crate::Connection;
use crate::{redis_err, RunStore, StoreError};
use redis::{AsyncCommands, Script};
use std::time::Duration;

/// The sorted set of served specs, scored by when a worker last said so (ms).
const SERVING: &str = "autoeval:serving";
/// Every spec a worker ever served, kept until `autoeval fleet gc` removes
/// its queues: what the broker cannot list.
pub const QUEUED_MODELS: &str = "autoeval:queued-models";
/// How often a worker says what it serves.
const TELL_EVERY: Duration = Duration::from_secs(1);
/// A spec not stamped for this long is no longer served.
const FRESH_MS: u64 = 5_000;

const NOW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

// Stamps each spec in ARGV with now; the set goes a minute after the last
// worker stops stamping, so no fleet leaves it behind.
const STAMP: &str = r"
for _, model in ipairs(ARGV) do
  redis.call('ZADD', KEYS[1], now, model)
end
redis.call('PEXPIRE', KEYS[1], 60000)
return 1
";

// The specs stamped within ARGV[1] ms; forgets those a day stale.
const FRESH: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 86400000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf')
";

/// Says every second, until the runtime ends, that this worker serves `models`.
pub fn spawn_serving_reporter(
    conn: Connection,
    models: Vec<String>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let stamp = Script::new(&format!("{NOW}{STAMP}"));
        // Once: a spec's queues outlive the worker until gc removes them.
        {
            let mut conn = conn.clone();
            if let Err(e) = conn.sadd::<_, _, ()>(QUEUED_MODELS, &models).await {
                tracing::warn!(error = %e, "cannot note the models served; `autoeval fleet gc` will not see their queues");
            }
        }
        let mut tick = tokio::time::interval(TELL_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let mut call = stamp.prepare_invoke();
            call.key(SERVING);
            for m in &models {
                call.arg(m);
            }
            let mut conn = conn.clone();
            if let Err(e) = call.invoke_async::<()>(&mut conn).await {
                tracing::debug!(error = %e, "cannot tell Redis the models served");
            }
        }
    })
}

impl RunStore {
    /// The model specs that live workers serve, sorted.
    pub async fn served_models(&self) -> Result<Vec<String>, StoreError> {
        served_models(&self.conn).await
    }
}

/// The model specs that live workers serve, sorted.
pub async fn served_models(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut conn = conn.clone();
    let fresh = Script::new(&format!("{NOW}{FRESH}"));
    let mut call = fresh.prepare_invoke();
    call.key(SERVING).arg(FRESH_MS);
    let mut models: Vec<String> = call
        .invoke_async(&mut conn)
        .await
        .map_err(redis_err("read the models workers serve"))?;
    models.sort();
    Ok(models)
}

/// Every model spec a worker ever served, whose queues may still exist.
pub async fn queued_models(conn: &Connection) -> Result<Vec<String>, StoreError> {
    let mut conn = conn.clone();
    let mut models: Vec<String> = conn
        .smembers(QUEUED_MODELS)
        .await
        .map_err(redis_err("read the models served"))?;
    models.sort();
    Ok(models)
}

/// Forgets `model` among the specs served, once its queues are gone.
pub async fn forget_queued_model(conn: &Connection, model: &str) -> Result<(), StoreError> {
    let mut conn = conn.clone();
    conn.srem(QUEUED_MODELS, model)
        .await
        .map_err(redis_err("forget a model served"))
}

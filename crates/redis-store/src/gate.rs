//! The fleet's rate-limit gate: each model's request and token schedules
//! (GCRA theoretical arrival times) and its 429 hold live in Redis, and
//! every admission is one script on Redis's own clock, so all workers
//! share one schedule whatever their clocks say. The scripts do what
//! [`autoeval_models::Cell`] does in memory.
//!
//! When Redis cannot be reached a request goes without waiting: the
//! provider's 429s, and the backoff they set, still slow it down.

use crate::Connection;
use autoeval_models::{CacheFuture, RateGate, RateLimits};
use redis::Script;
use std::time::Duration;

const NOW: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
";

// Admits a request only if every limit allows it now; otherwise takes
// nothing and answers the ms to wait before asking again.
const ADMIT: &str = r"
local floor = tonumber(redis.call('GET', KEYS[3]) or '0')
local wait = math.max(0, floor - now)
local updates = {}
local function admit(key, interval, tolerance, cost)
  if interval <= 0 then return end
  local tat = tonumber(redis.call('GET', key) or '0')
  local start = math.max(tat, now, floor)
  local next_tat = start + interval * cost
  local allowed = math.max(math.min(next_tat - tolerance, start), floor)
  if allowed > now then
    wait = math.max(wait, allowed - now)
  else
    updates[#updates + 1] = {key, next_tat, tolerance}
  end
end
admit(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), 1)
admit(KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))
if wait > 0 then return math.ceil(wait) end
for _, u in ipairs(updates) do
  redis.call('SET', u[1], string.format('%.3f', u[2]), 'PX', math.ceil(u[2] - now + u[3]) + 1000)
end
return 0
";

const CHARGE: &str = r"
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local next_tat = math.max(math.max(tat, now) + tonumber(ARGV[1]) * tonumber(ARGV[3]), now)
redis.call('SET', KEYS[1], string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now + tonumber(ARGV[2])) + 1000)
return 1
";

const HOLD: &str = r"
local until_ms = now + tonumber(ARGV[1])
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ms > held then
  redis.call('SET', KEYS[1], string.format('%.3f', until_ms), 'PX', math.ceil(tonumber(ARGV[1])) + 1000)
end
return 1
";

const HELD: &str = r"
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
return math.ceil(math.max(0, held - now))
";

/// The Redis key of one of a model's schedules: `autoeval:{limit:NAME}:PART`,
/// hash-tagged by model so one script reaches all of a model's keys in a cluster.
pub fn limit_key(name: &str, part: &str) -> String {
    let name: String = name
        .chars()
        .map(|c| if matches!(c, '{' | '}') { '_' } else { c })
        .collect();
    format!("autoeval:{{limit:{name}}}:{part}")
}

/// How long a request waits before asking a gate that could not be asked again.
pub const GATE_AWAY_PAUSE: Duration = Duration::from_millis(500);

/// The gate every worker of a fleet shares.
#[derive(Clone)]
pub struct RedisGate {
    conn: Connection,
    admit: Script,
    charge: Script,
    hold: Script,
    held: Script,
}

impl RedisGate {
    /// The gate over an open connection.
    pub fn new(conn: Connection) -> RedisGate {
        let script = |body: &str| Script::new(&format!("{NOW}{body}"));
        RedisGate {
            conn,
            admit: script(ADMIT),
            charge: script(CHARGE),
            hold: script(HOLD),
            held: script(HELD),
        }
    }

    /// The wait the gate answers, or `away` when it cannot be asked: asked
    /// for a turn, it fails closed ([`GATE_AWAY_PAUSE`], so no request goes
    /// out unmetered while Redis is away); told what a request used, it
    /// answers nothing.
    async fn wait_ms(
        &self,
        what: &str,
        invocation: redis::ScriptInvocation<'_>,
        away: Duration,
    ) -> Duration {
        let mut conn = self.conn.clone();
        match invocation.invoke_async::<u64>(&mut conn).await {
            Ok(ms) => Duration::from_millis(ms),
            Err(e) => {
                tracing::warn!(error = %e, ?away, "cannot {what} at the fleet's rate-limit gate");
                away
            }
        }
    }
}

impl RateGate for RedisGate {
    fn admit<'a>(
        &'a self,
        key: &'a str,
        limits: RateLimits,
        tokens: u64,
    ) -> CacheFuture<'a, Duration> {
        Box::pin(async move {
            let (r, t) = (limits.request_cell(), limits.token_cell());
            let mut call = self.admit.prepare_invoke();
            call.key(limit_key(key, "requests"))
                .key(limit_key(key, "tokens"))
                .key(limit_key(key, "hold"))
                .arg(r.interval_ms)
                .arg(r.tolerance_ms)
                .arg(t.interval_ms)
                .arg(t.tolerance_ms)
                .arg(tokens);
            self.wait_ms("ask for a turn", call, GATE_AWAY_PAUSE).await
        })
    }

    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        limits: RateLimits,
        delta: i64,
    ) -> CacheFuture<'a, ()> {
        Box::pin(async move {
            let t = limits.token_cell();
            if !t.limits() {
                return;
            }
            let mut call = self.charge.prepare_invoke();
            call.key(limit_key(key, "tokens"))
                .arg(t.interval_ms)
                .arg(t.tolerance_ms)
                .arg(delta);
            self.wait_ms("charge tokens", call, Duration::ZERO).await;
        })
    }

    fn back_off<'a>(&'a self, key: &'a str, wait: Duration) -> CacheFuture<'a, ()> {
        Box::pin(async move {
            let mut call = self.hold.prepare_invoke();
            call.key(limit_key(key, "hold"))
                .arg(wait.as_secs_f64() * 1e3);
            self.wait_ms("hold the model", call, Duration::ZERO).await;
        })
    }

    fn held<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Duration> {
        Box::pin(async move {
            let mut call = self.held.prepare_invoke();
            call.key(limit_key(key, "hold"));
            self.wait_ms("read the model's hold", call, GATE_AWAY_PAUSE)
                .await
        })
    }
}

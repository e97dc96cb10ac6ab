//! A run's spending caps, in `autoeval:{RUN}:budget`: what it may spend
//! (`cap_usd`, `cap_tokens`), what its workers have paid (`spent_usd`,
//! `spent_tokens`), why it is paused (`paused`) and how many tasks workers
//! set aside while it was (`parked`). Only a run with a cap is charged. A worker charges each task's cost in
//! one script that also pauses the run the moment a cap is reached; every
//! worker then sets the run's tasks aside until `resume` raises the cap.

use crate::{redis_err, RunStore, StoreError};
use autoeval_proto::fleet::run_key;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use std::collections::HashMap;

const CHARGE: &str = r"
local usd = tonumber(redis.call('HINCRBYFLOAT', KEYS[1], 'spent_usd', ARGV[1]))
local tokens = redis.call('HINCRBY', KEYS[1], 'spent_tokens', ARGV[2])
local paused = redis.call('HGET', KEYS[1], 'paused')
if paused then return paused end
local cap_usd = tonumber(redis.call('HGET', KEYS[1], 'cap_usd') or '')
local cap_tokens = tonumber(redis.call('HGET', KEYS[1], 'cap_tokens') or '')
local why = false
if cap_usd and usd >= cap_usd then
  why = string.format('the cost cap of $%.4f is reached ($%.4f spent)', cap_usd, usd)
elseif cap_tokens and tokens >= cap_tokens then
  why = string.format('the token cap of %d is reached (%d spent)', cap_tokens, tokens)
end
if why then redis.call('HSET', KEYS[1], 'paused', why) end
return why
";

// New caps: the run is paused while what it spent already reaches one, running otherwise.
const SET_CAPS: &str = r"
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'cap_usd') else redis.call('HSET', KEYS[1], 'cap_usd', ARGV[1]) end
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], 'cap_tokens') else redis.call('HSET', KEYS[1], 'cap_tokens', ARGV[2]) end
local usd = tonumber(redis.call('HGET', KEYS[1], 'spent_usd') or '0')
local tokens = tonumber(redis.call('HGET', KEYS[1], 'spent_tokens') or '0')
local cap_usd = tonumber(ARGV[1])
local cap_tokens = tonumber(ARGV[2])
if (cap_usd and usd >= cap_usd) or (cap_tokens and tokens >= cap_tokens) then
  redis.call('HSET', KEYS[1], 'paused', 'the budget given is already spent')
  return 1
end
redis.call('HDEL', KEYS[1], 'paused')
return 0
";

/// A run's caps and spending as Redis holds them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budget {
    /// Most it may spend, in USD.
    pub cap_usd: Option<f64>,
    /// Most tokens it may pay for.
    pub cap_tokens: Option<u64>,
    /// Paid so far, in USD.
    pub spent_usd: f64,
    /// Tokens paid for so far.
    pub spent_tokens: u64,
    /// Why the run is paused, when it is.
    pub paused: Option<String>,
    /// Tasks workers set aside while it was paused (redone by `resume`).
    pub parked: u64,
}

/// Every run's budget, for a worker: one handle, any run.
#[derive(Clone)]
pub struct Budgets {
    conn: ConnectionManager,
    charge: Script,
}

impl Budgets {
    /// The budgets over an open connection.
    pub fn new(conn: ConnectionManager) -> Budgets {
        Budgets {
            conn,
            charge: Script::new(CHARGE),
        }
    }

    /// Why `run` is paused, if it is, and whether it has a cap at all (a
    /// run with none is not charged: its spending is in the metrics).
    pub async fn state(&self, run: &str) -> Result<(Option<String>, bool), StoreError> {
        let mut conn = self.conn.clone();
        let (paused, usd, tokens): (Option<String>, Option<String>, Option<String>) =
            redis::cmd("HMGET")
                .arg(run_key(run, "budget"))
                .arg(&["paused", "cap_usd", "cap_tokens"])
                .query_async(&mut conn)
                .await
                .map_err(redis_err("read the run's budget"))?;
        Ok((paused, usd.is_some() || tokens.is_some()))
    }

    /// Adds what a task paid to `run`'s spending; answers why the run is now
    /// paused when this (or an earlier) charge reached a cap.
    pub async fn charge(
        &self,
        run: &str,
        usd: f64,
        tokens: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn.clone();
        self.charge
            .key(run_key(run, "budget"))
            .arg(usd)
            .arg(tokens)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("charge the run's budget"))
    }

    /// Counts a task set aside because `run` is paused.
    pub async fn park(&self, run: &str) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        conn.hincr(run_key(run, "budget"), "parked", 1)
            .await
            .map_err(redis_err("count a parked task"))
    }
}

impl RunStore {
    /// Sets the run's caps (`None`: no cap); answers true when what it has
    /// spent already reaches them, which leaves it paused.
    pub async fn set_caps(
        &self,
        usd: Option<f64>,
        tokens: Option<u64>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let paused: i32 = Script::new(SET_CAPS)
            .key(self.key("budget"))
            .arg(usd.map(|u| u.to_string()).unwrap_or_default())
            .arg(tokens.map(|t| t.to_string()).unwrap_or_default())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("set the run's caps"))?;
        Ok(paused == 1)
    }

    /// The run's caps and spending.
    pub async fn budget(&self) -> Result<Budget, StoreError> {
        let mut conn = self.conn.clone();
        let fields: HashMap<String, String> = conn
            .hgetall(self.key("budget"))
            .await
            .map_err(redis_err("read the run's budget"))?;
        let number = |f: &str| fields.get(f).and_then(|v| v.parse::<f64>().ok());
        Ok(Budget {
            cap_usd: number("cap_usd"),
            cap_tokens: number("cap_tokens").map(|t| t as u64),
            spent_usd: number("spent_usd").unwrap_or(0.0),
            spent_tokens: number("spent_tokens").map_or(0, |t| t as u64),
            paused: fields.get("paused").cloned(),
            parked: number("parked").map_or(0, |t| t as u64),
        })
    }
}

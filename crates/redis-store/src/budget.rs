//! A run's spending caps, in `autoeval:{RUN}:budget`: what it may spend
//! (`cap_usd`, `cap_tokens`), what its workers have paid (`spent_usd`,
//! `spent_tokens`), why it is paused (`paused`) and how many tasks workers
//! set aside while it was (`parked`, with the tasks themselves in the set
//! `autoeval:{RUN}:parked`). Only a run with a cap is charged. A worker charges each task's cost in
//! one script that also pauses the run the moment a cap is reached; every
//! worker then sets the run's tasks aside until `resume` raises the cap.

use crate::{redis_err, RunStore, StoreError};
use autoeval_proto::fleet::run_key;
use autoeval_proto::RoundKey;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

// KEYS[2]: the charges already made, by id (ARGV[3]): a charge retried
// after a reply that was lost (Redis busy, a timeout) is made once.
const CHARGE: &str = r"
if redis.call('SADD', KEYS[2], ARGV[3]) == 0 then
  return redis.call('HGET', KEYS[1], 'paused')
end
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

// Caps: ARGV[1] (USD) and ARGV[2] (tokens), '' keeping a cap, '-' removing it.
// Reached: answers 'spent' (and pauses the run). Otherwise, resuming
// (ARGV[3] == '1'): unpauses the run and answers the tasks set aside, which
// stay in their set until their publish is confirmed (`unpark`), so a crash
// in between leaves them to the next resume. Not resuming, a paused run
// stays paused: 'paused'.
const SET_CAPS: &str = r"
local function cap(field, value)
  if value == '-' then redis.call('HDEL', KEYS[1], field)
  elseif value ~= '' then redis.call('HSET', KEYS[1], field, value) end
end
cap('cap_usd', ARGV[1])
cap('cap_tokens', ARGV[2])
local usd = tonumber(redis.call('HGET', KEYS[1], 'spent_usd') or '0')
local tokens = tonumber(redis.call('HGET', KEYS[1], 'spent_tokens') or '0')
local cap_usd = tonumber(redis.call('HGET', KEYS[1], 'cap_usd') or '')
local cap_tokens = tonumber(redis.call('HGET', KEYS[1], 'cap_tokens') or '')
if (cap_usd and usd >= cap_usd) or (cap_tokens and tokens >= cap_tokens) then
  if not redis.call('HGET', KEYS[1], 'paused') then
    redis.call('HSET', KEYS[1], 'paused', 'the budget given is already spent')
  end
  return {'spent'}
end
if ARGV[3] ~= '1' then
  if redis.call('HGET', KEYS[1], 'paused') then return {'paused'} end
  return {'running'}
end
if redis.call('HEXISTS', KEYS[1], 'halted') == 1 then redis.call('HINCRBY', KEYS[1], 'lifts', 1) end
redis.call('HDEL', KEYS[1], 'paused', 'halted')
local parked = redis.call('SMEMBERS', KEYS[2])
table.insert(parked, 1, 'resumed')
return parked
";

// A backend halted: the run is paused with why (unless it already was),
// marked halted, and the tasks never sent are set aside for `resume`.
const HALT: &str = r"
if redis.call('HEXISTS', KEYS[1], 'paused') == 0 then
  redis.call('HSET', KEYS[1], 'paused', ARGV[1])
end
redis.call('HSETNX', KEYS[1], 'halted', ARGV[1])
for i = 2, #ARGV do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'parked', 1)
  end
end
return 1
";

// Sets a task aside only while the run is still paused, remembering it for
// `resume`; a task set aside again (its bundle delivered again) counts once.
const PARK: &str = r"
if redis.call('HEXISTS', KEYS[1], 'paused') == 0 then return 0 end
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'parked', 1)
end
return 1
";

/// A cap as `set_caps` takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cap<T> {
    /// Keep the cap the run has (or its lack of one).
    Keep,
    /// Remove the run's cap.
    Remove,
    /// Set it to this.
    To(T),
}

impl<T: ToString> Cap<T> {
    fn arg(&self) -> String {
        match self {
            Cap::Keep => String::new(),
            Cap::Remove => "-".into(),
            Cap::To(v) => v.to_string(),
        }
    }
}

/// What setting the caps did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapsSet {
    /// The run has already spent what the caps allow; it is (or stays) paused.
    Spent,
    /// The run is paused, and only `resume` continues it.
    Paused,
    /// The run goes on (it was not paused).
    Running,
    /// The run was paused and goes on: the tasks set aside meanwhile
    /// (their rounds), to be published again.
    Resumed(Vec<RoundKey>),
}

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
    /// Why a backend halted the run, when one did (it is paused too).
    pub halted: Option<String>,
    /// How many times a halt was lifted (a worker's halted backend is built
    /// afresh once this passes what it was built under).
    pub lifts: u64,
    /// Tasks workers set aside while it was paused (redone by `resume`).
    pub parked: u64,
}

/// Every run's budget, for a worker: one handle, any run.
#[derive(Clone)]
pub struct Budgets {
    conn: ConnectionManager,
    charge: Script,
    park: Script,
    halt: Script,
    /// Charges Redis could not take, per run: (USD, tokens).
    owed: Arc<Mutex<HashMap<String, (f64, u64)>>>,
}

impl Budgets {
    /// The budgets over an open connection.
    pub fn new(conn: ConnectionManager) -> Budgets {
        Budgets {
            conn,
            charge: Script::new(CHARGE),
            park: Script::new(PARK),
            halt: Script::new(HALT),
            owed: Arc::default(),
        }
    }

    /// `usd` and `tokens` plus what `run` still owes from charges Redis
    /// could not take; the debt is cleared, to be kept again by [`Budgets::owe`] if this charge fails too.
    pub(crate) fn owed(&self, run: &str, usd: f64, tokens: u64) -> (f64, u64) {
        let mut owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
        match owed.remove(run) {
            Some((u, t)) => (usd + u, tokens + t),
            None => (usd, tokens),
        }
    }

    /// Keeps a charge Redis could not take, for `run`'s next one.
    pub(crate) fn owe(&self, run: &str, usd: f64, tokens: u64) {
        let mut owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
        let debt = owed.entry(run.to_string()).or_default();
        debt.0 += usd;
        debt.1 += tokens;
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

    /// Adds what a task paid to `run`'s spending, once per `id` however
    /// often it is tried; answers why the run is now paused when this (or an
    /// earlier) charge reached a cap.
    pub async fn charge(
        &self,
        run: &str,
        id: &str,
        usd: f64,
        tokens: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn.clone();
        self.charge
            .key(run_key(run, "budget"))
            .key(run_key(run, "charges"))
            .arg(usd)
            .arg(tokens)
            .arg(id)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("charge the run's budget"))
    }

    /// Sets aside the task `field` (`<unit>#<round>`) of `run` if the run
    /// is still paused, for `resume` to publish again; false when it is not
    /// (it was resumed meanwhile) and the task is to be done.
    pub async fn park(&self, run: &str, round: &RoundKey) -> Result<bool, StoreError> {
        let mut conn = self.conn.clone();
        let parked: i32 = self
            .park
            .key(run_key(run, "budget"))
            .key(run_key(run, "parked"))
            .arg(round.to_string())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("set a task aside"))?;
        Ok(parked == 1)
    }
}

impl Budgets {
    /// A backend of `run` halted with `why`: pauses the run (so that the
    /// coordinator stops with that cause) and sets aside the tasks `fields`
    /// that were never sent, for `resume` to publish again once it is fixed.
    pub async fn halt(&self, run: &str, why: &str, rounds: &[RoundKey]) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let mut call = self.halt.prepare_invoke();
        call.key(run_key(run, "budget"))
            .key(run_key(run, "parked"))
            .arg(why);
        for r in rounds {
            call.arg(r.to_string());
        }
        let _: i32 = call
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("halt the run"))?;
        Ok(())
    }
}

impl RunStore {
    /// Sets the run's caps; with `resume`, a paused run whose new caps
    /// exceed what it spent is unpaused and its tasks set aside are handed back.
    pub async fn set_caps(
        &self,
        usd: Cap<f64>,
        tokens: Cap<u64>,
        resume: bool,
    ) -> Result<CapsSet, StoreError> {
        let mut conn = self.conn.clone();
        let mut answer: Vec<String> = Script::new(SET_CAPS)
            .key(self.key("budget"))
            .key(self.key("parked"))
            .arg(usd.arg())
            .arg(tokens.arg())
            .arg(if resume { "1" } else { "0" })
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("set the run's caps"))?;
        let status = if answer.is_empty() {
            String::new()
        } else {
            answer.remove(0)
        };
        match status.as_str() {
            "spent" => Ok(CapsSet::Spent),
            "paused" => Ok(CapsSet::Paused),
            "running" => Ok(CapsSet::Running),
            "resumed" => answer
                .iter()
                .map(|a| a.parse())
                .collect::<Result<_, _>>()
                .map(CapsSet::Resumed)
                .map_err(|e: autoeval_proto::NotAKey| StoreError::Corrupt {
                    what: "a task set aside".into(),
                    detail: e.to_string(),
                }),
            other => Err(StoreError::Corrupt {
                what: "answer to setting the caps".into(),
                detail: other.to_string(),
            }),
        }
    }

    /// Takes `rounds` out of the set of tasks set aside, once their
    /// publish is confirmed: until then a crash leaves them to the next resume.
    pub async fn unpark(&self, rounds: &[RoundKey]) -> Result<(), StoreError> {
        if rounds.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let members: Vec<String> = rounds.iter().map(ToString::to_string).collect();
        conn.srem::<_, _, ()>(self.key("parked"), members)
            .await
            .map_err(redis_err("take published tasks out of the set aside"))
    }

    /// Puts back a budget Redis lost: its caps where none is set, and what
    /// was spent before the loss added to what was charged since, so that
    /// no cap is lifted or overshot by losing Redis.
    pub async fn restore_budget(&self, lost: &Budget) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let key = self.key("budget");
        let mut pipe = redis::pipe();
        pipe.atomic();
        if let Some(usd) = lost.cap_usd {
            pipe.hset_nx(&key, "cap_usd", usd).ignore();
        }
        if let Some(tokens) = lost.cap_tokens {
            pipe.hset_nx(&key, "cap_tokens", tokens).ignore();
        }
        pipe.cmd("HINCRBYFLOAT")
            .arg(&key)
            .arg("spent_usd")
            .arg(lost.spent_usd)
            .ignore();
        pipe.hincr(&key, "spent_tokens", lost.spent_tokens).ignore();
        if let Some(why) = &lost.paused {
            pipe.hset_nx(&key, "paused", why).ignore();
        }
        if let Some(why) = &lost.halted {
            pipe.hset_nx(&key, "halted", why).ignore();
        }
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("restore the run's budget"))
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
            halted: fields.get("halted").cloned(),
            lifts: number("lifts").map_or(0, |t| t as u64),
            parked: number("parked").map_or(0, |t| t as u64),
        })
    }
}

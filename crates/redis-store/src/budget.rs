//! A run's spending caps, in `autoeval:{RUN}:budget`: what it may spend
//! (`cap_usd`, `cap_tokens`), what its workers have paid (`spent_usd`,
//! `spent_tokens`), why it is paused (`paused`) and how many tasks workers
//! set aside while it was (`parked`, with the tasks themselves in the set
//! `autoeval:{RUN}:parked`). Only a run with a cap is charged. A worker charges each task's cost in
//! one script that also pauses the run the moment a cap is reached; every
//! worker then sets the run's tasks aside until `resume` raises the cap.
//!
//! Each worker process (a payer) sends what it has paid for the run in all,
//! kept in the budget's `paid:<payer>:tokens` and `paid:<payer>:usd`; the
//! spend grows by the difference. A charge tried twice, or overtaken by a
//! later one, adds nothing, and a charge Redis lost (not taken, or lost with
//! an emptied Redis) is made good by that payer's next one.

use crate::Connection;
use crate::{redis_err, RunStore, StoreError};
use autoeval_proto::fleet::run_key;
use autoeval_proto::RoundKey;
use redis::{AsyncCommands, Script};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

// The end of both charges: a paused run says why; otherwise the run is
// paused the moment its spend reaches a cap, and says why.
macro_rules! pause_at_a_cap {
    () => {
        r"
local paused = redis.call('HGET', KEYS[1], 'paused')
if paused then return paused end
local usd = tonumber(redis.call('HGET', KEYS[1], 'spent_usd') or '0')
local tokens = tonumber(redis.call('HGET', KEYS[1], 'spent_tokens') or '0')
local cap_usd = tonumber(redis.call('HGET', KEYS[1], 'cap_usd') or '')
local cap_tokens = tonumber(redis.call('HGET', KEYS[1], 'cap_tokens') or '')
local why = false
if cap_usd and usd >= cap_usd then
  why = string.format('the cost cap of $%.4f is reached', cap_usd)
elseif cap_tokens and tokens >= cap_tokens then
  why = string.format('the token cap of %d is reached', cap_tokens)
end
if why then redis.call('HSET', KEYS[1], 'paused', why) end
return why"
    };
}

// ARGV[1]: the payer; ARGV[2], ARGV[3]: what it has paid for the run in
// all (USD, tokens). The spend grows by what this adds to the payer's
// last total: a retried or overtaken charge adds nothing.
const CHARGE: &str = concat!(
    r"
local tf = 'paid:' .. ARGV[1] .. ':tokens'
local uf = 'paid:' .. ARGV[1] .. ':usd'
local dt = tonumber(ARGV[3]) - tonumber(redis.call('HGET', KEYS[1], tf) or '0')
local du = tonumber(ARGV[2]) - tonumber(redis.call('HGET', KEYS[1], uf) or '0')
if dt > 0 then
  redis.call('HSET', KEYS[1], tf, ARGV[3])
  redis.call('HINCRBY', KEYS[1], 'spent_tokens', dt)
end
if du > 0 then
  redis.call('HSET', KEYS[1], uf, ARGV[2])
  redis.call('HINCRBYFLOAT', KEYS[1], 'spent_usd', du)
end
",
    pause_at_a_cap!()
);

// ARGV[1]: a batch's payer name (`batch:<model>:<id>`); ARGV[2], ARGV[3]:
// what the batch stands at now (USD, tokens): its estimate when submitted,
// its cost once it ended. The spend moves by the difference from its last
// charge, down as well as up; the caps are then checked as CHARGE does.
const CHARGE_BATCH: &str = concat!(
    r"
local tf = 'paid:' .. ARGV[1] .. ':tokens'
local uf = 'paid:' .. ARGV[1] .. ':usd'
local dt = tonumber(ARGV[3]) - tonumber(redis.call('HGET', KEYS[1], tf) or '0')
local du = tonumber(ARGV[2]) - tonumber(redis.call('HGET', KEYS[1], uf) or '0')
redis.call('HSET', KEYS[1], tf, ARGV[3])
redis.call('HSET', KEYS[1], uf, ARGV[2])
if dt ~= 0 then redis.call('HINCRBY', KEYS[1], 'spent_tokens', dt) end
if du ~= 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'spent_usd', du) end
",
    pause_at_a_cap!()
);

// Puts back a budget Redis lost: ARGV[1..4] the caps, why it was paused
// and halted ('' for none), set where none is; then pairs of a field
// `paid:<payer>:<tokens|usd>` and its total, each kept at the larger of
// what was read before the loss and what was charged since; the spend is
// then the payers' totals added up, so nothing is counted twice or lost.
const RESTORE: &str = r"
local function keep(field, value)
  if value ~= '' then redis.call('HSETNX', KEYS[1], field, value) end
end
keep('cap_usd', ARGV[1])
keep('cap_tokens', ARGV[2])
keep('paused', ARGV[3])
keep('halted', ARGV[4])
for i = 5, #ARGV, 2 do
  local now = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if tonumber(ARGV[i + 1]) > now then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
local tokens, usd = 0, 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 5) == 'paid:' then
    if string.sub(all[i], -7) == ':tokens' then tokens = tokens + tonumber(all[i + 1])
    elseif string.sub(all[i], -4) == ':usd' then usd = usd + tonumber(all[i + 1]) end
  end
end
redis.call('HSET', KEYS[1], 'spent_tokens', string.format('%d', tokens))
redis.call('HSET', KEYS[1], 'spent_usd', string.format('%.17g', usd))
return 1
";

// Caps: ARGV[1] (USD) and ARGV[2] (tokens), '' keeping a cap, '-' removing it.
// Reached: answers 'spent' and changes nothing. Otherwise, resuming
// (ARGV[3] == '1'): unpauses the run and answers the tasks set aside, which
// stay in their set until their publish is confirmed (`unpark`), so a crash
// in between leaves them to the next resume. Not resuming, a paused run
// stays paused, its caps as they were: 'paused'.
const SET_CAPS: &str = r"
local function cap(field, value)
  if value == '-' then return nil end
  if value == '' then return tonumber(redis.call('HGET', KEYS[1], field) or '') end
  return tonumber(value)
end
local cap_usd = cap('cap_usd', ARGV[1])
local cap_tokens = cap('cap_tokens', ARGV[2])
local usd = tonumber(redis.call('HGET', KEYS[1], 'spent_usd') or '0')
local tokens = tonumber(redis.call('HGET', KEYS[1], 'spent_tokens') or '0')
-- Refused, nothing changes: not the caps, not the run's state.
if (cap_usd and usd >= cap_usd) or (cap_tokens and tokens >= cap_tokens) then
  return {'spent'}
end
if ARGV[3] ~= '1' and redis.call('HGET', KEYS[1], 'paused') then return {'paused'} end
local function set(field, value)
  if value == '-' then redis.call('HDEL', KEYS[1], field)
  elseif value ~= '' then redis.call('HSET', KEYS[1], field, value) end
end
set('cap_usd', ARGV[1])
set('cap_tokens', ARGV[2])
if ARGV[3] ~= '1' then return {'running'} end
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
    /// The run has already spent what the caps asked for allow; nothing was changed.
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
    /// What each payer (a worker process) has paid in all: (USD, tokens).
    pub paid: BTreeMap<String, (f64, u64)>,
}

/// A budget's `paused`, `cap_usd` and `cap_tokens`, as read.
type Flags = (Option<String>, Option<String>, Option<String>);

/// Every run's budget, for a worker: one handle, any run.
#[derive(Clone)]
pub struct Budgets {
    conn: Connection,
    charge: Script,
    charge_batch: Script,
    park: Script,
    halt: Script,
    /// This process's name as a payer, unique to it.
    payer: Arc<str>,
    /// What this process has paid per run in all: (USD, tokens).
    paid: Arc<Mutex<HashMap<String, (f64, u64)>>>,
}

impl Budgets {
    /// The budgets over an open connection.
    pub fn new(conn: Connection) -> Budgets {
        Budgets {
            conn,
            charge: Script::new(CHARGE),
            charge_batch: Script::new(CHARGE_BATCH),
            park: Script::new(PARK),
            halt: Script::new(HALT),
            payer: crate::cache::fresh_token().0.into(),
            paid: Arc::default(),
        }
    }

    /// Adds `usd` and `tokens` to what this process has paid for `run`; the new totals.
    pub(crate) fn pay(&self, run: &str, usd: f64, tokens: u64) -> (f64, u64) {
        let mut paid = self.paid.lock().unwrap_or_else(|p| p.into_inner());
        let total = paid.entry(run.to_string()).or_default();
        total.0 += usd;
        total.1 += tokens;
        *total
    }

    /// Why `run` is paused, if it is, and whether it is charged: it has a
    /// cap, or Redis lost its registration (until the coordinator puts the
    /// caps back, its tasks are charged rather than let through unmetered).
    pub async fn state(&self, run: &str) -> Result<(Option<String>, bool), StoreError> {
        let mut conn = self.conn.clone();
        let ((paused, usd, tokens), registered): (Flags, bool) = redis::pipe()
            .cmd("HMGET")
            .arg(run_key(run, "budget"))
            .arg(&["paused", "cap_usd", "cap_tokens"])
            .exists(run_key(run, "meta"))
            .query_async(&mut conn)
            .await
            .map_err(redis_err("read the run's budget"))?;
        Ok((paused, usd.is_some() || tokens.is_some() || !registered))
    }

    /// Sends what this process has paid for `run` in all (`usd`, `tokens`);
    /// the run's spend grows by what that adds to its last total, so the
    /// same totals sent twice count once. Answers why the run is now paused
    /// when this (or an earlier) charge reached a cap.
    pub async fn charge(
        &self,
        run: &str,
        usd: f64,
        tokens: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn.clone();
        self.charge
            .key(run_key(run, "budget"))
            .arg(&*self.payer)
            .arg(usd)
            .arg(tokens)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("charge the run's budget"))
    }

    /// Charges provider batch `id` of `model` to `run` at `usd` and
    /// `tokens`, replacing its last charge (its estimate, once its results
    /// are in): a charge made twice counts once. Answers why the run is
    /// now paused when this (or an earlier) charge reached a cap.
    pub async fn charge_batch(
        &self,
        run: &str,
        model: &str,
        id: &str,
        usd: f64,
        tokens: u64,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn.clone();
        self.charge_batch
            .key(run_key(run, "budget"))
            .arg(format!("batch:{model}:{id}"))
            .arg(usd)
            .arg(tokens)
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("charge a batch to the run's budget"))
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

    /// Tells every worker to build the run's backends afresh before its next
    /// task (a redo after the cause of failures was fixed): a backend that
    /// halted tries its model again at once.
    pub async fn start_backends_afresh(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        conn.hincr::<_, _, _, ()>(self.key("budget"), "lifts", 1)
            .await
            .map_err(redis_err("start the run's backends afresh"))
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

    /// Puts back a budget Redis lost: its caps (and why it was paused or
    /// halted) where none is set, and each payer's total at the larger of
    /// `lost`'s and what it charged since, the spend their sum: no cap is
    /// lifted by losing Redis, and no charge is lost or counted twice.
    pub async fn restore_budget(&self, lost: &Budget) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let text = |v: Option<String>| v.unwrap_or_default();
        let script = Script::new(RESTORE);
        let mut call = script.prepare_invoke();
        call.key(self.key("budget"))
            .arg(text(lost.cap_usd.map(|c| c.to_string())))
            .arg(text(lost.cap_tokens.map(|c| c.to_string())))
            .arg(text(lost.paused.clone()))
            .arg(text(lost.halted.clone()));
        for (payer, (usd, tokens)) in &lost.paid {
            call.arg(format!("paid:{payer}:tokens"))
                .arg(tokens)
                .arg(format!("paid:{payer}:usd"))
                .arg(usd);
        }
        call.invoke_async::<i32>(&mut conn)
            .await
            .map_err(redis_err("restore the run's budget"))?;
        Ok(())
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
            paid: payers(&fields),
        })
    }
}

/// Each payer's totals among a budget's fields.
fn payers(fields: &HashMap<String, String>) -> BTreeMap<String, (f64, u64)> {
    let mut paid: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for (field, value) in fields {
        let Some(rest) = field.strip_prefix("paid:") else {
            continue;
        };
        if let Some(payer) = rest.strip_suffix(":tokens") {
            paid.entry(payer.into()).or_default().1 = value.parse().unwrap_or(0);
        } else if let Some(payer) = rest.strip_suffix(":usd") {
            paid.entry(payer.into()).or_default().0 = value.parse().unwrap_or(0.0);
        }
    }
    paid
}

/// A run's budget as the model client charges its provider batches.
pub struct RunSpend {
    budgets: Budgets,
    run: String,
}

impl RunSpend {
    /// The batch spending of `run`, charged through `budgets`.
    pub fn new(budgets: Budgets, run: &str) -> RunSpend {
        RunSpend {
            budgets,
            run: run.to_string(),
        }
    }
}

impl autoeval_models::BatchSpend for RunSpend {
    fn charge<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
        usd: f64,
        tokens: u64,
    ) -> autoeval_models::CacheFuture<'a, Result<(), autoeval_models::JournalUnavailable>> {
        Box::pin(async move {
            match self
                .budgets
                .charge_batch(&self.run, model, id, usd, tokens)
                .await
            {
                Ok(Some(why)) => {
                    tracing::info!(run = %self.run, why, "the run is paused");
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(e) => Err(autoeval_models::JournalUnavailable(e.to_string())),
            }
        })
    }
}

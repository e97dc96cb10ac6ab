//! The tasks each fleet process holds, by run, stage and shard. Every
//! process tells Redis its own counts every second with a short expiry, so
//! `status` sums what live processes hold and a killed process's share
//! vanishes by itself. With them go the process's rate-limit waits (same
//! expiry) and its whole work per run so far (kept: round trips translated,
//! rounds proved, busy seconds), which the progress line and the summary read.

use crate::Connection;
use crate::{redis_err, RunStore, StoreError};
use autoeval_models::{RateWait, WaitCause, Waits};
use autoeval_proto::fleet::run_key;
use redis::AsyncCommands;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a process tells Redis what it holds.
const TELL_EVERY: Duration = Duration::from_secs(1);
/// How long a process's count outlives its last report.
const EXPIRES_S: i64 = 5;

/// (run, stage, shard) → tasks held.
type Counts = HashMap<(String, &'static str, u32), u64>;

/// What this process did for one run since it started, told whole each
/// time, so a retried or lost report costs nothing and a Redis that lost
/// the run has the totals back with the next report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Round trips translated (the model answered, or the call failed for good).
    pub translated: u64,
    /// Rounds proved.
    pub proved: u64,
    /// Seconds spent translating, summed over the tasks.
    pub translate_s: f64,
    /// Seconds spent proving, summed over the checks.
    pub verify_s: f64,
    /// Seconds spent storing rounds.
    pub record_s: f64,
}

/// A stage whose busy time [`Holding::worked`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// One round trip translated.
    Translate,
    /// One round proved.
    Verify,
    /// Rounds stored.
    Record,
}

/// A run's work, and whether it changed since the last report.
#[derive(Default)]
struct Told {
    work: Work,
    changed: bool,
}

/// This process's tasks in hand, counted as they are taken and settled,
/// with its work per run and its backends' rate-limit waits.
#[derive(Clone)]
pub struct Holding {
    holder: String,
    counts: Arc<Mutex<Counts>>,
    work: Arc<Mutex<HashMap<String, Told>>>,
    waits: Option<Arc<Waits>>,
}

/// One task in hand; dropping it counts the task settled.
pub struct Held {
    counts: Arc<Mutex<Counts>>,
    key: (String, &'static str, u32),
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.counts.lock() {
            if let Some(n) = counts.get_mut(&self.key) {
                *n = n.saturating_sub(1);
            }
        }
    }
}

impl Holding {
    /// Counts for a process named `holder` (unique in the fleet).
    pub fn new(holder: impl Into<String>) -> Holding {
        Holding {
            holder: holder.into(),
            counts: Arc::default(),
            work: Arc::default(),
            waits: None,
        }
    }

    /// Also tells, with each run it holds, the rate-limit waits of `waits`.
    pub fn with_waits(mut self, waits: Arc<Waits>) -> Holding {
        self.waits = Some(waits);
        self
    }

    /// Counts `busy` time of `stage` for `run` (and a round trip translated).
    pub fn worked(&self, run: &str, stage: Busy, busy: Duration) {
        let Ok(mut all) = self.work.lock() else {
            return;
        };
        let told = all.entry(run.to_string()).or_default();
        let s = busy.as_secs_f64();
        match stage {
            Busy::Translate => {
                told.work.translated += 1;
                told.work.translate_s += s;
            }
            Busy::Verify => {
                told.work.proved += 1;
                told.work.verify_s += s;
            }
            Busy::Record => told.work.record_s += s,
        }
        told.changed = true;
    }

    /// Counts one task of `run`'s `stage` in `shard` as held until the guard drops.
    pub fn hold(&self, run: &str, stage: &'static str, shard: u32) -> Held {
        let key = (run.to_string(), stage, shard);
        if let Ok(mut counts) = self.counts.lock() {
            *counts.entry(key.clone()).or_default() += 1;
        }
        Held {
            counts: self.counts.clone(),
            key,
        }
    }

    /// Tells Redis this process's counts every second, until the runtime ends.
    pub fn spawn_reporter(&self, conn: Connection) -> tokio::task::JoinHandle<()> {
        let me = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TELL_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = me.report(&conn).await {
                    tracing::debug!(error = %e, "cannot tell Redis the tasks in hand");
                }
            }
        })
    }

    /// Writes the current counts of each run this process holds or held
    /// since the last report, then forgets the runs it no longer holds.
    async fn report(&self, conn: &Connection) -> Result<(), StoreError> {
        let mut by_run: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
        let mut told_zero = Vec::new();
        if let Ok(counts) = self.counts.lock() {
            for (key, n) in counts.iter() {
                let (run, stage, shard) = key;
                if *n == 0 {
                    told_zero.push(key.clone());
                }
                by_run
                    .entry(run.clone())
                    .or_default()
                    .push((format!("{stage}|{shard}"), *n));
            }
        }
        // A run's work is told when it changed, and again while the run is
        // held, so a Redis that lost it has it back.
        let mut work: Vec<(String, Work)> = Vec::new();
        if let Ok(mut all) = self.work.lock() {
            for (run, told) in all.iter_mut() {
                if told.changed || by_run.contains_key(run) {
                    work.push((run.clone(), told.work));
                    told.changed = false;
                }
            }
        }
        let waits = self.waits.as_ref().map(|w| w.current()).unwrap_or_default();
        let limits = self
            .waits
            .as_ref()
            .map(|w| w.concurrency())
            .unwrap_or_default();
        if by_run.is_empty() && work.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (run, fields) in &by_run {
            let mine = holding_key(run, &self.holder);
            pipe.del(&mine)
                .ignore()
                .hset_multiple(&mine, fields)
                .ignore()
                .expire(&mine, EXPIRES_S)
                .ignore()
                .sadd(run_key(run, "holders"), &self.holder)
                .ignore();
            let waiting = waiting_key(run, &self.holder);
            pipe.del(&waiting).ignore();
            if !waits.is_empty() || !limits.is_empty() {
                let fields: Vec<(String, u64)> = waits
                    .iter()
                    .map(|w| {
                        (
                            format!("{}|{}", w.cause.name(), w.model),
                            w.remaining.as_millis() as u64,
                        )
                    })
                    .chain(
                        limits
                            .iter()
                            .map(|(model, n)| (format!("{CONCURRENCY}|{model}"), *n as u64)),
                    )
                    .collect();
                pipe.hset_multiple(&waiting, &fields)
                    .ignore()
                    .expire(&waiting, EXPIRES_S)
                    .ignore();
            }
        }
        for (run, w) in &work {
            let h = &self.holder;
            pipe.hset_multiple(
                run_key(run, "work"),
                &[
                    (format!("{h}|translated"), w.translated as f64),
                    (format!("{h}|proved"), w.proved as f64),
                    (format!("{h}|translate_s"), w.translate_s),
                    (format!("{h}|verify_s"), w.verify_s),
                    (format!("{h}|record_s"), w.record_s),
                ],
            )
            .ignore();
        }
        let mut conn = conn.clone();
        if let Err(e) = pipe.query_async::<()>(&mut conn).await {
            // Told again next time.
            if let Ok(mut all) = self.work.lock() {
                for (run, _) in &work {
                    if let Some(told) = all.get_mut(run) {
                        told.changed = true;
                    }
                }
            }
            return Err(redis_err("tell Redis the tasks in hand")(e));
        }
        // Zeros told once are dropped, so a run no longer worked on stops
        // being told and its key expires.
        if let Ok(mut counts) = self.counts.lock() {
            for key in told_zero {
                if counts.get(&key) == Some(&0) {
                    counts.remove(&key);
                }
            }
        }
        Ok(())
    }
}

/// The field prefix of a model's concurrency limit among a process's waits.
const CONCURRENCY: &str = "concurrency";

fn holding_key(run: &str, holder: &str) -> String {
    run_key(run, &format!("holding:{holder}"))
}

fn waiting_key(run: &str, holder: &str) -> String {
    run_key(run, &format!("waiting:{holder}"))
}

impl RunStore {
    /// Tasks of this run held by live fleet processes, by (stage, shard).
    pub async fn held(&self) -> Result<BTreeMap<(String, u32), u64>, StoreError> {
        let mut conn = self.conn.clone();
        let holders: Vec<String> = conn
            .smembers(self.key("holders"))
            .await
            .map_err(redis_err("read the run's holders"))?;
        let mut out = BTreeMap::new();
        for holder in holders {
            let counts: HashMap<String, u64> = conn
                .hgetall(holding_key(&self.run, &holder))
                .await
                .map_err(redis_err("read the tasks in hand"))?;
            if counts.is_empty() {
                // Gone quiet for longer than the expiry: no longer counted.
                let _: Result<(), _> = conn.srem(self.key("holders"), &holder).await;
            }
            for (field, n) in counts {
                let Some((stage, shard)) = field.rsplit_once('|') else {
                    continue;
                };
                if let Ok(shard) = shard.parse() {
                    *out.entry((stage.to_string(), shard)).or_default() += n;
                }
            }
        }
        Ok(out)
    }

    /// What every process did for this run so far, summed.
    pub async fn work(&self) -> Result<Work, StoreError> {
        let mut conn = self.conn.clone();
        let fields: HashMap<String, f64> = conn
            .hgetall(self.key("work"))
            .await
            .map_err(redis_err("read the run's work"))?;
        let mut sum = Work::default();
        for (field, v) in fields {
            match field.rsplit_once('|').map(|(_, what)| what) {
                Some("translated") => sum.translated += v.max(0.0) as u64,
                Some("proved") => sum.proved += v.max(0.0) as u64,
                Some("translate_s") => sum.translate_s += v,
                Some("verify_s") => sum.verify_s += v,
                Some("record_s") => sum.record_s += v,
                _ => {}
            }
        }
        Ok(sum)
    }

    /// Each model's concurrency limits now, as the run's live processes
    /// report them: (the sum over processes, how many processes).
    pub async fn concurrency(&self) -> Result<BTreeMap<String, (u64, u64)>, StoreError> {
        let mut conn = self.conn.clone();
        let holders: Vec<String> = conn
            .smembers(self.key("holders"))
            .await
            .map_err(redis_err("read the run's holders"))?;
        let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for holder in holders {
            let fields: HashMap<String, u64> = conn
                .hgetall(waiting_key(&self.run, &holder))
                .await
                .map_err(redis_err("read the concurrency limits"))?;
            for (field, n) in fields {
                if let Some((CONCURRENCY, model)) = field.split_once('|') {
                    let at = out.entry(model.to_string()).or_default();
                    at.0 += n;
                    at.1 += 1;
                }
            }
        }
        Ok(out)
    }

    /// The rate-limit waits the run's live processes report, the longest per model and cause.
    pub async fn rate_waits(&self) -> Result<Vec<RateWait>, StoreError> {
        let mut conn = self.conn.clone();
        let holders: Vec<String> = conn
            .smembers(self.key("holders"))
            .await
            .map_err(redis_err("read the run's holders"))?;
        let mut longest: BTreeMap<(String, WaitCause), u64> = BTreeMap::new();
        for holder in holders {
            let waits: HashMap<String, u64> = conn
                .hgetall(waiting_key(&self.run, &holder))
                .await
                .map_err(redis_err("read the rate-limit waits"))?;
            for (field, ms) in waits {
                let Some((cause, model)) = field.split_once('|') else {
                    continue;
                };
                if let Some(cause) = WaitCause::from_name(cause) {
                    let at = longest.entry((model.to_string(), cause)).or_default();
                    *at = (*at).max(ms);
                }
            }
        }
        let mut waits: Vec<RateWait> = longest
            .into_iter()
            .map(|((model, cause), ms)| RateWait {
                model,
                cause,
                remaining: Duration::from_millis(ms),
            })
            .collect();
        waits.sort_by_key(|w| std::cmp::Reverse(w.remaining));
        Ok(waits)
    }

    /// The keys of the processes holding this run's tasks, for deletion.
    pub(crate) async fn holding_keys(&self) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conn.clone();
        let holders: Vec<String> = conn
            .smembers(self.key("holders"))
            .await
            .map_err(redis_err("read the run's holders"))?;
        Ok(holders
            .iter()
            .flat_map(|h| [holding_key(&self.run, h), waiting_key(&self.run, h)])
            .chain([self.key("holders"), self.key("work")])
            .collect())
    }
}

//! The tasks each fleet process holds, by run, stage and shard. Every
//! process tells Redis its own counts every second with a short expiry, so
//! `status` sums what live processes hold and a killed process's share
//! vanishes by itself.

use crate::{redis_err, RunStore, StoreError};
use autoeval_proto::fleet::run_key;
use redis::aio::ConnectionManager;
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

/// This process's tasks in hand, counted as they are taken and settled.
#[derive(Clone)]
pub struct Holding {
    holder: String,
    counts: Arc<Mutex<Counts>>,
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
        }
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
    pub fn spawn_reporter(&self, conn: ConnectionManager) -> tokio::task::JoinHandle<()> {
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
    async fn report(&self, conn: &ConnectionManager) -> Result<(), StoreError> {
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
        if by_run.is_empty() {
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
        }
        let mut conn = conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("tell Redis the tasks in hand"))?;
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

fn holding_key(run: &str, holder: &str) -> String {
    run_key(run, &format!("holding:{holder}"))
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

    /// The keys of the processes holding this run's tasks, for deletion.
    pub(crate) async fn holding_keys(&self) -> Result<Vec<String>, StoreError> {
        let mut conn = self.conn.clone();
        let holders: Vec<String> = conn
            .smembers(self.key("holders"))
            .await
            .map_err(redis_err("read the run's holders"))?;
        Ok(holders
            .iter()
            .map(|h| holding_key(&self.run, h))
            .chain([self.key("holders")])
            .collect())
    }
}

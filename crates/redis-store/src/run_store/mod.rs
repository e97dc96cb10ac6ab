//! One run's keys: the store of its rounds, judgements, metadata and
//! lifetime. Rounds are in `rounds.rs`, judgements in `judgements.rs`.

mod judgements;
mod rounds;

pub use rounds::{counter_field, Arrived};

use crate::runs::{glob_literal, scan_keys};
use crate::Connection;
use crate::{redis_err, RedisJournal, StoreError};
use autoeval_proto::fleet::run_key;
use redis::{AsyncCommands, Script};
use std::collections::BTreeMap;

/// One run's keys.
#[derive(Clone)]
pub struct RunStore {
    pub(crate) conn: Connection,
    pub(crate) run: String,
    pub(crate) record: Script,
    pub(crate) forget: Script,
    pub(crate) trim: Script,
    pub(crate) judged: Script,
}

impl RunStore {
    /// The store of `run` over an open connection.
    pub fn new(conn: Connection, run: &str) -> RunStore {
        RunStore {
            conn,
            run: run.to_string(),
            record: Script::new(rounds::RECORD),
            forget: Script::new(rounds::FORGET),
            trim: Script::new(rounds::TRIM),
            judged: Script::new(judgements::JUDGED),
        }
    }

    /// The run's name.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// The run's batch journal: the provider batches its workers submitted.
    pub fn journal(&self) -> RedisJournal {
        RedisJournal::new(self.conn.clone(), &self.run)
    }

    pub(crate) fn key(&self, part: &str) -> String {
        run_key(&self.run, part)
    }

    pub(crate) fn keys(&self) -> [String; 7] {
        [
            "results",
            "tally",
            "counts",
            "final",
            "done",
            "arrivals",
            "counter-ids",
        ]
        .map(|p| self.key(p))
    }

    /// Every field of a hash, read in batches of a thousand.
    pub(crate) async fn scan_hash(
        &self,
        hash: &str,
        mut each: impl FnMut(&str, &str) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let mut cursor: u64 = 0;
        loop {
            let (next, pairs): (u64, Vec<(String, String)>) = redis::cmd("HSCAN")
                .arg(hash)
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .map_err(redis_err(format!("read {hash}")))?;
            for (field, value) in &pairs {
                each(field, value)?;
            }
            if next == 0 {
                return Ok(());
            }
            cursor = next;
        }
    }

    /// Sets fields of the run's metadata.
    pub async fn set_meta(&self, fields: &[(&str, String)]) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        conn.hset_multiple::<_, _, _, ()>(self.key("meta"), fields)
            .await
            .map_err(redis_err("write the run's metadata"))
    }

    /// The run's metadata; empty when no run of this name was registered.
    pub async fn meta(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let mut conn = self.conn.clone();
        conn.hgetall(self.key("meta"))
            .await
            .map_err(redis_err("read the run's metadata"))
    }

    /// Every key the run may hold.
    pub(crate) async fn all_keys(&self) -> Result<Vec<String>, StoreError> {
        let mut keys = self.keys().to_vec();
        keys.extend(self.holding_keys().await?);
        // Each judge that judged the run left its settings in `meta`.
        for field in self.meta().await?.keys() {
            // A field that names no judge was never given a judgement.
            if let Some(Ok(judge)) = autoeval_proto::meta::judge_of(field) {
                keys.extend(self.judge_keys(&judge));
            }
        }
        for part in ["arrivals-base", "cache", "budget", "parked", "meta"] {
            keys.push(self.key(part));
        }
        keys.extend(RedisJournal::keys(&self.run));
        Ok(keys)
    }

    /// Deletes every key of the run.
    pub async fn delete(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let keys = self.all_keys().await?;
        // Freed in the background: a big run's hashes hold a field per unit.
        conn.unlink::<_, ()>(keys)
            .await
            .map_err(redis_err("delete the run"))
    }

    /// Marks the run finished now and lets every key of it expire in
    /// `keep_s` seconds.
    pub async fn finish(&self, keep_s: u64) -> Result<(), StoreError> {
        self.set_meta(&[(autoeval_proto::meta::FINISHED, unix_now().to_string())])
            .await?;
        let keys = self.existing_keys().await?;
        let mut pipe = redis::pipe();
        for k in &keys {
            pipe.expire(k, keep_s.min(i64::MAX as u64) as i64).ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("let the finished run expire"))
    }

    /// Deletes every key of the run found by its name: what is left of a
    /// run whose registration is gone.
    pub async fn delete_leftovers(&self) -> Result<(), StoreError> {
        let keys = self.existing_keys().await?;
        if keys.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        conn.unlink::<_, ()>(keys)
            .await
            .map_err(redis_err("delete the run's leftover keys"))
    }

    /// Every key of the run that exists now, found by its name.
    pub async fn existing_keys(&self) -> Result<Vec<String>, StoreError> {
        let pattern = run_key(&glob_literal(&self.run), "*");
        scan_keys(&self.conn, &pattern).await
    }
}

pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

//! Custody of batched tasks in Redis: each model's kept tasks in
//! `autoeval:custody:{MODEL}:tasks`, their keepers in `…:owners`, and each
//! keeper's lease in `autoeval:custody-lease:{OWNER}`, renewed while the
//! process lives. A task whose keeper's lease lapsed is adopted by another
//! process of the same model with one compare-and-set per task, so two
//! adopters never both take it.

use crate::Connection;
use crate::{redis_err, StoreError};
use autoeval_engine::{Custody, StoreError as EngineError};
use autoeval_proto::{RoundKey, TranslateTask};
use redis::{AsyncCommands, Script};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

// KEYS[1]: owners; ARGV: me, then (field, expected owner) pairs. Takes each
// field still owned by its expected (dead) owner; answers those taken.
const TAKE_OVER: &str = r"
local taken = {}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[1])
    table.insert(taken, ARGV[i])
  end
end
return taken
";

/// How long a keeper's lease lasts unless renewed, by default.
pub const CUSTODY_LEASE: Duration = Duration::from_secs(30);

/// This process's custody of the tasks of its models.
pub struct RedisCustody {
    conn: Connection,
    owner: String,
    models: Vec<String>,
    capacity: usize,
    lease: Duration,
    take_over: Script,
}

fn tasks_key(model: &str) -> String {
    format!("autoeval:custody:{model}:tasks")
}

fn owners_key(model: &str) -> String {
    format!("autoeval:custody:{model}:owners")
}

fn lease_key(owner: &str) -> String {
    format!("autoeval:custody-lease:{owner}")
}

/// The field of a kept task: its run and round.
fn field(run: &str, round: &RoundKey) -> String {
    serde_json::json!([run, round.to_string()]).to_string()
}

impl RedisCustody {
    /// Custody for `owner` (unique to this process) of `models`' tasks, at
    /// most `capacity` at once, under a lease of `lease`.
    pub fn new(
        conn: Connection,
        owner: String,
        models: Vec<String>,
        capacity: usize,
        lease: Duration,
    ) -> RedisCustody {
        RedisCustody {
            conn,
            owner,
            models,
            capacity,
            lease,
            take_over: Script::new(TAKE_OVER),
        }
    }

    /// Takes the lease now and renews it every third of its length while
    /// this process lives.
    pub async fn hold_lease(self: &Arc<Self>) -> Result<(), StoreError> {
        self.renew().await?;
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(me.lease / 3).await;
                if let Err(e) = me.renew().await {
                    tracing::warn!(error = %e, "cannot renew the custody lease");
                }
            }
        });
        Ok(())
    }

    async fn renew(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let ms = self.lease.as_millis().max(1) as u64;
        redis::cmd("SET")
            .arg(lease_key(&self.owner))
            .arg(1)
            .arg("PX")
            .arg(ms)
            .query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("renew the custody lease"))
    }

    /// Tasks kept for each model, by keeper.
    pub async fn counts(
        conn: &Connection,
        model: &str,
    ) -> Result<HashMap<String, u64>, StoreError> {
        let mut conn = conn.clone();
        let owners: HashMap<String, String> = conn
            .hgetall(owners_key(model))
            .await
            .map_err(redis_err("read the kept tasks"))?;
        let mut out = HashMap::new();
        for owner in owners.into_values() {
            *out.entry(owner).or_default() += 1;
        }
        Ok(out)
    }

    async fn adopt_of(
        &self,
        model: &str,
        limit: usize,
    ) -> Result<Vec<(String, TranslateTask)>, StoreError> {
        let mut conn = self.conn.clone();
        let owners = owners_key(model);
        let mut cursor: u64 = 0;
        let mut kept: Vec<(String, String)> = Vec::new();
        loop {
            let (next, pairs): (u64, Vec<(String, String)>) = redis::cmd("HSCAN")
                .arg(&owners)
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await
                .map_err(redis_err("read the kept tasks' keepers"))?;
            kept.extend(pairs.into_iter().filter(|(_, o)| *o != self.owner));
            if next == 0 {
                break;
            }
            cursor = next;
        }
        let keepers: BTreeSet<&String> = kept.iter().map(|(_, o)| o).collect();
        let mut dead = BTreeSet::new();
        for keeper in keepers {
            let alive: bool = conn
                .exists(lease_key(keeper))
                .await
                .map_err(redis_err("read a keeper's lease"))?;
            if !alive {
                dead.insert(keeper.clone());
            }
        }
        let orphans: Vec<&(String, String)> = kept
            .iter()
            .filter(|(_, o)| dead.contains(o))
            .take(limit)
            .collect();
        if orphans.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.take_over.prepare_invoke();
        call.key(&owners).arg(&self.owner);
        for (f, o) in &orphans {
            call.arg(f).arg(o);
        }
        let taken: Vec<String> = call
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("adopt kept tasks"))?;
        if taken.is_empty() {
            return Ok(Vec::new());
        }
        let tasks: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(tasks_key(model))
            .arg(&taken)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("read adopted tasks"))?;
        let mut out = Vec::new();
        for (f, task) in taken.iter().zip(tasks) {
            let run = serde_json::from_str::<(String, String)>(f).map(|(run, _)| run);
            let task = task.map(|t| serde_json::from_str::<TranslateTask>(&t));
            match (run, task) {
                (Ok(run), Some(Ok(task))) => out.push((run, task)),
                _ => {
                    tracing::warn!(field = %f, "a kept task is unreadable; dropped from custody");
                    let _: Result<(), _> = conn.hdel(&owners, f).await;
                    let _: Result<(), _> = conn.hdel(tasks_key(model), f).await;
                }
            }
        }
        Ok(out)
    }
}

impl Custody for RedisCustody {
    fn enabled(&self) -> bool {
        true
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    async fn keep(&self, run: &str, task: &TranslateTask) -> Result<(), EngineError> {
        let f = field(run, &task.round_key());
        let text = serde_json::to_string(task).map_err(|e| EngineError::fatal(e.to_string()))?;
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hset(tasks_key(&task.model), &f, text)
            .ignore()
            .hset(owners_key(&task.model), &f, &self.owner)
            .ignore();
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("keep a batched task"))
            .map_err(EngineError::from)
    }

    async fn release(&self, run: &str, model: &str, round: &RoundKey) -> Result<(), EngineError> {
        let f = field(run, round);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .hdel(owners_key(model), &f)
            .ignore()
            .hdel(tasks_key(model), &f)
            .ignore();
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(redis_err("release a batched task"))
            .map_err(EngineError::from)
    }

    async fn abandon(&self, run: &str, model: &str, round: &RoundKey) -> Result<(), EngineError> {
        let mut conn = self.conn.clone();
        // An owner with no lease: adopted at the next look, by any process.
        conn.hset::<_, _, _, ()>(owners_key(model), field(run, round), "")
            .await
            .map_err(redis_err("give up a batched task"))
            .map_err(EngineError::from)
    }

    async fn adopt(&self, limit: usize) -> Result<Vec<(String, TranslateTask)>, EngineError> {
        let mut out = Vec::new();
        for model in &self.models {
            if out.len() >= limit {
                break;
            }
            out.extend(self.adopt_of(model, limit - out.len()).await?);
        }
        Ok(out)
    }
}

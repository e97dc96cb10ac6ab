//! The fleet's state in Redis, laid out as [`autoeval_proto::fleet`]
//! documents. A round's result is written at most once: one script sets it
//! only if absent and updates the counters and the unit's final outcome in
//! the same step, so a redelivered task can never count twice, and the
//! counters always equal a recount of the stored results.

mod admission;
mod batches;
mod budget;
mod cache;
mod custody;
mod gate;
mod holding;
mod records;
mod serving;

pub use batches::RedisJournal;
pub use budget::{Budget, Budgets, Cap, CapsSet, RunSpend};
pub use cache::RedisCache;
pub use custody::{RedisCustody, CUSTODY_LEASE};
pub use gate::{limit_key, RedisGate};
pub use holding::{Busy, Held, Holding, Work};
pub use records::RedisRecords;
/// An open, self-reconnecting Redis connection.
pub use redis::aio::ConnectionManager as Connection;
pub use serving::{forget_queued_model, queued_models, served_models, spawn_serving_reporter};

use autoeval_proto::fleet::{judged_pair, mark_of, run_key};
use autoeval_proto::{JudgeKey, JudgeRecord, ResultRecord, RoundKey, UnitKey, Verdict};
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};
use std::collections::BTreeMap;
use thiserror::Error;

/// Redis failed or holds something unreadable.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Redis cannot be reached or refused a command.
    #[error("redis: {what}: {source}")]
    Redis {
        /// The operation.
        what: String,
        /// Why.
        source: redis::RedisError,
    },
    /// Redis is not there at the address given.
    #[error("cannot reach Redis at {url} ({detail}); start it, or point --redis (or AUTOEVAL_REDIS) at it")]
    Unreachable {
        /// Where, without a password.
        url: String,
        /// Why, in one line.
        detail: String,
    },
    /// A stored value is not what this build writes.
    #[error("redis holds an unreadable {what}: {detail}")]
    Corrupt {
        /// Which value.
        what: String,
        /// Why.
        detail: String,
    },
}

fn redis_err(what: impl Into<String>) -> impl FnOnce(redis::RedisError) -> StoreError {
    let what = what.into();
    move |source| StoreError::Redis { what, source }
}

/// Connects to Redis; the connection reconnects by itself when Redis comes back.
pub async fn connect(url: &str) -> Result<ConnectionManager, StoreError> {
    let unreachable = |detail: String| StoreError::Unreachable {
        url: autoeval_proto::fleet::redact_url(url),
        detail,
    };
    let client = client_for(url).map_err(unreachable)?;
    ConnectionManager::new(client).await.map_err(|e| {
        unreachable(autoeval_proto::tls::explain_failure(
            url,
            &once_each(&e.to_string()),
        ))
    })
}

/// A client for `url`: for `rediss://`, with the environment's CA and client certificate.
fn client_for(url: &str) -> Result<redis::Client, String> {
    if !autoeval_proto::tls::wants_tls(url) {
        return redis::Client::open(url).map_err(|e| e.to_string());
    }
    let material = autoeval_proto::tls::TlsMaterial::from_env().map_err(|e| e.to_string())?;
    let certificates = redis::TlsCertificates {
        client_tls: material
            .identity
            .map(|(client_cert, client_key)| redis::ClientTlsConfig {
                client_cert,
                client_key,
            }),
        root_cert: material.ca,
    };
    redis::Client::build_with_tls(url, certificates).map_err(|e| e.to_string())
}

/// A message whose parts (`a: b: b`) repeat, each part once.
fn once_each(message: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in message.split(": ") {
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    parts.join(": ")
}

// Each round is six arguments: field, mark, record ('' to mark the round
// without keeping its record: a restore of rounds the run directory holds),
// counter, unit mark, final verdict ('' when the unit goes on). `tally`
// marks every round ever recorded by a 16-byte digest, with the id of its
// counter, so that a round whose record the coordinator took and trimmed is
// still never counted twice; `counter-ids` names each counter by a small
// id and each id (`#<id>`) by its counter. Answers 1 for each round new, 0
// for one recorded before.
const RECORD: &str = r"
local new = {}
for i = 1, #ARGV, 6 do
  local field, mark, json = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local counter, unit, final = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local id = redis.call('HGET', KEYS[7], counter)
  if not id then
    id = tostring(redis.call('HINCRBY', KEYS[7], '#', 1))
    redis.call('HSET', KEYS[7], counter, id, '#' .. id, counter)
  end
  if redis.call('HSETNX', KEYS[2], mark, id) == 0 then
    new[#new + 1] = 0
  else
    redis.call('HINCRBY', KEYS[3], counter, 1)
    if final ~= '' and redis.call('HSETNX', KEYS[4], unit, final) == 1 then
      redis.call('INCR', KEYS[5])
    end
    if json ~= '' then
      redis.call('HSET', KEYS[1], field, json)
      redis.call('RPUSH', KEYS[6], field)
    end
    new[#new + 1] = 1
  end
end
return new
";

// ARGV: field, mark, unit mark.
const FORGET: &str = r"
local id = redis.call('HGET', KEYS[2], ARGV[2])
if not id then return 0 end
local counter = redis.call('HGET', KEYS[7], '#' .. id)
if counter then redis.call('HINCRBY', KEYS[3], counter, -1) end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[2])
if redis.call('HDEL', KEYS[4], ARGV[3]) == 1 then redis.call('DECR', KEYS[5]) end
return 1
";

// The coordinator has written the arrivals before position ARGV[1] to the
// run directory, having read them when the log's first entry was at
// position ARGV[2] (`arrivals-base`): their records leave `results` and
// their entries the log. Nothing happens (-1) unless the log still starts
// where it was read: a Redis that lost the run (no base) or a log trimmed
// since holds entries not read. The fields to drop follow in ARGV[3..].
const TRIM: &str = r"
local base = redis.call('GET', KEYS[3])
if not base or base ~= ARGV[2] then return -1 end
base = tonumber(base)
local upto = tonumber(ARGV[1])
if upto <= base then return base end
redis.call('LTRIM', KEYS[2], upto - base, -1)
redis.call('SET', KEYS[3], upto)
for i = 3, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
return upto
";

// A judgement is kept once; a failed call is kept only while the pair has none.
const JUDGED: &str = r"
if ARGV[3] == '1' then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
";

/// Runs registered under `name` and eight hex digits (`results-1a2b3c4d`):
/// the fleet runs made from directories named `name`, sorted.
pub async fn runs_made_from(
    conn: &ConnectionManager,
    name: &str,
) -> Result<Vec<String>, StoreError> {
    let pattern = run_key(&format!("{}-*", glob_literal(name)), "meta");
    let mut found = Vec::new();
    for run in registered_runs(conn, &pattern).await? {
        let made_here = run
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix('-'))
            .is_some_and(|tail| tail.len() == 8 && tail.chars().all(|c| c.is_ascii_hexdigit()));
        if made_here {
            found.push(run);
        }
    }
    Ok(found)
}

/// The runs whose `meta` keys match `pattern`, sorted.
async fn registered_runs(
    conn: &ConnectionManager,
    pattern: &str,
) -> Result<Vec<String>, StoreError> {
    Ok(scan_keys(conn, pattern)
        .await?
        .iter()
        .filter_map(|key| run_of_key(key))
        .collect())
}

/// The run a key belongs to: `autoeval:{RUN}:part` → `RUN`.
fn run_of_key(key: &str) -> Option<String> {
    let rest = key.strip_prefix("autoeval:{")?;
    let end = rest.rfind("}:")?;
    Some(rest[..end].to_string())
}

/// Every run with a key in this Redis, registered or not, sorted (the
/// models' shared rate limits, `autoeval:{limit:…}`, are no run's).
pub async fn runs_with_keys(conn: &ConnectionManager) -> Result<Vec<String>, StoreError> {
    let mut runs: Vec<String> = scan_keys(conn, "autoeval:{*}:*")
        .await?
        .iter()
        .filter_map(|key| run_of_key(key))
        .filter(|run| !run.starts_with("limit:"))
        .collect();
    runs.sort();
    runs.dedup();
    Ok(runs)
}

/// Every registered run in this Redis, sorted.
pub async fn all_runs(conn: &ConnectionManager) -> Result<Vec<String>, StoreError> {
    registered_runs(conn, "autoeval:{*}:meta").await
}

/// The counter a round adds to (`dataset|model|prompt|round|complexity|verdict`).
pub fn counter_field(r: &ResultRecord) -> String {
    autoeval_proto::fleet::Counter::of(r).to_string()
}

/// Rounds read from a run's arrival log.
#[derive(Debug)]
pub struct Arrived {
    /// Each round's `results` field, and its record (`None`: forgotten since).
    pub rounds: Vec<(String, Option<ResultRecord>)>,
    /// The log's start when read (`None`: the run has none, or Redis lost it).
    pub base: Option<u64>,
    /// The position after the rounds read.
    pub next: u64,
}

/// One run's keys.
#[derive(Clone)]
pub struct RunStore {
    conn: ConnectionManager,
    run: String,
    record: Script,
    forget: Script,
    trim: Script,
    judged: Script,
}

impl RunStore {
    /// The store of `run` over an open connection.
    pub fn new(conn: ConnectionManager, run: &str) -> RunStore {
        RunStore {
            conn,
            run: run.to_string(),
            record: Script::new(RECORD),
            forget: Script::new(FORGET),
            trim: Script::new(TRIM),
            judged: Script::new(JUDGED),
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

    fn key(&self, part: &str) -> String {
        run_key(&self.run, part)
    }

    fn keys(&self) -> [String; 7] {
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

    /// Stores one round unless that round is already stored; true when it
    /// was new. A round is the unit's last when it did not keep the meaning
    /// or it was round `rounds`.
    pub async fn record(&self, r: &ResultRecord, rounds: u32) -> Result<bool, StoreError> {
        let new = self.record_all(std::slice::from_ref(r), rounds).await?;
        Ok(new.first().copied().unwrap_or(false))
    }

    /// Stores each round not already stored, all in one step; says for each
    /// whether it was new. As [`RunStore::record`] does, one by one.
    pub async fn record_all(
        &self,
        records: &[ResultRecord],
        rounds: u32,
    ) -> Result<Vec<bool>, StoreError> {
        self.record_with(records, rounds, true).await
    }

    /// Marks each round as recorded, with its counts and its unit's final
    /// outcome, without keeping its record: a restore of rounds the run
    /// directory holds. Says for each whether it was new.
    pub async fn mark_all(
        &self,
        records: &[ResultRecord],
        rounds: u32,
    ) -> Result<Vec<bool>, StoreError> {
        self.record_with(records, rounds, false).await
    }

    async fn record_with(
        &self,
        records: &[ResultRecord],
        rounds: u32,
        keep: bool,
    ) -> Result<Vec<bool>, StoreError> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.record.prepare_invoke();
        for k in self.keys() {
            call.key(k);
        }
        for r in records {
            let json = if keep {
                serde_json::to_string(r).map_err(|e| StoreError::Corrupt {
                    what: "record".into(),
                    detail: e.to_string(),
                })?
            } else {
                String::new()
            };
            let unit = r.unit().to_string();
            let field = format!("{unit}#{}", r.round);
            let last = r.verdict != Verdict::Equivalent || r.round >= rounds;
            call.arg(&field)
                .arg(mark_of(&field).as_slice())
                .arg(json)
                .arg(counter_field(r))
                .arg(mark_of(&unit).as_slice())
                .arg(if last { r.verdict.name() } else { "" });
        }
        let mut conn = self.conn.clone();
        let new: Vec<i32> = call
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("record results"))?;
        Ok(new.into_iter().map(|n| n == 1).collect())
    }

    /// Removes a stored round (to redo it), with its counts; true when there was one.
    pub async fn forget(&self, round: &RoundKey) -> Result<bool, StoreError> {
        let unit = round.unit.to_string();
        let field = round.to_string();
        let mut conn = self.conn.clone();
        let mut call = self.forget.prepare_invoke();
        for k in self.keys() {
            call.key(k);
        }
        let gone: i32 = call
            .arg(&field)
            .arg(mark_of(&field).as_slice())
            .arg(mark_of(&unit).as_slice())
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("forget a result"))?;
        Ok(gone == 1)
    }

    fn judge_keys(&self, judge: &JudgeKey) -> [String; 2] {
        [
            self.key(&format!("judged:{judge}")),
            self.key(&format!("judge-failed:{judge}")),
        ]
    }

    /// Stores a judgement of `judge` (`<spec>|<style>`) for a pair, once; a
    /// failed call is stored only while the pair has no judgement. True when stored.
    pub async fn record_judgement(
        &self,
        judge: &JudgeKey,
        j: &JudgeRecord,
    ) -> Result<bool, StoreError> {
        let json = serde_json::to_string(j).map_err(|e| StoreError::Corrupt {
            what: "judgement".into(),
            detail: e.to_string(),
        })?;
        let mut conn = self.conn.clone();
        let mut call = self.judged.prepare_invoke();
        for k in self.judge_keys(judge) {
            call.key(k);
        }
        let stored: i32 = call
            .arg(judged_pair(j).to_string())
            .arg(json)
            .arg(if j.api_failure.is_some() { "1" } else { "0" })
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("record a judgement"))?;
        Ok(stored == 1)
    }

    /// Drops the failed calls of `judge`, before its pairs are asked again.
    pub async fn forget_failed_judgements(&self, judge: &JudgeKey) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let [_, failed] = self.judge_keys(judge);
        conn.del::<_, ()>(failed)
            .await
            .map_err(redis_err("forget failed judgements"))
    }

    /// Pairs judged by `judge`, and pairs whose call failed with no judgement yet.
    pub async fn judgement_counts(&self, judge: &JudgeKey) -> Result<(u64, u64), StoreError> {
        let mut conn = self.conn.clone();
        let [judged, failed] = self.judge_keys(judge);
        let (a, b): (u64, u64) = redis::pipe()
            .hlen(judged)
            .hlen(failed)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("count the judgements"))?;
        Ok((a, b))
    }

    /// Every judgement of `judge`, then every failed call without one.
    pub async fn judgements(&self, judge: &JudgeKey) -> Result<Vec<JudgeRecord>, StoreError> {
        let mut out = Vec::new();
        for hash in self.judge_keys(judge) {
            self.scan_hash(&hash, |field, json| {
                out.push(serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
                    what: format!("judgement {field}"),
                    detail: e.to_string(),
                })?);
                Ok(())
            })
            .await?;
        }
        Ok(out)
    }

    /// Units with a final outcome.
    pub async fn done(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        let n: Option<u64> = conn
            .get(self.key("done"))
            .await
            .map_err(redis_err("read the done count"))?;
        Ok(n.unwrap_or(0))
    }

    /// Every counter, read without touching the results.
    pub async fn counts(&self) -> Result<BTreeMap<String, i64>, StoreError> {
        let mut conn = self.conn.clone();
        conn.hgetall(self.key("counts"))
            .await
            .map_err(redis_err("read the counters"))
    }

    /// Units with a final outcome, counted from their marks.
    pub async fn final_count(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        conn.hlen(self.key("final"))
            .await
            .map_err(redis_err("count the final outcomes"))
    }

    /// The final outcome of each of `units`, `None` for one still going.
    pub async fn finals_of(&self, units: &[UnitKey]) -> Result<Vec<Option<Verdict>>, StoreError> {
        let mut out = Vec::with_capacity(units.len());
        let mut conn = self.conn.clone();
        for chunk in units.chunks(1000) {
            let marks: Vec<Vec<u8>> = chunk
                .iter()
                .map(|u| mark_of(&u.to_string()).to_vec())
                .collect();
            let verdicts: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(self.key("final"))
                .arg(&marks)
                .query_async(&mut conn)
                .await
                .map_err(redis_err("read the final outcomes"))?;
            for (unit, verdict) in chunk.iter().zip(verdicts) {
                out.push(
                    verdict
                        .map(|v| {
                            v.parse().map_err(|e: autoeval_proto::UnknownVerdict| {
                                StoreError::Corrupt {
                                    what: format!("final outcome of {unit}"),
                                    detail: e.to_string(),
                                }
                            })
                        })
                        .transpose()?,
                );
            }
        }
        Ok(out)
    }

    /// Every stored round, read in batches and handed to `each` in no particular order.
    pub async fn scan_records(
        &self,
        mut each: impl FnMut(ResultRecord),
    ) -> Result<u64, StoreError> {
        let mut seen = 0;
        self.scan_hash(&self.key("results"), |field, json| {
            let r = serde_json::from_str(json).map_err(|e| StoreError::Corrupt {
                what: format!("result {field}"),
                detail: e.to_string(),
            })?;
            each(r);
            seen += 1;
            Ok(())
        })
        .await?;
        Ok(seen)
    }

    /// Up to `max` rounds recorded from position `from` of the run's arrival
    /// log on (or from its first entry kept, when `from` was trimmed), in
    /// the order they were recorded, each with its `results` field. A round
    /// forgotten since it arrived comes back as `None`; one recorded again
    /// arrives again later.
    pub async fn arrivals(&self, from: u64, max: u64) -> Result<Arrived, StoreError> {
        let mut conn = self.conn.clone();
        let base = self.arrivals_base().await?;
        let from = from.max(base.unwrap_or(0));
        let first = (from - base.unwrap_or(0)) as isize;
        let last = first + max.max(1) as isize - 1;
        let fields: Vec<String> = conn
            .lrange(self.key("arrivals"), first, last)
            .await
            .map_err(redis_err("read the arrival log"))?;
        if fields.is_empty() {
            return Ok(Arrived {
                rounds: Vec::new(),
                base,
                next: from,
            });
        }
        let values: Vec<Option<String>> = redis::cmd("HMGET")
            .arg(self.key("results"))
            .arg(&fields)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("read the recorded rounds"))?;
        let next = from + fields.len() as u64;
        let rounds = fields
            .into_iter()
            .zip(values)
            .map(|(field, json)| {
                let record = json
                    .map(|j| {
                        serde_json::from_str(&j).map_err(|e| StoreError::Corrupt {
                            what: format!("result {field}"),
                            detail: e.to_string(),
                        })
                    })
                    .transpose()?;
                Ok((field, record))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Arrived { rounds, base, next })
    }

    /// The position of the arrival log's first entry kept; `None` when the
    /// run has none yet or Redis lost it.
    pub async fn arrivals_base(&self) -> Result<Option<u64>, StoreError> {
        let mut conn = self.conn.clone();
        conn.get(self.key("arrivals-base"))
            .await
            .map_err(redis_err("read the arrival log's start"))
    }

    /// Drops the records of `fields`, read by `arrived` and written to the
    /// run directory, and the log's entries before `arrived.next`; the
    /// rounds stay marked as recorded. False, with nothing dropped, when
    /// the log no longer starts where it was read (Redis lost the run).
    pub async fn trim_taken(
        &self,
        arrived: &Arrived,
        fields: &[String],
    ) -> Result<bool, StoreError> {
        let Some(base) = arrived.base else {
            return Ok(false);
        };
        let mut conn = self.conn.clone();
        let mut call = self.trim.prepare_invoke();
        call.key(self.key("results"))
            .key(self.key("arrivals"))
            .key(self.key("arrivals-base"))
            .arg(arrived.next)
            .arg(base);
        for f in fields {
            call.arg(f);
        }
        let done: i64 = call
            .invoke_async(&mut conn)
            .await
            .map_err(redis_err("trim the rounds taken"))?;
        Ok(done >= 0)
    }

    /// Starts the run's arrival log at position 0 unless it has a start: a
    /// log without one is one Redis lost, and is not trimmed.
    pub async fn start_arrivals(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        conn.set_nx::<_, _, ()>(self.key("arrivals-base"), 0)
            .await
            .map_err(redis_err("start the arrival log"))
    }

    /// How many rounds are marked as recorded, whether or not their
    /// records are still in Redis.
    pub async fn marked(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        conn.hlen(self.key("tally"))
            .await
            .map_err(redis_err("count the rounds recorded"))
    }

    /// How many rounds' records are in Redis, not yet taken by the coordinator.
    pub async fn recorded(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn.clone();
        conn.hlen(self.key("results"))
            .await
            .map_err(redis_err("count the recorded rounds"))
    }

    /// Every field of a hash, read in batches of a thousand.
    async fn scan_hash(
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
    async fn all_keys(&self) -> Result<Vec<String>, StoreError> {
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

/// `name` as a glob that matches only itself.
fn glob_literal(name: &str) -> String {
    name.chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

/// Every key matching `pattern`, read in batches.
pub(crate) async fn scan_keys(
    conn: &ConnectionManager,
    pattern: &str,
) -> Result<Vec<String>, StoreError> {
    let mut conn = conn.clone();
    let mut found = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("look for keys"))?;
        found.extend(keys);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod message_tests {
    use super::once_each;
    use autoeval_proto::fleet::redact_url as without_password;

    #[test]
    fn a_redis_url_is_shown_without_its_password_and_a_cause_once() {
        assert_eq!(
            without_password("redis://app:s3cret@redis.internal:6379/0"),
            "redis://app:***@redis.internal:6379/0"
        );
        assert_eq!(
            without_password("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        assert_eq!(
            once_each("Connection refused (os error 111): Connection refused (os error 111)"),
            "Connection refused (os error 111)"
        );
    }
}

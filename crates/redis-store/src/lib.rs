//! The fleet's state in Redis, laid out as [`autoeval_proto::fleet`]
//! documents. A round's result is written at most once: one script sets it
//! only if absent and updates the counters and the unit's final outcome in
//! the same step, so a redelivered task can never count twice, and the
//! counters always equal a recount of the stored results.

mod admission;
mod budget;
mod cache;
mod gate;
mod holding;
mod records;
mod serving;

pub use budget::{Budget, Budgets, Cap, CapsSet};
pub use cache::RedisCache;
pub use gate::{limit_key, RedisGate};
pub use holding::{Busy, Held, Holding, Work};
pub use records::RedisRecords;
/// An open, self-reconnecting Redis connection.
pub use redis::aio::ConnectionManager as Connection;
pub use serving::spawn_serving_reporter;

use autoeval_proto::fleet::{judged_pair, run_key};
use autoeval_proto::{JudgeKey, JudgeRecord, NotAKey, ResultRecord, UnitKey, Verdict};
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

// Each round is five arguments: field, record, counter, unit, final verdict
// ('' when the unit goes on). Answers 1 for each round new, 0 for one stored before.
const RECORD: &str = r"
local new = {}
for i = 1, #ARGV, 5 do
  local field, counter, unit, final = ARGV[i], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if redis.call('HSETNX', KEYS[1], field, ARGV[i + 1]) == 0 then
    new[#new + 1] = 0
  else
    redis.call('HSET', KEYS[2], field, counter)
    redis.call('HINCRBY', KEYS[3], counter, 1)
    if final ~= '' and redis.call('HSETNX', KEYS[4], unit, final) == 1 then
      redis.call('INCR', KEYS[5])
    end
    redis.call('RPUSH', KEYS[6], field)
    new[#new + 1] = 1
  end
end
return new
";

const FORGET: &str = r"
local counter = redis.call('HGET', KEYS[2], ARGV[1])
if not counter then return 0 end
redis.call('HINCRBY', KEYS[3], counter, -1)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('HDEL', KEYS[4], ARGV[2]) == 1 then redis.call('DECR', KEYS[5]) end
return 1
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
    let mut conn = conn.clone();
    // Glob's own characters in a directory's name match only themselves.
    let literal: String = name
        .chars()
        .flat_map(|c| match c {
            '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    let pattern = run_key(&format!("{literal}-*"), "meta");
    let mut found = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .map_err(redis_err("look for runs"))?;
        for key in keys {
            let run = key
                .strip_prefix("autoeval:{")
                .and_then(|k| k.strip_suffix("}:meta"));
            let made_here = run
                .and_then(|r| r.strip_prefix(name)?.strip_prefix('-'))
                .is_some_and(|tail| tail.len() == 8 && tail.chars().all(|c| c.is_ascii_hexdigit()));
            if let (true, Some(run)) = (made_here, run) {
                found.push(run.to_string());
            }
        }
        if next == 0 {
            break;
        }
        cursor = next;
    }
    found.sort();
    found.dedup();
    Ok(found)
}

/// The counter a round adds to (`dataset|model|prompt|round|complexity|verdict`).
pub fn counter_field(r: &ResultRecord) -> String {
    autoeval_proto::fleet::Counter::of(r).to_string()
}

/// One run's keys.
#[derive(Clone)]
pub struct RunStore {
    conn: ConnectionManager,
    run: String,
    record: Script,
    forget: Script,
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
            judged: Script::new(JUDGED),
        }
    }

    /// The run's name.
    pub fn run(&self) -> &str {
        &self.run
    }

    fn key(&self, part: &str) -> String {
        run_key(&self.run, part)
    }

    fn keys(&self) -> [String; 6] {
        ["results", "tally", "counts", "final", "done", "arrivals"].map(|p| self.key(p))
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
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let mut call = self.record.prepare_invoke();
        for k in self.keys() {
            call.key(k);
        }
        for r in records {
            let json = serde_json::to_string(r).map_err(|e| StoreError::Corrupt {
                what: "record".into(),
                detail: e.to_string(),
            })?;
            let unit = r.unit();
            let last = r.verdict != Verdict::Equivalent || r.round >= rounds;
            call.arg(unit.round(r.round).to_string())
                .arg(json)
                .arg(counter_field(r))
                .arg(unit.to_string())
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
    pub async fn forget(&self, r: &ResultRecord) -> Result<bool, StoreError> {
        let unit = r.unit();
        let mut conn = self.conn.clone();
        let mut call = self.forget.prepare_invoke();
        for k in self.keys() {
            call.key(k);
        }
        let gone: i32 = call
            .arg(unit.round(r.round).to_string())
            .arg(unit.to_string())
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

    /// The final outcome of each finished unit, by unit.
    pub async fn finals(&self) -> Result<BTreeMap<UnitKey, Verdict>, StoreError> {
        let mut conn = self.conn.clone();
        let raw: BTreeMap<String, String> = conn
            .hgetall(self.key("final"))
            .await
            .map_err(redis_err("read the final outcomes"))?;
        raw.into_iter()
            .map(|(unit, verdict)| {
                let corrupt = |detail: String| StoreError::Corrupt {
                    what: format!("final outcome {unit}"),
                    detail,
                };
                Ok((
                    unit.parse().map_err(|e: NotAKey| corrupt(e.to_string()))?,
                    verdict
                        .parse()
                        .map_err(|e: autoeval_proto::UnknownVerdict| corrupt(e.to_string()))?,
                ))
            })
            .collect()
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
    /// log on, in the order they were recorded, each with its `results`
    /// field, and the position after them. A round forgotten since it
    /// arrived comes back as `None`; one recorded again arrives again later.
    pub async fn arrivals(
        &self,
        from: u64,
        max: u64,
    ) -> Result<(Vec<(String, Option<ResultRecord>)>, u64), StoreError> {
        let mut conn = self.conn.clone();
        let last = (from + max.max(1) - 1) as isize;
        let fields: Vec<String> = conn
            .lrange(self.key("arrivals"), from as isize, last)
            .await
            .map_err(redis_err("read the arrival log"))?;
        if fields.is_empty() {
            return Ok((Vec::new(), from));
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
        Ok((rounds, next))
    }

    /// How many rounds are stored.
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

    /// Deletes every key of the run.
    pub async fn delete(&self) -> Result<(), StoreError> {
        let mut conn = self.conn.clone();
        let mut keys = self.keys().to_vec();
        keys.extend(self.holding_keys().await?);
        // Each judge that judged the run left its settings in `meta`.
        for field in self.meta().await?.keys() {
            // A field that names no judge was never given a judgement.
            if let Some(Ok(judge)) = autoeval_proto::meta::judge_of(field) {
                keys.extend(self.judge_keys(&judge));
            }
        }
        keys.push(self.key("meta"));
        keys.push(self.key("cache"));
        keys.push(self.key("budget"));
        keys.push(self.key("parked"));
        conn.del::<_, ()>(keys)
            .await
            .map_err(redis_err("delete the run"))
    }
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

//! A run's rounds in Redis: each written at most once, with its counters
//! and its unit's final outcome in the same step; the arrival log the
//! coordinator takes them from.

use super::RunStore;
use crate::{redis_err, StoreError};
use autoeval_proto::fleet::mark_of;
use autoeval_proto::{NextRound, ResultRecord, RoundKey, UnitKey, Verdict};
use redis::AsyncCommands;
use std::collections::BTreeMap;

// Each round is six arguments: field, mark, record ('' to mark the round
// without keeping its record: a restore of rounds the run directory holds),
// counter, unit mark, final verdict ('' when the unit goes on). `tally`
// marks every round ever recorded by a 16-byte digest, with the id of its
// counter, so that a round whose record the coordinator took and trimmed is
// still never counted twice; `counter-ids` names each counter by a small
// id and each id (`#<id>`) by its counter. Answers 1 for each round new, 0
// for one recorded before.
pub(super) const RECORD: &str = r"
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
pub(super) const FORGET: &str = r"
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
pub(super) const TRIM: &str = r"
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

impl RunStore {
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

    pub(crate) async fn record_with(
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
            let last = NextRound::ends(r, rounds);
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
}

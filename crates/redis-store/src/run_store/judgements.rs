//! A run's A4 judgements in Redis: each pair's judgement kept once.

use super::RunStore;
use crate::{redis_err, StoreError};
use autoeval_proto::fleet::judged_pair;
use autoeval_proto::{JudgeKey, JudgeRecord};
use redis::AsyncCommands;

// A judgement is kept once; a failed call is kept only while the pair has none.
pub(super) const JUDGED: &str = r"
if ARGV[3] == '1' then
  if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
";

impl RunStore {
    pub(crate) fn judge_keys(&self, judge: &JudgeKey) -> [String; 2] {
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
}

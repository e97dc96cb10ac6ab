//! What each run registered in Redis, as a [`Registry`]:
//! its stage settings, its judges' settings, its reply cache and its halt.

use super::Registry;
use anyhow::Context;
use autoeval_engine::SetupError;
use autoeval_llm_client::ResponseCache;
use autoeval_proto::JudgeKey;
use autoeval_redis_store::{Connection, RedisCache, RunStore};
use autoeval_service::{setup_error, RunSettings};
use autoeval_translate::StageSettings;
use std::sync::Arc;

/// The runs registered in one Redis.
pub struct RedisRegistry {
    redis: Connection,
    settings: RunSettings<StageSettings>,
}

impl RedisRegistry {
    /// The runs registered over `redis`.
    pub fn new(redis: Connection) -> RedisRegistry {
        RedisRegistry {
            settings: RunSettings::new(redis.clone()),
            redis,
        }
    }

    async fn read_judge(&self, run: &str, judge: &JudgeKey) -> anyhow::Result<StageSettings> {
        let meta = RunStore::new(self.redis.clone(), run).meta().await?;
        let text = meta
            .get(&autoeval_proto::meta::judge_settings(judge))
            .with_context(|| format!("run {run:?} registered no judge {judge}"))?;
        serde_json::from_str(text)
            .with_context(|| format!("run {run:?} has unreadable settings for the judge {judge}"))
    }
}

impl Registry for RedisRegistry {
    async fn stage_settings(&self, run: &str) -> Result<Arc<StageSettings>, SetupError> {
        self.settings.get(run).await.map_err(|e| setup_error(&e))
    }

    async fn judge_settings(
        &self,
        run: &str,
        judge: &JudgeKey,
    ) -> Result<StageSettings, SetupError> {
        self.read_judge(run, judge)
            .await
            .map_err(|e| setup_error(&e))
    }

    fn cache(&self, run: &str) -> Arc<dyn ResponseCache> {
        Arc::new(RedisCache::new(self.redis.clone(), run))
    }

    fn batch_spend(&self, run: &str) -> Arc<dyn autoeval_llm_client::BatchSpend> {
        Arc::new(autoeval_redis_store::RunSpend::new(
            autoeval_redis_store::Budgets::new(self.redis.clone()),
            run,
        ))
    }

    fn journal(&self, run: &str) -> Arc<dyn autoeval_llm_client::BatchJournal> {
        Arc::new(autoeval_redis_store::RedisJournal::new(
            self.redis.clone(),
            run,
        ))
    }

    async fn halt_lifts(&self, run: &str) -> Option<u64> {
        let budget = RunStore::new(self.redis.clone(), run).budget().await;
        budget.ok().map(|b| b.lifts)
    }
}

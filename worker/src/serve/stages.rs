//! Each run's translate stage and judges, built once per run from the
//! settings its coordinator registered, with this worker's backends.

use anyhow::Context;
use autoeval_amqp::prefetch_for;
use autoeval_engine::{Judges, SetupError, Stages};
use autoeval_proto::fleet::BUNDLE_SIZE;
use autoeval_redis_store::{Connection, RedisCache, RunStore};
use autoeval_service::RunSettings;
use autoeval_translate::judge::Judging;
use autoeval_translate::{Local, StageSettings, Templates, Translator};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// A setup error from `e`: transient when Redis could not be read.
fn setup_error(e: &anyhow::Error) -> SetupError {
    SetupError {
        transient: autoeval_service::is_transient(e),
        message: format!("{e:#}"),
    }
}

/// Each run's translator, over the models this worker serves.
pub struct RunTranslators {
    settings: RunSettings<StageSettings>,
    redis: Connection,
    local: Local,
    models: Vec<String>,
    consumer_timeout: Duration,
    /// The task times a bundle may be in hand: its tasks' own turn and the
    /// turns of those ahead of them for the same slots.
    turns_in_hand: u32,
    built: Mutex<HashMap<String, Arc<Translator>>>,
}

impl RunTranslators {
    /// Translators built with `local`'s backends for `models`, `slots` tasks at once.
    pub fn new(
        settings: RunSettings<StageSettings>,
        redis: Connection,
        local: Local,
        models: Vec<String>,
        consumer_timeout: Duration,
        slots: usize,
    ) -> RunTranslators {
        RunTranslators {
            settings,
            redis,
            local,
            models,
            consumer_timeout,
            turns_in_hand: turns_in_hand(slots),
            built: Mutex::default(),
        }
    }

    async fn build(&self, run: &str) -> anyhow::Result<Arc<Translator>> {
        let settings = self.settings.get(run).await?;
        let models: Vec<String> = self
            .models
            .iter()
            .filter(|m| settings.models.contains_key(*m))
            .cloned()
            .collect();
        for model in &models {
            // A task waits for a slot behind the others in hand, then runs.
            let budget = settings.task_budget(model) * self.turns_in_hand;
            if budget >= self.consumer_timeout {
                tracing::warn!(
                    run,
                    model,
                    budget_s = budget.as_secs(),
                    consumer_timeout_s = self.consumer_timeout.as_secs(),
                    "a task may outlast the broker's consumer timeout and be delivered again mid-call; \
                     lower the run's max-attempts or request-timeout-s, or raise the broker's consumer_timeout and --consumer-timeout-s"
                );
            }
        }
        let local = Local {
            cache: Some(Arc::new(RedisCache::new(self.redis.clone(), run))),
            ..self.local.clone()
        };
        Ok(Arc::new(settings.translator(&models, &local)?))
    }
}

impl Stages<Translator> for RunTranslators {
    async fn stage(&self, run: &str) -> Result<Arc<Translator>, SetupError> {
        let cached = self.built.lock().await.get(run).cloned();
        if let Some(s) = cached {
            // A halted backend stays halted until the run's halt is lifted
            // (`rerun --failed` once the cause is fixed): then it is built afresh.
            if s.halted().is_none() || self.still_halted(run).await {
                return Ok(s);
            }
            tracing::info!(run, "the run's halt was lifted; its backends start afresh");
        }
        let stage = self.build(run).await.map_err(|e| setup_error(&e))?;
        self.built
            .lock()
            .await
            .insert(run.to_string(), stage.clone());
        Ok(stage)
    }
}

impl RunTranslators {
    /// Whether `run` is still marked halted (taken as yes when Redis cannot say).
    async fn still_halted(&self, run: &str) -> bool {
        RunStore::new(self.redis.clone(), run)
            .budget()
            .await
            .map_or(true, |b| b.halted.is_some())
    }
}

/// How many task times a bundle may spend in hand with `slots` slots: the
/// tasks of the prefetched bundles take turns at the slots.
fn turns_in_hand(slots: usize) -> u32 {
    let in_hand = usize::from(prefetch_for(slots, BUNDLE_SIZE)) * BUNDLE_SIZE;
    in_hand.div_ceil(slots.max(1)) as u32
}

/// Each run's judges (`<spec>|<style>`), built from the settings `autoeval judge --fleet` registered.
pub struct RunJudges {
    redis: Connection,
    local: Local,
    templates: Arc<Templates>,
    built: Mutex<HashMap<(String, String), Arc<Judging>>>,
}

impl RunJudges {
    /// Judges built with `local`'s backends, asking with `templates`.
    pub fn new(redis: Connection, local: Local, templates: Arc<Templates>) -> RunJudges {
        RunJudges {
            redis,
            local,
            templates,
            built: Mutex::default(),
        }
    }

    async fn build(&self, run: &str, judge: &str) -> anyhow::Result<Arc<Judging>> {
        let meta = RunStore::new(self.redis.clone(), run).meta().await?;
        let text = meta
            .get(&autoeval_proto::meta::judge_settings(judge))
            .with_context(|| format!("run {run:?} registered no judge {judge:?}"))?;
        let settings: StageSettings = serde_json::from_str(text).with_context(|| {
            format!("run {run:?} has unreadable settings for the judge {judge:?}")
        })?;
        let spec = judge.rsplit_once('|').map_or(judge, |(spec, _)| spec);
        let local = Local {
            cache: Some(Arc::new(RedisCache::new(self.redis.clone(), run))),
            ..self.local.clone()
        };
        Ok(Arc::new(Judging {
            backend: Arc::new(settings.backend(spec, &local)?),
            templates: self.templates.clone(),
        }))
    }
}

impl Judges for RunJudges {
    type Judge = Judging;

    async fn judge(&self, run: &str, judge: &str) -> Result<Arc<Judging>, SetupError> {
        let id = (run.to_string(), judge.to_string());
        if let Some(j) = self.built.lock().await.get(&id) {
            return Ok(j.clone());
        }
        let built = self.build(run, judge).await.map_err(|e| setup_error(&e))?;
        self.built.lock().await.insert(id, built.clone());
        Ok(built)
    }
}

//! Each run's translator and judges on a fleet worker, built once per run
//! from the settings its coordinator registered, with the worker's own
//! backends (its slots, rate gate, keys and metrics).

use autoeval_engine::{Judges, SetupError, Stages};
use autoeval_llm_client::ResponseCache;
use autoeval_models::Model;
use autoeval_proto::JudgeKey;
use autoeval_translate::judge::Judging;
use autoeval_translate::{Local, StageBackends, StageSettings, Translator};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// What a run registered, as the worker reads it.
pub trait Registry: Send + Sync + 'static {
    /// The stage settings of `run`.
    fn stage_settings(
        &self,
        run: &str,
    ) -> impl Future<Output = Result<Arc<StageSettings>, SetupError>> + Send;
    /// How the judge `judge` of `run` is asked.
    fn judge_settings(
        &self,
        run: &str,
        judge: &JudgeKey,
    ) -> impl Future<Output = Result<StageSettings, SetupError>> + Send;
    /// The reply cache of `run`, shared by the fleet.
    fn cache(&self, run: &str) -> Arc<dyn ResponseCache>;
    /// The batch journal of `run`, shared by the fleet.
    fn journal(&self, run: &str) -> Arc<dyn autoeval_llm_client::BatchJournal>;
    /// Where `run`'s provider batches are charged to its budget.
    fn batch_spend(&self, run: &str) -> Arc<dyn autoeval_llm_client::BatchSpend>;
    /// How many times a halt of `run` was lifted (`None` when it cannot be told).
    fn halt_lifts(&self, run: &str) -> impl Future<Output = Option<u64>> + Send;
}

/// Each run's translator, over the models this worker serves.
pub struct RunTranslators<R> {
    registry: Arc<R>,
    local: Local,
    models: Vec<Model>,
    /// The time a task may be in hand (its turn at the slots and those of
    /// the tasks ahead of it) before the broker delivers it again.
    limit: Option<(u32, Duration)>,
    /// Each run's translator, with the halt lifts it was built under.
    built: Mutex<HashMap<String, (Arc<Translator>, u64)>>,
}

impl<R: Registry> RunTranslators<R> {
    /// Translators for `models`, built with `local`'s backends; `limit`:
    /// cut each task at its share of the broker's consumer timeout when
    /// `turns` task times could outlast it.
    pub fn new(
        registry: Arc<R>,
        local: Local,
        models: Vec<Model>,
        limit: Option<(u32, Duration)>,
    ) -> Self {
        RunTranslators {
            registry,
            local,
            models,
            limit,
            built: Mutex::default(),
        }
    }

    async fn build(&self, run: &str) -> Result<Arc<Translator>, SetupError> {
        let settings = self.registry.stage_settings(run).await?;
        let models: Vec<Model> = self
            .models
            .iter()
            .filter(|m| settings.translate.models.contains_key(*m))
            .cloned()
            .collect();
        within_bounds(run, &settings, &models)?;
        // A task waits behind `turns - 1` others at most: each is cut at its
        // share of the consumer timeout (a tenth kept spare), so that nothing
        // in hand outlasts it.
        let deadline = self.limit.and_then(|(turns, timeout)| {
            let share = timeout.mul_f64(0.9) / turns.max(1);
            let longest = models
                .iter()
                .map(|m| settings.task_budget(m.as_str()))
                .max()
                .unwrap_or_default();
            (longest > share).then(|| {
                // The defaults' retries are cut so by design: only settings
                // that ask for more than the defaults are worth a warning.
                if longest > autoeval_translate::default_task_budget() {
                    tracing::warn!(
                        run,
                        task_budget_s = longest.as_secs(),
                        deadline_s = share.as_secs(),
                        consumer_timeout_s = timeout.as_secs(),
                        turns,
                        "the run's request time limit and attempts could outlast the broker's consumer timeout; each round trip is cut at deadline_s (lower --request-timeout-s or --max-attempts, or raise the broker's consumer_timeout and --consumer-timeout-s)"
                    );
                } else {
                    tracing::info!(
                        run,
                        deadline_s = share.as_secs(),
                        "each round trip is cut at deadline_s, its share of the broker's consumer timeout"
                    );
                }
                share
            })
        });
        let local = Local {
            cache: Some(self.registry.cache(run)),
            journal: Some(self.registry.journal(run)),
            batch_spend: Some(self.registry.batch_spend(run)),
            ..self.local.clone()
        };
        let mut translator = settings
            .translator(&models, &local)
            .map_err(|e| SetupError {
                message: format!("run {run:?}: {e}"),
                transient: false,
            })?;
        translator.task_deadline = deadline;
        Ok(Arc::new(translator))
    }
}

impl<R: Registry> Stages<Translator> for RunTranslators<R> {
    async fn stage(&self, run: &str) -> Result<Arc<Translator>, SetupError> {
        // Held while a stage is built: bundles arriving together share one
        // translator (one set of backends, one halt) instead of racing to build several.
        let mut built = self.built.lock().await;
        let cached = built.get(run).cloned();
        let mut lifts = 0;
        if let Some((s, built_under)) = cached {
            if s.halted().is_none() {
                return Ok(s);
            }
            // A halted backend stays halted until the run's halt is lifted
            // (`rerun --failed` once the cause is fixed): then it starts afresh.
            match self.registry.halt_lifts(run).await {
                Some(now) if now > built_under => lifts = now,
                _ => return Ok(s),
            }
            tracing::info!(run, "the run's halt was lifted; its backends start afresh");
        } else if let Some(now) = self.registry.halt_lifts(run).await {
            lifts = now;
        }
        let stage = self.build(run).await?;
        built.insert(run.to_string(), (stage.clone(), lifts));
        Ok(stage)
    }
}

/// Each run's judges, built from the settings `autoeval judge --fleet` registered.
pub struct RunJudges<R> {
    registry: Arc<R>,
    local: Local,
    /// The judges this process was given; a question naming another is refused.
    given: Vec<Model>,
    built: Mutex<HashMap<(String, JudgeKey), Arc<Judging>>>,
}

impl<R: Registry> RunJudges<R> {
    /// Judges built with `local`'s backends, asking with the prompts of
    /// each run's settings, for the judge specs `given` and no other.
    pub fn new(registry: Arc<R>, local: Local, given: Vec<Model>) -> Self {
        RunJudges {
            registry,
            local,
            given,
            built: Mutex::default(),
        }
    }
}

impl<R: Registry> Judges for RunJudges<R> {
    type Judge = Judging;

    async fn judge(&self, run: &str, judge: &JudgeKey) -> Result<Arc<Judging>, SetupError> {
        // A message must not choose where a key goes: only a judge this
        // process was given is ever asked.
        let Some(model) = self.given.iter().find(|g| **g == judge.spec) else {
            let given: Vec<&str> = self.given.iter().map(Model::as_str).collect();
            return Err(SetupError {
                message: format!(
                    "this worker was not given judge {} (it serves {}); the question is not sent",
                    judge.spec,
                    given.join(", ")
                ),
                transient: false,
            });
        };
        let id = (run.to_string(), judge.clone());
        // Held while the judge is built, so that one backend serves it.
        let mut judges = self.built.lock().await;
        if let Some(j) = judges.get(&id) {
            return Ok(j.clone());
        }
        let settings = self.registry.judge_settings(run, judge).await?;
        within_bounds(run, &settings, std::slice::from_ref(model))?;
        let local = Local {
            cache: Some(self.registry.cache(run)),
            journal: Some(self.registry.journal(run)),
            batch_spend: Some(self.registry.batch_spend(run)),
            ..self.local.clone()
        };
        let backend = settings.backend(model, &local).map_err(|e| SetupError {
            message: format!("run {run:?}, judge {judge}: {e}"),
            transient: false,
        })?;
        // The run's prompt set asks the question: the reference protocol's
        // judge prompt is the public implementation's.
        let templates = settings.prompts.templates().map_err(|e| SetupError {
            message: format!("run {run:?}, judge {judge}: {e}"),
            transient: false,
        })?;
        let built = Arc::new(Judging {
            backend: Arc::new(backend),
            templates: Arc::new(templates),
        });
        judges.insert(id, built.clone());
        Ok(built)
    }
}

/// Refuses a run whose registered settings for `models` go past what a
/// worker takes from a run: a message or a stored setting must not choose
/// which model is asked or where its reply goes.
fn within_bounds(run: &str, settings: &StageSettings, models: &[Model]) -> Result<(), SetupError> {
    for m in models {
        if let Some(why) = settings
            .translate
            .models
            .get(m)
            .and_then(|s| s.past_fleet_bounds(m))
        {
            return Err(SetupError {
                message: format!(
                    "run {run:?}, model {m}: {why}; a worker takes no such setting from a run"
                ),
                transient: false,
            });
        }
    }
    Ok(())
}

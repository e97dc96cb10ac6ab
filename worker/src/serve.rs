//! The worker's loop: connect, subscribe to each model's queue, handle
//! tasks until shut down; after a lost connection, the same again.

use crate::Args;
use anyhow::{Context, Result};
use autoeval_amqp::{Broker, Meta, Task};
use autoeval_proto::fleet::{shard_of_unit, VERIFY_KEY};
use autoeval_proto::wire::{decode, encode, Header, MessageKind};
use autoeval_proto::{JudgeRecord, JudgeTask};
use autoeval_redis_store::{Budgets, Holding, RedisCache, RedisGate, RunStore};
use autoeval_service::{shutdown_signal, Health, RunSettings};
use autoeval_telemetry::{LlmObserver, Metrics, TaskTimer};
use autoeval_translate::{translate, Local, TranslateTask, Translator};
use autoeval_translate::{Backend, StageSettings, Templates};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{watch, Mutex};
use tokio::task::JoinSet;

/// The stages of each run, built once per run with this worker's backends.
struct Runs {
    consumer_timeout: std::time::Duration,
    settings: RunSettings,
    redis: autoeval_redis_store::Connection,
    local: Local,
    models: Vec<String>,
    built: Mutex<HashMap<String, Arc<Translator>>>,
    judges: Mutex<HashMap<(String, String), Arc<Backend>>>,
    templates: Arc<Templates>,
    holding: Holding,
    metrics: Arc<Metrics>,
    budgets: Budgets,
}

impl Runs {
    /// Sets a task aside, done with, when its run is paused at a cap: the
    /// unit keeps no outcome, and `resume` publishes it again. Answers the
    /// task when it is to be done, and whether its run is to be charged.
    async fn unless_paused(&self, task: Task, timer: &mut TaskTimer<'_>) -> Option<(Task, bool)> {
        let run = task.meta.run.as_str();
        let why = match self.budgets.state(run).await {
            Ok((Some(why), _)) => why,
            Ok((None, capped)) => return Some((task, capped)),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; going on");
                return Some((task, true));
            }
        };
        match self.budgets.park(run, &task.meta.unit).await {
            Ok(true) => tracing::debug!(run, why, "the run is paused; a task set aside"),
            // Resumed meanwhile: the task is done after all.
            Ok(false) => return Some((task, true)),
            Err(e) => {
                // Not remembered, it would be lost: it goes back to the queue.
                tracing::warn!(error = %e, "cannot set a task aside; returning it");
                let _ = task.requeue().await;
                return None;
            }
        }
        match task.ack().await {
            Ok(()) => timer.settled("parked"),
            Err(e) => tracing::warn!(error = %e, "cannot settle a parked task"),
        }
        None
    }

    /// Charges the run what a task paid; a cap reached pauses the run for every worker.
    async fn charge(&self, run: &str, cost: Option<f64>, tokens: u64, cached: bool) {
        let usd = cost.unwrap_or(0.0);
        // Replies the cache gave cost nothing.
        let tokens = if cached { 0 } else { tokens };
        if usd <= 0.0 && tokens == 0 {
            return;
        }
        match self.budgets.charge(run, usd, tokens).await {
            Ok(Some(why)) => tracing::info!(run, why, "the run is paused"),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "cannot charge the run's budget"),
        }
    }

    async fn translator(&self, run: &str) -> Result<Arc<Translator>> {
        if let Some(s) = self.built.lock().await.get(run) {
            return Ok(s.clone());
        }
        let settings = self.settings.get(run).await?;
        for model in self
            .models
            .iter()
            .filter(|m| settings.models.contains_key(*m))
        {
            let budget = settings.task_budget(model);
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
        let models: Vec<String> = self
            .models
            .iter()
            .filter(|m| settings.models.contains_key(*m))
            .cloned()
            .collect();
        let local = Local {
            cache: Some(Arc::new(RedisCache::new(self.redis.clone(), run))),
            ..self.local.clone()
        };
        let stages = Arc::new(settings.translator(&models, &local)?);
        self.built
            .lock()
            .await
            .insert(run.to_string(), stages.clone());
        Ok(stages)
    }

    /// The backend a judge (`<spec>|<style>`) of `run` asks through, built
    /// from the settings `autoeval judge --fleet` registered.
    async fn judge(&self, run: &str, judge: &str) -> Result<Arc<Backend>> {
        let id = (run.to_string(), judge.to_string());
        if let Some(b) = self.judges.lock().await.get(&id) {
            return Ok(b.clone());
        }
        let store = RunStore::new(self.redis.clone(), run);
        let meta = store.meta().await?;
        let text = meta
            .get(&format!("judge-settings:{judge}"))
            .with_context(|| format!("run {run:?} registered no judge {judge:?}"))?;
        let settings: StageSettings = serde_json::from_str(text).with_context(|| {
            format!("run {run:?} has unreadable settings for the judge {judge:?}")
        })?;
        let spec = judge.rsplit_once('|').map_or(judge, |(spec, _)| spec);
        let local = Local {
            cache: Some(Arc::new(RedisCache::new(self.redis.clone(), run))),
            ..self.local.clone()
        };
        let backend = Arc::new(settings.backend(spec, &local)?);
        self.judges.lock().await.insert(id, backend.clone());
        Ok(backend)
    }
}

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let metrics = Arc::new(Metrics::new("worker"));
    metrics.start_stage("translate");
    metrics.start_stage("judge");
    let health = Health::with_metrics(metrics.clone());
    let bound = health.serve(&args.health_addr).await?;
    println!("health: http://{bound}");
    let redis = autoeval_redis_store::connect(&args.redis).await?;
    let gate_conn = redis.clone();
    let runs = Arc::new(Runs {
        consumer_timeout: std::time::Duration::from_secs(args.consumer_timeout_s),
        settings: RunSettings::new(redis.clone()),
        redis,
        local: Local {
            concurrency: Some(usize::from(args.concurrency)),
            cache: None,
            secrets_file: args.secrets.clone(),
            observer: Some(Arc::new(LlmObserver(metrics.clone()))),
            // Every worker of the fleet keeps each model's limits together.
            gate: Some(Arc::new(RedisGate::new(gate_conn.clone()))),
        },
        models: args.models.clone(),
        built: Mutex::default(),
        judges: Mutex::default(),
        templates: Arc::new(Templates::builtin()),
        holding: Holding::new(autoeval_service::process_name("autoeval-worker")),
        metrics,
        budgets: Budgets::new(gate_conn.clone()),
    });
    runs.holding.spawn_reporter(runs.redis.clone());
    let mut shutdown = shutdown_signal();
    loop {
        let broker = tokio::select! {
            b = Broker::connect_with_backoff(&args.amqp, "autoeval-worker") => Arc::new(b),
            _ = shutdown.changed() => return Ok(()),
        };
        let mut consumers = JoinSet::new();
        for model in &args.models {
            for stage in [Stage::Translate, Stage::Judge] {
                let queue = match stage {
                    Stage::Translate => broker.declare_translate(model).await,
                    Stage::Judge => broker.declare_judge(model).await,
                };
                let consumer = match queue {
                    Ok(q) => broker.consume(&q, args.concurrency, "").await,
                    Err(e) => Err(e),
                };
                match consumer {
                    Ok(c) => {
                        let (broker, runs, shutdown) =
                            (broker.clone(), runs.clone(), shutdown.clone());
                        consumers.spawn(consume(c, stage, broker, runs, shutdown));
                    }
                    Err(e) => tracing::warn!(error = %e, model, "cannot subscribe"),
                }
            }
        }
        health.set_ready(consumers.len() == 2 * args.models.len());
        tracing::info!(models = ?args.models, "serving");
        // The first subscription to end (a lost connection, a cancelled
        // consumer) ends this connection's turn; the rest are stopped too.
        consumers.join_next().await;
        health.set_ready(false);
        consumers.shutdown().await;
        broker.close().await;
        if *shutdown.borrow() {
            tracing::info!("stopped");
            return Ok(());
        }
        tracing::warn!("subscription ended; reconnecting");
    }
}

/// The two kinds of task a worker takes for each of its models.
#[derive(Clone, Copy)]
enum Stage {
    /// I then A.
    Translate,
    /// The A4 question.
    Judge,
}

/// Handles a queue's tasks, up to its prefetch at once, until it ends or shutdown.
async fn consume(
    mut consumer: autoeval_amqp::Consumer,
    stage: Stage,
    broker: Arc<Broker>,
    runs: Arc<Runs>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut in_hand = JoinSet::new();
    loop {
        let next = tokio::select! {
            n = consumer.next() => n,
            _ = shutdown.changed() => {
                consumer.cancel().await;
                break;
            }
        };
        match next {
            Some(Ok(task)) => {
                match stage {
                    Stage::Translate => in_hand.spawn(handle(task, broker.clone(), runs.clone())),
                    Stage::Judge => in_hand.spawn(handle_judge(task, broker.clone(), runs.clone())),
                };
            }
            Some(Err(e)) => {
                tracing::warn!(error = %e, "lost the subscription");
                break;
            }
            None => {
                tracing::warn!("the broker ended the subscription");
                break;
            }
        }
        while in_hand.try_join_next().is_some() {}
    }
    // Tasks started are finished (or returned) before the channel closes.
    while in_hand.join_next().await.is_some() {}
    consumer.close().await;
}

async fn handle(task: Task, broker: Arc<Broker>, runs: Arc<Runs>) {
    let _held = runs
        .holding
        .hold(&task.meta.run, "translate", shard_of_unit(&task.meta.unit));
    let mut timer = runs.metrics.task("translate");
    let message: TranslateTask = match decode(&task.data, MessageKind::Translate) {
        Ok((_, m)) => m,
        Err(e) => return give_back(task, &broker, &anyhow::Error::new(e), &mut timer).await,
    };
    let run = task.meta.run.clone();
    let Some((task, capped)) = runs.unless_paused(task, &mut timer).await else {
        return;
    };
    let stages = match runs.translator(&run).await {
        Ok(s) => s,
        Err(e) => return give_back(task, &broker, &e, &mut timer).await,
    };
    let unit = task.meta.unit.clone();
    let done = translate(message, &stages).await;
    if capped {
        let paid = &done.translation;
        let tokens = paid.usage.prompt_tokens + paid.usage.completion_tokens;
        runs.charge(&run, paid.cost, tokens, paid.cached).await;
    }
    let sent = match encode(
        &Header {
            kind: MessageKind::Verify,
            run: run.clone(),
        },
        &done,
    ) {
        Ok(bytes) => {
            broker
                .publish(VERIFY_KEY, &bytes, &Meta { run, unit })
                .await
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot encode a verify task");
            return;
        }
    };
    let finished = match sent {
        Ok(()) => task.ack().await.map(|()| timer.settled("acked")),
        // The replies are cached: whoever gets the task again does not pay again.
        Err(e) => {
            tracing::warn!(error = %e, "cannot hand on a translation; returning its task");
            task.requeue().await
        }
    };
    if let Err(e) = finished {
        tracing::warn!(error = %e, "cannot settle a task; the broker will deliver it again");
    }
}

/// Settles a task that cannot be done now: back to the queue when the cause
/// may pass (Redis away), to the dead letters with the reason otherwise.
async fn give_back(task: Task, broker: &Broker, e: &anyhow::Error, timer: &mut TaskTimer<'_>) {
    if autoeval_service::is_transient(e) {
        tracing::warn!(error = %e, "cannot read the run's settings; returning the task");
        let _ = task.requeue().await;
        return;
    }
    let reason = format!("{e:#}");
    tracing::warn!(reason, unit = task.meta.unit, "refusing a task");
    match task.refuse(broker, &reason).await {
        Ok(()) => timer.settled("dead_lettered"),
        Err(e) => tracing::warn!(error = %e, "cannot dead-letter a task"),
    }
}

/// Asks the A4 question of one task, records the judgement in Redis once,
/// then acknowledges.
async fn handle_judge(task: Task, broker: Arc<Broker>, runs: Arc<Runs>) {
    let _held = runs
        .holding
        .hold(&task.meta.run, "judge", shard_of_unit(&task.meta.unit));
    let mut timer = runs.metrics.task("judge");
    let question: JudgeRecord = match decode::<JudgeTask>(&task.data, MessageKind::Judge) {
        Ok((_, m)) => m.into(),
        Err(e) => return give_back(task, &broker, &anyhow::Error::new(e), &mut timer).await,
    };
    let run = task.meta.run.clone();
    let judge = format!("{}|{}", question.judge, question.style);
    let backend = match runs.judge(&run, &judge).await {
        Ok(b) => b,
        Err(e) => return give_back(task, &broker, &e, &mut timer).await,
    };
    let Some(answered) = autoeval_translate::judge::ask(&backend, &runs.templates, question).await
    else {
        // The judge halted before sending: the question waits for a fixed cause.
        let _ = task.requeue().await;
        return;
    };
    let store = RunStore::new(runs.redis.clone(), &run);
    let finished = match store.record_judgement(&judge, &answered).await {
        Ok(_) => task.ack().await.map(|()| timer.settled("acked")),
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a judgement; returning its task");
            task.requeue().await
        }
    };
    if let Err(e) = finished {
        tracing::warn!(error = %e, "cannot settle a task; the broker will deliver it again");
    }
}

//! The worker's loop: connect, subscribe to each model's queue, handle
//! tasks until shut down; after a lost connection, the same again.

use crate::Args;
use anyhow::{Context, Result};
use autoeval_amqp::{bundle_messages, prefetch_for, Broker, Task};
use autoeval_proto::fleet::{round_field, shard_of_unit, BUNDLE_SIZE, VERIFY_KEY};
use autoeval_proto::wire::{decode, MessageKind};
use autoeval_proto::{JudgeRecord, JudgeTask};
use autoeval_redis_store::{Budgets, Holding, RedisCache, RedisGate, RunStore};
use autoeval_service::{shutdown_signal, Health, RunSettings};
use autoeval_telemetry::{LlmObserver, Metrics, TaskTimer};
use autoeval_translate::{translate, Local, TranslateTask, Translator, VerifyTask};
use autoeval_translate::{Backend, StageSettings, Templates};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{watch, Mutex, Semaphore};
use tokio::task::JoinSet;

/// The stages of each run, built once per run with this worker's backends.
struct Runs {
    consumer_timeout: std::time::Duration,
    /// The task times a bundle may be in hand: its tasks' own turn and the
    /// turns of those ahead of them for the same slots.
    turns_in_hand: u32,
    settings: RunSettings<StageSettings>,
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
    /// Whether `run` has a cap, and so its tasks are charged and may be set
    /// aside; when the budget cannot be read, it is taken to have one.
    async fn capped(&self, run: &str) -> bool {
        match self.budgets.state(run).await {
            Ok((_, capped)) => capped,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; going on");
                true
            }
        }
    }

    /// Sets the task `field` aside when its run is paused at a cap: the unit
    /// keeps no outcome, and `resume` publishes it again. Read just before
    /// the task would start, so a cap reached stops every task not yet begun.
    async fn set_aside(&self, run: &str, field: &str) -> Start {
        let why = match self.budgets.state(run).await {
            Ok((Some(why), _)) => why,
            Ok((None, _)) => return Start::Go,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the run's budget; going on");
                return Start::Go;
            }
        };
        match self.budgets.park(run, field).await {
            Ok(true) => {
                tracing::debug!(run, why, "the run is paused; a task set aside");
                Start::Parked
            }
            // Resumed meanwhile: the task is done after all.
            Ok(false) => Start::Go,
            Err(e) => {
                // Not remembered, it would be lost: its bundle goes back to the queue.
                tracing::warn!(error = %e, "cannot set a task aside; returning its bundle");
                Start::Return
            }
        }
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

/// How many task times a bundle may spend in hand with `concurrency` slots:
/// the tasks of the prefetched bundles take turns at the slots.
fn turns_in_hand(concurrency: usize) -> u32 {
    let in_hand = usize::from(prefetch_for(concurrency, BUNDLE_SIZE)) * BUNDLE_SIZE;
    in_hand.div_ceil(concurrency.max(1)) as u32
}

/// Whether a task of a paused run starts.
enum Start {
    /// It starts.
    Go,
    /// It was set aside for `resume`.
    Parked,
    /// It could not be set aside: its bundle goes back to the queue.
    Return,
}

/// What became of one task of a bundle.
enum Outcome {
    /// Translated: handed on to the verifiers.
    Done(Box<VerifyTask>),
    /// Set aside while its run is paused.
    Parked,
    /// Its bundle goes back to the queue.
    Return,
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
        turns_in_hand: turns_in_hand(usize::from(args.concurrency)),
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
                // Translate tasks come in bundles; A4 questions one by one.
                let prefetch = match stage {
                    Stage::Translate => prefetch_for(usize::from(args.concurrency), BUNDLE_SIZE),
                    Stage::Judge => args.concurrency,
                };
                let consumer = match queue {
                    Ok(q) => broker.consume(&q, prefetch, "").await,
                    Err(e) => Err(e),
                };
                match consumer {
                    Ok(c) => {
                        let (broker, runs, shutdown) =
                            (broker.clone(), runs.clone(), shutdown.clone());
                        let slots = Arc::new(Semaphore::new(usize::from(args.concurrency.max(1))));
                        consumers.spawn(consume(c, stage, broker, runs, slots, shutdown));
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

/// Handles a queue's messages until it ends or shutdown: up to its prefetch
/// in hand, and at most one task per slot running at once.
async fn consume(
    mut consumer: autoeval_amqp::Consumer,
    stage: Stage,
    broker: Arc<Broker>,
    runs: Arc<Runs>,
    slots: Arc<Semaphore>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut in_hand = JoinSet::new();
    loop {
        let next = tokio::select! {
            n = consumer.next() => n,
            _ = shutdown.changed() => {
                consumer.cancel().await;
                // Tasks under way finish; those not yet begun go back with
                // their bundles (whose answered tasks are cached).
                slots.close();
                break;
            }
        };
        match next {
            Some(Ok(task)) => {
                match stage {
                    Stage::Translate => {
                        in_hand.spawn(handle(task, broker.clone(), runs.clone(), slots.clone()))
                    }
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

/// Translates a bundle, each task on its own slot; hands the answers on in
/// one verify message and acknowledges the bundle once that is confirmed.
async fn handle(message: Task, broker: Arc<Broker>, runs: Arc<Runs>, slots: Arc<Semaphore>) {
    let bundle: Vec<TranslateTask> = match decode(&message.data, MessageKind::Translate) {
        Ok((_, b)) => b,
        Err(e) => {
            let e = anyhow::Error::new(e);
            return give_back(message, &broker, &e, &runs.metrics, "translate").await;
        }
    };
    let run = message.meta.run.clone();
    let stages = match runs.translator(&run).await {
        Ok(s) => s,
        Err(e) => return give_back(message, &broker, &e, &runs.metrics, "translate").await,
    };
    // Only a run with a cap is charged, and only its tasks are ever set aside.
    let capped = runs.capped(&run).await;
    let tasks = bundle.into_iter().map(|task| {
        let (runs, stages, slots, run) = (&runs, &stages, &slots, run.as_str());
        async move {
            // In hand from its bundle's arrival; in flight once it has a slot.
            let field = round_field(&task.unit(), task.round);
            let held = runs.holding.hold(run, "translate", shard_of_unit(&field));
            // Closed at shutdown: tasks not yet begun go back with their bundle.
            let Ok(_slot) = slots.acquire().await else {
                return (Outcome::Return, None);
            };
            // Held, and timed, until the bundle is settled.
            let timer = (runs.metrics.task("translate"), held);
            if capped {
                match runs.set_aside(run, &field).await {
                    Start::Go => {}
                    Start::Parked => return (Outcome::Parked, Some(timer)),
                    Start::Return => return (Outcome::Return, Some(timer)),
                }
            }
            let done = translate(task, stages).await;
            if capped {
                let paid = &done.translation;
                let tokens = paid.usage.prompt_tokens + paid.usage.completion_tokens;
                runs.charge(run, paid.cost, tokens, paid.cached).await;
            }
            (Outcome::Done(Box::new(done)), Some(timer))
        }
    });
    let finished = futures_util::future::join_all(tasks).await;
    let mut done = Vec::new();
    let mut timers = Vec::new();
    let mut whole = true;
    for (outcome, timer) in finished {
        let settled = match outcome {
            Outcome::Done(v) => {
                done.push(*v);
                "acked"
            }
            Outcome::Parked => "parked",
            Outcome::Return => {
                whole = false;
                "requeued"
            }
        };
        timers.extend(timer.map(|t| (t, settled)));
    }
    // The replies are cached: whoever gets the bundle again does not pay again.
    if !whole {
        let _ = message.requeue().await;
        return;
    }
    if let Err(e) = hand_on(&broker, &run, done).await {
        tracing::warn!(error = %e, "cannot hand on a bundle's translations; returning it");
        let _ = message.requeue().await;
        return;
    }
    match message.ack().await {
        Ok(()) => {
            for ((mut timer, _held), settled) in timers {
                timer.settled(settled);
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot settle a bundle; the broker will deliver it again")
        }
    }
}

/// Publishes the translated tasks of a bundle to the verifiers (one
/// message: a bundle's tasks share a shard).
async fn hand_on(broker: &Broker, run: &str, done: Vec<VerifyTask>) -> Result<()> {
    let messages = bundle_messages(run, MessageKind::Verify, done, |v| {
        (
            VERIFY_KEY.to_string(),
            round_field(&v.task.unit(), v.task.round),
        )
    })
    .context("cannot encode a verify bundle")?;
    for (key, bytes, meta) in messages {
        broker.publish(&key, &bytes, &meta).await?;
    }
    Ok(())
}

/// Settles a message that cannot be done now: back to the queue when the
/// cause may pass (Redis away), to the dead letters with the reason
/// otherwise. Counted once per task its headers name.
async fn give_back(
    task: Task,
    broker: &Broker,
    e: &anyhow::Error,
    metrics: &Metrics,
    stage: &'static str,
) {
    let mut timers: Vec<TaskTimer<'_>> = (0..task.meta.units.len().max(1))
        .map(|_| metrics.task(stage))
        .collect();
    if autoeval_service::is_transient(e) {
        tracing::warn!(error = %e, "cannot read the run's settings; returning the task");
        let _ = task.requeue().await;
        return;
    }
    let reason = format!("{e:#}");
    tracing::warn!(reason, units = ?task.meta.units, "refusing a message");
    match task.refuse(broker, &reason).await {
        Ok(()) => timers.iter_mut().for_each(|t| t.settled("dead_lettered")),
        Err(e) => tracing::warn!(error = %e, "cannot dead-letter a task"),
    }
}

/// Asks the A4 question of one task, records the judgement in Redis once,
/// then acknowledges.
async fn handle_judge(task: Task, broker: Arc<Broker>, runs: Arc<Runs>) {
    let unit = task.meta.units.first().map_or("", String::as_str);
    let _held = runs
        .holding
        .hold(&task.meta.run, "judge", shard_of_unit(unit));
    let question: JudgeRecord = match decode::<JudgeTask>(&task.data, MessageKind::Judge) {
        Ok((_, m)) => m.into(),
        Err(e) => {
            let e = anyhow::Error::new(e);
            return give_back(task, &broker, &e, &runs.metrics, "judge").await;
        }
    };
    let run = task.meta.run.clone();
    let judge = format!("{}|{}", question.judge, question.style);
    let backend = match runs.judge(&run, &judge).await {
        Ok(b) => b,
        Err(e) => return give_back(task, &broker, &e, &runs.metrics, "judge").await,
    };
    let mut timer = runs.metrics.task("judge");
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

//! The verifier's loop: connect, subscribe to the verify queue, prove and
//! record until shut down; after a lost connection, the same again.

use crate::Args;
use anyhow::{Context, Result};
use autoeval_amqp::{bundle_messages, prefetch_for, Broker, Task};
use autoeval_pipeline::{verify, Local, Stages, TranslateTask, VerifyTask};
use autoeval_proto::fleet::{round_field, shard_of_unit, translate_key, BUNDLE_SIZE, VERIFY_QUEUE};
use autoeval_proto::wire::{decode, MessageKind};
use autoeval_redis_store::{Holding, RunStore};
use autoeval_service::{shutdown_signal, Health, RunSettings};
use autoeval_telemetry::{Metrics, TaskTimer};
use autoeval_verify::Prover;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::{watch, Mutex, Semaphore};
use tokio::task::JoinSet;

/// Each run's stages (prompts, limits; no models) and store.
struct Runs {
    settings: RunSettings,
    redis: autoeval_redis_store::Connection,
    prover: Arc<dyn Prover + Send + Sync>,
    /// One permit per check that may run at once on a blocking thread.
    cpu: Arc<Semaphore>,
    built: Mutex<HashMap<String, (Arc<Stages>, RunStore)>>,
    holding: Holding,
    metrics: Arc<Metrics>,
}

impl Runs {
    async fn get(&self, run: &str) -> Result<(Arc<Stages>, RunStore)> {
        if let Some(s) = self.built.lock().await.get(run) {
            return Ok(s.clone());
        }
        let settings = self.settings.get(run).await?;
        let stages = Arc::new(autoeval_pipeline::stages(
            &settings,
            &[],
            &Local::default(),
            self.prover.clone(),
        )?);
        let entry = (stages, RunStore::new(self.redis.clone(), run));
        self.built
            .lock()
            .await
            .insert(run.to_string(), entry.clone());
        Ok(entry)
    }
}

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let metrics = Arc::new(Metrics::new("verifier"));
    metrics.start_verifier();
    let health = Health::with_metrics(metrics.clone());
    let bound = health.serve(&args.health_addr).await?;
    println!("health: http://{bound}");
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let exe = std::env::current_exe().context("cannot find this executable to start provers")?;
    let prover = autoeval_verifier_worker::prover_pool(exe, vec!["--prover-child".into()], jobs);
    let redis = autoeval_redis_store::connect(&args.redis).await?;
    let runs = Arc::new(Runs {
        settings: RunSettings::new(redis.clone()),
        redis,
        prover: Arc::new(prover),
        cpu: Arc::new(Semaphore::new(jobs)),
        built: Mutex::default(),
        holding: Holding::new(autoeval_service::process_name("autoeval-verifier")),
        metrics,
    });
    runs.holding.spawn_reporter(runs.redis.clone());
    let mut shutdown = shutdown_signal();
    loop {
        let broker = tokio::select! {
            b = Broker::connect_with_backoff(&args.amqp, "autoeval-verifier") => Arc::new(b),
            _ = shutdown.changed() => return Ok(()),
        };
        let prefetch = prefetch_for(usize::from(args.concurrency), BUNDLE_SIZE);
        match broker.consume(VERIFY_QUEUE, prefetch, "").await {
            Ok(consumer) => {
                health.set_ready(true);
                tracing::info!(jobs, concurrency = args.concurrency, "serving");
                consume(consumer, broker.clone(), runs.clone(), shutdown.clone()).await;
            }
            Err(e) => tracing::warn!(error = %e, "cannot subscribe"),
        }
        health.set_ready(false);
        broker.close().await;
        if *shutdown.borrow() {
            tracing::info!("stopped");
            return Ok(());
        }
        tracing::warn!("subscription ended; reconnecting");
    }
}

/// Handles the verify queue's bundles, up to its prefetch at once, until it ends or shutdown.
async fn consume(
    mut consumer: autoeval_amqp::Consumer,
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
                in_hand.spawn(handle(task, broker.clone(), runs.clone()));
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
    while in_hand.join_next().await.is_some() {}
    consumer.close().await;
}

/// Dead-letters a message with `reason`, counted once per task its headers name.
async fn refuse(task: Task, broker: &Broker, reason: &str, metrics: &Metrics) {
    let mut timers: Vec<TaskTimer<'_>> = (0..task.meta.units.len().max(1))
        .map(|_| metrics.task("verify"))
        .collect();
    tracing::warn!(reason, units = ?task.meta.units, "refusing a message");
    match task.refuse(broker, reason).await {
        Ok(()) => timers.iter_mut().for_each(|t| t.settled("dead_lettered")),
        Err(e) => tracing::warn!(error = %e, "cannot dead-letter a task"),
    }
}

/// Counts one check by dataset, method and verdict.
fn observe(metrics: &Metrics, r: &autoeval_proto::ResultRecord) {
    let verdict = r.verdict.name();
    metrics
        .verify_duration
        .with_label_values(&[&r.dataset, r.method.as_deref().unwrap_or("none"), verdict])
        .observe(r.verify_ms / 1e3);
    match r.verdict {
        autoeval_proto::Verdict::Timeout => metrics
            .verify_timeouts
            .with_label_values(&[&r.dataset])
            .inc(),
        autoeval_proto::Verdict::VerifierError => {
            metrics.verify_errors.with_label_values(&[&r.dataset]).inc()
        }
        _ => {}
    }
}

/// Proves a bundle's answers, each on a blocking thread as the CPU allows;
/// records them in one Redis step, publishes their next rounds, and then
/// acknowledges the bundle.
async fn handle(message: Task, broker: Arc<Broker>, runs: Arc<Runs>) {
    let bundle: Vec<VerifyTask> = match decode(&message.data, MessageKind::Verify) {
        Ok((_, m)) => m,
        Err(e) => return refuse(message, &broker, &e.to_string(), &runs.metrics).await,
    };
    let run = message.meta.run.clone();
    let (stages, store) = match runs.get(&run).await {
        Ok(s) => s,
        Err(e) if autoeval_service::is_transient(&e) => {
            tracing::warn!(error = %e, "cannot read the run's settings; returning the task");
            let _ = message.requeue().await;
            return;
        }
        Err(e) => return refuse(message, &broker, &format!("{e:#}"), &runs.metrics).await,
    };
    let rounds = bundle.first().map_or(1, |t| t.task.rounds);
    let checks = bundle.into_iter().map(|task| {
        let (runs, stages, run) = (&runs, stages.clone(), run.as_str());
        async move {
            let field = round_field(&task.task.unit(), task.task.round);
            let held = runs.holding.hold(run, "verify", shard_of_unit(&field));
            let timer = runs.metrics.task("verify");
            let permit = runs.cpu.clone().acquire_owned().await.ok()?;
            let proved = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                verify(task, &stages)
            })
            .await;
            match proved {
                Ok(p) => Some((p, timer, held)),
                Err(e) => {
                    tracing::error!(error = %e, "the verifier thread failed; returning the bundle");
                    None
                }
            }
        }
    });
    let proved: Option<Vec<_>> = futures_util::future::join_all(checks)
        .await
        .into_iter()
        .collect();
    let Some(proved) = proved else {
        let _ = message.requeue().await;
        return;
    };
    let mut records = Vec::with_capacity(proved.len());
    let mut next_rounds = Vec::new();
    let mut timers = Vec::with_capacity(proved.len());
    for ((record, next), timer, held) in proved {
        observe(&runs.metrics, &record);
        records.push(record);
        next_rounds.extend(next);
        timers.push((timer, held));
    }
    if let Err(e) = store.record_all(&records, rounds).await {
        tracing::warn!(error = %e, "cannot record results; returning their bundle");
        let _ = message.requeue().await;
        return;
    }
    // Published whether or not the rounds were new: a bundle delivered again
    // after a crash between recording and publishing must not end the chains.
    if let Err(e) = publish_next(&broker, &run, next_rounds).await {
        tracing::warn!(error = %e, "cannot publish the next rounds; returning their bundle");
        let _ = message.requeue().await;
        return;
    }
    match message.ack().await {
        Ok(()) => {
            for (mut timer, _) in timers {
                timer.settled("acked");
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot acknowledge a bundle; the broker will deliver it again")
        }
    }
}

/// Publishes the next rounds of (A∘I)^n, bundled by model and shard.
async fn publish_next(broker: &Broker, run: &str, next: Vec<TranslateTask>) -> Result<()> {
    let messages = bundle_messages(run, MessageKind::Translate, next, |t| {
        (translate_key(&t.model), round_field(&t.unit(), t.round))
    })
    .context("cannot encode the next rounds")?;
    for (key, bytes, meta) in messages {
        broker.publish(&key, &bytes, &meta).await?;
    }
    Ok(())
}

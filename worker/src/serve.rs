//! The worker's loop: connect, subscribe to each model's queue, handle
//! tasks until shut down; after a lost connection, the same again.

use crate::Args;
use anyhow::Result;
use autoeval_amqp::{Broker, Meta, Task};
use autoeval_proto::fleet::VERIFY_KEY;
use autoeval_proto::wire::{decode, encode, Header, MessageKind};
use autoeval_redis_store::RedisCache;
use autoeval_service::{shutdown_signal, Health, RunSettings};
use autoeval_translate::{translate, Local, TranslateTask, Translator};
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
}

impl Runs {
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
}

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let health = Health::default();
    let bound = health.serve(&args.health_addr).await?;
    println!("health: http://{bound}");
    let redis = autoeval_redis_store::connect(&args.redis).await?;
    let runs = Arc::new(Runs {
        consumer_timeout: std::time::Duration::from_secs(args.consumer_timeout_s),
        settings: RunSettings::new(redis.clone()),
        redis,
        local: Local {
            concurrency: Some(usize::from(args.concurrency)),
            cache: None,
            secrets_file: args.secrets.clone(),
        },
        models: args.models.clone(),
        built: Mutex::default(),
    });
    let mut shutdown = shutdown_signal();
    loop {
        let broker = tokio::select! {
            b = Broker::connect_with_backoff(&args.amqp, "autoeval-worker") => Arc::new(b),
            _ = shutdown.changed() => return Ok(()),
        };
        let mut consumers = JoinSet::new();
        for model in &args.models {
            let queue = broker.declare_translate(model).await;
            let consumer = match queue {
                Ok(q) => broker.consume(&q, args.concurrency, "").await,
                Err(e) => Err(e),
            };
            match consumer {
                Ok(c) => {
                    let (broker, runs, shutdown) = (broker.clone(), runs.clone(), shutdown.clone());
                    consumers.spawn(consume(c, broker, runs, shutdown));
                }
                Err(e) => tracing::warn!(error = %e, model, "cannot subscribe"),
            }
        }
        health.set_ready(consumers.len() == args.models.len());
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

/// Handles a queue's tasks, up to its prefetch at once, until it ends or shutdown.
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
    // Tasks started are finished (or returned) before the channel closes.
    while in_hand.join_next().await.is_some() {}
    consumer.close().await;
}

async fn handle(task: Task, broker: Arc<Broker>, runs: Arc<Runs>) {
    let message: TranslateTask = match decode(&task.data, MessageKind::Translate) {
        Ok((_, m)) => m,
        Err(e) => {
            tracing::warn!(error = %e, unit = task.meta.unit, "refusing a task");
            let reason = e.to_string();
            if let Err(e) = task.refuse(&broker, &reason).await {
                tracing::warn!(error = %e, "cannot dead-letter a task");
            }
            return;
        }
    };
    let run = task.meta.run.clone();
    let stages = match runs.translator(&run).await {
        Ok(s) => s,
        Err(e) if autoeval_service::is_transient(&e) => {
            tracing::warn!(error = %e, "cannot read the run's settings; returning the task");
            let _ = task.requeue().await;
            return;
        }
        Err(e) => {
            let reason = format!("{e:#}");
            if let Err(e) = task.refuse(&broker, &reason).await {
                tracing::warn!(error = %e, "cannot dead-letter a task");
            }
            return;
        }
    };
    let unit = task.meta.unit.clone();
    let done = translate(message, &stages).await;
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
        Ok(()) => task.ack().await,
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

//! The worker's loop: connect, subscribe to each model's translate and judge
//! queues, and run the engine's translate and judge loops over them until
//! shut down; after a lost connection, the same again.

use crate::Args;
use anyhow::Result;
use autoeval_amqp::{prefetch_for, route_verify, AmqpInbox, AmqpOutbox, Broker};
use autoeval_engine::{serve_judge, serve_translate, Shutdown};
use autoeval_proto::fleet::BUNDLE_SIZE;
use autoeval_proto::wire::MessageKind;
use autoeval_redis_store::{Budgets, Holding, RedisGate, RedisRecords};
use autoeval_service::{shutdown_signal, FleetWatch, Health, RunSettings};
use autoeval_telemetry::{LlmObserver, Metrics};
use autoeval_translate::{Local, Templates};
use std::sync::Arc;
use tokio::task::JoinSet;

mod stages;

use stages::{RunJudges, RunTranslators};

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let metrics = Arc::new(Metrics::new("worker"));
    metrics.start_stage("translate");
    metrics.start_stage("judge");
    let health = Health::with_metrics(metrics.clone());
    let bound = health.serve(&args.health_addr).await?;
    println!("health: http://{bound}");
    let redis = autoeval_redis_store::connect(&args.redis).await?;
    let local = Local {
        concurrency: Some(usize::from(args.concurrency)),
        cache: None,
        secrets_file: args.secrets.clone(),
        observer: Some(Arc::new(LlmObserver(metrics.clone()))),
        // Every worker of the fleet keeps each model's limits together.
        gate: Some(Arc::new(RedisGate::new(redis.clone()))),
    };
    let translators = Arc::new(RunTranslators::new(
        RunSettings::new(redis.clone()),
        redis.clone(),
        local.clone(),
        args.models.clone(),
        std::time::Duration::from_secs(args.consumer_timeout_s),
        usize::from(args.concurrency),
    ));
    let judges = Arc::new(RunJudges::new(
        redis.clone(),
        local,
        Arc::new(Templates::builtin()),
    ));
    let admission = Arc::new(Budgets::new(redis.clone()));
    let records = Arc::new(RedisRecords::new(redis.clone()));
    let holding = Holding::new(autoeval_service::process_name("autoeval-worker"));
    holding.spawn_reporter(redis);
    let watch = Arc::new(FleetWatch::new(metrics, holding));
    let slots = usize::from(args.concurrency.max(1));
    let mut shutdown = shutdown_signal();
    loop {
        let broker = tokio::select! {
            b = Broker::connect_with_backoff(&args.amqp, "autoeval-worker") => Arc::new(b),
            _ = shutdown.changed() => return Ok(()),
        };
        let mut loops = JoinSet::new();
        for model in &args.models {
            // Translate tasks come in bundles; A4 questions one by one.
            let translate = match broker.declare_translate(model).await {
                Ok(q) => {
                    let prefetch = prefetch_for(slots, BUNDLE_SIZE);
                    broker.consume(&q, prefetch, "").await
                }
                Err(e) => Err(e),
            };
            let judge = match broker.declare_judge(model).await {
                Ok(q) => broker.consume(&q, args.concurrency, "").await,
                Err(e) => Err(e),
            };
            match translate {
                Ok(c) => {
                    let mut inbox = AmqpInbox::new(c, broker.clone(), MessageKind::Translate);
                    let outbox = Arc::new(AmqpOutbox::new(
                        broker.clone(),
                        MessageKind::Verify,
                        route_verify,
                    ));
                    let (stages, admission, watch) =
                        (translators.clone(), admission.clone(), watch.clone());
                    let shutdown = Shutdown::from_watch(shutdown.clone());
                    loops.spawn(async move {
                        let ended = serve_translate(
                            &mut inbox, outbox, stages, admission, watch, slots, shutdown,
                        )
                        .await;
                        inbox.close().await;
                        ended
                    });
                }
                Err(e) => tracing::warn!(error = %e, model, "cannot subscribe to translate"),
            }
            match judge {
                Ok(c) => {
                    let mut inbox = AmqpInbox::new(c, broker.clone(), MessageKind::Judge);
                    let (judges, records, watch) = (judges.clone(), records.clone(), watch.clone());
                    let shutdown = Shutdown::from_watch(shutdown.clone());
                    loops.spawn(async move {
                        let ended =
                            serve_judge(&mut inbox, judges, records, watch, slots, shutdown).await;
                        inbox.close().await;
                        ended
                    });
                }
                Err(e) => tracing::warn!(error = %e, model, "cannot subscribe to judge"),
            }
        }
        health.set_ready(loops.len() == 2 * args.models.len());
        tracing::info!(models = ?args.models, "serving");
        // The first loop to end (a lost connection, a cancelled consumer)
        // ends this connection's turn; the rest are stopped too.
        if let Some(Ok(ended)) = loops.join_next().await {
            tracing::debug!(?ended, "a loop ended");
        }
        health.set_ready(false);
        if *shutdown.borrow() {
            // Every loop finishes the work it began.
            while loops.join_next().await.is_some() {}
        } else {
            loops.shutdown().await;
        }
        broker.close().await;
        if *shutdown.borrow() {
            tracing::info!("stopped");
            return Ok(());
        }
        tracing::warn!("subscription ended; reconnecting");
    }
}

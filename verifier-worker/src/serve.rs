//! The verifier's loop: connect, subscribe to the verify queue, and run the
//! engine's verify loop over it until shut down; after a lost connection,
//! the same again.

use crate::Args;
use anyhow::{Context, Result};
use autoeval_amqp::{prefetch_for, route_translate, AmqpInbox, AmqpOutbox, Broker, InHand};
use autoeval_engine::{serve_verify, SetupError, Shutdown, Stages, VerifyLoop};
use autoeval_proto::fleet::BUNDLE_SIZE;
use autoeval_proto::wire::MessageKind;
use autoeval_redis_store::{Holding, RedisRecords};
use autoeval_run_settings::StageSettings;
use autoeval_service::{
    serve_connected, setup_error, shutdown_signal, FleetWatch, Health, RunSettings,
};
use autoeval_solver_pool::memory;
use autoeval_telemetry::Metrics;
use autoeval_verify::Prover;
use autoeval_verify_stage::{verify_stage, VerifyStage, CHECKS_PER_TASK};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// Each run's verify stage, built from the settings its coordinator registered.
struct RunStages {
    settings: RunSettings<StageSettings>,
    prover: Arc<dyn Prover + Send + Sync>,
    built: Mutex<HashMap<String, Arc<VerifyStage>>>,
    /// What the verifier works through, bundles in hand, and the broker's consumer timeout.
    hold: (InHand, u16, Duration),
}

/// The check time limit the prefetch is fitted to (a run's default).
const DEFAULT_CHECK: Duration =
    Duration::from_millis(autoeval_proto::DEFAULT_CHECK_TIMEOUT_MS as u64);

/// What the verifier takes beside its provers, for the container check.
const OWN_MEMORY_MB: u64 = 512;

impl Stages<VerifyStage> for RunStages {
    async fn stage(&self, run: &str) -> Result<Arc<VerifyStage>, SetupError> {
        // Held while the stage is built: bundles arriving together build it (and warn) once.
        let mut built = self.built.lock().await;
        if let Some(s) = built.get(run) {
            return Ok(s.clone());
        }
        let settings = self.settings.get(run).await.map_err(|e| setup_error(&e))?;
        let (in_hand, prefetch, consumer_timeout) = self.hold;
        let check = Duration::from_millis(settings.verify.prover.timeout_ms.into());
        let hold = in_hand.longest_hold(prefetch, check);
        if hold >= consumer_timeout {
            tracing::warn!(
                run,
                longest_hold_s = hold.as_secs(),
                consumer_timeout_s = consumer_timeout.as_secs(),
                "at this run's check time limit a bundle may wait in hand past the broker's consumer timeout; lower --concurrency or raise --jobs"
            );
        }
        let stage =
            Arc::new(
                verify_stage(&settings, self.prover.clone()).map_err(|e| SetupError {
                    transient: false,
                    message: format!("run {run:?}: {e}"),
                })?,
            );
        built.insert(run.to_string(), stage.clone());
        Ok(stage)
    }
}

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let metrics = Arc::new(Metrics::new("verifier"));
    metrics.start_verifier();
    let topology = args.service.topology()?;
    let health = Health::with_metrics(metrics.clone());
    let bound = health.serve(args.service.health.or_any_port()).await?;
    println!("health: http://{bound}");
    let jobs = args.checks.jobs();
    if let Some(limit) = memory::container_memory_limit() {
        let prover_mb = args.prover.prover_memory_mb;
        if let Some(why) = memory::memory_misfit(jobs, prover_mb, OWN_MEMORY_MB, limit) {
            anyhow::bail!(why);
        }
    }
    let prover = args
        .prover
        .pool(jobs)
        .context("cannot find this executable to start provers")?;
    let consumer_timeout = Duration::from_secs(args.service.consumer_timeout_s);
    let wanted = prefetch_for(usize::from(args.concurrency), BUNDLE_SIZE);
    let in_hand = InHand {
        bundle: BUNDLE_SIZE,
        steps: CHECKS_PER_TASK,
        slots: jobs,
    };
    let prefetch = in_hand.fitting_prefetch(wanted, DEFAULT_CHECK, consumer_timeout);
    tracing::info!(
        prefetch,
        wanted,
        longest_hold_s = in_hand.longest_hold(prefetch, DEFAULT_CHECK).as_secs(),
        consumer_timeout_s = args.service.consumer_timeout_s,
        "taking up to {prefetch} bundles at once; at the default check time limit the last check of the last bundle taken waits at most {} s, within the broker's consumer timeout of {} s",
        in_hand.longest_hold(prefetch, DEFAULT_CHECK).as_secs(),
        args.service.consumer_timeout_s
    );
    let redis = autoeval_redis_store::connect(&args.service.store.redis).await?;
    let stages = Arc::new(RunStages {
        settings: RunSettings::new(redis.clone()),
        prover: Arc::new(prover),
        built: Mutex::default(),
        hold: (in_hand, prefetch, consumer_timeout),
    });
    let holding = Holding::new(autoeval_service::process_name("autoeval-verifier"));
    holding.spawn_reporter(redis.clone());
    autoeval_service::spawn_presence(redis.clone(), "autoeval-verifier", metrics.clone());
    let watch = Arc::new(FleetWatch::new(metrics, holding));
    let store = Arc::new(RedisRecords::new(redis));
    let shutdown = shutdown_signal();
    let (health, stages, store, watch, stop) = (&health, &stages, &store, &watch, &shutdown);
    let served = |broker: Arc<Broker>| async move {
        let queue = broker.topology().verify_queue();
        let consumer = match broker.consume(&queue, prefetch, "").await {
            Ok(c) => c,
            Err(e) => return tracing::warn!(error = %e, "cannot subscribe"),
        };
        health.set_ready(true);
        tracing::info!(jobs, concurrency = args.concurrency, "serving");
        let mut inbox = AmqpInbox::new(consumer, broker.clone(), MessageKind::Verify);
        let outbox = Arc::new(AmqpOutbox::new(
            broker,
            MessageKind::Translate,
            route_translate,
        ));
        let with = VerifyLoop {
            outbox,
            stages: stages.clone(),
            store: store.clone(),
            watch: watch.clone(),
            jobs,
        };
        let ended = serve_verify(&mut inbox, with, Shutdown::from_watch(stop.clone())).await;
        tracing::debug!(?ended, "the verify loop ended");
        inbox.close().await;
    };
    serve_connected(
        &args.service.broker.amqp,
        &topology,
        "autoeval-verifier",
        health,
        shutdown.clone(),
        served,
    )
    .await?;
    Ok(())
}

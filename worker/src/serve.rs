//! The worker's loop: connect, subscribe to each model's translate and judge
//! queues, and run the engine's translate and judge loops over them until
//! shut down; after a lost connection, the same again.

use crate::runs::{RedisRegistry, RunJudges, RunTranslators};
use crate::Args;
use anyhow::Result;
use autoeval_amqp::{
    prefetch_for, route_verify, AmqpInbox, AmqpOutbox, Broker, BrokerError, InHand,
};
use autoeval_engine::{serve_judge, serve_translate, Ended, Shutdown, TranslateLoop};
use autoeval_models::{Observers, Waits};
use autoeval_proto::fleet::BUNDLE_SIZE;
use autoeval_proto::wire::MessageKind;
use autoeval_proto::{JudgeTask, TranslateTask};
use autoeval_redis_store::{Budgets, Holding, RedisCustody, RedisGate, RedisRecords};
use autoeval_service::{serve_connected, shutdown_signal, FleetWatch, Health};
use autoeval_telemetry::{LlmObserver, Metrics};
use autoeval_translate::Local;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Serves until SIGTERM.
pub async fn run(args: Args) -> Result<()> {
    let metrics = Arc::new(Metrics::new("worker"));
    metrics.start_stage("translate");
    metrics.start_stage("judge");
    let topology = args.service.topology()?;
    let health = Health::with_metrics(metrics.clone());
    let bound = health.serve(args.service.health.or_any_port()).await?;
    println!("health: http://{bound}");
    let redis = autoeval_redis_store::connect(&args.service.store.redis).await?;
    // Each rate-limit wait is told with the runs this worker holds, for their progress lines.
    let waits = Arc::new(Waits::default());
    let local = Local {
        concurrency: Some(usize::from(args.concurrency)),
        cache: None,
        secrets_file: args.keys.secrets.clone(),
        observer: Some(Arc::new(Observers(vec![
            Arc::new(LlmObserver(metrics.clone())),
            waits.clone(),
        ]))),
        // Every worker of the fleet keeps each model's limits together.
        gate: Some(Arc::new(RedisGate::new(redis.clone()))),
        // Each run's journal and budget are its own, set per run.
        journal: None,
        batch_spend: None,
        base_urls: autoeval_llm_client::BaseUrls::from_env(),
        // The prover stays in the verifiers: a built-in judge here says it cannot decide.
        judge: None,
    };
    let registry = Arc::new(RedisRegistry::new(redis.clone()));
    // Batched tasks are kept in Redis under this process's lease.
    let owner = format!(
        "{}#{:x}",
        autoeval_service::process_name("autoeval-worker"),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    // The names the broker's queues and Redis's keys carry: the specs as written.
    let names: Vec<String> = args.models.iter().map(|m| m.to_string()).collect();
    let custody = Arc::new(RedisCustody::new(
        redis.clone(),
        owner,
        names.clone(),
        args.batch_capacity as usize,
        Duration::from_secs(args.custody_lease_s),
    ));
    custody.hold_lease().await?;
    let slots = usize::from(args.concurrency.max(1));
    // A task waits for a slot behind the others in hand, then runs.
    let in_hand = InHand {
        bundle: BUNDLE_SIZE,
        steps: 1,
        slots,
    };
    let turns = in_hand.turns(prefetch_for(slots, BUNDLE_SIZE));
    let holding = Holding::new(autoeval_service::process_name("autoeval-worker")).with_waits(waits);
    holding.spawn_reporter(redis.clone());
    autoeval_service::spawn_presence(redis.clone(), "autoeval-worker", metrics.clone());
    autoeval_redis_store::spawn_serving_reporter(redis.clone(), names.clone());
    let timeout = Duration::from_secs(args.service.consumer_timeout_s);
    let models = args.models.clone();
    let loops = Loops {
        translators: Arc::new(RunTranslators::new(
            registry.clone(),
            local.clone(),
            models,
            Some((turns, timeout)),
        )),
        judges: Arc::new(RunJudges::new(registry, local, args.models.clone())),
        admission: Arc::new(Budgets::new(redis.clone())),
        custody,
        records: Arc::new(RedisRecords::new(redis)),
        watch: Arc::new(FleetWatch::new(metrics, holding)),
        slots,
    };
    let shutdown = shutdown_signal();
    let (models, health, loops, stop) = (&names, &health, &loops, &shutdown);
    let served = |broker: Arc<Broker>| serve_turn(broker, models, loops, health, stop);
    serve_connected(
        &args.service.broker.amqp,
        &topology,
        "autoeval-worker",
        health,
        shutdown.clone(),
        served,
    )
    .await?;
    Ok(())
}

/// Serves every model over one broker connection, for as long as its turn
/// lasts: it ends for every loop when one ends (a lost connection, a
/// cancelled consumer) or the process stops, and each loop then finishes
/// the tasks it holds before the turn is over, so that no call in flight is
/// cut off unrecorded and uncharged.
async fn serve_turn(
    broker: Arc<Broker>,
    models: &[String],
    loops: &Loops,
    health: &Health,
    stop: &watch::Receiver<bool>,
) {
    let turn = Arc::new(watch::channel(false).0);
    let forward = {
        let (turn, mut stop) = (turn.clone(), stop.clone());
        tokio::spawn(async move {
            if stop.wait_for(|stopped| *stopped).await.is_ok() {
                turn.send_replace(true);
            }
        })
    };
    let mut running = JoinSet::new();
    for model in models {
        match subscribe(&broker, model, loops.slots).await {
            Ok((tasks, questions)) => {
                let serving = loops
                    .clone()
                    .serve(broker.clone(), tasks, questions, turn.clone());
                running.spawn(serving);
            }
            Err(e) => {
                tracing::warn!(error = %e, model, "cannot subscribe");
                turn.send_replace(true);
                break;
            }
        }
    }
    if !*turn.borrow() {
        health.set_ready(true);
        tracing::info!(?models, "serving");
    }
    if let Some(Ok(ended)) = running.join_next().await {
        tracing::debug!(?ended, "the loops of a model ended");
    }
    health.set_ready(false);
    turn.send_replace(true);
    while running.join_next().await.is_some() {}
    forward.abort();
}

/// What the loops of every model share.
#[derive(Clone)]
struct Loops {
    translators: Arc<RunTranslators<RedisRegistry>>,
    judges: Arc<RunJudges<RedisRegistry>>,
    admission: Arc<Budgets>,
    custody: Arc<RedisCustody>,
    records: Arc<RedisRecords>,
    watch: Arc<FleetWatch>,
    slots: usize,
}

impl Loops {
    /// Runs a model's translate and judge loops until `turn` ends, which
    /// either loop ending ends too; both finish the work they began.
    async fn serve(
        self,
        broker: Arc<Broker>,
        mut tasks: AmqpInbox<TranslateTask>,
        mut questions: AmqpInbox<JudgeTask>,
        turn: Arc<watch::Sender<bool>>,
    ) -> Ended {
        let ended = {
            let outbox = Arc::new(AmqpOutbox::new(broker, MessageKind::Verify, route_verify));
            let with = TranslateLoop {
                outbox,
                stages: self.translators,
                admission: self.admission,
                watch: self.watch.clone(),
                custody: self.custody,
                slots: self.slots,
            };
            let mut translating = pin!(serve_translate(
                &mut tasks,
                with,
                Shutdown::from_watch(turn.subscribe()),
            ));
            let mut judging = pin!(serve_judge(
                &mut questions,
                self.judges,
                self.records,
                self.watch,
                self.slots,
                Shutdown::from_watch(turn.subscribe()),
            ));
            let (ended, translate_first) = tokio::select! {
                e = &mut translating => (e, true),
                e = &mut judging => (e, false),
            };
            turn.send_replace(true);
            if translate_first {
                judging.await;
            } else {
                translating.await;
            }
            ended
        };
        tasks.close().await;
        questions.close().await;
        ended
    }
}

/// Subscribes to the translate queue (bundles, a prefetch of about twice
/// the slots' tasks) and the judge queue (one question a message) of `model`.
async fn subscribe(
    broker: &Arc<Broker>,
    model: &str,
    slots: usize,
) -> Result<(AmqpInbox<TranslateTask>, AmqpInbox<JudgeTask>), BrokerError> {
    let queue = broker.declare_translate(model).await?;
    let tasks = broker
        .consume(&queue, prefetch_for(slots, BUNDLE_SIZE), "")
        .await?;
    let queue = broker.declare_judge(model).await?;
    let prefetch = u16::try_from(slots).unwrap_or(u16::MAX);
    let questions = broker.consume(&queue, prefetch, "").await?;
    Ok((
        AmqpInbox::new(tasks, broker.clone(), MessageKind::Translate),
        AmqpInbox::new(questions, broker.clone(), MessageKind::Judge),
    ))
}

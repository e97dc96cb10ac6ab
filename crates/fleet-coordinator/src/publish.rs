//! Putting a run on the fleet: registering it in Redis, waiting for
//! workers to serve its models, and publishing its tasks to the broker.

use crate::unix_now;
use anyhow::{bail, Result};
use autoeval_amqp::{bundle_messages, Broker, Meta};
use autoeval_progress::Display;
use autoeval_proto::fleet::translate_key;
use autoeval_proto::meta;
use autoeval_proto::wire::MessageKind;
use autoeval_proto::TranslateTask;
use autoeval_redis_store::RunStore;
use autoeval_run_dir::stage_settings;
use autoeval_run_settings::Resolved;
use std::time::{Duration, Instant};

/// Registers the run, refusing a name that holds another plan.
pub(crate) async fn register(
    store: &RunStore,
    settings: &Resolved,
    units: usize,
    items: usize,
) -> Result<()> {
    let plan = serde_json::to_string(&settings.plan)?;
    let meta = store.meta().await?;
    if meta.get(meta::PLAN).is_some_and(|p| *p != plan) {
        bail!(
            "Redis holds a run named {} with other settings; use another --out",
            store.run()
        );
    }
    let stages = serde_json::to_string(&stage_settings(settings)?)?;
    let config = settings.to_config_text()?;
    let mut fields = vec![
        (meta::PLAN, plan),
        (meta::STAGES, stages),
        (meta::CONFIG, config),
        (meta::UNITS, units.to_string()),
        (meta::ITEMS, items.to_string()),
    ];
    if !meta.contains_key(meta::CREATED) {
        fields.push((meta::CREATED, unix_now().to_string()));
    }
    store.set_meta(&fields).await?;
    Ok(store.start_arrivals().await?)
}

/// How long a publish waits for workers, and what it advises when none came.
pub(crate) struct WorkerWait<'a> {
    /// The longest wait, in seconds.
    pub wait_s: u64,
    /// What to do once a worker serves the model (a command to run).
    pub then: &'a str,
    /// How progress is shown.
    pub display: Display,
}

/// Waits until each `(model, queue)` has a consumer, for at most `wait.wait_s` seconds.
pub(crate) async fn wait_for_workers(
    broker: &Broker,
    store: &RunStore,
    queues: &[(String, String)],
    wait: &WorkerWait<'_>,
) -> Result<()> {
    let WorkerWait {
        wait_s,
        then,
        display,
    } = *wait;
    let deadline = Instant::now() + Duration::from_secs(wait_s);
    for (model, queue) in queues {
        let mut told = false;
        loop {
            let served = broker
                .depth(queue)
                .await?
                .is_some_and(|(_, consumers)| consumers > 0);
            if served {
                break;
            }
            // What is served instead: a misspelt spec shows beside the right one.
            let others = match store.served_models().await {
                Ok(m) if m.is_empty() => "no worker serves any model now".to_string(),
                Ok(m) => format!("workers serve: {}", m.join(", ")),
                Err(_) => String::new(),
            };
            if Instant::now() >= deadline {
                eprintln!(
                    "fleet: no worker serves {model} ({others}); its tasks go to the dead-letter queue until one does: start `autoeval-worker --model '{model}'`, then {then}"
                );
                break;
            }
            if !told && display != Display::Quiet {
                eprintln!("fleet: waiting for a worker serving {model} ({others})");
                told = true;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    Ok(())
}

/// Publishes translate tasks in bundles of one model and shard.
pub(crate) async fn publish_tasks(
    broker: &Broker,
    run: &str,
    tasks: Vec<TranslateTask>,
) -> Result<()> {
    let messages = bundle_messages(run, MessageKind::Translate, tasks, |t| {
        (translate_key(&t.model), t.round_key())
    })?;
    publish(broker, messages.into_iter().map(Ok)).await
}

/// Publishes `(routing key, body, meta)` messages with many confirms in
/// flight at once, a new publish starting as soon as any earlier one is confirmed.
pub(crate) async fn publish(
    broker: &Broker,
    messages: impl Iterator<Item = Result<(String, Vec<u8>, Meta)>>,
) -> Result<()> {
    use futures_util::StreamExt;
    const IN_FLIGHT: usize = 256;
    let mut sends = futures_util::stream::iter(messages.map(|m| async move {
        let (key, bytes, meta) = m?;
        broker
            .publish(&key, &bytes, &meta)
            .await
            .map_err(anyhow::Error::from)
    }))
    .buffer_unordered(IN_FLIGHT);
    while let Some(sent) = sends.next().await {
        sent?;
    }
    Ok(())
}

//! `autoeval fleet gc`: removes from Redis the runs that finished (and keys
//! left of runs no longer registered), and from the broker the queues of
//! models that no run still going uses and no worker serves.

use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_pipeline::RunPlan;
use autoeval_proto::meta;
use autoeval_redis_store::{Connection, RunStore};
use std::collections::BTreeSet;

/// What a collection removed, or would remove.
#[derive(Debug, Default)]
pub struct Collected {
    /// Finished runs whose keys were deleted.
    pub runs: Vec<String>,
    /// Runs not registered (their `meta` gone) whose leftover keys were deleted.
    pub leftovers: Vec<String>,
    /// Runs still going, kept.
    pub going: Vec<String>,
    /// Queues deleted.
    pub queues: Vec<String>,
    /// Queues kept because a run still going uses their model or a worker serves it.
    pub queues_kept: Vec<String>,
    /// Dead letters of the finished runs, taken out of the dead-letter queue.
    pub dead_letters: usize,
}

/// Finds what to collect and, unless `dry_run`, removes it.
pub async fn collect(conn: &Connection, broker: &Broker, dry_run: bool) -> Result<Collected> {
    let mut done = Collected::default();
    let registered: BTreeSet<String> = autoeval_redis_store::all_runs(conn)
        .await?
        .into_iter()
        .collect();
    let mut used = BTreeSet::new();
    for run in &registered {
        let store = RunStore::new(conn.clone(), run);
        let meta = store.meta().await?;
        if meta.contains_key(meta::FINISHED) {
            if !dry_run {
                store.delete().await?;
                done.dead_letters += broker.take_dead_letters(run).await?.len();
            }
            done.runs.push(run.clone());
        } else {
            // A plan this build cannot read keeps every queue: nothing is known unused.
            match meta
                .get(meta::PLAN)
                .map(|p| serde_json::from_str::<RunPlan>(p))
            {
                Some(Ok(plan)) => used.extend(plan.models.iter().map(|m| m.to_string())),
                _ => {
                    used.insert("*".to_string());
                }
            }
            done.going.push(run.clone());
        }
    }
    for run in autoeval_redis_store::runs_with_keys(conn).await? {
        if registered.contains(&run) {
            continue;
        }
        if !dry_run {
            RunStore::new(conn.clone(), &run).delete_leftovers().await?;
        }
        done.leftovers.push(run);
    }
    let serving = autoeval_redis_store::served_models(conn).await?;
    for model in autoeval_redis_store::queued_models(conn).await? {
        let in_use = used.contains("*") || used.contains(&model) || serving.contains(&model);
        let mut all_gone = true;
        let names = broker.topology();
        for q in [names.translate_queue(&model), names.judge_queue(&model)] {
            // A queue never declared (a model never judged with) is no news.
            let Some((ready, consumers)) = broker.depth(&q).await? else {
                continue;
            };
            let gone = if in_use {
                false
            } else if dry_run {
                ready == 0 && consumers == 0
            } else {
                broker.delete_queue_if_idle(&q).await?
            };
            if gone {
                done.queues.push(q);
            } else {
                all_gone = false;
                done.queues_kept.push(q);
            }
        }
        if all_gone && !dry_run {
            autoeval_redis_store::forget_queued_model(conn, &model).await?;
        }
    }
    Ok(done)
}

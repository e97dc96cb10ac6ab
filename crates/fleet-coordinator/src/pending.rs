//! The units a run still needs, read from its directory and published a
//! batch of items at a time: the items are made again as they are
//! published, so the coordinator never holds a whole run's tasks.

use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_pipeline::{initial_tasks, RecordedUnits};
use autoeval_proto::{ResultRecord, RoundKey, TranslateTask, UnitKey};
use autoeval_redis_store::RunStore;
use autoeval_run_dir::item_batches;
use autoeval_run_dir::{for_each_record, results_exist, JsonlStore};
use autoeval_run_settings::Resolved;
use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

/// Which of the pending units to publish.
#[derive(Default)]
pub struct Only {
    /// Leave out units Redis has a final outcome for.
    pub without_final: bool,
    /// Leave out these units (their tasks are among the dead letters).
    pub not: BTreeSet<UnitKey>,
    /// Publish only these rounds (those set aside at a cap), when given.
    pub rounds: Option<HashSet<RoundKey>>,
    /// Publish only units among these (the waves of a run `--until
    /// decided` published so far), when given.
    pub within: Option<Arc<HashSet<UnitKey>>>,
}

/// What a publication did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Published {
    /// Units the run directory shows finished.
    pub finished: usize,
    /// Tasks published.
    pub tasks: usize,
}

/// Where each unit stands by the rounds in `results`.
pub fn recorded_units(results: &Path, rounds: u32) -> Result<RecordedUnits> {
    let mut recorded = RecordedUnits::new(rounds);
    if results_exist(results) {
        for_each_record(results, |r| recorded.add(&r))?;
    }
    Ok(recorded)
}

/// Publishes the next task of every unit of the run that its directory
/// (`log`) does not show finished and `only` keeps.
pub async fn publish_pending(
    broker: &Broker,
    store: &RunStore,
    settings: &Resolved,
    log: &JsonlStore,
    only: &Only,
) -> Result<Published> {
    let recorded = recorded_units(log.path(), settings.plan.rounds)?;
    let mut done = Published::default();
    let batches = item_batches(settings)?;
    for batch in batches {
        let batch = batch?;
        let mut tasks = Vec::new();
        for task in initial_tasks(&settings.plan, &batch.items) {
            match recorded.next(task) {
                None => done.finished += 1,
                Some(next) => {
                    let wanted = !only.not.contains(&next.unit())
                        && only
                            .within
                            .as_ref()
                            .is_none_or(|w| w.contains(&next.unit()))
                        && only
                            .rounds
                            .as_ref()
                            .is_none_or(|r| r.contains(&next.round_key()));
                    if wanted {
                        tasks.push(next);
                    }
                }
            }
        }
        if only.without_final && !tasks.is_empty() {
            let units: Vec<UnitKey> = tasks.iter().map(|t| t.unit()).collect();
            let finals = store.finals_of(&units).await?;
            let mut finals = finals.into_iter();
            tasks.retain(|_| finals.next().flatten().is_none());
        }
        done.tasks += tasks.len();
        crate::publish::publish_tasks(broker, store.run(), tasks).await?;
    }
    Ok(done)
}

/// The first round of each unit of the run that `wanted` names, made again
/// from the run's items.
pub fn initial_of(
    settings: &Resolved,
    mut wanted: impl FnMut(&UnitKey) -> bool,
) -> Result<Vec<TranslateTask>> {
    let mut found = Vec::new();
    for batch in item_batches(settings)? {
        let batch = batch?;
        found.extend(
            initial_tasks(&settings.plan, &batch.items)
                .into_iter()
                .filter(|t| wanted(&t.unit())),
        );
    }
    Ok(found)
}

/// The records of `results` in batches of `size`, read on a thread of its
/// own a few batches ahead; an unreadable file ends with its error.
pub fn record_batches(
    results: &Path,
    size: usize,
) -> tokio::sync::mpsc::Receiver<Result<Vec<ResultRecord>>> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    let path = results.to_path_buf();
    tokio::task::spawn_blocking(move || {
        if !results_exist(&path) {
            return;
        }
        let mut batch = Vec::with_capacity(size);
        let read = for_each_record(&path, |r| {
            batch.push(r);
            if batch.len() >= size {
                // A receiver gone wants no more; the rest is read and dropped.
                let _ = tx.blocking_send(Ok(std::mem::take(&mut batch)));
            }
        });
        let _ = match read {
            Ok(_) if batch.is_empty() => Ok(()),
            Ok(_) => tx.blocking_send(Ok(batch)),
            Err(e) => tx.blocking_send(Err(e.into())),
        };
    });
    rx
}

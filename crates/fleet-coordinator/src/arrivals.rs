//! Taking a fleet run's rounds from Redis into its run directory, as they
//! are recorded.

use anyhow::Result;
use autoeval_proto::RoundKey;
use autoeval_redis_store::RunStore;
use autoeval_run_dir::JsonlStore;
use std::collections::HashSet;

/// The run's rounds, taken from Redis's arrival log as they are recorded
/// and appended to the run directory's results, which are the run's
/// record: once a batch is written and synced, its records leave Redis,
/// which keeps only their marks. A coordinator started again restores
/// from the directory a run whose state Redis lost.
pub struct Arrivals {
    next: u64,
    log: JsonlStore,
}

impl Arrivals {
    /// Rounds taken into `log`, from the arrival log's first entry kept.
    pub fn new(log: JsonlStore) -> Arrivals {
        Arrivals { next: 0, log }
    }

    /// Takes every round recorded since the last call into the run
    /// directory, then drops their records from Redis.
    pub async fn take(&mut self, store: &RunStore) -> Result<()> {
        const BATCH: u64 = 2000;
        loop {
            let arrived = store.arrivals(self.next, BATCH).await?;
            let base = arrived.base.unwrap_or(0);
            if base < self.next {
                // Redis lost the log, or the last trim did not happen: read
                // again from its first entry; rounds already in the directory are passed over.
                self.next = base;
                continue;
            }
            let full = arrived.rounds.len() as u64 == BATCH;
            // Asked once per batch, and only when a round is missing.
            let mut holds_run = None;
            let mut taken = Vec::with_capacity(arrived.rounds.len());
            let mut forgotten = HashSet::new();
            for (field, round) in &arrived.rounds {
                match round {
                    Some(r) => {
                        self.log.append(r)?;
                        taken.push(field.clone());
                    }
                    None => {
                        if holds_run.is_none() {
                            holds_run = Some(store_holds_run(store).await);
                        }
                        // Forgotten on purpose (a rerun of failures): no longer the run's.
                        if holds_run == Some(true) {
                            if let Ok(round) = field.parse::<RoundKey>() {
                                forgotten.insert(round);
                            }
                        }
                    }
                }
            }
            self.log.forget(&forgotten)?;
            // Durable on disk before Redis lets the records go.
            self.log.sync()?;
            let trimmed = arrived.rounds.is_empty() || store.trim_taken(&arrived, &taken).await?;
            // A log Redis lost is read from its start next time.
            self.next = if trimmed { arrived.next } else { 0 };
            if !full || !trimmed {
                return Ok(());
            }
        }
    }

    /// The run directory's results, which the rounds are taken into.
    pub fn log(&self) -> &JsonlStore {
        &self.log
    }

    /// Reads the arrival log from its start again (Redis wrote it anew).
    pub fn rewind(&mut self) {
        self.next = 0;
    }
}

/// Whether Redis still holds the run at all: a round missing from a run
/// Redis lost is not forgotten, only lost.
async fn store_holds_run(store: &RunStore) -> bool {
    store
        .meta()
        .await
        .is_ok_and(|m| m.contains_key(autoeval_proto::meta::PLAN))
}

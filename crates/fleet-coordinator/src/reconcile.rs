//! Reconciliation: what the coordinator does when the fleet's state and the
//! run's disagree. A run whose state Redis lost is registered again and its
//! rounds restored from what the coordinator already holds (its arrival log,
//! the run directory); a run that makes no progress while units lack a final
//! outcome, with nothing queued and nothing in hand, has exactly those units
//! published again. Both are safe to repeat: a stored round is never stored
//! twice, and a model's answers are cached.

use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_pipeline::pending_tasks;
use autoeval_proto::{meta, ResultRecord, TranslateTask};
use autoeval_redis_store::RunStore;
use autoeval_run_settings::Resolved;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How long a run may stand still, with nothing queued and nothing in hand,
/// before its units without an outcome are published again.
pub const STALL: Duration = Duration::from_secs(10);

/// What the coordinator needs to put a run back together.
pub struct Reconciler<'a> {
    /// The run's settings, to register it again.
    pub settings: &'a Resolved,
    /// Its first round of every unit.
    pub initial: &'a [TranslateTask],
    /// How many items it has.
    pub items: usize,
    /// When the run last changed (a round recorded, or a reconciliation).
    since: Instant,
}

impl<'a> Reconciler<'a> {
    /// A reconciler of the run with these settings and first rounds.
    pub fn new(settings: &'a Resolved, initial: &'a [TranslateTask], items: usize) -> Self {
        Reconciler {
            settings,
            initial,
            items,
            since: Instant::now(),
        }
    }

    /// The run moved: it is not stalled.
    pub fn moved(&mut self) {
        self.since = Instant::now();
    }

    /// Whether the run has stood still for [`STALL`].
    pub fn stalled(&self) -> bool {
        self.since.elapsed() >= STALL
    }

    /// Puts back what Redis lost of the run: its registration when its
    /// metadata is gone, and every round in `known` it does not hold. Says
    /// why when it had to, `None` when Redis held everything.
    pub async fn restore(
        &mut self,
        store: &RunStore,
        known: &[ResultRecord],
    ) -> Result<Option<String>> {
        let lost_meta = !store.meta().await?.contains_key(meta::PLAN);
        let held = store.recorded().await?;
        if !lost_meta && held >= known.len() as u64 {
            return Ok(None);
        }
        if lost_meta {
            crate::register(store, self.settings, self.initial.len(), self.items).await?;
            store
                .set_meta(&[(meta::PUBLISHED, crate::unix_now().to_string())])
                .await?;
        }
        let rounds = self.settings.plan.rounds;
        let put_back = store
            .record_all(known, rounds)
            .await?
            .into_iter()
            .filter(|new| *new)
            .count();
        let why = format!(
            "Redis had lost {}{put_back} of the {} rounds already recorded; restored them",
            if lost_meta {
                "the run's registration and "
            } else {
                ""
            },
            known.len()
        );
        note(store, &why).await?;
        self.moved();
        Ok(Some(why))
    }

    /// Publishes again the next round of every unit that has no final
    /// outcome and no task among the dead letters. Says why, with how many.
    pub async fn republish(
        &mut self,
        store: &RunStore,
        broker: &Broker,
        dead: &BTreeSet<autoeval_proto::UnitKey>,
    ) -> Result<String> {
        let recorded = crate::stored_records(store).await?;
        let finals = store.finals().await?;
        let mut pending = pending_tasks(self.initial.to_vec(), &recorded);
        pending.tasks.retain(|t| {
            let unit = t.unit();
            !finals.contains_key(&unit) && !dead.contains(&unit)
        });
        let count = pending.tasks.len();
        crate::publish_tasks(broker, store.run(), pending.tasks).await?;
        let why = format!(
            "no progress for {} s with nothing queued or in hand; published {count} unit{} without an outcome again",
            STALL.as_secs(),
            if count == 1 { "" } else { "s" }
        );
        note(store, &why).await?;
        self.moved();
        Ok(why)
    }
}

/// Counts a reconciliation in the run's metadata, with when and why, for `status`.
async fn note(store: &RunStore, why: &str) -> Result<()> {
    let before = store
        .meta()
        .await?
        .get(meta::RECONCILED)
        .and_then(|v| v.parse::<meta::Reconciled>().ok())
        .map_or(0, |r| r.count);
    let value = meta::Reconciled {
        count: before + 1,
        at: crate::unix_now(),
        why: why.to_string(),
    };
    store
        .set_meta(&[(meta::RECONCILED, value.to_string())])
        .await?;
    tracing::warn!(run = store.run(), "reconciled: {why}");
    Ok(())
}

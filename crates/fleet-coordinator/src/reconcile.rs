//! Reconciliation: what the coordinator does when the fleet's state and the
//! run's disagree. A run whose state Redis lost is registered again and its
//! rounds marked again from the run directory, which holds every round the
//! coordinator took; a run that makes no progress while units lack a final
//! outcome, with nothing queued and nothing in hand, has exactly those units
//! published again. Both are safe to repeat: a round marked is never counted
//! twice, and a model's answers are cached.

use crate::pending::{initial_of, publish_pending, record_batches, Only};
use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_proto::{meta, ResultRecord, RoundKey};
use autoeval_proto::{TranslateTask, UnitKey};
use autoeval_redis_store::{Budget, RunStore};
use autoeval_run_dir::JsonlStore;
use autoeval_run_settings::Resolved;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a run may stand still, with nothing queued and nothing in hand,
/// before its units without an outcome are published again.
pub const STALL: Duration = Duration::from_secs(10);

/// A gap between two looks at the run longer than this is time the run was
/// not watched (Redis or the coordinator stood still): the stall clock
/// starts again, because what processes hold is told to Redis with a
/// five-second expiry that a Redis asleep for longer lets lapse.
const BLIND: Duration = Duration::from_secs(3);

/// Rounds marked again in Redis in one step of a restore.
const RESTORE_BATCH: usize = 1000;

/// What the coordinator needs to put a run back together.
pub struct Reconciler<'a> {
    /// The run's settings, to register it again.
    pub settings: &'a Resolved,
    /// How many units it has.
    pub units: usize,
    /// How many items it has.
    pub items: usize,
    /// The units in play, when not the whole plan's (a run `--until
    /// decided` publishes wave by wave): a stall publishes only these.
    pub within: Option<Arc<HashSet<UnitKey>>>,
    /// When the run last changed (a round recorded, or a reconciliation).
    since: Instant,
    /// When the coordinator last looked at the run.
    looked: Instant,
    /// The run's budget as last read, put back if Redis loses it.
    budget: Option<Budget>,
}

impl<'a> Reconciler<'a> {
    /// A reconciler of the run with these settings, units and items.
    pub fn new(settings: &'a Resolved, units: usize, items: usize) -> Self {
        Reconciler {
            settings,
            units,
            items,
            within: None,
            since: Instant::now(),
            looked: Instant::now(),
            budget: None,
        }
    }

    /// The run's budget as read now. A read after Redis lost it (caps gone,
    /// less spent than before) is not taken for the truth: the last read
    /// before the loss is what a restore puts back.
    pub fn saw_budget(&mut self, now: Budget) {
        let lost = self.budget.as_ref().is_some_and(|before| {
            (before.cap_usd.is_some() && now.cap_usd.is_none())
                || (before.cap_tokens.is_some() && now.cap_tokens.is_none())
                || now.spent_usd < before.spent_usd
                || now.spent_tokens < before.spent_tokens
        });
        if !lost {
            self.budget = Some(now);
        }
    }

    /// The run moved: it is not stalled.
    pub fn moved(&mut self) {
        self.since = Instant::now();
    }

    /// The coordinator looks at the run now: after a gap longer than
    /// [`BLIND`], the time unwatched does not count towards a stall.
    pub fn look(&mut self) {
        if self.looked.elapsed() > BLIND {
            self.moved();
        }
        self.looked = Instant::now();
    }

    /// Whether the run has stood still for [`STALL`], watched throughout.
    /// A look older than [`BLIND`] (a read that blocked since, as on a
    /// Redis asleep) is not watching: what is in hand, read after such a
    /// gap, may have lapsed, so the run is not called stalled on it.
    pub fn stalled(&self) -> bool {
        self.since.elapsed() >= STALL && self.looked.elapsed() <= BLIND
    }

    /// Puts back what Redis lost of the run: its registration when its
    /// metadata is gone, and the mark of every round in the run directory
    /// (`log`) that Redis no longer marks. Says why when it had to, `None`
    /// when Redis held everything.
    pub async fn restore(&mut self, store: &RunStore, log: &JsonlStore) -> Result<Option<String>> {
        let lost_meta = !store.meta().await?.contains_key(meta::PLAN);
        let held = store.marked().await?;
        let known = log.len();
        if !lost_meta && held >= known as u64 {
            return Ok(None);
        }
        if lost_meta {
            // The caps come back before the registration: a worker takes a
            // run without a registration to be capped, and one with a
            // registration by its caps, so every task between is charged.
            if let Some(budget) = &self.budget {
                store.restore_budget(budget).await?;
            }
            crate::publish::register(store, self.settings, self.units, self.items).await?;
            store
                .set_meta(&[(meta::PUBLISHED, crate::unix_now().to_string())])
                .await?;
        }
        let rounds = self.settings.plan.rounds;
        let mut put_back = 0;
        let mut batches = record_batches(log.path(), RESTORE_BATCH);
        while let Some(batch) = batches.recv().await {
            put_back += store
                .mark_all(&batch?, rounds)
                .await?
                .into_iter()
                .filter(|new| *new)
                .count();
        }
        let why = format!(
            "Redis had lost {}{put_back} of the {known} rounds already recorded; restored them",
            if lost_meta {
                "the run's registration and "
            } else {
                ""
            },
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
        dead: &BTreeSet<UnitKey>,
        log: &JsonlStore,
    ) -> Result<String> {
        let only = Only {
            without_final: true,
            not: dead.clone(),
            rounds: None,
            within: self.within.clone(),
        };
        let count = publish_pending(broker, store, self.settings, log, &only)
            .await?
            .tasks;
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

impl Reconciler<'_> {
    /// Mends chains that lost a round: a unit whose round r is missing
    /// from the run directory while a later one is recorded (recorded after
    /// Redis lost round r, from a task published with it) has its later
    /// rounds forgotten, in Redis and in the run directory, and its chain
    /// published again from round r, so that every round follows the one
    /// it translated. Checked whenever the run looks complete, by every
    /// coordinator: the one that saw Redis lose the round may have been
    /// killed since. Says how many units it mended.
    pub async fn mend_chains(
        &mut self,
        store: &RunStore,
        broker: &Broker,
        arrivals: &mut crate::arrivals::Arrivals,
    ) -> Result<usize> {
        let chains = autoeval_run_dir::broken_chains(arrivals.log().path())?;
        if chains.is_empty() {
            return Ok(0);
        }
        let after: HashSet<RoundKey> = chains
            .iter()
            .flat_map(|c| c.after.iter().map(ResultRecord::round_key))
            .collect();
        // The missing round's mark goes too, where Redis still holds one (a
        // round removed from the directory by hand): marked, it would be
        // taken for recorded and never go on.
        let missing = chains.iter().map(|c| RoundKey {
            unit: c.unit.clone(),
            round: c.missing,
        });
        for round in after.iter().cloned().chain(missing) {
            store.forget(&round).await?;
        }
        arrivals.log().forget(&after)?;
        let broken: HashMap<UnitKey, &autoeval_proto::chains::BrokenChain> =
            chains.iter().map(|c| (c.unit.clone(), c)).collect();
        let initial = initial_of(self.settings, |u| broken.contains_key(u))?;
        let redo: Vec<TranslateTask> = initial
            .into_iter()
            .filter_map(|task| match broken.get(&task.unit())?.before.as_ref() {
                None => Some(task),
                Some(before) => task.after(before),
            })
            .collect();
        let count = redo.len();
        if count > 0 {
            crate::publish::publish_tasks(broker, store.run(), redo).await?;
            let why = format!(
                "{count} unit{} had a round missing before a later one ({}); redone from that round",
                if count == 1 { "" } else { "s" },
                autoeval_run_dir::name_chains(&chains)
            );
            note(store, &why).await?;
            self.moved();
        }
        Ok(count)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

    use super::*;
    use crate::arrivals::Arrivals;
    use autoeval_proto::wire::{decode, MessageKind};
    use autoeval_proto::Verdict;
    use autoeval_run_dir::load_items;
    use autoeval_run_settings::RunArgs;

    #[test]
    fn a_run_is_stalled_only_on_a_fresh_look_after_watched_time() {
        let settings = RunArgs::default()
            .resolve(Default::default(), None)
            .unwrap();
        let mut reconciler = Reconciler::new(&settings, 1, 1);
        let ago = |secs| {
            Instant::now()
                .checked_sub(Duration::from_secs(secs))
                .unwrap()
        };
        reconciler.since = ago(11);
        reconciler.looked = ago(4);
        assert!(
            !reconciler.stalled(),
            "a read that blocked since the last look is not watching"
        );
        reconciler.looked = Instant::now();
        assert!(reconciler.stalled(), "watched throughout, it stood still");
        reconciler.looked = ago(4);
        reconciler.look();
        assert!(
            !reconciler.stalled(),
            "a look after a gap starts the clock again"
        );
    }

    /// A run of one model on a few plogic items, with `rounds` rounds, its
    /// store in the real Redis and its model's queue on the real broker.
    struct ChainRun {
        model: String,
        settings: Resolved,
        items: usize,
        initial: Vec<TranslateTask>,
        store: RunStore,
        broker: Broker,
        queue: String,
    }

    impl ChainRun {
        async fn new(name: &str, rounds: u32) -> ChainRun {
            let id = format!("{name}-{}", std::process::id());
            let model = format!("openai-compatible:{id}@http://127.0.0.1:9/v1");
            let mut args = RunArgs::default();
            args.plan.datasets = vec![autoeval_proto::DatasetKind::Plogic];
            args.plan.models = vec![model.parse().unwrap()];
            args.plan.prompts = vec![autoeval_proto::Shots::ZeroShot];
            args.plan.draw.per_bucket = Some(1);
            args.plan.draw.batches = Some(1);
            args.plan.rounds = rounds;
            let settings = args.resolve(Default::default(), None).unwrap();
            let (items, _) = load_items(&settings).unwrap();
            let initial = autoeval_pipeline::initial_tasks(&settings.plan, &items);
            let store = RunStore::new(
                autoeval_redis_store::connect("redis://127.0.0.1:6379")
                    .await
                    .unwrap(),
                &id,
            );
            let broker = Broker::connect(
                "amqp://guest:guest@127.0.0.1:5672/%2f",
                &autoeval_proto::fleet::Topology::default(),
                "test",
            )
            .await
            .unwrap();
            let queue = broker.declare_translate(&model).await.unwrap();
            ChainRun {
                model,
                settings,
                items: items.len(),
                initial,
                store,
                broker,
                queue,
            }
        }

        /// Round `n` of `task`'s unit, equivalent.
        fn round(&self, task: &TranslateTask, n: u32) -> ResultRecord {
            ResultRecord {
                id: task.item.id.clone(),
                dataset: task.item.dataset.name().to_string(),
                model: self.model.clone(),
                prompt: "zero-shot".into(),
                round: n,
                verdict: Verdict::Equivalent,
                phi1: Some(task.item.fs.clone()),
                ..ResultRecord::default()
            }
        }

        /// The tasks of the first message on the model's queue.
        async fn sent(&self) -> Vec<TranslateTask> {
            let mut consumer = self.broker.consume(&self.queue, 10, "test").await.unwrap();
            let message = consumer.next().await.unwrap().unwrap();
            let (_, sent) = decode(&message.data, MessageKind::Translate).unwrap();
            let _ = message.ack().await;
            sent
        }

        async fn clean_up(&self) {
            let _ = self.store.delete().await;
            let _ = self.broker.delete_queue(&self.queue).await;
        }
    }

    #[tokio::test]
    async fn a_chain_that_lost_an_earlier_round_is_redone_from_it() {
        let run = ChainRun::new("mend", 3).await;
        // Round 1 of the first unit was lost with Redis; rounds 2 and 3 were
        // recorded after it, and round 1 of the second unit is whole.
        let task = &run.initial[0];
        let stored = [
            run.round(task, 2),
            run.round(task, 3),
            run.round(&run.initial[1], 1),
        ];
        run.store.record_all(&stored, 3).await.unwrap();
        let dir = std::env::temp_dir().join(format!("mend-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = JsonlStore::open(&dir.join("results.jsonl")).unwrap();
        for r in &stored {
            log.append(r).unwrap();
        }
        let mut arrivals = Arrivals::new(log);
        let mut reconciler = Reconciler::new(&run.settings, run.initial.len(), run.items);
        let mended = reconciler
            .mend_chains(&run.store, &run.broker, &mut arrivals)
            .await;
        let mut left = Vec::new();
        autoeval_run_dir::for_each_record(&dir.join("results.jsonl"), |r| left.push(r.round))
            .unwrap();
        let marked = run.store.marked().await.unwrap();
        let sent = run.sent().await;
        run.clean_up().await;
        assert_eq!(mended.unwrap(), 1);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            left,
            vec![1],
            "the later rounds of the broken chain leave the run directory"
        );
        assert_eq!(marked, 1, "and Redis");
        assert_eq!(arrivals.log().len(), 1);
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].unit(), sent[0].round), (task.unit(), 1));
    }

    /// The fault sequence a long run under mixed faults lost rounds to: a
    /// round recorded in Redis, Redis emptied before the coordinator took
    /// it into the run directory, the next round (published with the
    /// record) recorded in the new Redis; the coordinator restores the run,
    /// takes the later round, and is killed. The coordinator started again
    /// finds Redis whole and every unit final: it must still redo the chain.
    #[tokio::test]
    async fn a_coordinator_started_after_redis_lost_a_round_mends_the_chain() {
        let run = ChainRun::new("regap", 2).await;
        let (settings, store, initial) = (&run.settings, &run.store, &run.initial);
        let units = initial.len();
        let dir = std::env::temp_dir().join(format!("regap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("results.jsonl");
        // The first coordinator: the run registered, the first unit's round
        // 1 recorded, then Redis emptied before it was taken.
        crate::publish::register(store, settings, units, run.items)
            .await
            .unwrap();
        let lost = run.round(&initial[0], 1);
        store
            .record_all(std::slice::from_ref(&lost), 2)
            .await
            .unwrap();
        store.delete().await.unwrap();
        // Round 2 of that unit (published with round 1's record) and both
        // rounds of every other unit are recorded in the new Redis.
        let mut after = vec![run.round(&initial[0], 2)];
        for task in &initial[1..] {
            after.extend([run.round(task, 1), run.round(task, 2)]);
        }
        store.record_all(&after, 2).await.unwrap();
        let mut first = Reconciler::new(settings, units, run.items);
        let mut arrivals = Arrivals::new(JsonlStore::open(&path).unwrap());
        assert!(first
            .restore(store, arrivals.log())
            .await
            .unwrap()
            .is_some());
        arrivals.take(store).await.unwrap();
        assert_eq!(
            store.done().await.unwrap() as usize,
            units,
            "every unit final"
        );
        // Killed here. The coordinator started again finds Redis whole.
        drop((first, arrivals));
        crate::publish::register(store, settings, units, run.items)
            .await
            .unwrap();
        let mut again = Reconciler::new(settings, units, run.items);
        let mut arrivals = Arrivals::new(JsonlStore::open(&path).unwrap());
        let restored = again.restore(store, arrivals.log()).await.unwrap();
        let mended = again.mend_chains(store, &run.broker, &mut arrivals).await;
        let done = store.done().await.unwrap();
        let mut left = Vec::new();
        autoeval_run_dir::for_each_record(&path, |r| left.push((r.unit(), r.round))).unwrap();
        let sent = if mended.as_ref().is_ok_and(|n| *n > 0) {
            run.sent().await
        } else {
            Vec::new()
        };
        run.clean_up().await;
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(restored, None, "Redis holds every round the directory does");
        assert_eq!(mended.unwrap(), 1, "the broken chain is mended");
        assert_eq!(done as usize, units - 1, "its unit is no longer final");
        assert!(
            !left.contains(&(initial[0].unit(), 2)),
            "the round after the gap leaves the directory"
        );
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].unit(), sent[0].round), (initial[0].unit(), 1));
    }
}

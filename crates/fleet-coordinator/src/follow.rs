//! Following a fleet run: progress from Redis's counters and the queues'
//! depths, until every unit has a final outcome or the units left are all
//! dead letters.

use crate::arrivals::Arrivals;
use crate::gauges::RunGauges;
use crate::reconcile::Reconciler;
use crate::FleetArgs;
use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_progress::Progress;
use autoeval_proto::fleet::Counter;
use autoeval_proto::{RoundKey, UnitKey, Verdict};
use autoeval_redis_store::{RunStore, Work};
use autoeval_run_dir::JsonlStore;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How following ended.
pub enum Ending {
    /// Every unit has a final outcome.
    Complete,
    /// This many units have no outcome and a task among the dead letters.
    Dead(usize),
    /// A backend halted: the tasks it never sent are set aside, and the run stops with why.
    Halted {
        /// Why, as the worker whose backend halted wrote it.
        why: String,
    },
    /// The run reached a cap and its workers have set its tasks aside.
    Paused {
        /// Why, as the worker that reached the cap wrote it.
        why: String,
        /// Units with a final outcome.
        done: u64,
        /// Caps that would let it go on, as flags (`--budget-usd 4.00`).
        more: String,
    },
    /// The operator stopped following (Ctrl-C); the fleet goes on with the run.
    Detached,
}

/// How long a stage with tasks goes without a consumer before the progress line names it.
const NAME_WAIT_AFTER: Duration = Duration::from_secs(5);
/// How long without a round recorded before the progress line names the stall.
const NAME_STALL_AFTER: Duration = Duration::from_secs(30);

/// How often the rate-limit waits and the work done are read.
const WAITS_EVERY: Duration = Duration::from_millis(500);

/// Quiet time, with the queues empty, before the dead letters are counted.
const SETTLE: Duration = Duration::from_secs(3);

/// Time between two looks at the run.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Rounds recorded, rounds that kept the meaning, rounds that measure the model.
pub fn tally(counts: &BTreeMap<String, i64>) -> (u64, u64, u64) {
    let (mut recorded, mut equivalent, mut measured) = (0u64, 0u64, 0u64);
    for (field, &n) in counts {
        let n = n.max(0) as u64;
        let Ok(counter) = field.parse::<Counter>() else {
            tracing::warn!(field, "a counter of the run that is none: left out");
            continue;
        };
        let verdict = counter.verdict;
        recorded += n;
        if verdict == Verdict::Equivalent {
            equivalent += n;
        }
        if !verdict.is_infrastructure_failure() {
            measured += n;
        }
    }
    (recorded, equivalent, measured)
}

/// Messages ready in the run's stage queues; every depth read, the
/// dead-letter queue's included, goes to the gauges.
async fn queued(
    broker: &Broker,
    models: &[autoeval_models::Model],
    gauges: &RunGauges<'_>,
) -> Result<(u64, Vec<String>)> {
    let mut total = 0u64;
    let mut unserved = Vec::new();
    let stages = stage_queues(broker.topology(), models.iter().map(|m| m.as_str()));
    for (q, serve) in stages {
        match broker.depth(&q).await? {
            Some((ready, consumers)) => {
                total += u64::from(ready);
                gauges.queue(&q, ready, consumers);
                if ready > 0 && consumers == 0 {
                    unserved.push(format!(
                        "{ready} bundles in {q} and nothing takes them (start `{serve}`)"
                    ));
                }
            }
            None => unserved.push(format!("no {q} yet (start `{serve}`)")),
        }
    }
    let dead = broker.topology().dead_queue();
    if let Some((ready, consumers)) = broker.depth(&dead).await? {
        gauges.queue(&dead, ready, consumers);
    }
    Ok((total, unserved))
}

/// The stage queues of a run of `models`, each with the command whose
/// process takes from it.
pub fn stage_queues<'a>(
    names: &autoeval_proto::fleet::Topology,
    models: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, String)> {
    models
        .into_iter()
        .map(|m| {
            (
                names.translate_queue(m),
                format!("autoeval-worker --model '{m}'"),
            )
        })
        .chain([(names.verify_queue(), "autoeval-verifier".to_string())])
        .collect()
}

/// A quiet run with nothing queued: ended if its units left are all dead
/// letters; published again if it stalled with nothing in hand.
async fn settle(
    store: &RunStore,
    broker: &Broker,
    done: u64,
    units: usize,
    reconciler: &mut Reconciler<'_>,
    log: &JsonlStore,
) -> Result<Option<Ending>> {
    let dead = dead_units(broker, store.run()).await?;
    let listed: Vec<UnitKey> = dead.iter().cloned().collect();
    let finals = store.finals_of(&listed).await?;
    let stuck = finals.iter().filter(|f| f.is_none()).count();
    if stuck > 0 && done as usize + stuck >= units {
        return Ok(Some(Ending::Dead(stuck)));
    }
    let in_hand: u64 = store.held().await?.values().sum();
    if reconciler.stalled() && in_hand == 0 {
        reconciler.republish(store, broker, &dead, log).await?;
    }
    Ok(None)
}

/// Units of the run with a task among the dead letters; a dead letter
/// that names no round of ours is told and passed over.
pub async fn dead_units(broker: &Broker, run: &str) -> Result<BTreeSet<UnitKey>> {
    let mut units = BTreeSet::new();
    for dead in broker.dead_letters(usize::MAX).await? {
        if dead.run != run {
            continue;
        }
        for named in &dead.units {
            match named.parse::<RoundKey>() {
                Ok(round) => {
                    units.insert(round.unit);
                }
                Err(e) => tracing::warn!(error = %e, "a dead letter of the run names no round"),
            }
        }
    }
    Ok(units)
}

/// Where following tells what it sees: the progress display, the rounds
/// taken so far, and the metrics.
pub struct Watch<'a> {
    /// The progress display.
    pub progress: &'a Progress,
    /// The rounds taken from Redis so far.
    pub arrivals: Arrivals,
    /// The run's gauges.
    pub gauges: RunGauges<'a>,
}

/// How long the run must hold no task in hand before it counts as quiet:
/// holders report once a second.
const QUIET_FOR: Duration = Duration::from_millis(2_500);

/// Waits until no live process holds any of the run's tasks, for at most two minutes.
async fn quiet(store: &RunStore) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut since = Instant::now();
    while Instant::now() < deadline {
        let busy = store
            .held()
            .await
            .map_or(true, |h| h.values().any(|n| *n > 0));
        if busy {
            since = Instant::now();
        } else if since.elapsed() >= QUIET_FOR {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tracing::warn!("the run's tasks are still in hand after two minutes; going on");
}

/// What following waits for: every unit in play, or the units of one wave
/// (a run `--until decided` follows each wave to its own end while the
/// next is already queued).
pub struct Awaited {
    /// Units with a final outcome there must be at least first: every unit
    /// of the waves up to the one awaited.
    at_least: usize,
    /// The units awaited; none when every unit in play is.
    units: Vec<UnitKey>,
    /// When their outcomes were last read.
    read: Option<Instant>,
}

/// How often the outcomes of a wave's units are read once its end is near.
const READ_WAVE_EVERY: Duration = Duration::from_millis(200);

impl Awaited {
    /// Every one of `units` units in play.
    pub fn all(units: usize) -> Awaited {
        Awaited {
            at_least: units,
            units: Vec::new(),
            read: None,
        }
    }

    /// The `units` of one wave, with `at_least` units of its waves and
    /// those before it in all.
    pub fn wave(units: Vec<UnitKey>, at_least: usize) -> Awaited {
        Awaited {
            at_least,
            units,
            read: None,
        }
    }

    /// Whether every awaited unit has a final outcome, `done` units of the
    /// run having one. Read afresh each time (never kept: Redis may lose an
    /// outcome not yet in the run directory, and its unit runs again).
    async fn reached(&mut self, store: &RunStore, done: u64) -> Result<bool> {
        if (done as usize) < self.at_least {
            return Ok(false);
        }
        if self.units.is_empty() {
            return Ok(true);
        }
        if self.read.is_some_and(|at| at.elapsed() < READ_WAVE_EVERY) {
            return Ok(false);
        }
        self.read = Some(Instant::now());
        let finals = store.finals_of(&self.units).await?;
        Ok(finals.iter().all(Option::is_some))
    }
}

/// How often the coordinator checks that Redis still holds the run.
const CHECK_STATE_EVERY: Duration = Duration::from_secs(1);

/// Follows the run (of `units` units in play) until what is `awaited` has
/// its outcomes or the run stops; a lost broker connection is reopened, a
/// run whose state Redis lost is restored, and a stalled run's units
/// without an outcome are published again.
pub async fn follow(
    store: &RunStore,
    mut broker: Arc<Broker>,
    fleet: &FleetArgs,
    (units, awaited): (usize, &mut Awaited),
    watch: &mut Watch<'_>,
    reconciler: &mut Reconciler<'_>,
) -> Result<Ending> {
    let models = &reconciler.settings.plan.models;
    let Watch {
        progress,
        arrivals,
        gauges,
    } = watch;
    let mut stall = Stall::new();
    let mut last_recorded = u64::MAX;
    let mut state_checked = Instant::now();
    let mut slow = SlowReads::new();
    loop {
        if state_checked.elapsed() >= CHECK_STATE_EVERY {
            state_checked = Instant::now();
            match reconciler.restore(store, arrivals.log()).await {
                Ok(Some(_)) => arrivals.rewind(),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "cannot check the run's state in Redis; retrying")
                }
            }
        }
        let (done, counts) = match (store.done().await, store.counts().await) {
            (Ok(done), Ok(counts)) => (done, counts),
            (Err(e), _) | (_, Err(e)) => {
                // The connection reconnects by itself; the run goes on meanwhile.
                tracing::warn!(error = %e, "cannot read the run's progress from Redis; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        reconciler.look();
        let (recorded, equivalent, measured) = tally(&counts);
        slow.read(store, progress).await;
        gauges.progress(done);
        gauges.rounds(&counts);
        let waiting = match queued(&broker, models, &*gauges).await {
            Ok((n, unserved)) => {
                progress.waiting_on(&stall.why(&slow.waits, &unserved));
                n
            }
            Err(e) => {
                tracing::warn!(error = %e, "lost the broker; reconnecting");
                broker = Arc::new(
                    fleet
                        .broker
                        .connect_with_backoff(&fleet.store.redis, "autoeval-coordinator")
                        .await?,
                );
                continue;
            }
        };
        progress.show(
            slow.translated.max(recorded),
            recorded,
            equivalent,
            measured,
        );
        if let Err(e) = arrivals.take(store).await {
            tracing::warn!(error = %e, "cannot read the rounds recorded lately; retrying");
        }
        let reached = awaited.reached(store, done).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "cannot read the awaited units' outcomes; retrying");
            false
        });
        if reached {
            // A chain that lost a round with Redis is redone before the run ends.
            match reconciler.mend_chains(store, &broker, arrivals).await {
                Ok(0) => return Ok(Ending::Complete),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "cannot mend the run's chains; retrying"),
            }
        }
        if let Some(ending) = paused(store, reconciler, arrivals, done, units).await {
            return Ok(ending);
        }
        if recorded != last_recorded {
            last_recorded = recorded;
            stall.moved();
            reconciler.moved();
        } else if waiting == 0 && stall.stood() >= SETTLE {
            match settle(store, &broker, done, units, reconciler, arrivals.log()).await {
                Ok(Some(ending)) => return Ok(ending),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "cannot look at the quiet run; retrying"),
            }
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

/// What is read less often than the run's progress: each is a read per
/// live process, so at most every [`WAITS_EVERY`].
struct SlowReads {
    /// The rate limits' waits, described.
    waits: String,
    /// Rounds translated so far.
    translated: u64,
    read: Instant,
}

impl SlowReads {
    fn new() -> Self {
        SlowReads {
            waits: String::new(),
            translated: 0,
            read: Instant::now() - WAITS_EVERY,
        }
    }

    /// Reads the waits, the batches (shown at once) and the work done, if
    /// it is time to.
    async fn read(&mut self, store: &RunStore, progress: &Progress) {
        if self.read.elapsed() < WAITS_EVERY {
            return;
        }
        self.read = Instant::now();
        if let Ok(now) = store.rate_waits().await {
            self.waits = autoeval_models::describe_waits(&now);
        }
        if let Ok(batches) = autoeval_models::BatchJournal::batches(&store.journal()).await {
            progress.show_batches(&autoeval_models::BatchCounts::of(&batches));
        }
        if let Ok(work) = store.work().await {
            self.translated = work.translated;
        }
    }
}

/// Since when the run has stood still, and since when a stage has had
/// tasks and no consumer: what the progress line says it waits on.
struct Stall {
    last_change: Instant,
    unserved_since: Option<Instant>,
}

impl Stall {
    fn new() -> Self {
        Stall {
            last_change: Instant::now(),
            unserved_since: None,
        }
    }

    /// A round was recorded.
    fn moved(&mut self) {
        self.last_change = Instant::now();
    }

    /// How long since a round was last recorded.
    fn stood(&self) -> Duration {
        self.last_change.elapsed()
    }

    /// Why the run waits, given the rate limits' `waits` and the stages
    /// now `unserved`. Either is named once it lasts: a moment between a
    /// consumer's reconnects is no news.
    fn why(&mut self, waits: &str, unserved: &[String]) -> String {
        let since = *self.unserved_since.get_or_insert_with(Instant::now);
        if unserved.is_empty() {
            self.unserved_since = None;
        }
        let stood = self.stood();
        let mut why = Vec::new();
        if !waits.is_empty() {
            why.push(waits.to_string());
        }
        if !unserved.is_empty() && since.elapsed() >= NAME_WAIT_AFTER {
            why.push(unserved.join("; "));
        } else if stood >= NAME_STALL_AFTER {
            why.push(format!("no round recorded for {} s", stood.as_secs()));
        }
        why.join("; ")
    }
}

/// How the run ends if its budget paused it: tasks in hand finish (and are
/// recorded) first; a halt ends it halted, a cap paused with the caps for
/// the rest.
async fn paused(
    store: &RunStore,
    reconciler: &mut Reconciler<'_>,
    arrivals: &mut Arrivals,
    done: u64,
    units: usize,
) -> Option<Ending> {
    let budget = store.budget().await.ok()?;
    reconciler.saw_budget(budget.clone());
    let seen = budget.clone();
    let why = budget.paused?;
    quiet(store).await;
    if let Err(e) = arrivals.take(store).await {
        tracing::warn!(error = %e, "cannot read the rounds recorded lately");
    }
    if let Some(why) = budget.halted {
        return Some(Ending::Halted { why });
    }
    // Caps for the rest from what the run spent and did once its tasks in hand ended.
    let done = store.done().await.unwrap_or(done);
    let spent = store.budget().await.unwrap_or(seen);
    let more = crate::raised_caps(&spent, done, units);
    Some(Ending::Paused { why, done, more })
}

/// The fleet's work once its processes have told the translating and
/// proving of every round recorded since `recorded_before` (they tell once a second), or
/// after three seconds, whichever comes first.
pub(crate) async fn settled_work(store: &RunStore, before: &Work, recorded_before: u64) -> Work {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let work = store.work().await.unwrap_or_default();
        let recorded = store.marked().await.unwrap_or_default();
        // Every round recorded was translated, then proved.
        let new = recorded.saturating_sub(recorded_before);
        let told = work.proved.saturating_sub(before.proved) >= new
            && work.translated.saturating_sub(before.translated) >= new;
        if told || Instant::now() >= deadline {
            return work;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

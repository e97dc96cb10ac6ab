//! A fleet run `--until decided`, published wave by wave. What a wave holds
//! is chosen elsewhere ([`Waves`]) from the records of the waves observed;
//! here each wave's units are published once (the run's metadata counts
//! the waves published, so a coordinator started again follows those and
//! publishes only what comes after). The next wave is published while the
//! last runs, so the queues never run dry: each wave is followed until its
//! own units have their outcomes, their rounds brought into the run
//! directory and observed, and the wave after the next chosen. A stall
//! publishes again only units in play.

use crate::arrivals::Arrivals;
use crate::follow::Awaited;
use crate::publish::publish_tasks;
use crate::reconcile::Reconciler;
use crate::session::{follow_to_end, wait_for_models, Session};
use crate::{pending, unix_now, Ending, Mode};
use anyhow::Result;
use autoeval_proto::{meta, TranslateTask, UnitKey};
use autoeval_telemetry::Metrics;
use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

/// What chooses the waves of a run `--until decided`.
pub trait Waves {
    /// The round-one tasks of every unit of each wave to publish now,
    /// chosen from the waves observed so far (none while as many as may be
    /// are in flight, or once nothing more is needed).
    fn hand_out(&mut self, results: &Path) -> Result<Vec<Vec<TranslateTask>>>;
    /// Takes in the oldest wave in flight from the run's records in
    /// `results`, where every unit of it has its outcome.
    fn observe(&mut self, results: &Path) -> Result<()>;
    /// Writes what was decided, every wave observed.
    fn finish(&mut self, results: &Path) -> Result<()>;
    /// Items drawn so far.
    fn items_drawn(&self) -> usize;
}

/// How a run followed wave by wave ended.
pub(crate) struct Followed {
    /// How it ended.
    pub ending: Ending,
    /// The rounds taken into the run directory.
    pub arrivals: Arrivals,
    /// Units in play when it ended.
    pub units: usize,
}

/// The units of the waves published, and of those still in flight.
#[derive(Default)]
struct InPlay {
    units: HashSet<UnitKey>,
    /// Each wave in flight's units, oldest first.
    in_flight: VecDeque<Vec<UnitKey>>,
}

impl InPlay {
    /// Units in play, of the waves up to the oldest in flight.
    fn through_oldest(&self) -> usize {
        self.units.len() - self.in_flight.iter().skip(1).map(Vec::len).sum::<usize>()
    }
}

/// Publishes and follows the run's waves until `waves` has no more, or
/// the run stops (paused, halted, detached, dead letters). The next wave
/// is queued while the last finishes: each wave is followed to its own
/// end and observed while the ones after it run.
pub(crate) async fn follow_waves(
    session: &Session<'_>,
    waves: &mut dyn Waves,
    mut arrivals: Arrivals,
    metrics: &Metrics,
    reconciler: &mut Reconciler<'_>,
) -> Result<Followed> {
    let store = session.store;
    // A redo publishes again what each wave still lacks.
    let published: u32 = match session.asked.mode {
        Mode::RedoFailed => 0,
        _ => store
            .meta()
            .await?
            .get(meta::WAVES)
            .and_then(|w| w.parse().ok())
            .unwrap_or(0),
    };
    let mut play = InPlay::default();
    let mut wave = 0u32;
    let mut workers_seen = false;
    loop {
        for tasks in waves.hand_out(arrivals.log().path())? {
            wave += 1;
            let units: Vec<UnitKey> = tasks.iter().map(TranslateTask::unit).collect();
            play.units.extend(units.iter().cloned());
            play.in_flight.push_back(units);
            reconciler.units = play.units.len();
            reconciler.within = Some(Arc::new(play.units.clone()));
            store
                .set_meta(&[(meta::UNITS, play.units.len().to_string())])
                .await?;
            if wave > published {
                if !workers_seen {
                    let then = format!(
                        "`autoeval resume {} --fleet`",
                        session.asked.dir.0.display()
                    );
                    wait_for_models(session, &then).await?;
                    workers_seen = true;
                }
                publish_wave(session, &arrivals, tasks, wave).await?;
            }
        }
        let at_least = play.through_oldest();
        let Some(oldest) = play.in_flight.pop_front() else {
            waves.finish(arrivals.log().path())?;
            return Ok(Followed {
                ending: Ending::Complete,
                arrivals,
                units: play.units.len(),
            });
        };
        let units = play.units.len();
        let awaited = Awaited::wave(oldest, at_least);
        let (ending, back) =
            follow_to_end(session, (units, awaited), arrivals, metrics, reconciler).await;
        arrivals = back;
        match ending? {
            Ending::Complete => {
                arrivals.take(store).await?;
                waves.observe(arrivals.log().path())?;
            }
            ending => {
                return Ok(Followed {
                    ending,
                    arrivals,
                    units,
                })
            }
        }
    }
}

/// Publishes what wave number `wave` still lacks (its `tasks` less the
/// units recorded), then counts it published in the run's metadata.
async fn publish_wave(
    session: &Session<'_>,
    arrivals: &Arrivals,
    tasks: Vec<TranslateTask>,
    wave: u32,
) -> Result<()> {
    let rounds = session.asked.settings.plan.rounds;
    let recorded = pending::recorded_units(arrivals.log().path(), rounds)?;
    let pending: Vec<TranslateTask> = tasks.into_iter().filter_map(|t| recorded.next(t)).collect();
    publish_tasks(session.broker, session.run, pending).await?;
    session
        .store
        .set_meta(&[
            (meta::WAVES, wave.to_string()),
            (meta::PUBLISHED, unix_now().to_string()),
        ])
        .await?;
    Ok(())
}

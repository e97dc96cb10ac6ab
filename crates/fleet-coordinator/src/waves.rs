//! A fleet run `--until decided`, published wave by wave. What a wave holds
//! is chosen elsewhere ([`Waves`]) from the records of the waves before;
//! here each wave's units are published once (the run's metadata counts
//! the waves published, so a coordinator started again follows those and
//! publishes only what comes after), followed until every unit in play has
//! its outcome, and their rounds brought into the run directory before the
//! next wave is chosen. A stall publishes again only units in play.

use crate::arrivals::Arrivals;
use crate::publish::publish_tasks;
use crate::reconcile::Reconciler;
use crate::session::{follow_to_end, wait_for_models, Session};
use crate::{pending, unix_now, Ending, Mode};
use anyhow::Result;
use autoeval_proto::{meta, TranslateTask, UnitKey};
use autoeval_telemetry::Metrics;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// What chooses the waves of a run `--until decided`.
pub trait Waves {
    /// The round-one tasks of every unit of the next wave, chosen from the
    /// run's records in `results` (where every unit of the waves before has
    /// its outcome); `None` once everything asked is decided or the plan is
    /// spent.
    fn next(&mut self, results: &Path) -> Result<Option<Vec<TranslateTask>>>;
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

/// Publishes and follows the run's waves until `waves` has no more, or
/// the run stops (paused, halted, detached, dead letters).
pub(crate) async fn follow_waves(
    session: &Session<'_>,
    waves: &mut dyn Waves,
    mut arrivals: Arrivals,
    metrics: &Metrics,
    reconciler: &mut Reconciler<'_>,
) -> Result<Followed> {
    let (store, asked) = (session.store, session.asked);
    let settings = asked.settings;
    // A redo publishes again what each wave still lacks.
    let published: u32 = match asked.mode {
        Mode::RedoFailed => 0,
        _ => store
            .meta()
            .await?
            .get(meta::WAVES)
            .and_then(|w| w.parse().ok())
            .unwrap_or(0),
    };
    let mut in_play: HashSet<UnitKey> = HashSet::new();
    let mut wave = 0u32;
    let mut workers_seen = false;
    loop {
        let Some(tasks) = waves.next(arrivals.log().path())? else {
            return Ok(Followed {
                ending: Ending::Complete,
                arrivals,
                units: in_play.len(),
            });
        };
        wave += 1;
        in_play.extend(tasks.iter().map(TranslateTask::unit));
        let units = in_play.len();
        reconciler.units = units;
        reconciler.within = Some(Arc::new(in_play.clone()));
        store.set_meta(&[(meta::UNITS, units.to_string())]).await?;
        if wave > published {
            if !workers_seen {
                let then = format!("`autoeval resume {} --fleet`", asked.dir.0.display());
                wait_for_models(session, &then).await?;
                workers_seen = true;
            }
            let recorded = pending::recorded_units(arrivals.log().path(), settings.plan.rounds)?;
            let pending: Vec<TranslateTask> =
                tasks.into_iter().filter_map(|t| recorded.next(t)).collect();
            publish_tasks(session.broker, session.run, pending).await?;
            store
                .set_meta(&[
                    (meta::WAVES, wave.to_string()),
                    (meta::PUBLISHED, unix_now().to_string()),
                ])
                .await?;
        }
        let (ending, back) = follow_to_end(session, units, arrivals, metrics, reconciler).await;
        arrivals = back;
        match ending? {
            Ending::Complete => arrivals.take(store).await?,
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

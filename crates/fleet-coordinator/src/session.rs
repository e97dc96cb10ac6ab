//! A fleet run as asked, and the session of it on the fleet's servers:
//! what publishing and following a run, whole or wave by wave, share.

use crate::arrivals::Arrivals;
use crate::publish::{wait_for_workers, WorkerWait};
use crate::{follow, gauges, reconcile, BudgetArgs, Ending, FleetArgs, Mode};
use anyhow::Result;
use autoeval_amqp::Broker;
use autoeval_progress::{Display, Progress};
use autoeval_redis_store::RunStore;
use autoeval_run_dir::RunDir;
use autoeval_run_settings::Resolved;
use std::sync::Arc;

/// A fleet run as the command line asks for it.
pub struct FleetRun<'a> {
    /// The run's directory.
    pub dir: &'a RunDir,
    /// Its settings, resolved.
    pub settings: &'a Resolved,
    /// How progress is shown.
    pub display: Display,
    /// Where the fleet is.
    pub fleet: &'a FleetArgs,
    /// The caps given.
    pub budget: &'a BudgetArgs,
    /// A new run, a redo of its failures, or a resume.
    pub mode: Mode,
}

/// A claimed run on the fleet's servers: what publishing it and setting
/// its caps read.
pub(crate) struct Session<'a> {
    /// What was asked.
    pub asked: &'a FleetRun<'a>,
    /// The broker the run is published to.
    pub broker: &'a Arc<Broker>,
    /// The run in Redis.
    pub store: &'a RunStore,
    /// The run's name in Redis.
    pub run: &'a str,
    /// Units of the whole plan.
    pub units: usize,
}

/// Follows the run of `units` units in play until what is `awaited` has
/// its outcomes (or it stops), showing progress, until SIGINT detaches it;
/// gives back the arrivals.
pub(crate) async fn follow_to_end(
    session: &Session<'_>,
    (units, mut awaited): (usize, follow::Awaited),
    arrivals: Arrivals,
    metrics: &autoeval_telemetry::Metrics,
    reconciler: &mut reconcile::Reconciler<'_>,
) -> (Result<Ending>, Arrivals) {
    let progress = Progress::new(units, session.asked.display);
    let mut watch = follow::Watch {
        progress: &progress,
        arrivals,
        gauges: gauges::RunGauges::new(metrics, session.run, units),
    };
    let (store, fleet) = (session.store, session.asked.fleet);
    let ending = tokio::select! {
        ending = follow::follow(store, session.broker.clone(), fleet, (units, &mut awaited), &mut watch, reconciler) => ending,
        _ = tokio::signal::ctrl_c() => Ok(Ending::Detached),
    };
    progress.finish();
    (ending, watch.arrivals)
}

/// Waits until workers serve every model of the run, for at most
/// `--worker-wait-s`; `then` is the command that goes on once they do.
pub(crate) async fn wait_for_models(session: &Session<'_>, then: &str) -> Result<()> {
    let asked = session.asked;
    let queues: Vec<(String, String)> = asked
        .settings
        .plan
        .models
        .iter()
        .map(|m| {
            let queue = session.broker.topology().translate_queue(m.as_str());
            (m.to_string(), queue)
        })
        .collect();
    let wait = WorkerWait {
        wait_s: asked.fleet.worker_wait_s,
        then,
        display: asked.display,
    };
    wait_for_workers(session.broker, session.store, &queues, &wait).await
}

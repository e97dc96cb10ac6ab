//! The engine's watch for a fleet process: each task counted in the
//! Prometheus metrics from arrival to settlement, and held in the count of
//! tasks per stage and shard that `status` shows.

use autoeval_engine::{Step, Watch};
use autoeval_proto::RoundKey;
use autoeval_proto::{ResultRecord, Verdict};
use autoeval_redis_store::{Busy, Held, Holding};
use autoeval_telemetry::Metrics;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Metrics and the held-task count of one process.
pub struct FleetWatch {
    metrics: Arc<Metrics>,
    holding: Holding,
    /// The halts already logged, by run and cause: each task a halt leaves
    /// pending reports it, the log says it once.
    halts_logged: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
}

impl FleetWatch {
    /// A watch counting in `metrics` and holding in `holding`.
    pub fn new(metrics: Arc<Metrics>, holding: Holding) -> FleetWatch {
        FleetWatch {
            metrics,
            holding,
            halts_logged: Default::default(),
        }
    }
}

/// One task in hand.
pub struct InHand {
    step: Step,
    started: Instant,
    _held: Held,
}

impl FleetWatch {
    fn count_taken(&self, step: Step) {
        let stage = step.name();
        self.metrics
            .tasks_received
            .with_label_values(&[stage])
            .inc();
        self.metrics
            .tasks_in_flight
            .with_label_values(&[stage])
            .inc();
    }

    fn settle(&self, step: Step, how: &'static str, started: Instant) {
        let m = &self.metrics;
        let stage = step.name();
        m.tasks_in_flight.with_label_values(&[stage]).dec();
        m.tasks_settled.with_label_values(&[stage, how]).inc();
        m.task_duration
            .with_label_values(&[stage])
            .observe(started.elapsed().as_secs_f64());
    }
}

impl Watch for FleetWatch {
    type Held = InHand;

    fn taken(&self, step: Step, run: &str, round: &RoundKey) -> InHand {
        self.count_taken(step);
        InHand {
            step,
            started: Instant::now(),
            _held: self.holding.hold(run, step.name(), round.unit.shard()),
        }
    }

    fn settled(&self, held: InHand, how: &'static str) {
        self.settle(held.step, how, held.started);
    }

    fn refused(&self, step: Step, units: usize, how: &'static str) {
        for _ in 0..units {
            self.count_taken(step);
            self.settle(step, how, Instant::now());
        }
    }

    fn translated(&self, run: &str, _task: &autoeval_proto::VerifyTask, busy: Duration) {
        self.holding.worked(run, Busy::Translate, busy);
    }

    fn recorded(&self, run: &str, _records: &[ResultRecord], _new: &[bool], busy: Duration) {
        self.holding.worked(run, Busy::Record, busy);
    }

    fn verified(&self, run: &str, r: &ResultRecord, busy: Duration) {
        self.holding.worked(run, Busy::Verify, busy);
        let m = &self.metrics;
        m.verify_duration
            .with_label_values(&[
                &r.dataset,
                r.method.as_deref().unwrap_or("none"),
                r.verdict.name(),
            ])
            .observe(r.verify_ms / 1e3);
        match r.verdict {
            Verdict::Timeout => m.verify_timeouts.with_label_values(&[&r.dataset]).inc(),
            Verdict::VerifierError => m.verify_errors.with_label_values(&[&r.dataset]).inc(),
            _ => {}
        }
    }

    fn halted(&self, run: &str, why: &str) {
        let first = self
            .halts_logged
            .lock()
            .map_or(true, |mut logged| logged.insert((run.into(), why.into())));
        if first {
            tracing::warn!(
                run,
                "a model stopped answering and its backend halted ({why}); the tasks it did not send stay pending for `autoeval rerun --failed --fleet`"
            );
        }
    }
}

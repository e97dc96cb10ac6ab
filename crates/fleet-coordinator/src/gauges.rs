//! The coordinator's view of a run as Prometheus gauges: progress and ETA,
//! rounds by verdict, live A2 and A3, and each queue's depth and consumers.

use autoeval_metrics::summary::Counts;
use autoeval_proto::fleet::Counter;
use autoeval_telemetry::Metrics;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// How far back the pace behind the ETA looks.
const PACE_WINDOW: Duration = Duration::from_secs(30);

/// A run's gauges, updated at each look.
pub struct RunGauges<'a> {
    metrics: &'a Metrics,
    run: String,
    units: usize,
    seen: VecDeque<(Instant, u64)>,
}

impl<'a> RunGauges<'a> {
    /// Gauges of `run`, which has `units` work units.
    pub fn new(metrics: &'a Metrics, run: &str, units: usize) -> RunGauges<'a> {
        metrics
            .run_units
            .with_label_values(&[run])
            .set(units as i64);
        RunGauges {
            metrics,
            run: run.to_string(),
            units,
            seen: VecDeque::new(),
        }
    }

    /// Sets progress and ETA from `done` units.
    pub fn progress(&mut self, done: u64) {
        let now = Instant::now();
        let run = [self.run.as_str()];
        self.metrics
            .run_units_done
            .with_label_values(&run)
            .set(done as i64);
        self.seen.push_back((now, done));
        while self
            .seen
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > PACE_WINDOW)
        {
            self.seen.pop_front();
        }
        let left = self.units.saturating_sub(done as usize) as f64;
        let eta = match self.seen.front() {
            _ if left == 0.0 => 0.0,
            Some((t0, d0)) if done > *d0 => {
                let pace = (done - d0) as f64 / now.duration_since(*t0).as_secs_f64();
                left / pace
            }
            // No progress to go by: unknown.
            _ => f64::NAN,
        };
        self.metrics.run_eta.with_label_values(&run).set(eta);
    }

    /// Sets rounds by verdict and A2/A3 per dataset, model, prompt and round
    /// from the run's counters (`dataset|model|prompt|round|complexity|verdict`).
    pub fn rounds(&self, counts: &BTreeMap<String, i64>) {
        let mut rounds: BTreeMap<[String; 5], i64> = BTreeMap::new();
        let mut groups: BTreeMap<[String; 4], Counts> = BTreeMap::new();
        for (field, &n) in counts {
            let Ok(c) = field.parse::<Counter>() else {
                continue;
            };
            let (v, round) = (c.verdict, c.round.to_string());
            let by_verdict = [
                c.dataset.clone(),
                c.model.clone(),
                c.prompt.clone(),
                round.clone(),
                v.to_string(),
            ];
            *rounds.entry(by_verdict).or_default() += n;
            let group = [c.dataset, c.model, c.prompt, round];
            *groups
                .entry(group)
                .or_default()
                .verdicts
                .entry(v)
                .or_default() += n.max(0) as usize;
        }
        let m = self.metrics;
        for ([dataset, model, prompt, round, verdict], n) in &rounds {
            m.run_rounds
                .with_label_values(&[&self.run, dataset, model, prompt, round, verdict])
                .set(*n);
        }
        for ([dataset, model, prompt, round], c) in &groups {
            let labels = [self.run.as_str(), dataset, model, prompt, round];
            if let Some(a2) = c.compliance() {
                m.run_compliance.with_label_values(&labels).set(a2);
            }
            if let Some(a3) = c.accuracy() {
                m.run_accuracy.with_label_values(&labels).set(a3);
            }
        }
    }

    /// Sets a queue's depth and consumers.
    pub fn queue(&self, queue: &str, ready: u32, consumers: u32) {
        let m = self.metrics;
        m.queue_ready
            .with_label_values(&[queue])
            .set(i64::from(ready));
        m.queue_consumers
            .with_label_values(&[queue])
            .set(i64::from(consumers));
    }
}

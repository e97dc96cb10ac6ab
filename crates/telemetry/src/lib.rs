//! The fleet's Prometheus metrics. Every process makes one [`Metrics`] and
//! serves [`Metrics::encode`] at `/metrics`; each uses the families of its
//! role. Names carry one `autoeval_` prefix, base units (`_seconds`) and
//! `_total` on counters; label values are bounded (stages, outcomes,
//! backends, models, datasets, verdicts, runs), never an item id.

mod llm;
mod logs;

pub use llm::LlmObserver;
pub use logs::{init_logs, LOG_FILTER_VAR};

use prometheus::{
    exponential_buckets, Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Every metric a fleet process may export.
pub struct Metrics {
    registry: Registry,
    /// Tasks taken from a queue, by stage.
    pub tasks_received: IntCounterVec,
    /// Tasks settled, by stage and outcome (`acked`, `requeued`, `dead_lettered`, `parked`).
    pub tasks_settled: IntCounterVec,
    /// Tasks in hand, by stage.
    pub tasks_in_flight: IntGaugeVec,
    /// Time from taking a task to settling it, by stage.
    pub task_duration: HistogramVec,
    /// Model API attempts, by backend, model and outcome.
    pub llm_requests: IntCounterVec,
    /// Time of one model API attempt, by backend and model.
    pub llm_request_duration: HistogramVec,
    /// Failed attempts tried again, by backend and model.
    pub llm_retries: IntCounterVec,
    /// Calls the reply cache answered, by backend and model.
    pub llm_cache_hits: IntCounterVec,
    /// Calls that failed for good, by backend and model.
    pub llm_calls_failed: IntCounterVec,
    /// Tokens paid for, by backend, model and kind (`prompt`, `completion`).
    pub llm_tokens: IntCounterVec,
    /// Cost paid, in USD, by backend and model.
    pub llm_cost: prometheus::CounterVec,
    /// Time requests waited for their turn under a rate limit or a 429's hold, by backend and model.
    pub llm_rate_limit_wait: prometheus::CounterVec,
    /// Requests a backend sends at once now (its adaptive limit), by backend and model.
    pub llm_concurrency: IntGaugeVec,
    /// Time of one equivalence check, by dataset, method and verdict.
    pub verify_duration: HistogramVec,
    /// Checks that hit the prover's time limit, by dataset.
    pub verify_timeouts: IntCounterVec,
    /// Checks that ended in a verifier error, by dataset.
    pub verify_errors: IntCounterVec,
    /// Messages ready in a queue (coordinator).
    pub queue_ready: IntGaugeVec,
    /// Consumers of a queue (coordinator).
    pub queue_consumers: IntGaugeVec,
    /// Work units of a run.
    pub run_units: IntGaugeVec,
    /// Work units of a run with a final outcome.
    pub run_units_done: IntGaugeVec,
    /// Seconds until the run ends at its current pace.
    pub run_eta: GaugeVec,
    /// Rounds recorded, by run, dataset, model, prompt, round and verdict.
    pub run_rounds: IntGaugeVec,
    /// A2 so far: share of measured rounds whose answer parsed.
    pub run_compliance: GaugeVec,
    /// A3 so far: share of measured rounds proved equivalent.
    pub run_accuracy: GaugeVec,
    /// Where the process is connected, and how often it connected again.
    pub connections: ConnectionMetrics,
}

/// Where a fleet process is connected: its broker node and Redis primary.
pub struct ConnectionMetrics {
    /// Broker connections made, the first included, by node.
    pub broker_connections: IntCounterVec,
    /// 1 for the broker node connected to last, 0 for the others.
    pub broker_node: IntGaugeVec,
    /// Times the Redis connection moved to a new primary after a failover.
    pub redis_failovers: IntCounterVec,
    /// 1 for the Redis server commands go to now, 0 for the others.
    pub redis_primary: IntGaugeVec,
    /// The Redis primary last set to 1 in `redis_primary`.
    primary_then: std::sync::Mutex<Option<String>>,
}

impl ConnectionMetrics {
    fn new(r: &Registry) -> ConnectionMetrics {
        ConnectionMetrics {
            broker_connections: counter(
                r,
                "broker_connections_total",
                "Broker connections made, the first included, by node: more than one in all is a connection made again after one was lost.",
                &["node"],
            ),
            broker_node: gauge(r, "broker_node", "1 for the broker node connected to last.", &["node"]),
            redis_failovers: counter(
                r,
                "redis_failovers_total",
                "Times the Redis connection followed the primary to another server.",
                &[],
            ),
            redis_primary: gauge(r, "redis_primary", "1 for the Redis server commands go to now.", &["primary"]),
            primary_then: std::sync::Mutex::default(),
        }
    }

    /// Brings the metrics up to what the process made: broker connections
    /// by node (`by_node`, the last to `last`), and the Redis `primary`
    /// with the `failovers` followed so far.
    pub fn observe(
        &self,
        by_node: &std::collections::BTreeMap<String, u64>,
        last: Option<&str>,
        primary: &str,
        failovers: u64,
    ) {
        for (node, made) in by_node {
            let counter = self.broker_connections.with_label_values(&[node.as_str()]);
            counter.inc_by(made.saturating_sub(counter.get()));
            let now = i64::from(Some(node.as_str()) == last);
            self.broker_node
                .with_label_values(&[node.as_str()])
                .set(now);
        }
        let followed = self.redis_failovers.with_label_values::<&str>(&[]);
        followed.inc_by(failovers.saturating_sub(followed.get()));
        let mut then = self.primary_then.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = then.as_deref().filter(|old| *old != primary) {
            self.redis_primary.with_label_values(&[old]).set(0);
        }
        *then = Some(primary.to_string());
        self.redis_primary.with_label_values(&[primary]).set(1);
    }
}

fn counter(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help).namespace("autoeval"), labels)
        .expect("a valid metric");
    r.register(Box::new(c.clone()))
        .expect("a metric registered once");
    c
}

fn float_counter(r: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::CounterVec {
    let c = prometheus::CounterVec::new(Opts::new(name, help).namespace("autoeval"), labels)
        .expect("a valid metric");
    r.register(Box::new(c.clone()))
        .expect("a metric registered once");
    c
}

fn gauge(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    let g = IntGaugeVec::new(Opts::new(name, help).namespace("autoeval"), labels)
        .expect("a valid metric");
    r.register(Box::new(g.clone()))
        .expect("a metric registered once");
    g
}

fn float_gauge(r: &Registry, name: &str, help: &str, labels: &[&str]) -> GaugeVec {
    let g =
        GaugeVec::new(Opts::new(name, help).namespace("autoeval"), labels).expect("a valid metric");
    r.register(Box::new(g.clone()))
        .expect("a metric registered once");
    g
}

fn histogram(
    r: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: Vec<f64>,
) -> HistogramVec {
    let h = HistogramVec::new(
        HistogramOpts::new(name, help)
            .namespace("autoeval")
            .buckets(buckets),
        labels,
    )
    .expect("a valid metric");
    r.register(Box::new(h.clone()))
        .expect("a metric registered once");
    h
}

/// Buckets from `start` seconds, each twice the last.
fn doubling(start: f64, count: usize) -> Vec<f64> {
    exponential_buckets(start, 2.0, count).expect("valid buckets")
}

/// A registry with what every process exports: its own resources (on
/// Linux) and which role and version it is.
fn registry_of(role: &str) -> Registry {
    let r = Registry::new();
    #[cfg(target_os = "linux")]
    r.register(Box::new(
        prometheus::process_collector::ProcessCollector::for_self(),
    ))
    .expect("the process collector registered once");
    let info = gauge(
        &r,
        "build_info",
        "This process's role and version (always 1).",
        &["role", "version"],
    );
    info.with_label_values(&[role, env!("CARGO_PKG_VERSION")])
        .set(1);
    r
}

impl Metrics {
    /// The metrics of a process in `role` (`coordinator`, `worker`, `verifier`).
    pub fn new(role: &str) -> Metrics {
        let r = registry_of(role);
        let (stage, model) = (&["stage"], &["backend", "model"]);
        Metrics {
            tasks_received: counter(&r, "tasks_received_total", "Tasks taken from a queue.", stage),
            tasks_settled: counter(
                &r,
                "tasks_settled_total",
                "Tasks settled: acked, requeued, dead_lettered, or parked (set aside while the run is paused at a cap).",
                &["stage", "outcome"],
            ),
            tasks_in_flight: gauge(&r, "tasks_in_flight", "Tasks in hand.", stage),
            task_duration: histogram(
                &r,
                "task_duration_seconds",
                "Time from taking a task to settling it.",
                stage,
                doubling(0.001, 18),
            ),
            llm_requests: counter(
                &r,
                "llm_requests_total",
                "Model API attempts, by outcome (ok, rate_limited, server_error, client_error, timeout, unreachable, other).",
                &["backend", "model", "outcome"],
            ),
            llm_request_duration: histogram(
                &r,
                "llm_request_duration_seconds",
                "Time of one model API attempt.",
                model,
                doubling(0.005, 16),
            ),
            llm_retries: counter(&r, "llm_retries_total", "Failed attempts tried again.", model),
            llm_cache_hits: counter(
                &r,
                "llm_cache_hits_total",
                "Calls the reply cache answered without sending.",
                model,
            ),
            llm_calls_failed: counter(
                &r,
                "llm_calls_failed_total",
                "Calls that failed for good (an API failure).",
                model,
            ),
            llm_tokens: counter(
                &r,
                "llm_tokens_total",
                "Tokens paid for, by kind (prompt, completion).",
                &["backend", "model", "kind"],
            ),
            llm_cost: float_counter(&r, "llm_cost_usd_total", "Cost paid, in US dollars.", model),
            llm_rate_limit_wait: float_counter(
                &r,
                "llm_rate_limit_wait_seconds_total",
                "Time requests waited for their turn under the fleet's rate limit or a 429's hold.",
                model,
            ),
            llm_concurrency: gauge(
                &r,
                "llm_concurrency",
                "Requests a backend sends at once now: its concurrency limit as it adapts to 429s and 5xx.",
                model,
            ),
            verify_duration: histogram(
                &r,
                "verify_duration_seconds",
                "Time of one equivalence check.",
                &["dataset", "method", "verdict"],
                doubling(0.0001, 20),
            ),
            verify_timeouts: counter(
                &r,
                "verify_timeouts_total",
                "Checks that hit the prover's time limit.",
                &["dataset"],
            ),
            verify_errors: counter(
                &r,
                "verify_errors_total",
                "Checks that ended in a verifier error.",
                &["dataset"],
            ),
            queue_ready: gauge(&r, "queue_messages_ready", "Messages ready in a queue.", &["queue"]),
            queue_consumers: gauge(&r, "queue_consumers", "Consumers of a queue.", &["queue"]),
            run_units: gauge(&r, "run_units", "Work units of a run.", &["run"]),
            run_units_done: gauge(
                &r,
                "run_units_done",
                "Work units of a run with a final outcome.",
                &["run"],
            ),
            run_eta: float_gauge(
                &r,
                "run_eta_seconds",
                "Seconds until the run ends at its current pace.",
                &["run"],
            ),
            run_rounds: gauge(
                &r,
                "run_rounds",
                "Rounds recorded, by verdict.",
                &["run", "dataset", "model", "prompt", "round", "verdict"],
            ),
            run_compliance: float_gauge(
                &r,
                "run_compliance_ratio",
                "A2 so far: share of measured rounds whose answer parsed.",
                &["run", "dataset", "model", "prompt", "round"],
            ),
            run_accuracy: float_gauge(
                &r,
                "run_accuracy_ratio",
                "A3 so far: share of measured rounds proved equivalent.",
                &["run", "dataset", "model", "prompt", "round"],
            ),
            connections: ConnectionMetrics::new(&r),
            registry: r,
        }
    }

    /// Starts the counters of `stage` at zero for every outcome, so that
    /// dashboards and alerts see them before the first event.
    pub fn start_stage(&self, stage: &str) {
        self.tasks_received.with_label_values(&[stage]);
        self.tasks_in_flight.with_label_values(&[stage]);
        for outcome in ["acked", "requeued", "dead_lettered", "parked", "kept"] {
            self.tasks_settled.with_label_values(&[stage, outcome]);
        }
    }

    /// Starts the verifier's counters at zero for every dataset.
    pub fn start_verifier(&self) {
        self.start_stage("verify");
        for d in autoeval_proto::DatasetKind::ALL {
            self.verify_timeouts.with_label_values(&[d.name()]);
            self.verify_errors.with_label_values(&[d.name()]);
        }
    }

    /// The metrics in Prometheus's text format.
    pub fn encode(&self) -> String {
        let mut out = Vec::new();
        // Encoding into memory fails only on a metric this crate built wrong.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// A task in hand: counted in flight until settled.
pub struct TaskTimer<'a> {
    metrics: &'a Metrics,
    stage: &'static str,
    started: std::time::Instant,
    outcome: &'static str,
}

impl Metrics {
    /// Counts a task of `stage` taken; settle it with [`TaskTimer::settled`].
    pub fn task(&self, stage: &'static str) -> TaskTimer<'_> {
        self.tasks_received.with_label_values(&[stage]).inc();
        self.tasks_in_flight.with_label_values(&[stage]).inc();
        TaskTimer {
            metrics: self,
            stage,
            started: std::time::Instant::now(),
            outcome: "requeued",
        }
    }
}

impl TaskTimer<'_> {
    /// Says how the task was settled: `acked`, `requeued`, `dead_lettered` or `parked`.
    pub fn settled(&mut self, outcome: &'static str) {
        self.outcome = outcome;
    }
}

impl Drop for TaskTimer<'_> {
    // A task dropped without a word was given back: the broker delivers it again.
    fn drop(&mut self) {
        let m = self.metrics;
        m.tasks_in_flight.with_label_values(&[self.stage]).dec();
        m.tasks_settled
            .with_label_values(&[self.stage, self.outcome])
            .inc();
        m.task_duration
            .with_label_values(&[self.stage])
            .observe(self.started.elapsed().as_secs_f64());
    }
}

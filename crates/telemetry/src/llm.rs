//! The model client's calls, counted: attempts by outcome and time,
//! retries, cache hits, failures, tokens and cost, by backend and model.

use crate::Metrics;
use autoeval_models::{AttemptOutcome, CallObserver};
use autoeval_models::{ModelSpec, Usage};
use std::sync::Arc;

/// Feeds a backend's calls into [`Metrics`].
#[derive(Clone)]
pub struct LlmObserver(pub Arc<Metrics>);

/// The `backend` and `model` labels of a spec: its kind, and the spec as
/// runs name it (the `model` label of the coordinator's gauges and of the
/// records) without a URL's user and password or its `?…` tail.
pub fn labels(spec: &ModelSpec) -> [String; 2] {
    [
        spec.provider().metric_label().to_string(),
        autoeval_proto::fleet::without_secrets(&spec.to_string()),
    ]
}

impl CallObserver for LlmObserver {
    // Every counter of a model starts at zero, so that dashboards and
    // alerts see a model before its first failure.
    fn start(&self, spec: &ModelSpec) {
        let [b, m] = labels(spec);
        let m0 = &self.0;
        for o in AttemptOutcome::ALL {
            m0.llm_requests.with_label_values(&[&b, &m, o.name()]);
        }
        m0.llm_retries.with_label_values(&[&b, &m]);
        m0.llm_cache_hits.with_label_values(&[&b, &m]);
        m0.llm_calls_failed.with_label_values(&[&b, &m]);
        m0.llm_cost.with_label_values(&[&b, &m]);
        m0.llm_rate_limit_wait.with_label_values(&[&b, &m]);
        for kind in ["prompt", "completion"] {
            m0.llm_tokens.with_label_values(&[&b, &m, kind]);
        }
    }

    fn attempt(&self, spec: &ModelSpec, outcome: AttemptOutcome, seconds: f64) {
        let [b, m] = labels(spec);
        self.0
            .llm_requests
            .with_label_values(&[&b, &m, outcome.name()])
            .inc();
        self.0
            .llm_request_duration
            .with_label_values(&[&b, &m])
            .observe(seconds);
    }

    fn retry(&self, spec: &ModelSpec) {
        let [b, m] = labels(spec);
        self.0.llm_retries.with_label_values(&[&b, &m]).inc();
    }

    fn cached(&self, spec: &ModelSpec) {
        let [b, m] = labels(spec);
        self.0.llm_cache_hits.with_label_values(&[&b, &m]).inc();
    }

    fn paid(&self, spec: &ModelSpec, usage: Usage, cost: Option<f64>) {
        let [b, m] = labels(spec);
        let tokens = &self.0.llm_tokens;
        tokens
            .with_label_values(&[&b, &m, "prompt"])
            .inc_by(usage.prompt_tokens);
        tokens
            .with_label_values(&[&b, &m, "completion"])
            .inc_by(usage.completion_tokens);
        if let Some(c) = cost {
            self.0.llm_cost.with_label_values(&[&b, &m]).inc_by(c);
        }
    }

    fn failed(&self, spec: &ModelSpec) {
        let [b, m] = labels(spec);
        self.0.llm_calls_failed.with_label_values(&[&b, &m]).inc();
    }

    fn concurrency(&self, spec: &ModelSpec, limit: usize) {
        let [b, m] = labels(spec);
        self.0
            .llm_concurrency
            .with_label_values(&[&b, &m])
            .set(i64::try_from(limit).unwrap_or(i64::MAX));
    }

    fn waited(&self, spec: &ModelSpec, _cause: autoeval_models::WaitCause, seconds: f64) {
        let [b, m] = labels(spec);
        self.0
            .llm_rate_limit_wait
            .with_label_values(&[&b, &m])
            .inc_by(seconds);
    }
}

#[cfg(test)]
mod tests {
    use super::labels;

    #[test]
    fn the_model_label_is_the_spec_as_runs_name_it_without_secrets() {
        let spec: autoeval_models::ModelSpec =
            "openai-compatible:m@http://127.0.0.1:9/v1".parse().unwrap();
        let [backend, model] = labels(&spec);
        assert_eq!(model, "openai-compatible:m@http://127.0.0.1:9/v1");
        assert!(!backend.is_empty());
        let builtin: autoeval_models::ModelSpec = "reference".parse().unwrap();
        assert_eq!(labels(&builtin)[1], "reference");
    }
}

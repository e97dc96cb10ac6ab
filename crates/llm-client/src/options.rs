//! How a backend is set up, and the providers' other addresses.

use crate::{
    BatchJournal, BatchSettings, BatchSpend, CallObserver, RateGate, RateLimits, ResponseCache,
    DEFAULT_MAX_REPLY_BYTES,
};
use autoeval_models::{GenerationParams, ModelSpec, PriceTable, RetryPolicy};
use std::sync::Arc;
use std::time::Duration;

/// How a backend is set up.
#[derive(Clone)]
pub struct BackendOptions {
    /// Requests in flight at once (the ceiling, when it adapts).
    pub concurrency: usize,
    /// Whether direct calls' concurrency adapts to the provider: it backs
    /// off by a tenth on a 429 or 5xx and grows by one per limit's worth of
    /// successes, between [`ADAPTIVE_FLOOR`] and `concurrency`.
    pub adaptive_concurrency: bool,
    /// Limit of one request.
    pub request_timeout: Duration,
    /// Retries and backoff.
    pub retry: RetryPolicy,
    /// Sampling settings.
    pub params: GenerationParams,
    /// Token prices.
    pub prices: PriceTable,
    /// The largest response body read; past it the answer is "too long",
    /// not read or kept whole.
    pub max_reply_bytes: usize,
    /// Reply cache; `None` disables caching.
    pub cache: Option<Arc<dyn ResponseCache>>,
    /// A JSON file of `{"OPENAI_API_KEY": "…"}` consulted after the environment.
    pub secrets_file: Option<std::path::PathBuf>,
    /// Another address for the OpenAI or Anthropic API (a proxy, or a test stub).
    pub base_url: Option<String>,
    /// How the built-in models answer the A4 question; without one they say they cannot.
    pub judge: Option<autoeval_reference_model::Judge>,
    /// Told of every attempt, retry, cache hit and payment, for metrics.
    pub observer: Option<Arc<dyn CallObserver>>,
    /// The provider's limits on this model.
    pub limits: RateLimits,
    /// Where requests wait for their turn, shared with everything that calls
    /// the same model; `None` gives the backend a gate of its own.
    pub gate: Option<Arc<dyn RateGate>>,
    /// Send calls through the provider's batch API, gathered as these
    /// settings say; `None` calls the model directly.
    pub batch: Option<BatchSettings>,
    /// Where batches are recorded before they are waited for (the run
    /// directory, or Redis); `None` keeps them in memory, which a crash loses.
    pub journal: Option<Arc<dyn BatchJournal>>,
    /// Where each batch is charged to the run's budget when it is
    /// submitted (its estimate) and again when it ends (its cost); `None`
    /// when no budget is kept.
    pub batch_spend: Option<Arc<dyn BatchSpend>>,
}

impl Default for BackendOptions {
    fn default() -> BackendOptions {
        BackendOptions {
            concurrency: autoeval_models::defaults::CONCURRENCY,
            adaptive_concurrency: true,
            request_timeout: Duration::from_secs(autoeval_models::defaults::REQUEST_TIMEOUT_S),
            retry: RetryPolicy::default(),
            params: GenerationParams::default(),
            prices: PriceTable::builtin(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            cache: None,
            secrets_file: None,
            base_url: None,
            judge: None,
            observer: None,
            limits: RateLimits::default(),
            gate: None,
            batch: None,
            journal: None,
            batch_spend: None,
        }
    }
}

/// Other addresses for the providers' APIs (a proxy, a gateway, or a test
/// server), as this machine's environment gives them: never from a run's
/// settings, which travel between machines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaseUrls {
    /// By provider name, from the variable each provider names (the one its
    /// own SDK reads, e.g. `https://gateway/v1`).
    by_provider: std::collections::BTreeMap<&'static str, String>,
}

impl BaseUrls {
    /// The addresses in the providers' base-address variables.
    pub fn from_env() -> BaseUrls {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().trim_end_matches('/').to_string())
                .filter(|v| !v.is_empty())
        };
        BaseUrls {
            by_provider: autoeval_models::provider::base_url_variables()
                .into_iter()
                .filter_map(|(provider, variable)| Some((provider, var(variable)?)))
                .collect(),
        }
    }

    /// The address for `spec`, when another is configured.
    pub fn of(&self, spec: &ModelSpec) -> Option<String> {
        self.by_provider.get(spec.backend()).cloned()
    }
}

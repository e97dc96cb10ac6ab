//! The translate stage built from a run's [`StageSettings`] and what the
//! worker brings of its own ([`Local`]): a backend per model, and the
//! longest a task can take.

pub use autoeval_proto::CopyPolicy;
pub use autoeval_run_settings::StageSettings;

use crate::stage::Translator;
use autoeval_llm_client::{Backend, BackendOptions, CallError, ResponseCache};
use autoeval_models::{
    defaults, GenerationParams, Model, ModelSettings, ModelSpec, PriceTable, RetryPolicy,
};
use autoeval_prompts::TemplateError;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// What a worker brings of its own to a backend.
#[derive(Clone, Default)]
pub struct Local {
    /// Requests in flight per model, when the worker caps them.
    pub concurrency: Option<usize>,
    /// The reply cache.
    pub cache: Option<Arc<dyn ResponseCache>>,
    /// A JSON file of API keys, read after the environment.
    pub secrets_file: Option<PathBuf>,
    /// Told of every model call, for metrics.
    pub observer: Option<Arc<dyn autoeval_llm_client::CallObserver>>,
    /// Where requests wait their turn under each model's rate limits: shared
    /// by the backends of one process, or by a fleet's workers.
    pub gate: Option<Arc<dyn autoeval_llm_client::RateGate>>,
    /// Where batched calls are recorded: the run directory, or Redis.
    pub journal: Option<Arc<dyn autoeval_llm_client::BatchJournal>>,
    /// Where provider batches are charged to the run's budget, when one is kept.
    pub batch_spend: Option<Arc<dyn autoeval_llm_client::BatchSpend>>,
    /// Other addresses for the providers' APIs, from this machine's environment.
    pub base_urls: autoeval_llm_client::BaseUrls,
    /// How the built-in models answer the A4 question, in a process that
    /// asks judges; without one they say they cannot.
    pub judge: Option<autoeval_llm_client::BuiltinJudge>,
}

/// Why stages cannot be built from settings.
#[derive(Debug, Error)]
pub enum SettingsError {
    /// A template override is invalid.
    #[error(transparent)]
    Template(#[from] TemplateError),
    /// A model cannot be set up. Not a `source` of its own: the words are
    /// said once, here, not again by a report of the error's chain.
    #[error("{}", named(model, why))]
    Model {
        /// The spec.
        model: String,
        /// Why.
        why: CallError,
    },
}

/// `why` with the model it is about first, unless it names it already.
fn named(model: &str, why: &CallError) -> String {
    let why = why.to_string();
    if why.starts_with(model) {
        why
    } else {
        format!("model {model}: {why}")
    }
}

/// The translate stage as a run's [`StageSettings`] build it.
pub trait StageBackends {
    /// A backend for `model` (one of the run's) with this machine's `local` parts.
    fn backend(&self, model: &Model, local: &Local) -> Result<Backend, SettingsError>;
    /// The longest a translate task for `model` can take: two calls, each of
    /// every attempt running to its request time limit with the longest
    /// backoff between attempts. A worker keeps this below the broker's
    /// consumer timeout, or the broker takes the task back mid-call.
    fn task_budget(&self, model: &str) -> Duration;

    /// The translate stage for `models` of the run.
    fn translator(&self, models: &[Model], local: &Local) -> Result<Translator, SettingsError>;
}

/// The task budget of a run on the default settings (a 120 s request time
/// limit, the default attempts).
pub fn default_task_budget() -> Duration {
    budget_of(
        request_timeout(&ModelSettings::default()),
        RetryPolicy::default().max_attempts,
    )
}

/// `model`'s settings as the run resolved them (none set where it named none).
fn model_settings(stages: &StageSettings, model: &str) -> ModelSettings {
    stages
        .translate
        .models
        .get(model)
        .cloned()
        .unwrap_or_default()
}

/// A model's request time limit: its own, or 120 s.
fn request_timeout(settings: &ModelSettings) -> Duration {
    Duration::from_secs(
        settings
            .request_timeout_s
            .unwrap_or(defaults::REQUEST_TIMEOUT_S),
    )
}

/// A backend for `model`, called as `settings` say (the run's settings and
/// the model's own, merged) at the prices of `prices`, with this process's
/// `local` parts: the one place a model's backend is built, for a run, a
/// worker, a judge and a benchmark alike. A setting the model cannot take
/// at all is refused here, before any call.
pub fn build_backend(
    model: &Model,
    settings: &ModelSettings,
    prices: &PriceTable,
    local: &Local,
) -> Result<Backend, SettingsError> {
    let spec = model.spec().clone();
    let failed = |why: CallError| SettingsError::Model {
        model: model.to_string(),
        why,
    };
    let params = spec.params(settings, &GenerationParams::default());
    if let Some(why) = spec.refuses(&params) {
        return Err(failed(CallError::Setup(why)));
    }
    let base_url = local.base_urls.of(&spec);
    let prices = prices_at(&spec, base_url.as_deref(), prices);
    let options = BackendOptions {
        concurrency: local
            .concurrency
            .or(settings.concurrency)
            .unwrap_or(defaults::CONCURRENCY),
        adaptive_concurrency: settings.adaptive_concurrency.unwrap_or(true),
        request_timeout: request_timeout(settings),
        retry: RetryPolicy {
            max_attempts: settings
                .max_attempts
                .unwrap_or(RetryPolicy::default().max_attempts),
            ..RetryPolicy::default()
        },
        params,
        prices,
        max_reply_bytes: settings
            .max_reply_bytes
            .unwrap_or(autoeval_llm_client::DEFAULT_MAX_REPLY_BYTES),
        // The built-in models cost nothing and answer in microseconds: caching them only costs storage.
        cache: if spec.is_builtin() {
            None
        } else {
            local.cache.clone()
        },
        secrets_file: local.secrets_file.clone(),
        base_url,
        judge: local.judge.clone(),
        observer: local.observer.clone(),
        limits: autoeval_llm_client::RateLimits {
            requests_per_minute: settings.requests_per_minute,
            tokens_per_minute: settings.tokens_per_minute,
        },
        gate: local.gate.clone(),
        batch: settings.batching(),
        journal: local.journal.clone(),
        batch_spend: local.batch_spend.clone(),
    };
    Backend::new(spec, options).map_err(failed)
}

/// The prices `spec` is charged at when its requests go to `moved` (this
/// machine's address for its provider) or its own `@URL`: the list prices
/// at the provider's own address; elsewhere (a proxy, a local server that
/// plays the provider) only the prices a user's price file named, since a
/// list price there would be a guess.
pub fn prices_at(spec: &ModelSpec, moved: Option<&str>, prices: &PriceTable) -> PriceTable {
    let own = spec.provider().default_base_url();
    let address = spec.base_url().or(moved);
    match (own, address) {
        (Some(own), Some(address)) if address.trim_end_matches('/') != own => prices.named_only(),
        _ => prices.clone(),
    }
}

impl StageBackends for StageSettings {
    /// A backend for `model` (one of the run's) with this machine's `local` parts.
    fn backend(&self, model: &Model, local: &Local) -> Result<Backend, SettingsError> {
        let mut settings = model_settings(self, model.as_str());
        settings.max_attempts = settings.max_attempts.or(Some(self.translate.max_attempts));
        build_backend(model, &settings, &self.translate.prices, local)
    }

    fn task_budget(&self, model: &str) -> Duration {
        let settings = model_settings(self, model);
        let attempts = settings.max_attempts.unwrap_or(self.translate.max_attempts);
        budget_of(request_timeout(&settings), attempts)
    }

    fn translator(&self, models: &[Model], local: &Local) -> Result<Translator, SettingsError> {
        let mut backends = BTreeMap::new();
        for m in models {
            backends.insert(m.to_string(), self.backend(m, local)?);
        }
        Ok(Translator {
            backends,
            templates: self.prompts.templates()?,
            task_deadline: None,
        })
    }
}

/// Two calls, each of `attempts` attempts running to `request` with the
/// longest backoff between them.
fn budget_of(request: Duration, attempts: u32) -> Duration {
    let attempts = attempts.max(1);
    let backoff = RetryPolicy::default().max_delay;
    2 * (request * attempts + backoff * (attempts - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_price_holds_only_at_the_providers_own_address() {
        let prices = PriceTable::builtin();
        let price = |spec: &str, moved: Option<&str>| {
            let spec: ModelSpec = spec.parse().unwrap();
            prices_at(&spec, moved, &prices).price_of(&spec)
        };
        assert!(price("openai:gpt-4o", None).is_some());
        assert!(price("openai:gpt-4o", Some("https://api.openai.com/v1")).is_some());
        assert_eq!(price("openai:gpt-4o", Some("http://127.0.0.1:9/v1")), None);
        assert_eq!(price("openai:gpt-4o@http://127.0.0.1:9/v1", None), None);
        // Named in a price file, by the spec as written or by the model's
        // name, it is priced there too.
        for key in ["openai:gpt-4o@http://127.0.0.1:9/v1", "gpt-4o"] {
            let named = prices
                .clone()
                .extended_with(&format!(r#"{{"{key}": {{"input": 1, "output": 2}}}}"#))
                .unwrap();
            let spec: ModelSpec = "openai:gpt-4o@http://127.0.0.1:9/v1".parse().unwrap();
            assert_eq!(
                prices_at(&spec, None, &named)
                    .price_of(&spec)
                    .unwrap()
                    .output,
                2.0
            );
        }
    }

    #[test]
    fn a_task_budget_is_two_calls_of_every_attempt_and_backoff() {
        let mut models = BTreeMap::new();
        models.insert(
            "openai:m".parse().unwrap(),
            ModelSettings {
                request_timeout_s: Some(60),
                ..ModelSettings::default()
            },
        );
        let s = StageSettings {
            prompts: autoeval_run_settings::PromptSettings::default(),
            translate: autoeval_run_settings::TranslateSettings {
                max_attempts: 3,
                models,
                prices: autoeval_models::PriceTable::default(),
            },
            verify: autoeval_run_settings::VerifySettings::default(),
        };
        let backoff = RetryPolicy::default().max_delay;
        assert_eq!(
            s.task_budget("openai:m"),
            Duration::from_secs(2 * 3 * 60) + 4 * backoff
        );
    }
}

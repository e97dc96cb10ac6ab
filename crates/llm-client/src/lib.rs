//! LLM backends: any OpenAI-compatible chat-completions server, Anthropic's
//! messages API, and the built-in reference model, behind one call,
//! [`Backend::chat`]. Each backend has a concurrency limit, retries 429,
//! 5xx, timeouts and dropped connections with exponential backoff and jitter
//! (honouring Retry-After), caches replies so a rerun never pays twice, and
//! counts tokens and cost. A call that fails for good is an API failure,
//! never a model's non-compliance. Keys come from the environment or a
//! secrets file and never appear in errors.

mod cache;
mod secret;

pub use cache::{CachedReply, DiskCache, ResponseCache};
pub use secret::ApiKey;

use autoeval_models::{
    cache_key, parse_retry_after, retryable_status, GenerationParams, ModelSpec, PriceTable,
    RetryPolicy, Sample, Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;
use tokio::sync::Semaphore;

/// A call that failed for good.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
pub enum CallError {
    /// The API kept failing, or refused the request.
    #[error("API failure after {attempts} attempt(s){}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Api {
        /// Last HTTP status, if a response came.
        status: Option<u16>,
        /// What went wrong, with any key removed.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The backend cannot be used as configured.
    #[error("{0}")]
    Setup(String),
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The model's text.
    pub text: String,
    /// Tokens used.
    pub usage: Usage,
    /// Cost in USD, when the price table knows the model (zero when cached).
    pub cost: Option<f64>,
    /// Wall-clock time of the call, retries included.
    pub latency_ms: f64,
    /// Attempts made (0 when the cache answered).
    pub attempts: u32,
    /// True when the cache answered and nothing was sent.
    pub cached: bool,
}

/// How a backend is set up.
#[derive(Clone)]
pub struct BackendOptions {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Limit of one request.
    pub request_timeout: Duration,
    /// Retries and backoff.
    pub retry: RetryPolicy,
    /// Sampling settings.
    pub params: GenerationParams,
    /// Token prices.
    pub prices: PriceTable,
    /// Reply cache; `None` disables caching.
    pub cache: Option<Arc<dyn ResponseCache>>,
    /// A JSON file of `{"OPENAI_API_KEY": "…"}` consulted after the environment.
    pub secrets_file: Option<std::path::PathBuf>,
    /// Another address for the OpenAI or Anthropic API (a proxy, or a test stub).
    pub base_url: Option<String>,
}

impl Default for BackendOptions {
    fn default() -> BackendOptions {
        BackendOptions {
            concurrency: 16,
            request_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            params: GenerationParams::default(),
            prices: PriceTable::builtin(),
            cache: None,
            secrets_file: None,
            base_url: None,
        }
    }
}

/// A model behind its backend.
pub struct Backend {
    spec: ModelSpec,
    http: reqwest::Client,
    key: Option<ApiKey>,
    permits: Semaphore,
    options: BackendOptions,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("spec", &self.spec.to_string())
            .field("key", &self.key)
            .finish()
    }
}

/// One attempt's failure: retryable or final, with the server's wait if it gave one.
struct Failure {
    status: Option<u16>,
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Backend {
    /// A backend for `spec`; OpenAI and Anthropic need their key.
    pub fn new(spec: ModelSpec, options: BackendOptions) -> Result<Backend, CallError> {
        let key = spec
            .key_variable()
            .and_then(|var| ApiKey::lookup(var, options.secrets_file.as_deref()));
        if key.is_none() && matches!(spec, ModelSpec::Openai { .. } | ModelSpec::Anthropic { .. }) {
            let var = spec.key_variable().unwrap_or("the API key variable");
            return Err(CallError::Setup(format!(
                "{spec} needs an API key: set {var} in the environment or in the secrets file"
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(options.request_timeout)
            .build()
            .map_err(|e| CallError::Setup(format!("cannot build the HTTP client: {e}")))?;
        Ok(Backend {
            permits: Semaphore::new(options.concurrency.max(1)),
            spec,
            http,
            key,
            options,
        })
    }

    /// The model this backend calls.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// Sends `prompt` as one user message for `sample`: the cache answers
    /// only a request for the same sample, never another unit's or round's.
    pub async fn chat(&self, prompt: &str, sample: &Sample) -> Result<Reply, CallError> {
        let started = Instant::now();
        let key = cache_key(&self.spec, prompt, &self.options.params, sample);
        if let Some(hit) = self.options.cache.as_ref().and_then(|c| c.get(&key)) {
            return Ok(Reply {
                text: hit.text,
                usage: Usage {
                    prompt_tokens: hit.prompt_tokens,
                    completion_tokens: hit.completion_tokens,
                },
                cost: Some(0.0),
                latency_ms: started.elapsed().as_secs_f64() * 1e3,
                attempts: 0,
                cached: true,
            });
        }
        let (text, usage, attempts) = match &self.spec {
            ModelSpec::Reference => (
                autoeval_reference_model::answer(prompt),
                Usage::default(),
                1,
            ),
            ModelSpec::ReferenceNoisy { rate } => (
                autoeval_reference_model::answer_noisy(prompt, *rate),
                Usage::default(),
                1,
            ),
            ModelSpec::ReferenceChatty { rate } => (
                autoeval_reference_model::answer_chatty(prompt, *rate),
                Usage::default(),
                1,
            ),
            ModelSpec::ReferenceJudgeNoisy { rate } => (
                autoeval_reference_model::answer_judge_noisy(prompt, *rate),
                Usage::default(),
                1,
            ),
            _ => self.call_with_retries(prompt).await?,
        };
        if let Some(cache) = &self.options.cache {
            cache.put(
                &key,
                &CachedReply {
                    text: text.clone(),
                    prompt_tokens: usage.prompt_tokens,
                    completion_tokens: usage.completion_tokens,
                },
            );
        }
        Ok(Reply {
            cost: self.options.prices.cost(&self.spec.model(), usage),
            text,
            usage,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
            attempts,
            cached: false,
        })
    }

    async fn call_with_retries(&self, prompt: &str) -> Result<(String, Usage, u32), CallError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| CallError::Setup("the backend was closed".into()))?;
        let policy = self.options.retry;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let failure = match self.attempt(prompt).await {
                Ok((text, usage)) => return Ok((text, usage, attempt)),
                Err(f) => f,
            };
            if !failure.retryable || attempt >= policy.max_attempts {
                let message = match &self.key {
                    Some(k) => k.redact(&failure.message),
                    None => failure.message,
                };
                return Err(CallError::Api {
                    status: failure.status,
                    message,
                    attempts: attempt,
                });
            }
            let wait = policy.delay(attempt, failure.retry_after, jitter());
            tracing::debug!(attempt, ?wait, status = ?failure.status, "retrying");
            tokio::time::sleep(wait).await;
        }
    }

    fn request(&self, prompt: &str) -> reqwest::RequestBuilder {
        let p = &self.options.params;
        match &self.spec {
            ModelSpec::Anthropic { model } => {
                let base = self
                    .options
                    .base_url
                    .clone()
                    .unwrap_or_else(|| "https://api.anthropic.com".into());
                let body = json!({
                    "model": model,
                    "max_tokens": p.max_tokens,
                    "temperature": p.temperature,
                    "messages": [{"role": "user", "content": prompt}],
                });
                let mut r = self
                    .http
                    .post(format!("{}/v1/messages", base.trim_end_matches('/')))
                    .json(&body);
                r = r.header("anthropic-version", "2023-06-01");
                if let Some(k) = &self.key {
                    r = r.header("x-api-key", k.expose());
                }
                r
            }
            _ => {
                let (model, base) = match &self.spec {
                    ModelSpec::OpenaiCompatible { model, base_url } => {
                        (model.clone(), base_url.clone())
                    }
                    other => (
                        other.model(),
                        self.options
                            .base_url
                            .clone()
                            .unwrap_or_else(|| "https://api.openai.com/v1".into()),
                    ),
                };
                let mut body = json!({
                    "model": model,
                    "messages": [{"role": "user", "content": prompt}],
                    "temperature": p.temperature,
                    "max_tokens": p.max_tokens,
                });
                if let Some(seed) = p.seed {
                    body["seed"] = json!(seed);
                }
                let mut r = self
                    .http
                    .post(format!("{}/chat/completions", base.trim_end_matches('/')))
                    .json(&body);
                if let Some(k) = &self.key {
                    r = r.bearer_auth(k.expose());
                }
                r
            }
        }
    }

    async fn attempt(&self, prompt: &str) -> Result<(String, Usage), Failure> {
        let transport = |e: reqwest::Error| Failure {
            status: None,
            message: format!("request failed: {}", e.without_url()),
            retryable: true,
            retry_after: None,
        };
        let response = self.request(prompt).send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let body = response.text().await.map_err(transport)?;
        if !(200..300).contains(&status) {
            return Err(Failure {
                status: Some(status),
                message: body.chars().take(500).collect(),
                retryable: retryable_status(status),
                retry_after,
            });
        }
        let malformed = |what: &str| Failure {
            status: Some(status),
            message: format!(
                "malformed response ({what}): {}",
                body.chars().take(200).collect::<String>()
            ),
            retryable: true,
            retry_after: None,
        };
        let v: Value = serde_json::from_str(&body).map_err(|_| malformed("not JSON"))?;
        let (text, usage) = match &self.spec {
            ModelSpec::Anthropic { .. } => {
                let text: String = v["content"]
                    .as_array()
                    .ok_or_else(|| malformed("no content"))?
                    .iter()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                let usage = Usage {
                    prompt_tokens: v["usage"]["input_tokens"].as_u64().unwrap_or(0),
                    completion_tokens: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
                };
                (text, usage)
            }
            _ => {
                let text = v["choices"][0]["message"]["content"]
                    .as_str()
                    .ok_or_else(|| malformed("no choices"))?;
                let usage = Usage {
                    prompt_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
                    completion_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
                };
                (text.to_string(), usage)
            }
        };
        Ok((text, usage))
    }
}

/// A uniform draw in [0, 1) for backoff jitter; it needs no reproducibility.
fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut x = nanos as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

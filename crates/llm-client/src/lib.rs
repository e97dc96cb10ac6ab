//! LLM backends: any OpenAI-compatible chat-completions server, Anthropic's
//! messages API, and the built-in reference model, behind one call,
//! [`Backend::chat`]. Each backend has a concurrency limit, retries 429,
//! 5xx, timeouts and dropped connections with exponential backoff and jitter
//! (honouring Retry-After), caches replies so a rerun never pays twice, and
//! counts tokens and cost. A call that fails for good is an API failure,
//! never a model's non-compliance. Keys come from the environment or a
//! secrets file and never appear in errors.

mod adaptive;
mod batch;
mod cache;
mod claim;
mod health;
mod observe;
mod provider;
mod retry;
mod secret;

pub use autoeval_models::{
    estimate_tokens, AttemptOutcome, BatchCounts, BatchJournal, BatchSettings, BatchSpend,
    CacheFuture, CacheUnavailable, CachedReply, CallObserver, Cell, LocalGate, RateGate,
    RateLimits, ResponseCache, TokenHistory, WaitCause,
};
pub use batch::MemoryJournal;
pub use cache::DiskCache;
use claim::while_cache_away;
pub use claim::{CACHE_OUTAGE_WAIT, CLAIM_TTL};
pub use health::{Cause, Halt, HaltKind, FAIL_FAST_ATTEMPTS, PROBE_EVERY};
pub use provider::{reason_of, Class, Reason};
pub use secret::ApiKey;

use health::Health;
use provider::{base_url_of, request_body};

use autoeval_models::{
    cache_key, parse_retry_after, GenerationParams, ModelSpec, PriceTable, RetryPolicy, Sample,
    Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use thiserror::Error;

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
    /// The backend halted: its provider refused in a way every request
    /// would repeat, or every attempt so far failed the same way.
    #[error("the backend stopped: {cause}")]
    Halted {
        /// The failure that halted it.
        cause: String,
        /// Attempts this call made before it stopped.
        attempts: u32,
    },
}

impl CallError {
    /// Attempts the call made.
    pub fn attempts(&self) -> u32 {
        match self {
            CallError::Api { attempts, .. } | CallError::Halted { attempts, .. } => *attempts,
            CallError::Setup(_) => 0,
        }
    }
}

/// One reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The model's text.
    pub text: String,
    /// Tokens used.
    pub usage: Usage,
    /// Cost in USD, when the price table knows the model and the server
    /// reported usage (zero when cached).
    pub cost: Option<f64>,
    /// Wall-clock time of the call, retries included.
    pub latency_ms: f64,
    /// Attempts made (0 when the cache answered).
    pub attempts: u32,
    /// True when the cache answered and nothing was sent.
    pub cached: bool,
    /// True when the server reported no usage (or the reply was too long to
    /// read): `usage` and `cost` are estimated from the text, four
    /// characters a token, so that the budget is still charged.
    #[serde(default)]
    pub usage_estimated: bool,
    /// True when the reply passed the size limit: its text is empty, the
    /// answer non-compliant ("answer too long").
    #[serde(default)]
    pub too_long: bool,
    /// Why the model stopped, as the provider says it (`stop`, `length`,
    /// `end_turn`, `max_tokens`, …); `None` when it did not say.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// True when the provider's batch API answered, and `cost` is at its price.
    #[serde(default)]
    pub batched: bool,
}

/// The built-in models' reply to `prompt`.
fn builtin_answer(
    spec: &ModelSpec,
    prompt: &str,
    judge: Option<&autoeval_reference_model::Judge>,
) -> String {
    use autoeval_reference_model as reference;
    match spec {
        ModelSpec::ReferenceNoisy { rate } => reference::answer_noisy(prompt, *rate, judge),
        ModelSpec::ReferenceChatty { rate } => reference::answer_chatty(prompt, *rate, judge),
        ModelSpec::ReferenceJudgeNoisy { rate } => {
            reference::answer_judge_noisy(prompt, *rate, judge)
        }
        _ => reference::answer(prompt, judge),
    }
}

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
            concurrency: 16,
            adaptive_concurrency: true,
            request_timeout: Duration::from_secs(120),
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

/// Other addresses for the OpenAI and Anthropic APIs (a proxy, a gateway,
/// or a test server), as this machine's environment gives them: never
/// from a run's settings, which travel between machines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaseUrls {
    /// For `openai:` models, from `OPENAI_BASE_URL` (e.g. `https://gateway/v1`).
    pub openai: Option<String>,
    /// For `anthropic:` models, from `ANTHROPIC_BASE_URL`.
    pub anthropic: Option<String>,
}

impl BaseUrls {
    /// The addresses in `OPENAI_BASE_URL` and `ANTHROPIC_BASE_URL`, the
    /// variables the providers' own SDKs read.
    pub fn from_env() -> BaseUrls {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().trim_end_matches('/').to_string())
                .filter(|v| !v.is_empty())
        };
        BaseUrls {
            openai: var("OPENAI_BASE_URL"),
            anthropic: var("ANTHROPIC_BASE_URL"),
        }
    }

    /// The address for `spec`, when another is configured.
    pub fn of(&self, spec: &ModelSpec) -> Option<String> {
        match spec {
            ModelSpec::Openai { .. } => self.openai.clone(),
            ModelSpec::Anthropic { .. } => self.anthropic.clone(),
            _ => None,
        }
    }
}

/// A model behind its backend.
pub struct Backend {
    spec: ModelSpec,
    http: reqwest::Client,
    key: Option<ApiKey>,
    /// Turns of direct calls: the concurrency limit, adaptive or fixed.
    limiter: adaptive::Limiter,
    options: BackendOptions,
    health: Health,
    gate: Arc<dyn RateGate>,
    /// The model's name at its gate: one per provider account and model.
    gate_key: String,
    /// What calls cost so far, for estimating a request's tokens before it is sent.
    history: TokenHistory,
    /// Gathers calls into provider batches, in batch mode.
    batcher: Option<Arc<batch::Batcher>>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("spec", &self.spec.to_string())
            .field("key", &self.key)
            .finish()
    }
}

/// One attempt's failure: how it failed, the provider's reason when it
/// answered with one, and the server's wait if it gave one.
pub(crate) struct Failure {
    status: Option<u16>,
    cause: Cause,
    /// The provider's reason; `None` when no reply came (the connection
    /// failed or timed out), which is always worth trying again.
    reason: Option<Reason>,
    message: String,
    retry_after: Option<Duration>,
}

impl Failure {
    /// A failure without a reply: no connection, no answer in time, a body cut off.
    fn transport(cause: Cause, message: String) -> Failure {
        Failure {
            status: None,
            cause,
            reason: None,
            message,
            retry_after: None,
        }
    }

    /// A reply with a successful status whose body is not the answer expected.
    fn malformed(status: u16, message: String) -> Failure {
        Failure {
            status: Some(status),
            cause: Cause::Other,
            reason: Some(Reason::Malformed),
            message,
            retry_after: None,
        }
    }
}

/// What one attempt got: the text, and the usage when the server reported it.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    /// The model's text; empty when the reply was too long to read.
    text: String,
    /// The usage the server reported (estimated for a reply too long to read).
    usage: Option<Usage>,
    /// The reply passed [`BackendOptions::max_reply_bytes`] and was not read whole.
    too_long: bool,
    /// Why the model stopped, as the provider says it.
    finish_reason: Option<String>,
}

/// The lowest an adaptive concurrency limit falls: one request at a time
/// still makes progress, and a provider that refuses even that halts the
/// backend through its failures, not through its concurrency.
pub const ADAPTIVE_FLOOR: usize = 1;

/// The largest reply read by default: far above any formula's translation,
/// far below what would stall a worker.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 1 << 20;

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
        if let Some(o) = &options.observer {
            o.start(&spec);
            // Batched calls wait for their batch, not for a turn: no limit to tell.
            if !spec.is_builtin() && options.batch.is_none() {
                o.concurrency(&spec, options.concurrency.max(1));
            }
        }
        let gate = options
            .gate
            .clone()
            .unwrap_or_else(|| Arc::new(LocalGate::default()));
        let health = Health::with_patience(options.retry.patience());
        let batcher = match options.batch {
            None => None,
            Some(settings) => Some(Arc::new(batch::Batcher::new(
                &spec,
                settings,
                batch::Connection {
                    http: http.clone(),
                    key: key.clone(),
                    base: base_url_of(&spec, options.base_url.as_deref()),
                    max_reply_bytes: options.max_reply_bytes,
                },
                batch::Books {
                    journal: options
                        .journal
                        .clone()
                        .unwrap_or_else(|| Arc::new(MemoryJournal::default())),
                    spend: options.batch_spend.clone(),
                },
                options.retry,
                health.clone(),
                options.prices.clone(),
            )?)),
        };
        Ok(Backend {
            limiter: adaptive::Limiter::new(
                options.concurrency,
                ADAPTIVE_FLOOR,
                options.adaptive_concurrency,
            ),
            gate_key: gate_key(&spec, options.base_url.as_deref()),
            spec,
            http,
            key,
            options,
            health,
            gate,
            history: TokenHistory::default(),
            batcher,
        })
    }

    /// Why this backend halted, if every attempt so far failed the same way.
    pub fn halt(&self) -> Option<Halt> {
        self.health.halt()
    }

    /// The model this backend calls.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// How calls are gathered into provider batches; `None` when they go directly.
    pub fn batch_settings(&self) -> Option<BatchSettings> {
        self.options.batch.filter(|_| self.batcher.is_some())
    }

    /// Sends `prompt` as one user message for `sample`: the cache answers
    /// only a request for the same sample, never another unit's or round's.
    /// Copies of one request running at once (a task delivered twice) pay
    /// once: the first claims the call, the others wait for its reply.
    pub async fn chat(&self, prompt: &str, sample: &Sample) -> Result<Reply, CallError> {
        let started = Instant::now();
        if self.options.cache.is_none() && self.batcher.is_none() {
            return self.answer(prompt, started).await;
        }
        let key = if prompt.len() <= PARSE_INLINE_BYTES {
            cache_key(&self.spec, prompt, &self.options.params, sample)
        } else {
            // Hashing megabytes takes a while: off the async runtime.
            let (spec, text, params, sample) = (
                self.spec.clone(),
                prompt.to_string(),
                self.options.params.clone(),
                sample.clone(),
            );
            tokio::task::spawn_blocking(move || cache_key(&spec, &text, &params, &sample))
                .await
                .map_err(|e| CallError::Setup(format!("cannot key a request: {e}")))?
        };
        let Some(cache) = &self.options.cache else {
            return self.answer_keyed(prompt, sample, &key, started).await;
        };
        // Fail closed: what may be cached is not paid for again while the
        // cache is away.
        let claim = match claim::cached_or_claimed(cache.as_ref(), &key)
            .await
            .map_err(|e| CallError::Api {
                status: None,
                message: e.to_string(),
                attempts: 0,
            })? {
            claim::Lookup::Cached(hit) => {
                if let Some(o) = &self.options.observer {
                    o.cached(&self.spec);
                }
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
                    usage_estimated: false,
                    too_long: hit.too_long,
                    finish_reason: hit.finish_reason,
                    batched: false,
                });
            }
            claim::Lookup::Claimed(claim) => claim,
        };
        let answered = claim::holding(
            cache.as_ref(),
            &key,
            &claim,
            self.answer_keyed(prompt, sample, &key, started),
        )
        .await;
        if let Ok(reply) = &answered {
            let kept = CachedReply {
                text: reply.text.clone(),
                prompt_tokens: reply.usage.prompt_tokens,
                completion_tokens: reply.usage.completion_tokens,
                too_long: reply.too_long,
                finish_reason: reply.finish_reason.clone(),
            };
            // Paid for: kept even if the cache is away for a while, so that
            // a task delivered again does not pay again.
            if let Err(e) = while_cache_away(|| cache.put(&key, &kept)).await {
                tracing::warn!(error = %e, "a paid reply is not cached; the round keeps it");
            }
        }
        // Stored (or failed): the copies waiting may go on. A release that
        // fails lets the claim expire.
        if let Err(e) = cache.release(&key, &claim).await {
            tracing::debug!(error = %e, "a claim is left to expire");
        }
        answered
    }

    /// Asks the model past the cache: through its batch API in batch mode,
    /// where the call's `key` is its id in the batch, or directly.
    async fn answer_keyed(
        &self,
        prompt: &str,
        sample: &Sample,
        key: &str,
        started: Instant,
    ) -> Result<Reply, CallError> {
        let Some(batcher) = &self.batcher else {
            return self.answer(prompt, started).await;
        };
        let body = request_body(&self.spec, &self.options.params, prompt);
        // Before any reply is seen, a translation is guessed as long as its prompt.
        let prompt_tokens = estimate_tokens(prompt, 0);
        let completion_tokens = match self.history.estimate(prompt).saturating_sub(prompt_tokens) {
            0 => prompt_tokens,
            seen => seen,
        };
        let estimated = Usage {
            prompt_tokens,
            completion_tokens,
        };
        let call = batch::Call {
            custom_id: key.to_string(),
            sample: sample.clone(),
            body,
            estimated_cost: self.options.prices.batch_cost_of(&self.spec, estimated),
            estimated_tokens: estimated.prompt_tokens + estimated.completion_tokens,
        };
        let (answer, attempts) = batcher.call(call).await.inspect_err(|_| {
            if let Some(o) = &self.options.observer {
                o.failed(&self.spec);
            }
        })?;
        self.history.observe(
            prompt,
            answer.usage.map_or(0, |u| u.prompt_tokens),
            answer.usage.map_or(0, |u| u.completion_tokens),
        );
        Ok(self.reply(prompt, answer, attempts, true, started))
    }

    /// Asks the model (or the built-in one), past the cache.
    async fn answer(&self, prompt: &str, started: Instant) -> Result<Reply, CallError> {
        let builtin = if !self.spec.is_builtin() {
            None
        } else if autoeval_reference_model::is_judge_prompt(prompt) {
            // A judge proves: that runs off the async runtime.
            let (spec, prompt, judge) = (
                self.spec.clone(),
                prompt.to_string(),
                self.options.judge.clone(),
            );
            let answered =
                tokio::task::spawn_blocking(move || builtin_answer(&spec, &prompt, judge.as_ref()))
                    .await;
            Some(answered.unwrap_or_else(|e| format!("I could not decide ({e}).")))
        } else {
            Some(builtin_answer(&self.spec, prompt, None))
        };
        let (answer, attempts) = match builtin {
            // The built-in models run here and cost nothing.
            Some(text) => (
                Answer {
                    text,
                    usage: Some(Usage::default()),
                    too_long: false,
                    finish_reason: Some("stop".into()),
                },
                1,
            ),
            None => self.call_with_retries(prompt).await.inspect_err(|_| {
                if let Some(o) = &self.options.observer {
                    o.failed(&self.spec);
                }
            })?,
        };
        Ok(self.reply(prompt, answer, attempts, false, started))
    }

    /// The reply of `answer`, charged at the list price or, when `batched`, the batch price.
    fn reply(
        &self,
        prompt: &str,
        answer: Answer,
        attempts: u32,
        batched: bool,
        started: Instant,
    ) -> Reply {
        let Answer {
            text,
            usage: reported,
            too_long,
            finish_reason,
        } = answer;
        let builtin = builtin_cost(&self.spec);
        let usage_estimated = builtin.is_none() && (reported.is_none() || too_long);
        // A reply without usage is paid for all the same: it is charged by
        // an estimate, marked so, rather than nothing.
        let usage = reported.unwrap_or_else(|| Usage {
            prompt_tokens: estimate_tokens(prompt, 0),
            completion_tokens: estimate_tokens(&text, 0),
        });
        let cost = match builtin {
            Some(zero) => Some(zero),
            None if batched => self.options.prices.batch_cost_of(&self.spec, usage),
            None => self.options.prices.cost_of(&self.spec, usage),
        };
        if let Some(o) = &self.options.observer {
            o.paid(&self.spec, usage, cost);
        }
        Reply {
            cost,
            text,
            usage,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
            attempts,
            cached: false,
            usage_estimated,
            too_long,
            finish_reason,
            batched,
        }
    }

    async fn call_with_retries(&self, prompt: &str) -> Result<(Answer, u32), CallError> {
        let policy = self.options.retry;
        let mut attempt = 0;
        loop {
            // A turn per attempt: a request waiting to be tried again holds
            // none, so that a lowered limit takes hold at once.
            let turn = self
                .limiter
                .turn()
                .await
                .ok_or_else(|| CallError::Setup("the backend was closed".into()))?;
            // Held until this attempt's outcome is known: a probe's ends the halt or keeps it.
            let _probe = match self.health.admit().await {
                health::Admit::Go => None,
                health::Admit::Probe(guard) => Some(guard),
                health::Admit::Refused(halt) => {
                    return Err(CallError::Halted {
                        cause: halt.cause,
                        attempts: attempt,
                    })
                }
            };
            attempt += 1;
            let estimated = self.wait_turn(prompt).await;
            let sent = Instant::now();
            let epoch = self.limiter.epoch();
            let answered = self.attempt(prompt).await;
            self.adapt(&answered, epoch);
            drop(turn);
            match (&answered, estimated) {
                (
                    Ok(Answer {
                        usage: Some(usage), ..
                    }),
                    Some(estimated),
                ) => {
                    self.reconcile(prompt, estimated, *usage).await;
                }
                // A request the provider answered with an error status used no tokens.
                (Err(f), Some(estimated)) if f.status.is_some() => {
                    let refund = -i64::try_from(estimated).unwrap_or(i64::MAX);
                    self.gate
                        .reconcile(&self.gate_key, self.options.limits, refund)
                        .await;
                }
                _ => {}
            }
            if let Some(o) = &self.options.observer {
                let outcome = match &answered {
                    Ok(_) => AttemptOutcome::Ok,
                    Err(f) => observe::outcome_of(&f.cause),
                };
                o.attempt(&self.spec, outcome, sent.elapsed().as_secs_f64());
            }
            let failure = match answered {
                Ok(answer) => {
                    self.health.succeeded();
                    return Ok((answer, attempt));
                }
                Err(f) => f,
            };
            let is_429 = failure.cause == Cause::Status(429);
            let caller = retry::Caller {
                key: self.key.as_ref(),
                key_variable: self.spec.key_variable(),
                what: "",
            };
            let wait = match retry::after_failure(&self.health, &policy, failure, attempt, &caller)
            {
                retry::Next::Retry(wait) => wait,
                retry::Next::Fail(e) => return Err(e),
            };
            if let Some(o) = &self.options.observer {
                o.retry(&self.spec);
            }
            if is_429 {
                // The provider's limit is the fleet's: every caller of this model waits.
                self.gate.back_off(&self.gate_key, wait).await;
                if let Some(o) = &self.options.observer {
                    o.waited(&self.spec, WaitCause::TooManyRequests, wait.as_secs_f64());
                }
            }
            tracing::debug!(attempt, ?wait, "retrying");
            tokio::time::sleep(wait).await;
        }
    }

    /// Tells the concurrency limit how an attempt sent at `epoch` went.
    fn adapt(&self, answered: &Result<Answer, Failure>, epoch: u64) {
        let signal = match answered {
            Ok(_) => adaptive::Signal::Ok,
            Err(f)
                if f.status
                    .is_some_and(|s| s == 429 || (500..600).contains(&s)) =>
            {
                adaptive::Signal::Overloaded
            }
            Err(_) => adaptive::Signal::Neither,
        };
        if let Some(limit) = self.limiter.observe(signal, epoch) {
            tracing::debug!(limit, model = %self.spec, "concurrency adapted");
            if let Some(o) = &self.options.observer {
                o.concurrency(&self.spec, limit);
            }
        }
    }

    /// Requests this backend sends at once now (its adaptive limit, or the fixed one).
    pub fn concurrency(&self) -> usize {
        self.limiter.limit()
    }

    /// Waits until the gate admits this request: its rate limits allow it
    /// and no 429 holds the model. Answers the tokens charged when tokens are limited.
    async fn wait_turn(&self, prompt: &str) -> Option<u64> {
        let limits = self.options.limits;
        let tokens = limits
            .tokens_per_minute
            .map(|_| self.history.estimate(prompt));
        loop {
            let wait = self
                .gate
                .admit(&self.gate_key, limits, tokens.unwrap_or(0))
                .await;
            if wait.is_zero() {
                tracing::trace!(?tokens, "admitted");
                return tokens;
            }
            if let Some(o) = &self.options.observer {
                o.waited(&self.spec, WaitCause::Limit, wait.as_secs_f64());
            }
            // A little jitter, so that callers told the same wait do not all ask at once.
            tokio::time::sleep(wait + Duration::from_millis((jitter() * 5.0) as u64)).await;
        }
    }

    /// Charges the gate the tokens used beyond (or refunds those short of) the estimate.
    async fn reconcile(&self, prompt: &str, estimated: u64, usage: Usage) {
        self.history
            .observe(prompt, usage.prompt_tokens, usage.completion_tokens);
        let used = usage.prompt_tokens + usage.completion_tokens;
        let delta = used as i64 - estimated as i64;
        tracing::trace!(estimated, used, "tokens charged");
        if delta != 0 {
            self.gate
                .reconcile(&self.gate_key, self.options.limits, delta)
                .await;
        }
    }

    /// The request for `prompt`, its JSON body written off the async
    /// runtime when the prompt is long (a prompt carries the model's own
    /// English, which may be megabytes).
    async fn request(&self, prompt: &str) -> reqwest::RequestBuilder {
        let (builder, body) = self.request_parts(prompt);
        let bytes = if prompt.len() <= PARSE_INLINE_BYTES {
            serde_json::to_vec(&body)
        } else {
            tokio::task::spawn_blocking(move || serde_json::to_vec(&body))
                .await
                .unwrap_or_else(|e| Err(serde::ser::Error::custom(e)))
        };
        match bytes {
            Ok(bytes) => builder
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes),
            // A JSON value always writes out; were it not to, the request
            // goes without a body and the server's refusal says so.
            Err(e) => {
                tracing::error!(error = %e, "cannot write a request body");
                builder
            }
        }
    }

    /// The request for `prompt` without its body, and the body.
    fn request_parts(&self, prompt: &str) -> (reqwest::RequestBuilder, Value) {
        let body = request_body(&self.spec, &self.options.params, prompt);
        let base = base_url_of(&self.spec, self.options.base_url.as_deref());
        let base = base.trim_end_matches('/');
        let api = provider::of(&self.spec);
        let r = self.http.post(format!("{base}{}", api.chat_path()));
        let r = api.authorize(r, self.key.as_ref());
        (r, body)
    }

    /// Where requests go, for messages about failures to reach it.
    fn address(&self) -> String {
        address_of(&base_url_of(&self.spec, self.options.base_url.as_deref()))
    }

    /// A transport error in words that name its real cause and the address.
    fn transport_failure(&self, e: reqwest::Error) -> Failure {
        let address = self.address();
        let root = root_cause(&e);
        let (cause, message) = if e.is_timeout() {
            (
                Cause::TimedOut(address.clone()),
                format!(
                    "no answer from {address} within {} s",
                    self.options.request_timeout.as_secs_f64()
                ),
            )
        } else if root.contains("refused") {
            (
                Cause::Refused(address.clone()),
                format!("connection refused to {address}"),
            )
        } else if root.contains("dns error") || root.contains("failed to lookup") {
            (
                Cause::UnknownHost(address.clone()),
                format!("cannot resolve the host of {address}: {root}"),
            )
        } else if e.is_connect() {
            (Cause::Other, format!("cannot connect to {address}: {root}"))
        } else {
            (Cause::Other, format!("request to {address} failed: {root}"))
        };
        Failure::transport(cause, message)
    }

    /// The response body, read chunk by chunk up to the size limit; `None`
    /// past it (the rest is never read).
    async fn read_body(&self, mut response: reqwest::Response) -> Result<Option<Vec<u8>>, Failure> {
        let limit = self.options.max_reply_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(e))?
        {
            if body.len() + chunk.len() > limit {
                return Ok(None);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Some(body))
    }

    async fn attempt(&self, prompt: &str) -> Result<Answer, Failure> {
        let response = self
            .request(prompt)
            .await
            .send()
            .await
            .map_err(|e| self.transport_failure(e))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let Some(body) = self.read_body(response).await? else {
            // Paid for, not read: charged as a reply of the most tokens
            // asked, or, uncapped, of the bytes it had past the limit.
            tracing::warn!(
                limit = self.options.max_reply_bytes,
                "a reply too long to read"
            );
            let unread = estimate_tokens("", self.options.max_reply_bytes as u64);
            let usage = Usage {
                prompt_tokens: estimate_tokens(prompt, 0),
                completion_tokens: self.options.params.max_tokens.map_or(unread, u64::from),
            };
            return Ok(Answer {
                text: String::new(),
                usage: Some(usage),
                too_long: true,
                finish_reason: None,
            });
        };
        if !(200..300).contains(&status) {
            return Err(refusal(
                &self.spec,
                &self.address(),
                status,
                &body,
                retry_after,
            ));
        }
        let spec = self.spec.clone();
        if body.len() <= PARSE_INLINE_BYTES {
            return parse_answer(&spec, status, &body);
        }
        // A long body takes a while to parse: off the async runtime, so
        // heartbeats and health checks are answered meanwhile.
        tokio::task::spawn_blocking(move || parse_answer(&spec, status, &body))
            .await
            .unwrap_or_else(|e| {
                Err(Failure::malformed(
                    status,
                    format!("the reply could not be read: {e}"),
                ))
            })
    }
}

/// The failure of a reply with an error `status`, its reason read by the
/// provider's module from `body`.
pub(crate) fn refusal(
    spec: &ModelSpec,
    address: &str,
    status: u16,
    body: &[u8],
    retry_after: Option<Duration>,
) -> Failure {
    let reason = provider::reason_of(spec, status, body);
    let words = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let head = &body[..body.len().min(1200)];
    let excerpt: String = String::from_utf8_lossy(head).chars().take(300).collect();
    Failure {
        status: Some(status),
        cause: Cause::Status(status),
        reason: Some(reason),
        message: format!("{address} answered HTTP {status} {words}: {excerpt}"),
        retry_after,
    }
}

/// Bodies longer than this are parsed off the async runtime.
const PARSE_INLINE_BYTES: usize = 64 << 10;

/// `host:port` of a base address, for messages about failing to reach it.
pub(crate) fn address_of(base: &str) -> String {
    reqwest::Url::parse(base)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_string();
            Some(match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| base.to_string())
}

/// The answer in a successful reply's `body`, read as `spec`'s provider writes it.
pub(crate) fn parse_answer(spec: &ModelSpec, status: u16, body: &[u8]) -> Result<Answer, Failure> {
    let text = String::from_utf8_lossy(body);
    let malformed = |what: &str| {
        let excerpt: String = text.chars().take(200).collect();
        Failure::malformed(status, format!("malformed response ({what}): {excerpt}"))
    };
    let v: Value = serde_json::from_str(&text).map_err(|_| malformed("not JSON"))?;
    provider::of(spec).read_answer(&v).map_err(malformed)
}

/// The name limits are kept under: the model at its provider (the spec
/// without settings), and the address when another one is configured.
fn gate_key(spec: &ModelSpec, base_url: Option<&str>) -> String {
    match base_url {
        Some(url) => format!("{spec}@{url}"),
        None => spec.to_string(),
    }
}

/// Zero for the built-in models, which run in this process.
fn builtin_cost(spec: &ModelSpec) -> Option<f64> {
    spec.is_builtin().then_some(0.0)
}

/// The innermost error's words: reqwest's own say only "error sending request".
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last: &dyn std::error::Error = e;
    while let Some(next) = last.source() {
        last = next;
    }
    last.to_string().to_lowercase()
}

/// A uniform draw in [0, 1) for backoff jitter; it needs no reproducibility.
pub(crate) fn jitter() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut x = nanos as u64 ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

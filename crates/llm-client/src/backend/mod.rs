//! A model behind its backend: the one call, [`Backend::chat`], over the
//! cache, the built-in models, the provider batch APIs or direct calls.
//! `turns.rs` holds a direct call's turns and retries, `http.rs` one attempt
//! over HTTP.

use crate::secret::Credentials;
use crate::{
    adaptive, batch, claim, estimate_tokens, Answer, BackendOptions, BatchSettings, CachedReply,
    CallError, Halt, LocalGate, MemoryJournal, RateGate, Reply, TokenHistory,
};
pub(crate) mod http;
pub(crate) mod turns;

use crate::claim::while_cache_away;
use crate::health::Health;
use crate::provider::{base_url_of, credentials_of, request_body};
use autoeval_models::{cache_key, Finish, ModelSpec, Sample, Usage};
use http::PARSE_INLINE_BYTES;
use std::sync::Arc;
use std::time::Instant;

/// A model behind its backend.
pub struct Backend {
    pub(crate) spec: ModelSpec,
    pub(crate) http: reqwest::Client,
    /// What requests are authorized or signed with.
    pub(crate) credentials: Credentials,
    /// Turns of direct calls: the concurrency limit, adaptive or fixed.
    pub(crate) limiter: adaptive::Limiter,
    pub(crate) options: BackendOptions,
    pub(crate) health: Health,
    pub(crate) gate: Arc<dyn RateGate>,
    /// The model's name at its gate: one per provider account and model.
    pub(crate) gate_key: String,
    /// What calls cost so far, for estimating a request's tokens before it is sent.
    pub(crate) history: TokenHistory,
    /// Gathers calls into provider batches, in batch mode.
    pub(crate) batcher: Option<Arc<batch::Batcher>>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("spec", &self.spec.to_string())
            .field("credentials", &self.credentials)
            .finish()
    }
}

/// The lowest an adaptive concurrency limit falls: one request at a time
/// still makes progress, and a provider that refuses even that halts the
/// backend through its failures, not through its concurrency.
pub const ADAPTIVE_FLOOR: usize = 1;

/// The largest reply read by default: far above any formula's translation,
/// far below what would stall a worker.
pub const DEFAULT_MAX_REPLY_BYTES: usize = 1 << 20;

impl Backend {
    /// A backend for `spec`; a provider that requires a key needs it.
    pub fn new(spec: ModelSpec, options: BackendOptions) -> Result<Backend, CallError> {
        let credentials = if spec.is_builtin() {
            Credentials::default()
        } else {
            credentials_of(&spec, options.secrets_file.as_deref()).map_err(CallError::Setup)?
        };
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
                    credentials: credentials.clone(),
                    base: base_url_of(&spec, options.base_url.as_deref(), &credentials),
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
            credentials,
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
                    reasoning_cost: (hit.reasoning_tokens > 0).then_some(0.0),
                    usage: hit.usage(),
                    text: hit.text,
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
                reasoning_tokens: reply.usage.reasoning_tokens,
                too_long: reply.too_long,
                finish_reason: reply.finish_reason,
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
    pub(crate) async fn answer_keyed(
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
        let estimated = Usage::new(prompt_tokens, completion_tokens);
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
    pub(crate) async fn answer(&self, prompt: &str, started: Instant) -> Result<Reply, CallError> {
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
                    finish_reason: Some(Finish::Complete),
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
    pub(crate) fn reply(
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
        let usage = reported
            .unwrap_or_else(|| Usage::new(estimate_tokens(prompt, 0), estimate_tokens(&text, 0)));
        let cost = match builtin {
            Some(zero) => Some(zero),
            None if batched => self.options.prices.batch_cost_of(&self.spec, usage),
            None => self.options.prices.cost_of(&self.spec, usage),
        };
        if let Some(o) = &self.options.observer {
            o.paid(&self.spec, usage, cost);
        }
        let reasoning_cost = match builtin {
            _ if usage.reasoning_tokens == 0 => None,
            Some(zero) => Some(zero),
            None => self.options.prices.price_of(&self.spec).map(|p| {
                let price = if batched { p.batched() } else { p };
                price.reasoning_cost(usage)
            }),
        };
        Reply {
            cost,
            reasoning_cost,
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
}

/// The built-in models' reply to `prompt`.
fn builtin_answer(
    spec: &ModelSpec,
    prompt: &str,
    judge: Option<&autoeval_reference_model::Judge>,
) -> String {
    let builtin = spec
        .builtin()
        .unwrap_or(autoeval_models::provider::Builtin::Exact);
    autoeval_reference_model::answer_as(builtin, prompt, judge)
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

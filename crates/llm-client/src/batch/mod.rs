//! Batch mode: a model call waits for a provider batch instead of an HTTP
//! answer, and looks the same to its caller. Calls from many units are
//! gathered into batches (up to a size, for at most a wait), each batch is
//! recorded in the journal before anyone waits for it, one poller per batch
//! follows it to its end and records each request's outcome, and each call
//! then reads its own. A call asks the journal first: a request already
//! recorded (a resumed run, another worker) is polled, never submitted again.

mod api;
mod follow;
mod memory;
mod submit;

pub(crate) use api::Connection;
pub use memory::MemoryJournal;

use crate::claim::while_cache_away;
use crate::health::Health;
use crate::{Answer, CallError};
use api::BatchApi;
use autoeval_models::{
    BatchCall, BatchJournal, BatchOutcome, BatchRecord, BatchSettings, BatchSpend,
    CacheUnavailable, CachedReply, CallState, ModelSpec, PriceTable, RetryPolicy, Sample,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use tokio::sync::{oneshot, watch, Notify};

/// One call to be batched.
pub(crate) struct Call {
    /// Its id in the batch: the call's cache key.
    pub custom_id: String,
    /// The (unit, round, stage) it serves.
    pub sample: Sample,
    /// The request body.
    pub body: Value,
    /// Its cost at batch prices, estimated (USD), when the model is priced.
    pub estimated_cost: Option<f64>,
    /// Its prompt and answer tokens, estimated.
    pub estimated_tokens: u64,
}

/// Where a batcher keeps its batches: the journal, and the run's budget.
pub(crate) struct Books {
    /// Each batch before it is waited for, and each request's outcome.
    pub journal: Arc<dyn BatchJournal>,
    /// Each batch's charge, when a budget is kept.
    pub spend: Option<Arc<dyn BatchSpend>>,
}

/// A call waiting for its batch to be submitted.
struct Pending {
    call: BatchCall,
    body: Value,
    bytes: usize,
    estimated_cost: Option<f64>,
    estimated_tokens: u64,
    submitted: oneshot::Sender<Result<String, CallError>>,
}

/// Calls gathered for the next batch.
#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    bytes: usize,
    /// When the oldest pending call came.
    since: Option<Instant>,
    /// Whether a collector runs.
    collecting: bool,
}

/// What a poller says once its batch ended: `Ok` once the outcomes are in
/// the journal.
type Ended = Option<Result<(), CallError>>;

/// Gathers one model's calls into provider batches and follows them.
pub(crate) struct Batcher {
    api: BatchApi,
    spec: ModelSpec,
    /// For the cost of a batch's results, at batch prices.
    prices: PriceTable,
    /// The spec as the journal names it.
    model: String,
    settings: BatchSettings,
    /// Most bytes of requests in one batch.
    largest_bytes: usize,
    journal: Arc<dyn BatchJournal>,
    /// Where each batch is charged to the run's budget, when one is kept.
    spend: Option<Arc<dyn BatchSpend>>,
    retry: RetryPolicy,
    health: Health,
    queue: Mutex<Queue>,
    queued: Notify,
    /// One poller per batch being followed.
    pollers: Mutex<HashMap<String, watch::Receiver<Ended>>>,
    /// Batches followed to their end by this process: a call that read its
    /// state just before the end was recorded does not follow it again.
    followed: Mutex<HashSet<String>>,
    /// Batches this process submitted, until they end (the journal may have
    /// failed to keep one).
    submitted: Mutex<HashMap<String, BatchRecord>>,
}

/// Unix seconds now.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A journal that stays away past the outage wait: the call fails, and its
/// unit is redone by a rerun, which asks the journal again.
fn journal_away(e: CacheUnavailable) -> CallError {
    CallError::Api {
        status: None,
        message: format!("the batch journal is unavailable: {}", e.0),
        attempts: 0,
    }
}

impl Batcher {
    /// A batcher for `spec` over `conn`; refuses settings past the provider's limits.
    pub(crate) fn new(
        spec: &ModelSpec,
        settings: BatchSettings,
        conn: Connection,
        books: Books,
        retry: RetryPolicy,
        health: Health,
        prices: PriceTable,
    ) -> Result<Batcher, CallError> {
        let Books { journal, spend } = books;
        let Some(limits) = spec.provider().batch_limits() else {
            return Err(CallError::Setup(format!(
                "{spec} has no batch API this tool uses: drop batch=true for it"
            )));
        };
        let (largest, largest_bytes) = (limits.requests, limits.bytes);
        if settings.size > largest {
            return Err(CallError::Setup(format!(
                "{spec}: batch-size {} is past the provider's limit of {largest} requests a batch",
                settings.size
            )));
        }
        Ok(Batcher {
            api: BatchApi::new(spec, conn),
            spec: spec.clone(),
            prices,
            model: spec.to_string(),
            settings,
            largest_bytes,
            journal,
            spend,
            retry,
            health,
            queue: Mutex::default(),
            queued: Notify::new(),
            pollers: Mutex::default(),
            followed: Mutex::default(),
            submitted: Mutex::default(),
        })
    }

    /// Answers `call` through batches: from the journal when its batch
    /// ended, by polling its batch when it was submitted, else in the next
    /// batch; a request that failed in its batch is tried in another, up
    /// to the retry policy's attempts in this call (a rerun of a call that
    /// failed for good tries it again). The answer, and its attempt number.
    pub(crate) async fn call(self: &Arc<Self>, call: Call) -> Result<(Answer, u32), CallError> {
        let mut waited_on: Option<String> = None;
        let mut tried_here = 0;
        loop {
            let state = while_cache_away(|| async {
                self.journal
                    .state(&self.model, &call.custom_id)
                    .await
                    .map_err(|e| CacheUnavailable(e.0))
            })
            .await
            .map_err(journal_away)?;
            let attempt = match state {
                CallState::Ended {
                    attempt,
                    outcome: BatchOutcome::Answered(reply),
                } => return Ok((answer_of(reply), attempt)),
                CallState::Ended {
                    attempt,
                    outcome: BatchOutcome::Failed { message, status },
                } => {
                    // A failure this call saw counts; one a past run left is tried again.
                    if waited_on.is_some() && tried_here >= self.retry.max_attempts.max(1) {
                        return Err(CallError::Api {
                            status,
                            message,
                            attempts: attempt,
                        });
                    }
                    tracing::debug!(attempt, %message, "a batched request failed; trying it in another batch");
                    attempt + 1
                }
                CallState::Submitted { batch, attempt } => {
                    if waited_on.as_deref() == Some(batch.as_str()) {
                        // Its batch ended, yet the journal holds no outcome for it.
                        return Err(CallError::Api {
                            status: None,
                            message: format!(
                                "batch {batch} ended without an outcome for this request"
                            ),
                            attempts: attempt,
                        });
                    }
                    self.wait_for(&batch).await?;
                    waited_on = Some(batch);
                    continue;
                }
                CallState::New => 1,
            };
            if let Some(halt) = self.health.halt() {
                return Err(CallError::Halted {
                    cause: halt.cause,
                    attempts: attempt - 1,
                });
            }
            tried_here += 1;
            let batch = self.submit_in_next_batch(&call, attempt).await?;
            self.wait_for(&batch).await?;
            waited_on = Some(batch);
        }
    }
}

/// What the journal keeps of an answer.
fn cached_of(a: &Answer) -> CachedReply {
    let usage = a.usage.unwrap_or_default();
    CachedReply {
        text: a.text.clone(),
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        too_long: a.too_long,
        finish_reason: a.finish_reason,
    }
}

/// The answer the journal kept.
fn answer_of(r: CachedReply) -> Answer {
    Answer {
        usage: Some(r.usage()),
        text: r.text,
        too_long: r.too_long,
        finish_reason: r.finish_reason,
    }
}

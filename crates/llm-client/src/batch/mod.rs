//! Batch mode: a model call waits for a provider batch instead of an HTTP
//! answer, and looks the same to its caller. Calls from many units are
//! gathered into batches (up to a size, for at most a wait), each batch is
//! recorded in the journal before anyone waits for it, one poller per batch
//! follows it to its end and records each request's outcome, and each call
//! then reads its own. A call asks the journal first: a request already
//! recorded (a resumed run, another worker) is polled, never submitted again.

mod api;
mod memory;

pub(crate) use api::Connection;
pub use memory::MemoryJournal;

use crate::claim::while_cache_away;
use crate::health::Health;
use crate::provider::{BatchResults, BatchState, Submission};
use crate::{Answer, CallError, Failure};
use api::{BatchApi, Missed, Submitted};
use autoeval_models::{
    BatchCall, BatchEnd, BatchJournal, BatchOutcome, BatchRecord, BatchSettings, BatchSpend,
    CacheUnavailable, CachedReply, CallState, ModelSpec, PriceTable, RetryPolicy, Sample,
};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
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

    /// Puts `call` in the next batch; the batch's id once it is submitted and recorded.
    async fn submit_in_next_batch(
        self: &Arc<Self>,
        call: &Call,
        attempt: u32,
    ) -> Result<String, CallError> {
        let (tx, rx) = oneshot::channel();
        let bytes = call.body.to_string().len() + call.custom_id.len() + 96;
        let start_collector = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.pending.push(Pending {
                call: BatchCall {
                    custom_id: call.custom_id.clone(),
                    sample: call.sample.clone(),
                    attempt,
                },
                body: call.body.clone(),
                bytes,
                estimated_cost: call.estimated_cost,
                estimated_tokens: call.estimated_tokens,
                submitted: tx,
            });
            q.bytes += bytes;
            q.since.get_or_insert_with(Instant::now);
            !std::mem::replace(&mut q.collecting, true)
        };
        if start_collector {
            tokio::spawn(collect(Arc::downgrade(self)));
        }
        self.queued.notify_one();
        rx.await.unwrap_or_else(|_| {
            Err(CallError::Setup(
                "the batch collector stopped before submitting".into(),
            ))
        })
    }

    /// The calls of the next batch, once it is full or its oldest call
    /// waited long enough; `None` when nothing waits.
    fn take_due(&self) -> Result<Vec<Pending>, Option<Instant>> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let Some(since) = q.since else {
            q.collecting = false;
            return Err(None);
        };
        let deadline = since + self.settings.wait;
        let full = q.pending.len() >= self.settings.size || q.bytes >= self.largest_bytes;
        if !full && Instant::now() < deadline {
            return Err(Some(deadline));
        }
        let (mut count, mut bytes) = (0, 0);
        for p in &q.pending {
            if count == self.settings.size || (count > 0 && bytes + p.bytes > self.largest_bytes) {
                break;
            }
            count += 1;
            bytes += p.bytes;
        }
        let taken: Vec<Pending> = q.pending.drain(..count).collect();
        q.bytes -= bytes;
        q.since = (!q.pending.is_empty()).then(Instant::now);
        Ok(taken)
    }

    /// Submits `batch` (with retries), records it, and tells each call its batch.
    async fn submit(self: Arc<Self>, batch: Vec<Pending>) {
        let requests: Vec<(String, Value)> = batch
            .iter()
            .map(|p| (p.call.custom_id.clone(), p.body.clone()))
            .collect();
        let submitted = self.submit_once(&requests).await;
        let id = match submitted {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, requests = batch.len(), "a batch could not be submitted");
                for p in batch {
                    let _ = p.submitted.send(Err(e.clone()));
                }
                return;
            }
        };
        let estimated_cost = batch.iter().map(|p| p.estimated_cost).sum::<Option<f64>>();
        let record = BatchRecord {
            id: id.clone(),
            provider: self.api.name().to_string(),
            model: self.model.clone(),
            submitted_at: unix_now(),
            calls: batch.iter().map(|p| p.call.clone()).collect(),
            estimated_cost,
            estimated_tokens: batch.iter().map(|p| p.estimated_tokens).sum(),
        };
        self.submitted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), record.clone());
        let kept = while_cache_away(|| async {
            self.journal
                .submitted(&record)
                .await
                .map_err(|e| CacheUnavailable(e.0))
        })
        .await;
        if let Err(e) = kept {
            // Its calls still wait for it here; a crash now would submit them again.
            tracing::error!(batch = %id, error = %e, "a submitted batch could not be recorded");
        }
        // Paid for from now on, by the estimate until its results say.
        self.charge(&id, record.estimated_cost, record.estimated_tokens)
            .await;
        tracing::info!(batch = %id, requests = record.calls.len(), model = %self.model, "batch submitted");
        for p in batch {
            let _ = p.submitted.send(Ok(id.clone()));
        }
    }

    /// Submits `requests` as one batch, with retries; its id. A retry never
    /// makes a second batch of an uploaded file: the batch a lost reply made
    /// is looked up by its file and followed instead. (A batch submitted
    /// inline carries nothing to find it by, so a retry after a lost reply
    /// may make a second.)
    async fn submit_once(&self, requests: &[(String, Value)]) -> Result<String, CallError> {
        let submission = self.api.submission(requests);
        let marker = match &submission {
            Submission::Inline { marker, .. } => marker.clone(),
            Submission::File { .. } => None,
        };
        let tried = std::sync::atomic::AtomicBool::new(false);
        let file = match self
            .retried("submitting a batch", || {
                let (tried, marker, submission) = (&tried, &marker, &submission);
                async move {
                    // A batch that carries its marker is found by it when
                    // the reply to its submission was lost.
                    if let Some(marker) = marker {
                        if tried.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            if let Some(made) = self.api.made_of(marker).await? {
                                tracing::info!(batch = %made, "a batch whose submission's reply was lost was made: following it");
                                return Ok(Submitted::Batch(made));
                            }
                        }
                    }
                    self.api.submit(submission).await
                }
            })
            .await?
        {
            Submitted::Batch(id) => return Ok(id),
            Submitted::File(file) => file,
        };
        let tried = std::sync::atomic::AtomicBool::new(false);
        self.retried("creating a batch", || {
            let (tried, file) = (&tried, &file);
            async move {
                if tried.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    if let Some(made) = self.api.made_of(file).await? {
                        tracing::info!(batch = %made, "a batch whose creation's reply was lost was made: following it");
                        return Ok(made);
                    }
                }
                self.api.create(file).await
            }
        })
        .await
    }

    /// Waits until batch `id` ended and its outcomes are in the journal.
    async fn wait_for(self: &Arc<Self>, id: &str) -> Result<(), CallError> {
        let mut ended = {
            let mut pollers = self.pollers.lock().unwrap_or_else(|e| e.into_inner());
            let followed = self.followed.lock().unwrap_or_else(|e| e.into_inner());
            if followed.contains(id) {
                // Its outcomes are in the journal: the caller reads them there.
                return Ok(());
            }
            drop(followed);
            pollers
                .entry(id.to_string())
                .or_insert_with(|| {
                    let (tx, rx) = watch::channel(None);
                    tokio::spawn(self.clone().follow(id.to_string(), tx));
                    rx
                })
                .clone()
        };
        loop {
            if let Some(result) = ended.borrow().clone() {
                return result;
            }
            if ended.changed().await.is_err() {
                return Err(CallError::Setup(format!(
                    "the poller of batch {id} stopped"
                )));
            }
        }
    }

    /// Polls batch `id` to its end and records its outcomes; says so on `tx`.
    async fn follow(self: Arc<Self>, id: String, tx: watch::Sender<Ended>) {
        let result = self.follow_to_end(&id).await;
        match &result {
            Err(e) => {
                tracing::warn!(batch = %id, error = %e, "a batch could not be followed to its end")
            }
            Ok(()) => {
                self.followed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id.clone());
            }
        }
        self.pollers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        let _ = tx.send(Some(result));
    }

    async fn follow_to_end(&self, id: &str) -> Result<(), CallError> {
        let (status, results) = loop {
            match self
                .retried("polling a batch", || self.api.poll(id))
                .await?
            {
                BatchState::InFlight => tokio::time::sleep(self.settings.poll).await,
                BatchState::Ended { status, results } => break (status, results),
            }
        };
        let outcomes = self
            .retried("reading a batch's results", || self.api.results(&results))
            .await?;
        let record = self.record_of(id).await;
        let refused = match &results {
            BatchResults::Refused(why) => Some(why.clone()),
            _ => None,
        };
        let mut by_id: HashMap<String, api::Outcome> = outcomes.into_iter().collect();
        let mut end = BatchEnd {
            status: status.clone(),
            ended_at: unix_now(),
            ..BatchEnd::default()
        };
        let mut kept = Vec::new();
        let calls = record
            .as_ref()
            .map(|r| r.calls.as_slice())
            .unwrap_or_default();
        let mut cost = Some(0.0);
        for call in calls {
            let outcome = match by_id.remove(&call.custom_id) {
                Some(Ok(answer)) => {
                    end.succeeded += 1;
                    BatchOutcome::Answered(cached_of(&answer))
                }
                Some(Err(Missed::Expired)) => {
                    end.expired += 1;
                    BatchOutcome::Failed {
                        message: "expired: the batch ended before this request was run".into(),
                        status: None,
                    }
                }
                Some(Err(Missed::Failed(status, message))) => {
                    end.failed += 1;
                    BatchOutcome::Failed { message, status }
                }
                None => {
                    end.failed += 1;
                    BatchOutcome::Failed {
                        message: match &refused {
                            Some(why) => format!("the provider refused batch {id}: {why}"),
                            None => format!("batch {id} ended ({status}) without this request"),
                        },
                        status: None,
                    }
                }
            };
            if let BatchOutcome::Answered(r) = &outcome {
                let usage = r.usage();
                end.tokens += r.prompt_tokens + r.completion_tokens;
                cost = cost
                    .zip(self.prices.batch_cost_of(&self.spec, usage))
                    .map(|(a, b)| a + b);
            }
            kept.push((call.custom_id.clone(), call.attempt, outcome));
        }
        end.cost = cost;
        while_cache_away(|| async {
            self.journal
                .ended(&self.model, id, &end, &kept)
                .await
                .map_err(|e| CacheUnavailable(e.0))
        })
        .await
        .map_err(journal_away)?;
        self.charge(id, end.cost, end.tokens).await;
        self.submitted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        tracing::info!(batch = %id, %status, succeeded = end.succeeded, failed = end.failed, expired = end.expired, "batch ended");
        Ok(())
    }

    /// Charges batch `id` to the run's budget at `usd` (when the model is
    /// priced) and `tokens`, replacing its last charge.
    async fn charge(&self, id: &str, usd: Option<f64>, tokens: u64) {
        let Some(spend) = &self.spend else {
            return;
        };
        let charged = while_cache_away(|| async {
            spend
                .charge(&self.model, id, usd.unwrap_or(0.0), tokens)
                .await
                .map_err(|e| CacheUnavailable(e.0))
        })
        .await;
        if let Err(e) = charged {
            tracing::error!(batch = %id, error = %e, "a batch could not be charged to the run's budget");
        }
    }

    /// The record of batch `id`: this process's copy, or the journal's.
    async fn record_of(&self, id: &str) -> Option<BatchRecord> {
        if let Some(r) = self
            .submitted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
        {
            return Some(r.clone());
        }
        while_cache_away(|| async {
            self.journal
                .record(&self.model, id)
                .await
                .map_err(|e| CacheUnavailable(e.0))
        })
        .await
        .ok()
        .flatten()
    }

    /// Runs `op` until it succeeds, retrying what may pass with backoff up
    /// to the policy's attempts; a failure that halts the backend ends it.
    async fn retried<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, CallError>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, Failure>>,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let sent = std::time::Instant::now();
            let failure = match op().await {
                Ok(v) => {
                    self.health.succeeded(sent);
                    return Ok(v);
                }
                Err(f) => f,
            };
            let caller = crate::retry::Caller {
                credentials: self.api.credentials(),
                key_variable: self.spec.key_variable(),
                what,
            };
            let wait = match crate::retry::after_failure(
                &self.health,
                &self.retry,
                failure,
                attempt,
                &caller,
            ) {
                crate::retry::Next::Retry(wait) => wait,
                crate::retry::Next::Fail(e) => return Err(e),
            };
            tracing::debug!(attempt, ?wait, what, "retrying a batch request");
            tokio::time::sleep(wait).await;
        }
    }
}

/// Gathers calls while any are queued: submits each batch once it is
/// full or its oldest call waited the batch wait.
async fn collect(batcher: Weak<Batcher>) {
    loop {
        let Some(b) = batcher.upgrade() else {
            return;
        };
        match b.take_due() {
            Ok(batch) => {
                tokio::spawn(b.clone().submit(batch));
            }
            Err(None) => return,
            // The wait is bounded by the batch wait, and the collector ends
            // once nothing is queued: holding the batcher here keeps nothing alive for long.
            Err(Some(deadline)) => {
                let notified = b.queued.notified();
                tokio::select! {
                    () = tokio::time::sleep_until(deadline.into()) => {}
                    () = notified => {}
                }
            }
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

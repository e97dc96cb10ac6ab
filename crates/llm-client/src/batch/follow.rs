//! A batch followed to its end: one poller per batch, each request's
//! outcome recorded, the spend charged, and requests to the API retried.

use super::api::{self, Missed};
use super::{cached_of, journal_away, unix_now, Batcher, Ended};
use crate::claim::while_cache_away;
use crate::provider::{BatchResults, BatchState};
use crate::{CallError, Failure};
use autoeval_models::{BatchEnd, BatchOutcome, BatchRecord, CacheUnavailable};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;

impl Batcher {
    /// Waits until batch `id` ended and its outcomes are in the journal.
    pub(super) async fn wait_for(self: &Arc<Self>, id: &str) -> Result<(), CallError> {
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
    pub(super) async fn charge(&self, id: &str, usd: Option<f64>, tokens: u64) {
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
    pub(super) async fn retried<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, CallError>
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

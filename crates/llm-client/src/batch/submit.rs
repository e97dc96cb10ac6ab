//! A batch's submission: calls gathered until the batch is full or its
//! oldest call waited the batch wait, then submitted once and recorded.

use super::api::Submitted;
use super::{unix_now, Batcher, Call, Pending};
use crate::claim::while_cache_away;
use crate::provider::Submission;
use crate::CallError;
use autoeval_models::{BatchCall, BatchRecord, CacheUnavailable};
use serde_json::Value;
use std::sync::{Arc, Weak};
use std::time::Instant;
use tokio::sync::oneshot;

impl Batcher {
    /// Puts `call` in the next batch; the batch's id once it is submitted and recorded.
    pub(super) async fn submit_in_next_batch(
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

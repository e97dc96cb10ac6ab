//! Provider batch APIs, as far as they need no I/O: how calls are batched,
//! what a batch journal keeps so that a crash never pays twice, and the
//! journal's interface (a file in the run directory on one machine, Redis
//! on a fleet).

use crate::interfaces::{CacheFuture, CachedReply};
use crate::Sample;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;

/// The most requests one batch may hold at any provider this product
/// batches with (each provider's own limit may be lower: its module says).
pub const LARGEST_BATCH: usize = 100_000;

/// How one model's calls are gathered into batches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchSettings {
    /// Most requests in one batch.
    pub size: usize,
    /// Longest a request waits for its batch to fill before it is sent.
    pub wait: Duration,
    /// Time between two polls of a batch in flight.
    pub poll: Duration,
}

impl Default for BatchSettings {
    fn default() -> BatchSettings {
        BatchSettings {
            size: 10_000,
            wait: Duration::from_secs(60),
            poll: Duration::from_secs(30),
        }
    }
}

/// One request of a batch: its id at the provider and the call it stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCall {
    /// The request's `custom_id`: the call's cache key, so that the same
    /// call asked again (a resumed run, another worker) finds it.
    pub custom_id: String,
    /// The (unit, round, stage) it serves.
    pub sample: Sample,
    /// Which try of the call this is, from 1.
    pub attempt: u32,
}

/// A batch as submitted: recorded before anyone waits for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// The provider's id of the batch.
    pub id: String,
    /// `openai` or `anthropic` (the API shape it was sent in).
    pub provider: String,
    /// The model spec whose calls it holds.
    pub model: String,
    /// When it was submitted, in seconds since the Unix epoch.
    pub submitted_at: u64,
    /// Its requests.
    pub calls: Vec<BatchCall>,
    /// Its cost at batch prices, estimated when it was sent (USD), when the model is priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cost: Option<f64>,
    /// Its prompt and answer tokens, estimated when it was sent.
    #[serde(default)]
    pub estimated_tokens: u64,
}

/// How a batch ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchEnd {
    /// The provider's last status (`completed`, `expired`, `failed`, `ended`, `cancelled`).
    pub status: String,
    /// Requests answered.
    pub succeeded: u64,
    /// Requests that failed inside the batch.
    pub failed: u64,
    /// Requests the batch never reached before its window closed.
    pub expired: u64,
    /// When it ended, in seconds since the Unix epoch.
    pub ended_at: u64,
    /// Its cost at batch prices as charged from the results (USD), when the model is priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Prompt and answer tokens its answered requests used.
    #[serde(default)]
    pub tokens: u64,
}

/// What became of one request in its batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchOutcome {
    /// Answered.
    Answered(CachedReply),
    /// Failed there (an error status, or the batch expired before it).
    Failed {
        /// Why, as the provider said.
        message: String,
        /// The HTTP status the provider gave the request, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
}

/// Where one call stands in the batches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    /// In no batch: it is to be submitted.
    New,
    /// In batch `batch`, its `attempt`-th try, which has not ended.
    Submitted {
        /// The provider's batch id.
        batch: String,
        /// Which try.
        attempt: u32,
    },
    /// Its `attempt`-th try's batch ended with `outcome`.
    Ended {
        /// Which try.
        attempt: u32,
        /// What it got.
        outcome: BatchOutcome,
    },
}

/// A batch as progress shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchStatus {
    /// The batch as submitted, without its calls.
    pub id: String,
    /// The model spec.
    pub model: String,
    /// When it was submitted (Unix seconds).
    pub submitted_at: u64,
    /// Its requests.
    pub requests: u64,
    /// How it ended; `None` while it is in flight.
    pub end: Option<BatchEnd>,
}

/// The journal cannot be read or written now.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the batch journal is unavailable: {0}")]
pub struct JournalUnavailable(pub String);

/// What a backend in batch mode keeps durably: each batch's provider id and
/// the calls its requests stand for, written before anyone waits for it,
/// and each request's outcome once the batch ended. A resumed run, or
/// another worker, asks it before submitting a call: a recorded request is
/// polled, never submitted again.
pub trait BatchJournal: Send + Sync {
    /// Where the call `custom_id` of `model` stands.
    fn state<'a>(
        &'a self,
        model: &'a str,
        custom_id: &'a str,
    ) -> CacheFuture<'a, Result<CallState, JournalUnavailable>>;
    /// Records a batch just submitted, before it is waited for.
    fn submitted<'a>(
        &'a self,
        record: &'a BatchRecord,
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>>;
    /// The record of batch `id` of `model`, as submitted.
    fn record<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
    ) -> CacheFuture<'a, Result<Option<BatchRecord>, JournalUnavailable>>;
    /// Records how batch `id` of `model` ended and each request's outcome
    /// (`custom_id`, attempt, outcome).
    fn ended<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
        end: &'a BatchEnd,
        outcomes: &'a [(String, u32, BatchOutcome)],
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>>;
    /// Every batch it holds, for progress and status.
    fn batches(&self) -> CacheFuture<'_, Result<Vec<BatchStatus>, JournalUnavailable>>;
}

/// Where batch spending is charged to a run's budget: a batch is charged
/// its estimate when it is submitted and charged again, with what its
/// results cost, when it ends. Each charge replaces the batch's last one,
/// so a charge made twice counts once.
pub trait BatchSpend: Send + Sync {
    /// Batch `id` of `model` now stands at `usd` and `tokens`.
    fn charge<'a>(
        &'a self,
        model: &'a str,
        id: &'a str,
        usd: f64,
        tokens: u64,
    ) -> CacheFuture<'a, Result<(), JournalUnavailable>>;
}

/// A journal's contents in memory, with its rules: what a file journal
/// replays and keeps, and what the in-memory journal is.
#[derive(Debug, Default)]
pub struct JournalBook {
    calls: HashMap<(String, String), CallState>,
    batches: HashMap<(String, String), (BatchRecord, Option<BatchEnd>)>,
}

impl JournalBook {
    /// Where call `custom_id` of `model` stands.
    pub fn state(&self, model: &str, custom_id: &str) -> CallState {
        self.calls
            .get(&(model.to_string(), custom_id.to_string()))
            .cloned()
            .unwrap_or(CallState::New)
    }

    /// A batch was submitted: each of its calls now waits for it.
    pub fn submitted(&mut self, record: BatchRecord) {
        for call in &record.calls {
            self.calls.insert(
                (record.model.clone(), call.custom_id.clone()),
                CallState::Submitted {
                    batch: record.id.clone(),
                    attempt: call.attempt,
                },
            );
        }
        self.batches
            .insert((record.model.clone(), record.id.clone()), (record, None));
    }

    /// The record of batch `id`.
    pub fn record(&self, model: &str, id: &str) -> Option<BatchRecord> {
        self.batches
            .get(&(model.to_string(), id.to_string()))
            .map(|(r, _)| r.clone())
    }

    /// Batch `id` ended: each call still waiting for it takes its outcome
    /// (a call since sent in a later batch keeps waiting for that one).
    pub fn ended(
        &mut self,
        model: &str,
        id: &str,
        end: &BatchEnd,
        outcomes: &[(String, u32, BatchOutcome)],
    ) {
        for (custom_id, attempt, outcome) in outcomes {
            let key = (model.to_string(), custom_id.clone());
            let waiting = matches!(
                self.calls.get(&key),
                Some(CallState::Submitted { batch, .. }) if batch == id
            ) || !self.calls.contains_key(&key);
            if waiting {
                self.calls.insert(
                    key,
                    CallState::Ended {
                        attempt: *attempt,
                        outcome: outcome.clone(),
                    },
                );
            }
        }
        if let Some((_, e)) = self.batches.get_mut(&(model.to_string(), id.to_string())) {
            *e = Some(end.clone());
        }
    }

    /// Every batch, oldest first.
    pub fn batches(&self) -> Vec<BatchStatus> {
        let mut all: Vec<BatchStatus> = self
            .batches
            .values()
            .map(|(r, end)| BatchStatus {
                id: r.id.clone(),
                model: r.model.clone(),
                submitted_at: r.submitted_at,
                requests: r.calls.len() as u64,
                end: end.clone(),
            })
            .collect();
        all.sort_by(|a, b| (a.submitted_at, &a.id).cmp(&(b.submitted_at, &b.id)));
        all
    }
}

/// Batches by state, for progress lines and `status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCounts {
    /// Batches submitted, ended or not.
    pub submitted: u64,
    /// Of them, still in flight.
    pub in_progress: u64,
    /// Ended with every request answered.
    pub completed: u64,
    /// Ended with some request failed or expired.
    pub failed: u64,
    /// Requests in the batches submitted.
    pub requests: u64,
    /// Requests in batches in flight.
    pub requests_in_progress: u64,
    /// Requests answered.
    pub requests_succeeded: u64,
    /// Requests failed or expired.
    pub requests_failed: u64,
    /// When the oldest batch in flight was submitted (Unix seconds).
    pub oldest_in_progress: Option<u64>,
}

impl BatchCounts {
    /// The counts of `batches`.
    pub fn of(batches: &[BatchStatus]) -> BatchCounts {
        let mut c = BatchCounts::default();
        for b in batches {
            c.submitted += 1;
            c.requests += b.requests;
            match &b.end {
                None => {
                    c.in_progress += 1;
                    c.requests_in_progress += b.requests;
                    c.oldest_in_progress = Some(
                        c.oldest_in_progress
                            .map_or(b.submitted_at, |o| o.min(b.submitted_at)),
                    );
                }
                Some(end) => {
                    if end.failed + end.expired == 0 && end.succeeded > 0 {
                        c.completed += 1;
                    } else {
                        c.failed += 1;
                    }
                    c.requests_succeeded += end.succeeded;
                    c.requests_failed += end.failed + end.expired;
                }
            }
        }
        c
    }

    /// One line: `batches: 3 submitted (1,200 requests), 1 in progress (400,
    /// oldest 2m 10s), 2 completed, 0 failed`; `None` when there are none.
    pub fn line(&self, now: u64) -> Option<String> {
        if self.submitted == 0 {
            return None;
        }
        let oldest = self
            .oldest_in_progress
            .map(|t| format!(", oldest {}", age(now.saturating_sub(t))))
            .unwrap_or_default();
        Some(format!(
            "batches: {} submitted ({} requests), {} in progress ({} requests{oldest}), {} completed, {} with failures ({} requests answered, {} failed or expired)",
            self.submitted,
            self.requests,
            self.in_progress,
            self.requests_in_progress,
            self.completed,
            self.failed,
            self.requests_succeeded,
            self.requests_failed,
        ))
    }
}

/// `45s`, `2m 10s`, `3h 05m`.
fn age(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(requests: u64, at: u64, end: Option<(u64, u64, u64)>) -> BatchStatus {
        BatchStatus {
            id: format!("b{at}"),
            model: "m".into(),
            submitted_at: at,
            requests,
            end: end.map(|(succeeded, failed, expired)| BatchEnd {
                status: "completed".into(),
                succeeded,
                failed,
                expired,
                ended_at: at + 1,
                cost: None,
                tokens: 0,
            }),
        }
    }

    #[test]
    fn counts_split_batches_by_state_and_name_the_oldest_in_flight() {
        let c = BatchCounts::of(&[
            status(10, 100, None),
            status(20, 50, None),
            status(30, 10, Some((30, 0, 0))),
            status(40, 20, Some((36, 3, 1))),
        ]);
        assert_eq!(
            (c.submitted, c.in_progress, c.completed, c.failed),
            (4, 2, 1, 1)
        );
        assert_eq!((c.requests, c.requests_in_progress), (100, 30));
        assert_eq!((c.requests_succeeded, c.requests_failed), (66, 4));
        assert_eq!(c.oldest_in_progress, Some(50));
        let line = c.line(180).unwrap();
        assert!(line.contains("oldest 2m 10s"), "{line}");
        assert!(BatchCounts::default().line(0).is_none());
    }
}

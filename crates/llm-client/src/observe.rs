//! What a backend tells an observer about its calls, for metrics: each
//! attempt's outcome and time, retries, cache hits, what was paid, and
//! calls that failed for good.

use crate::health::Cause;
use autoeval_models::{ModelSpec, Usage};

/// How one attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// A usable answer.
    Ok,
    /// HTTP 429.
    RateLimited,
    /// HTTP 5xx.
    ServerError,
    /// Another HTTP status (a refused request, a bad key).
    ClientError,
    /// No answer within the request time limit.
    Timeout,
    /// Nothing listens there, or the host does not resolve.
    Unreachable,
    /// A dropped connection or a malformed body.
    Other,
}

impl AttemptOutcome {
    /// Every outcome, for metrics that list them all from the start.
    pub const ALL: [AttemptOutcome; 7] = [
        AttemptOutcome::Ok,
        AttemptOutcome::RateLimited,
        AttemptOutcome::ServerError,
        AttemptOutcome::ClientError,
        AttemptOutcome::Timeout,
        AttemptOutcome::Unreachable,
        AttemptOutcome::Other,
    ];

    /// The outcome's name in metrics.
    pub fn name(self) -> &'static str {
        match self {
            AttemptOutcome::Ok => "ok",
            AttemptOutcome::RateLimited => "rate_limited",
            AttemptOutcome::ServerError => "server_error",
            AttemptOutcome::ClientError => "client_error",
            AttemptOutcome::Timeout => "timeout",
            AttemptOutcome::Unreachable => "unreachable",
            AttemptOutcome::Other => "other",
        }
    }

    /// The outcome of a failed attempt.
    pub(crate) fn of_failure(cause: &Cause) -> AttemptOutcome {
        match cause {
            Cause::Status(429) => AttemptOutcome::RateLimited,
            Cause::Status(s) if *s >= 500 => AttemptOutcome::ServerError,
            Cause::Status(_) => AttemptOutcome::ClientError,
            Cause::TimedOut(_) => AttemptOutcome::Timeout,
            Cause::Refused(_) | Cause::UnknownHost(_) => AttemptOutcome::Unreachable,
            Cause::Other => AttemptOutcome::Other,
        }
    }
}

/// Told what a backend's calls do; called on the calling task, so it must be cheap.
pub trait CallObserver: Send + Sync {
    /// A backend for `spec` was made (metrics can start its counters at zero).
    fn start(&self, _spec: &ModelSpec) {}
    /// One HTTP attempt ended after `seconds`.
    fn attempt(&self, spec: &ModelSpec, outcome: AttemptOutcome, seconds: f64);
    /// A failed attempt is tried again.
    fn retry(&self, spec: &ModelSpec);
    /// The cache answered; nothing was sent.
    fn cached(&self, spec: &ModelSpec);
    /// A call was answered and paid `usage` at `cost` USD (when the price is known).
    fn paid(&self, spec: &ModelSpec, usage: Usage, cost: Option<f64>);
    /// A call failed for good.
    fn failed(&self, spec: &ModelSpec);
    /// A request waited `seconds` for its turn under the model's rate limit or a 429's backoff.
    fn waited(&self, _spec: &ModelSpec, _seconds: f64) {}
}

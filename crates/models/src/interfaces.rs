//! What a backend is given from outside: a cache of replies (on disk for one
//! machine, in Redis for a fleet) and an observer of its calls (metrics).

use crate::{Finish, ModelSpec, Usage};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// A boxed future, so the cache can sit behind `dyn`.
pub type CacheFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stored reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedReply {
    /// The reply's text.
    pub text: String,
    /// Prompt tokens it cost.
    pub prompt_tokens: u64,
    /// Completion tokens it cost.
    pub completion_tokens: u64,
    /// Of them, tokens spent thinking.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// The reply passed the size limit and was not kept.
    #[serde(default)]
    pub too_long: bool,
    /// Why the model stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<Finish>,
}

impl CachedReply {
    /// The tokens it cost.
    pub fn usage(&self) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            reasoning_tokens: self.reasoning_tokens,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The cache cannot be asked now (its server is away): a call that needs it
/// waits rather than pay for what may be cached.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the reply cache is unreachable: {0}")]
pub struct CacheUnavailable(pub String);

/// One caller's claim on a request's call: while it is held, other copies
/// of the request wait for its reply instead of paying for their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallClaim(pub String);

/// Where replies are kept between runs, keyed by [`crate::cache_key`].
pub trait ResponseCache: Send + Sync {
    /// A claim no other caller holds, to ask for a call with.
    fn new_claim(&self) -> CallClaim {
        CallClaim::default()
    }
    /// Claims the call for `key` as `claim`, for `ttl`: true when `claim`
    /// holds it, newly or already (a try whose answer was lost may have
    /// landed), false when another caller holds it. A cache only one caller
    /// uses grants every claim.
    fn claim<'a>(
        &'a self,
        _key: &'a str,
        _claim: &'a CallClaim,
        _ttl: Duration,
    ) -> CacheFuture<'a, Result<bool, CacheUnavailable>> {
        Box::pin(async { Ok(true) })
    }
    /// Keeps `claim` for another `ttl` while its call goes on.
    fn renew<'a>(
        &'a self,
        _key: &'a str,
        _claim: &'a CallClaim,
        _ttl: Duration,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(async { Ok(()) })
    }
    /// Gives `claim` up (its reply is stored, or the call failed).
    fn release<'a>(
        &'a self,
        _key: &'a str,
        _claim: &'a CallClaim,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>> {
        Box::pin(async { Ok(()) })
    }
    /// The stored reply for `key`; an unreadable entry is a miss.
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> CacheFuture<'a, Result<Option<CachedReply>, CacheUnavailable>>;
    /// Stores a reply.
    fn put<'a>(
        &'a self,
        key: &'a str,
        reply: &'a CachedReply,
    ) -> CacheFuture<'a, Result<(), CacheUnavailable>>;
}

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
    /// A request waits `seconds` for its turn under the model's rate limit or a 429's backoff.
    fn waited(&self, _spec: &ModelSpec, _cause: crate::WaitCause, _seconds: f64) {}
    /// The backend now sends at most `limit` requests at once (it adapted, or started).
    fn concurrency(&self, _spec: &ModelSpec, _limit: usize) {}
}

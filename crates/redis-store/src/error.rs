//! What can go wrong with the fleet's state in Redis.

use thiserror::Error;

/// Redis failed or holds something unreadable.
#[derive(Debug, Error)]
pub enum StoreError {
    /// Redis cannot be reached or refused a command.
    #[error("redis: {what}: {source}")]
    Redis {
        /// The operation.
        what: String,
        /// Why.
        source: redis::RedisError,
    },
    /// Redis is not there at the address given.
    #[error("cannot reach Redis at {url} ({detail}); start it, or point --redis (or AUTOEVAL_REDIS) at it")]
    Unreachable {
        /// Where, without a password.
        url: String,
        /// Why, in one line.
        detail: String,
    },
    /// A stored value is not what this build writes.
    #[error("redis holds an unreadable {what}: {detail}")]
    Corrupt {
        /// Which value.
        what: String,
        /// Why.
        detail: String,
    },
}

pub(crate) fn redis_err(what: impl Into<String>) -> impl FnOnce(redis::RedisError) -> StoreError {
    let what = what.into();
    move |source| StoreError::Redis { what, source }
}

//! Broker operations bounded in time: a connection that stopped answering
//! is an error, never a hang.

use crate::error::{amqp, BrokerError};
use std::time::Duration;

/// How long one operation over a broker connection (a settle, a declare,
/// opening a channel or the connection itself) may take: a frame or two
/// over a healthy connection, far less than this.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// How long closing a channel or connection is waited for; closing is a
/// courtesy (the broker gives back what a lost connection held anyway).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// `op`, named `what`, bounded by [`OPERATION_TIMEOUT`].
pub(crate) async fn bounded<T>(
    what: impl Into<String>,
    op: impl std::future::Future<Output = Result<T, lapin::Error>>,
) -> Result<T, BrokerError> {
    match tokio::time::timeout(OPERATION_TIMEOUT, op).await {
        Ok(done) => done.map_err(amqp(what)),
        Err(_) => Err(BrokerError::TimedOut {
            what: what.into(),
            seconds: OPERATION_TIMEOUT.as_secs(),
        }),
    }
}

/// A lapin operation bounded by [`OPERATION_TIMEOUT`].
pub(crate) trait Bounded<T>:
    std::future::Future<Output = Result<T, lapin::Error>> + Sized
{
    /// This operation, named `what`, given up on after [`OPERATION_TIMEOUT`].
    fn bounded(
        self,
        what: impl Into<String>,
    ) -> impl std::future::Future<Output = Result<T, BrokerError>> {
        bounded(what, self)
    }
}

impl<T, F: std::future::Future<Output = Result<T, lapin::Error>>> Bounded<T> for F {}

/// Closes what `close` closes, waiting at most [`CLOSE_TIMEOUT`]; errors are moot.
pub(crate) async fn close_quietly(
    close: impl std::future::Future<Output = Result<(), lapin::Error>>,
) {
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, close).await;
}

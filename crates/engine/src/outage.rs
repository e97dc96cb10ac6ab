//! A store that is away for a moment costs no delivery attempt: the
//! delivery is held while its store operation is tried again, and given
//! back only when the outage outlasts [`OUTAGE_HOLD`] or the loop stops.

use crate::transport::StoreError;
use crate::Shutdown;
use std::future::Future;
use std::time::{Duration, Instant};

/// How long a delivery is held through a store outage before it is given
/// back: well under the broker's consumer timeout.
pub const OUTAGE_HOLD: Duration = Duration::from_secs(60);

/// The longest pause between two tries.
const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// Runs `op` until it succeeds, fails for good, the store has been
/// unreachable for `hold`, or `shutdown`; the last answer is returned, with
/// whether a try failed before it (a write may then have landed unseen).
pub(crate) async fn through_outage<T, F, Fut>(
    shutdown: &Shutdown,
    hold: Duration,
    op: F,
) -> (Result<T, StoreError>, bool)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    retry_transient(hold, || shutdown.is_signalled(), op).await
}

/// Runs `op` until it succeeds, fails for good or the store has been
/// unreachable for `hold`, for work that holds no delivery of its own (a
/// budget read or charge made inside a task): the last answer is returned.
pub async fn while_store_away<T, F, Fut>(hold: Duration, op: F) -> Result<T, StoreError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    retry_transient(hold, || false, op).await.0
}

async fn retry_transient<T, F, Fut>(
    hold: Duration,
    stopped: impl Fn() -> bool,
    mut op: F,
) -> (Result<T, StoreError>, bool)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    let started = Instant::now();
    let mut pause = Duration::from_millis(50);
    let mut failed = false;
    loop {
        match op().await {
            Err(e) if e.transient && started.elapsed() < hold && !stopped() => {
                if !failed {
                    tracing::warn!(error = %e, "the store is away; waiting until it is back");
                }
                failed = true;
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            answer => return (answer, failed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ShutdownHandle;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn a_store_away_for_a_moment_is_waited_for_and_a_fatal_error_is_not() {
        let stop = ShutdownHandle::new();
        let tries = AtomicU32::new(0);
        let (answer, failed) = through_outage(&stop.subscribe(), OUTAGE_HOLD, || async {
            match tries.fetch_add(1, Ordering::SeqCst) {
                0..=2 => Err(StoreError::transient("connection refused")),
                n => Ok(n),
            }
        })
        .await;
        assert_eq!((answer.unwrap(), failed), (3, true));
        let tries = AtomicU32::new(0);
        let (answer, _) = through_outage(&stop.subscribe(), OUTAGE_HOLD, || async {
            tries.fetch_add(1, Ordering::SeqCst);
            Err::<(), _>(StoreError::fatal("corrupt"))
        })
        .await;
        assert!(answer.is_err());
        assert_eq!(
            tries.load(Ordering::SeqCst),
            1,
            "a fatal error is not tried again"
        );
    }

    #[tokio::test]
    async fn an_outage_past_the_hold_or_a_shutdown_gives_the_delivery_back() {
        let stop = ShutdownHandle::new();
        let (answer, failed) = through_outage(&stop.subscribe(), Duration::ZERO, || async {
            Err::<(), _>(StoreError::transient("connection refused"))
        })
        .await;
        assert!(answer.is_err() && !failed);
        stop.signal();
        let (answer, _) = through_outage(&stop.subscribe(), OUTAGE_HOLD, || async {
            Err::<(), _>(StoreError::transient("connection refused"))
        })
        .await;
        assert!(answer.is_err());
    }
}

//! One call per request however many copies of it run at once: the cache
//! answers what it holds, one copy claims the call and the others wait for
//! its reply; a claim whose holder died expires and is taken over.

use autoeval_models::{CacheUnavailable, CachedReply, CallClaim, ResponseCache};
use std::future::Future;
use std::time::{Duration, Instant};

/// How long a call waits for a cache that is away before it fails.
pub const CACHE_OUTAGE_WAIT: Duration = Duration::from_secs(60);

/// How long a claim lasts unless renewed; its holder renews it every third
/// of this, so a copy waits at most this long after the holder died.
pub const CLAIM_TTL: Duration = Duration::from_secs(30);

/// The longest pause of a copy waiting for another's reply.
const LONGEST_WAIT_PAUSE: Duration = Duration::from_secs(1);

/// Runs `op` until the cache answers, for at most [`CACHE_OUTAGE_WAIT`].
pub(crate) async fn while_cache_away<T, F, Fut>(mut op: F) -> Result<T, CacheUnavailable>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, CacheUnavailable>>,
{
    let started = Instant::now();
    let mut pause = Duration::from_millis(50);
    loop {
        match op().await {
            Err(e) if started.elapsed() < CACHE_OUTAGE_WAIT => {
                if pause == Duration::from_millis(50) {
                    tracing::warn!(error = %e, "waiting for the reply cache");
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            answer => return answer,
        }
    }
}

/// What the cache said of a request.
pub(crate) enum Lookup {
    /// It holds the reply.
    Cached(CachedReply),
    /// The caller holds the call.
    Claimed(CallClaim),
}

/// The cached reply to `key`, or the claim on its call, waiting while
/// another caller holds the claim.
pub(crate) async fn cached_or_claimed(
    cache: &dyn ResponseCache,
    key: &str,
) -> Result<Lookup, CacheUnavailable> {
    let mut pause = Duration::from_millis(50);
    let mut waited = false;
    // One claim for every try: a try that landed unseen is this caller's.
    let mine = cache.new_claim();
    loop {
        if let Some(hit) = while_cache_away(|| cache.get(key)).await? {
            return Ok(Lookup::Cached(hit));
        }
        if while_cache_away(|| cache.claim(key, &mine, CLAIM_TTL)).await? {
            let claim = mine;
            // A holder may have stored its reply and let go between the two
            // questions: asked again, so that it is not paid for twice.
            if let Some(hit) = while_cache_away(|| cache.get(key)).await? {
                let _ = cache.release(key, &claim).await;
                return Ok(Lookup::Cached(hit));
            }
            return Ok(Lookup::Claimed(claim));
        }
        if !waited {
            tracing::debug!(
                key,
                "another copy of this request is calling the model; waiting for its reply"
            );
            waited = true;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_WAIT_PAUSE);
    }
}

/// Runs `call` while keeping `claim` on `key`.
pub(crate) async fn holding<T>(
    cache: &dyn ResponseCache,
    key: &str,
    claim: &CallClaim,
    call: impl Future<Output = T>,
) -> T {
    let renew = async {
        loop {
            tokio::time::sleep(CLAIM_TTL / 3).await;
            if let Err(e) = cache.renew(key, claim, CLAIM_TTL).await {
                tracing::debug!(error = %e, "a claim could not be renewed");
            }
        }
    };
    tokio::select! {
        answered = call => answered,
        () = renew => unreachable!("renewing never ends"),
    }
}

//! Adaptive concurrency for direct calls: additive increase while calls
//! succeed, multiplicative decrease when the provider answers 429 or 5xx,
//! between a floor and the configured ceiling (as TCP's congestion window
//! does, and for the same reason: the provider's limit is unknown and moves).
//!
//! Requests take permits of a semaphore that holds the current limit. A
//! decrease forgets the permits that are free and owes the rest: permits
//! given back while a debt stands are forgotten instead. Only a failure of
//! a request sent after the last decrease decreases again, so one burst of
//! 429s answered to requests already in flight counts once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::sync::{Semaphore, SemaphorePermit};

/// What the limit is multiplied by on a 429 or 5xx. Mild, so that against
/// a hard limit the sawtooth stays close to it (from 90% up to just past it).
const DECREASE: f64 = 0.9;

/// The concurrency of one backend's direct calls.
pub(crate) struct Limiter {
    permits: Semaphore,
    state: Mutex<State>,
    /// Bumped by every decrease: a request remembers the one it was sent under.
    epoch: AtomicU64,
    adaptive: bool,
    floor: usize,
    ceiling: usize,
}

struct State {
    /// Requests allowed at once now.
    limit: usize,
    /// Permits to forget as they come back, from a decrease.
    debt: usize,
    /// Successes since the limit last grew, toward the next step.
    credit: usize,
}

/// A request's turn, and the limit's epoch when it was taken.
pub(crate) struct Turn<'a> {
    limiter: &'a Limiter,
    permit: Option<SemaphorePermit<'a>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.permit.take() {
            self.limiter.give_back(p);
        }
    }
}

/// How an attempt went, as concurrency sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Answered.
    Ok,
    /// 429 or a 5xx: the provider is past what it takes.
    Overloaded,
    /// Anything else: says nothing about load.
    Neither,
}

impl Limiter {
    /// `ceiling` requests at once; with `adaptive`, the limit moves between
    /// `floor` and `ceiling`, starting at the ceiling.
    pub(crate) fn new(ceiling: usize, floor: usize, adaptive: bool) -> Limiter {
        let ceiling = ceiling.max(1);
        Limiter {
            permits: Semaphore::new(ceiling),
            state: Mutex::new(State {
                limit: ceiling,
                debt: 0,
                credit: 0,
            }),
            epoch: AtomicU64::new(0),
            adaptive,
            floor: floor.clamp(1, ceiling),
            ceiling,
        }
    }

    /// Waits for a turn; `None` once the limiter is closed.
    pub(crate) async fn turn(&self) -> Option<Turn<'_>> {
        let permit = self.permits.acquire().await.ok()?;
        Some(Turn {
            limiter: self,
            permit: Some(permit),
        })
    }

    /// The current epoch, to hand back with the attempt's signal.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The limit now.
    pub(crate) fn limit(&self) -> usize {
        self.lock().limit
    }

    /// An attempt sent at `epoch` ended with `signal`; the limit after it,
    /// when it changed.
    pub(crate) fn observe(&self, signal: Signal, epoch: u64) -> Option<usize> {
        if !self.adaptive {
            return None;
        }
        let mut s = self.lock();
        match signal {
            Signal::Neither => None,
            Signal::Ok => {
                s.credit += 1;
                // One more request at once per limit's worth of successes.
                if s.credit < s.limit || s.limit >= self.ceiling {
                    return None;
                }
                s.credit = 0;
                s.limit += 1;
                if s.debt > 0 {
                    s.debt -= 1;
                } else {
                    self.permits.add_permits(1);
                }
                Some(s.limit)
            }
            Signal::Overloaded => {
                // Answered to a request sent before the last decrease: already counted.
                if self
                    .epoch
                    .compare_exchange(epoch, epoch + 1, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    return None;
                }
                let lower = ((s.limit as f64 * DECREASE) as usize).max(self.floor);
                let cut = s.limit.saturating_sub(lower);
                if cut == 0 {
                    return None;
                }
                s.limit = lower;
                s.credit = 0;
                let forgotten = self.permits.forget_permits(cut);
                s.debt += cut - forgotten;
                Some(s.limit)
            }
        }
    }

    fn give_back(&self, permit: SemaphorePermit<'_>) {
        let mut s = self.lock();
        if s.debt > 0 {
            s.debt -= 1;
            permit.forget();
        }
        // Otherwise dropping it returns it to the semaphore.
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests that may start now: free permits.
    fn free(l: &Limiter) -> usize {
        l.permits.available_permits()
    }

    #[tokio::test]
    async fn the_limit_falls_by_a_tenth_on_overload_and_grows_by_one_per_limit_of_successes() {
        let l = Limiter::new(20, 2, true);
        assert_eq!(l.limit(), 20);
        let held: Vec<Turn> = futures_util::future::join_all((0..20).map(|_| l.turn()))
            .await
            .into_iter()
            .map(Option::unwrap)
            .collect();
        let e = l.epoch();
        assert_eq!(l.observe(Signal::Overloaded, e), Some(18));
        // A second 429 of the same burst counts for nothing.
        assert_eq!(l.observe(Signal::Overloaded, e), None);
        drop(held);
        // Two of the twenty permits given back were owed: eighteen are free.
        assert_eq!(free(&l), 18);
        for _ in 0..17 {
            assert_eq!(l.observe(Signal::Ok, l.epoch()), None);
        }
        assert_eq!(l.observe(Signal::Ok, l.epoch()), Some(19));
        assert_eq!(free(&l), 19);
        // Never past the ceiling, never under the floor.
        for _ in 0..1000 {
            l.observe(Signal::Ok, l.epoch());
        }
        assert_eq!(l.limit(), 20);
        for _ in 0..100 {
            l.observe(Signal::Overloaded, l.epoch());
        }
        assert_eq!((l.limit(), free(&l)), (2, 2));
        assert_eq!(l.observe(Signal::Neither, l.epoch()), None);
    }

    #[tokio::test]
    async fn a_fixed_limiter_never_moves() {
        let l = Limiter::new(8, 1, false);
        assert_eq!(l.observe(Signal::Overloaded, l.epoch()), None);
        assert_eq!((l.limit(), free(&l)), (8, 8));
    }
}

//! Rate limits a provider sets per model, in requests and tokens a minute,
//! kept by a generic cell rate algorithm (GCRA). A gate is shared: by every
//! backend of one process ([`LocalGate`]), or by every worker of a fleet
//! through Redis. A request is admitted only when the limits allow it at
//! that moment, and is told otherwise how long to wait before asking again:
//! admission at send time sees every correction made so far, where a place
//! reserved seconds ahead would be priced with an estimate already known to
//! be wrong. A 429 holds every request to that model until the provider's
//! Retry-After has passed.

use crate::interfaces::CacheFuture;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A model's limits; `None` is no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Requests a minute.
    pub requests_per_minute: Option<u32>,
    /// Prompt plus completion tokens a minute.
    pub tokens_per_minute: Option<u64>,
}

impl RateLimits {
    /// True when neither limit is set.
    pub fn is_unlimited(&self) -> bool {
        self.requests_per_minute.is_none() && self.tokens_per_minute.is_none()
    }

    /// Milliseconds per request and the burst it may run ahead by, or zeros for no limit.
    pub fn request_cell(&self) -> Cell {
        Cell::per_minute(self.requests_per_minute.map(u64::from))
    }

    /// Milliseconds per token and the burst it may run ahead by, or zeros for no limit.
    pub fn token_cell(&self) -> Cell {
        Cell::per_minute(self.tokens_per_minute)
    }
}

/// One GCRA limit: each unit of cost takes `interval_ms`; the sender may run
/// up to `tolerance_ms` ahead of that schedule (one second's worth of the limit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cell {
    /// Time one unit of cost takes, in ms; 0 for no limit.
    pub interval_ms: f64,
    /// How far ahead of schedule a burst may go, in ms.
    pub tolerance_ms: f64,
}

impl Cell {
    /// The cell of a per-minute limit; a limit of `None` (or 0) lets everything through.
    pub fn per_minute(limit: Option<u64>) -> Cell {
        match limit {
            Some(n) if n > 0 => {
                let interval_ms = 60_000.0 / n as f64;
                Cell {
                    interval_ms,
                    // A second's worth, at least one unit.
                    tolerance_ms: interval_ms * (n as f64 / 60.0).max(1.0),
                }
            }
            _ => Cell::default(),
        }
    }

    /// True when this cell limits anything.
    pub fn limits(&self) -> bool {
        self.interval_ms > 0.0
    }

    /// Asks to send `cost` units at `now`, never before `floor` (a shared
    /// backoff), given the theoretical arrival time `tat`: `Ok` with the new
    /// arrival time when it may go now, `Err` with the ms to wait before
    /// asking again otherwise. A request dearer than the burst goes once the
    /// schedule has caught up with now, rather than waiting for a credit it
    /// can never have.
    pub fn admit(&self, tat: f64, now: f64, floor: f64, cost: f64) -> Result<f64, f64> {
        let start = tat.max(now).max(floor);
        let new_tat = start + self.interval_ms * cost;
        let allowed_at = (new_tat - self.tolerance_ms).min(start).max(floor);
        if allowed_at > now {
            Err(allowed_at - now)
        } else {
            Ok(new_tat)
        }
    }

    /// Corrects a reservation by `delta` units (negative refunds), never
    /// moving the schedule behind `now`.
    pub fn charge(&self, tat: f64, now: f64, delta: f64) -> f64 {
        (tat.max(now) + self.interval_ms * delta).max(now)
    }
}

/// Where a backend's requests are admitted; shared by everything that calls the same model.
pub trait RateGate: Send + Sync {
    /// Admits one request of an estimated `tokens` to the model `key` now
    /// (zero), or answers how long to wait before asking again.
    fn admit<'a>(
        &'a self,
        key: &'a str,
        limits: RateLimits,
        tokens: u64,
    ) -> CacheFuture<'a, Duration>;
    /// Charges the difference between the tokens used and those estimated at admission.
    fn reconcile<'a>(&'a self, key: &'a str, limits: RateLimits, delta: i64)
        -> CacheFuture<'a, ()>;
    /// Holds every request to `key` for `wait` (the provider said 429).
    fn back_off<'a>(&'a self, key: &'a str, wait: Duration) -> CacheFuture<'a, ()>;
    /// How much longer requests to `key` are held, if they are.
    fn held<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Duration>;
}

/// The schedules of one model.
#[derive(Default)]
struct Schedule {
    requests_tat: f64,
    tokens_tat: f64,
    hold_until: f64,
}

/// A gate for one process: every backend made with it shares its schedules.
pub struct LocalGate {
    epoch: Instant,
    models: Mutex<HashMap<String, Schedule>>,
}

impl Default for LocalGate {
    fn default() -> LocalGate {
        LocalGate {
            epoch: Instant::now(),
            models: Mutex::default(),
        }
    }
}

impl LocalGate {
    fn now_ms(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64() * 1e3
    }

    fn with<T>(&self, key: &str, f: impl FnOnce(&mut Schedule, f64) -> T) -> T {
        let now = self.now_ms();
        let mut models = self.models.lock().unwrap_or_else(|e| e.into_inner());
        f(models.entry(key.to_string()).or_default(), now)
    }
}

impl RateGate for LocalGate {
    fn admit<'a>(
        &'a self,
        key: &'a str,
        limits: RateLimits,
        tokens: u64,
    ) -> CacheFuture<'a, Duration> {
        let wait = self.with(key, |s, now| {
            let (r, t) = (limits.request_cell(), limits.token_cell());
            let requests = if r.limits() {
                r.admit(s.requests_tat, now, s.hold_until, 1.0)
            } else {
                Ok(s.requests_tat)
            };
            let tokens = if t.limits() {
                t.admit(s.tokens_tat, now, s.hold_until, tokens as f64)
            } else {
                Ok(s.tokens_tat)
            };
            match (requests, tokens) {
                (Ok(r), Ok(t)) if s.hold_until <= now => {
                    (s.requests_tat, s.tokens_tat) = (r, t);
                    0.0
                }
                (r, t) => [r.err(), t.err(), Some(s.hold_until - now)]
                    .into_iter()
                    .flatten()
                    .fold(0.0, f64::max),
            }
        });
        Box::pin(async move { millis(wait) })
    }

    fn reconcile<'a>(
        &'a self,
        key: &'a str,
        limits: RateLimits,
        delta: i64,
    ) -> CacheFuture<'a, ()> {
        let t = limits.token_cell();
        if t.limits() {
            self.with(key, |s, now| {
                s.tokens_tat = t.charge(s.tokens_tat, now, delta as f64)
            });
        }
        Box::pin(async {})
    }

    fn back_off<'a>(&'a self, key: &'a str, wait: Duration) -> CacheFuture<'a, ()> {
        self.with(key, |s, now| {
            s.hold_until = s.hold_until.max(now + wait.as_secs_f64() * 1e3)
        });
        Box::pin(async {})
    }

    fn held<'a>(&'a self, key: &'a str) -> CacheFuture<'a, Duration> {
        let left = self.with(key, |s, now| (s.hold_until - now).max(0.0));
        Box::pin(async move { millis(left) })
    }
}

/// A wait of `ms` milliseconds, whatever the number: never negative, never
/// past what a `Duration` holds.
fn millis(ms: f64) -> Duration {
    Duration::try_from_secs_f64(ms.max(0.0) / 1e3).unwrap_or(Duration::MAX)
}

/// Tokens a prompt will likely cost before the provider says: about four
/// characters a token, plus the completion tokens seen on average so far.
pub fn estimate_tokens(prompt: &str, mean_completion: u64) -> u64 {
    (prompt.chars().count() as u64).div_ceil(4) + mean_completion
}

/// What a model's calls have cost so far, to estimate the next before the
/// provider says: the closer the estimate, the less a reservation has to be
/// corrected after the request has gone, and the closer the limit is kept.
#[derive(Default)]
pub struct TokenHistory {
    /// Sum of the four-characters-a-token guesses of answered prompts.
    guessed: AtomicU64,
    /// Sum of the prompt tokens the provider reported for them.
    prompt: AtomicU64,
    /// Sum of completion tokens reported.
    completion: AtomicU64,
    /// Calls that reported usage.
    calls: AtomicU64,
}

impl TokenHistory {
    /// The tokens `prompt` will likely cost, prompt and completion.
    pub fn estimate(&self, prompt: &str) -> u64 {
        let guess = estimate_tokens(prompt, 0);
        let calls = self.calls.load(Ordering::Relaxed);
        if calls == 0 {
            return guess;
        }
        let (guessed, reported) = (
            self.guessed.load(Ordering::Relaxed),
            self.prompt.load(Ordering::Relaxed),
        );
        // This provider's tokens per guessed token, as seen so far.
        let scaled = (guess as f64 * reported as f64 / guessed.max(1) as f64).ceil() as u64;
        scaled + self.completion.load(Ordering::Relaxed) / calls
    }

    /// Learns from what the provider reported for `prompt`.
    pub fn observe(&self, prompt: &str, prompt_tokens: u64, completion_tokens: u64) {
        self.guessed
            .fetch_add(estimate_tokens(prompt, 0), Ordering::Relaxed);
        self.prompt.fetch_add(prompt_tokens, Ordering::Relaxed);
        self.completion
            .fetch_add(completion_tokens, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `n` requests as fast as the cell lets them, on a simulated
    /// clock, and returns the send times in ms.
    fn schedule(cell: Cell, n: usize, cost: f64) -> Vec<f64> {
        let (mut tat, mut now, mut sent) = (0.0, 0.0, Vec::new());
        while sent.len() < n {
            match cell.admit(tat, now, 0.0, cost) {
                Ok(next) => {
                    tat = next;
                    sent.push(now);
                }
                Err(wait) => now += wait,
            }
        }
        sent
    }

    /// The most sends in any window of `width` ms.
    fn busiest(sent: &[f64], width: f64) -> usize {
        (0..sent.len())
            .map(|i| {
                sent[i..]
                    .iter()
                    .take_while(|t| **t < sent[i] + width)
                    .count()
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn a_per_minute_limit_lets_through_the_limit_plus_one_seconds_burst() {
        let cell = Cell::per_minute(Some(600));
        let sent = schedule(cell, 2_000, 1.0);
        // 600 a minute plus at most the 10 of a second's burst.
        let most = busiest(&sent, 60_000.0);
        assert!((600..=610).contains(&most), "{most}");
        // The 2,000th goes at 1,990 × 100 ms: the limit's own pace after the burst.
        assert!((sent[1_999] - 199_000.0).abs() < 1e-6, "{}", sent[1_999]);
    }

    #[test]
    fn a_request_dearer_than_the_burst_goes_once_the_schedule_caught_up() {
        let cell = Cell::per_minute(Some(6_000)); // 100 tokens a second of burst
        let tat = cell
            .admit(0.0, 0.0, 0.0, 1_000.0)
            .expect("admitted at once");
        // The next waits for the first's 10 s, less the second's burst, plus its own 10 ms.
        let wait = cell.admit(tat, 0.0, 0.0, 1.0).expect_err("told to wait");
        assert!((wait - 9_010.0).abs() < 1e-6, "{wait}");
        // Refused, it took nothing: asked again when told, it goes.
        assert!(cell.admit(tat, 9_010.0, 0.0, 1.0).is_ok());
    }

    #[test]
    fn refunds_never_move_the_schedule_behind_now() {
        let cell = Cell::per_minute(Some(60));
        assert_eq!(cell.charge(5_000.0, 1_000.0, -100.0), 1_000.0);
        assert_eq!(cell.charge(5_000.0, 1_000.0, 2.0), 7_000.0);
    }

    #[test]
    fn a_backoff_holds_everything_until_it_ends() {
        let gate = LocalGate::default();
        let limits = RateLimits::default();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            assert_eq!(gate.admit("m", limits, 10).await, Duration::ZERO);
            gate.back_off("m", Duration::from_secs(30)).await;
            let wait = gate.admit("m", limits, 10).await;
            assert!(wait > Duration::from_secs(29), "{wait:?}");
            assert!(gate.held("m").await > Duration::from_secs(29));
            // Another model is not held.
            assert_eq!(gate.admit("other", limits, 10).await, Duration::ZERO);
        });
    }

    #[test]
    fn no_limit_is_no_wait() {
        let cell = Cell::per_minute(None);
        assert!(!cell.limits());
        assert_eq!(RateLimits::default().request_cell(), Cell::default());
        assert!(RateLimits::default().is_unlimited());
        assert_eq!(estimate_tokens("abcdefgh", 5), 7);
    }

    #[test]
    fn estimates_learn_the_providers_tokens_per_character() {
        let history = TokenHistory::default();
        let prompt = "x".repeat(400); // guessed at 100 tokens
        assert_eq!(history.estimate(&prompt), 100);
        // The provider counts 60 prompt and 30 completion tokens for it.
        history.observe(&prompt, 60, 30);
        history.observe(&prompt, 60, 50);
        assert_eq!(history.estimate(&prompt), 60 + 40);
        assert_eq!(history.estimate(&"x".repeat(800)), 120 + 40);
    }
}

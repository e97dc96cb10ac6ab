//! Which models' requests wait right now under a rate limit, and why, so
//! that a run's progress line and `status` can name a wait instead of
//! showing a rate of zero.

use crate::interfaces::{AttemptOutcome, CallObserver};
use crate::{ModelSpec, Usage};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why a request waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WaitCause {
    /// Its turn under the model's own limits (requests or tokens per minute).
    Limit,
    /// The provider answered 429: every request to the model holds back.
    TooManyRequests,
}

impl WaitCause {
    /// The cause's name as stored.
    pub fn name(self) -> &'static str {
        match self {
            WaitCause::Limit => "limit",
            WaitCause::TooManyRequests => "429",
        }
    }

    /// The cause of a stored name.
    pub fn from_name(name: &str) -> Option<WaitCause> {
        match name {
            "limit" => Some(WaitCause::Limit),
            "429" => Some(WaitCause::TooManyRequests),
            _ => None,
        }
    }

    /// What the wait is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            WaitCause::Limit => "its requests- or tokens-per-minute limit spaces the requests",
            WaitCause::TooManyRequests => "the provider answered 429, too many requests",
        }
    }
}

/// One model's wait, as the progress line names it.
#[derive(Clone, Debug, PartialEq)]
pub struct RateWait {
    /// The model spec.
    pub model: String,
    /// Why its requests wait.
    pub cause: WaitCause,
    /// How much longer the longest of them waits.
    pub remaining: Duration,
}

impl std::fmt::Display for RateWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rate-limited: {} waits {:.0} s more ({})",
            self.model,
            self.remaining.as_secs_f64().ceil(),
            self.cause.describe()
        )
    }
}

/// The waits of one process's backends, as they start; a wait that has
/// run out is gone.
#[derive(Default)]
pub struct Waits {
    until: Mutex<BTreeMap<(String, WaitCause), Instant>>,
    /// Each model's concurrency limit now, as its backend last said.
    limits: Mutex<BTreeMap<String, usize>>,
}

impl Waits {
    /// A request to `model` waits `wait` for `cause`.
    pub fn note(&self, model: &str, cause: WaitCause, wait: Duration) {
        let until = Instant::now() + wait;
        if let Ok(mut all) = self.until.lock() {
            let at = all.entry((model.to_string(), cause)).or_insert(until);
            *at = (*at).max(until);
        }
    }

    /// Each model's concurrency limit now (requests at once), by spec.
    pub fn concurrency(&self) -> BTreeMap<String, usize> {
        self.limits.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The waits still running, longest first.
    pub fn current(&self) -> Vec<RateWait> {
        let now = Instant::now();
        let Ok(mut all) = self.until.lock() else {
            return Vec::new();
        };
        all.retain(|_, until| *until > now);
        let mut waits: Vec<RateWait> = all
            .iter()
            .map(|((model, cause), until)| RateWait {
                model: model.clone(),
                cause: *cause,
                remaining: *until - now,
            })
            .collect();
        waits.sort_by_key(|w| std::cmp::Reverse(w.remaining));
        waits
    }
}

/// The waits, joined for one line; empty when nothing waits. A model held
/// back by a 429 waits at its gate too: only the 429 is named.
pub fn describe_waits(waits: &[RateWait]) -> String {
    let held: Vec<&str> = waits
        .iter()
        .filter(|w| w.cause == WaitCause::TooManyRequests)
        .map(|w| w.model.as_str())
        .collect();
    waits
        .iter()
        .filter(|w| w.cause == WaitCause::TooManyRequests || !held.contains(&w.model.as_str()))
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl CallObserver for Waits {
    fn attempt(&self, _spec: &ModelSpec, _outcome: AttemptOutcome, _seconds: f64) {}
    fn retry(&self, _spec: &ModelSpec) {}
    fn cached(&self, _spec: &ModelSpec) {}
    fn paid(&self, _spec: &ModelSpec, _usage: Usage, _cost: Option<f64>) {}
    fn failed(&self, _spec: &ModelSpec) {}
    fn waited(&self, spec: &ModelSpec, cause: WaitCause, seconds: f64) {
        self.note(
            &spec.to_string(),
            cause,
            Duration::from_secs_f64(seconds.max(0.0)),
        );
    }
    fn concurrency(&self, spec: &ModelSpec, limit: usize) {
        if let Ok(mut all) = self.limits.lock() {
            all.insert(spec.to_string(), limit);
        }
    }
}

/// Several observers told the same.
pub struct Observers(pub Vec<std::sync::Arc<dyn CallObserver>>);

impl CallObserver for Observers {
    fn start(&self, spec: &ModelSpec) {
        self.0.iter().for_each(|o| o.start(spec));
    }
    fn attempt(&self, spec: &ModelSpec, outcome: AttemptOutcome, seconds: f64) {
        self.0
            .iter()
            .for_each(|o| o.attempt(spec, outcome, seconds));
    }
    fn retry(&self, spec: &ModelSpec) {
        self.0.iter().for_each(|o| o.retry(spec));
    }
    fn cached(&self, spec: &ModelSpec) {
        self.0.iter().for_each(|o| o.cached(spec));
    }
    fn paid(&self, spec: &ModelSpec, usage: Usage, cost: Option<f64>) {
        self.0.iter().for_each(|o| o.paid(spec, usage, cost));
    }
    fn failed(&self, spec: &ModelSpec) {
        self.0.iter().for_each(|o| o.failed(spec));
    }
    fn waited(&self, spec: &ModelSpec, cause: WaitCause, seconds: f64) {
        self.0.iter().for_each(|o| o.waited(spec, cause, seconds));
    }
    fn concurrency(&self, spec: &ModelSpec, limit: usize) {
        self.0.iter().for_each(|o| o.concurrency(spec, limit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_named_until_it_runs_out_and_the_longest_comes_first() {
        let waits = Waits::default();
        waits.note("m", WaitCause::Limit, Duration::from_secs(3));
        waits.note("m", WaitCause::Limit, Duration::from_secs(1));
        waits.note("n", WaitCause::TooManyRequests, Duration::from_secs(30));
        waits.note("gone", WaitCause::Limit, Duration::ZERO);
        let now = waits.current();
        assert_eq!(now.len(), 2, "{now:?}");
        assert_eq!(now[0].model, "n");
        assert!(
            now[1].remaining > Duration::from_secs(2),
            "the longer wait stands"
        );
        let line = describe_waits(&now);
        assert!(
            line.starts_with("rate-limited: n waits 30 s more (the provider answered 429"),
            "{line}"
        );
        // A model a 429 holds back is named once, for the 429.
        waits.note("n", WaitCause::Limit, Duration::from_secs(30));
        let line = describe_waits(&waits.current());
        assert_eq!(line.matches("rate-limited: n ").count(), 1, "{line}");
        assert!(line.contains("rate-limited: m "), "{line}");
    }
}

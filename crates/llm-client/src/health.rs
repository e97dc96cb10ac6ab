//! Failing fast: a backend whose every attempt so far failed the same way
//! (nothing listening, a wrong key, an unknown model) is misconfigured, and
//! retrying it for hours helps nobody. After [`FAIL_FAST_ATTEMPTS`] such
//! attempts with no success in between, the backend halts and says why.
//!
//! A halt lasts as long as its cause: every [`PROBE_EVERY`] one call is let
//! through as a probe (the others wait for it), and a probe that is answered
//! ends the halt.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Identical failed attempts, with no success yet, that halt a backend.
pub const FAIL_FAST_ATTEMPTS: u32 = 8;

/// How long a halted backend refuses calls before it tries one again.
pub const PROBE_EVERY: Duration = Duration::from_secs(10);

/// What a failed attempt says about the setup: two attempts failed "the
/// same way" when their causes are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Nothing listens at the address.
    Refused(String),
    /// The host name does not resolve.
    UnknownHost(String),
    /// No answer within the request time limit.
    TimedOut(String),
    /// The server answered with this HTTP status.
    Status(u16),
    /// Anything else (a dropped connection, a malformed body).
    Other,
}

impl Cause {
    /// What to do about it, for the one line that stops the run.
    pub fn fix(&self, key_variable: Option<&str>) -> String {
        match self {
            Cause::Refused(_) => "start the server, or correct the URL in the model spec".into(),
            Cause::UnknownHost(_) => "correct the host name in the model spec's URL".into(),
            Cause::TimedOut(_) => {
                "check that the server is up, or raise --request-timeout-s".into()
            }
            Cause::Status(401) | Cause::Status(403) => format!(
                "set a valid API key{}",
                key_variable.map(|v| format!(" in {v} (environment or --secrets file)")).unwrap_or_default()
            ),
            Cause::Status(404) => {
                "check the model name and the base URL (the server knows no such model or path)".into()
            }
            Cause::Status(400) | Cause::Status(422) => {
                "the server refuses the request's shape: check the model's settings (a reasoning model needs reasoning=true; extra fields must be ones it knows)".into()
            }
            Cause::Status(_) | Cause::Other => "check the server's log".into(),
        }
    }

    /// Whether this cause may halt the run: rate limiting (429) shows a
    /// working server, so it never does.
    fn counts(&self) -> bool {
        !matches!(self, Cause::Status(429))
    }
}

/// Why a backend halted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    /// The failure every attempt had, in words.
    pub cause: String,
    /// What to do about it.
    pub fix: String,
    /// Attempts that failed this way.
    pub attempts: u32,
}

#[derive(Default)]
struct State {
    succeeded: bool,
    streak: Option<(Cause, u32)>,
    halt: Option<Halt>,
    /// When a halted backend may try a call again.
    next_probe: Option<Instant>,
    /// Whether a probe is under way.
    probing: bool,
}

impl State {
    /// Halted, with no probe under way nor due.
    fn refusing(&self, now: Instant) -> bool {
        self.halt.is_some() && !self.probing && self.next_probe.is_some_and(|t| now < t)
    }
}

/// Whether a call may go out.
#[derive(Debug)]
pub enum Admit {
    /// It may (the backend is not halted).
    Go,
    /// It may, as the probe of a halted backend: its outcome ends the halt or keeps it.
    Probe(ProbeGuard),
    /// It may not: why the backend halted.
    Refused(Halt),
}

/// A probe under way; dropped without an outcome (its call was cancelled),
/// it lets the next caller probe.
#[derive(Debug)]
pub struct ProbeGuard {
    state: std::sync::Arc<Mutex<State>>,
}

impl Drop for ProbeGuard {
    fn drop(&mut self) {
        if let Ok(mut s) = self.state.lock() {
            s.probing = false;
        }
    }
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("halt", &self.halt)
            .field("probing", &self.probing)
            .finish_non_exhaustive()
    }
}

/// A backend's record of how its attempts went; clones share it.
#[derive(Default, Clone)]
pub struct Health {
    state: std::sync::Arc<Mutex<State>>,
}

impl Health {
    /// Whether a call may go out now; while a probe is under way, waits for its outcome.
    pub async fn admit(&self) -> Admit {
        loop {
            {
                let Ok(mut s) = self.state.lock() else {
                    return Admit::Go;
                };
                let Some(halt) = s.halt.clone() else {
                    return Admit::Go;
                };
                let now = Instant::now();
                if !s.probing {
                    if s.refusing(now) {
                        return Admit::Refused(halt);
                    }
                    s.probing = true;
                    return Admit::Probe(ProbeGuard {
                        state: self.state.clone(),
                    });
                }
            }
            // A probe is one call: its outcome is near.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// An attempt succeeded: a halt ends, and from now on the backend never halts.
    pub fn succeeded(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.succeeded = true;
            s.streak = None;
            s.halt = None;
            s.next_probe = None;
        }
    }

    /// An attempt failed with `cause`, described as `text`; true when this
    /// failure halts the backend.
    pub fn failed(&self, cause: Cause, text: &str, fix: impl FnOnce(&Cause) -> String) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.halt.is_some() {
            // A probe failed: the halt stands until the next one.
            s.next_probe = Some(Instant::now() + PROBE_EVERY);
            return true;
        }
        if s.succeeded {
            return false;
        }
        if !cause.counts() {
            s.streak = None;
            return false;
        }
        let n = match &s.streak {
            Some((c, n)) if *c == cause => n + 1,
            _ => 1,
        };
        if n >= FAIL_FAST_ATTEMPTS {
            s.halt = Some(Halt {
                cause: text.to_string(),
                fix: fix(&cause),
                attempts: n,
            });
            s.next_probe = Some(Instant::now() + PROBE_EVERY);
        }
        s.streak = Some((cause, n));
        s.halt.is_some()
    }

    /// Why the backend halted, while it refuses calls: not while a probe
    /// is under way or due (a task then goes ahead and waits for it).
    pub fn halt(&self) -> Option<Halt> {
        let s = self.state.lock().ok()?;
        s.refusing(Instant::now()).then(|| s.halt.clone()).flatten()
    }

    /// Lets the next call probe at once, however recently the last one failed.
    #[cfg(test)]
    fn probe_now(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.next_probe = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(h: &Health, c: Cause) -> bool {
        h.failed(c, "boom", |_| "fix it".into())
    }

    #[test]
    fn the_same_failure_again_and_again_halts_a_backend_that_never_worked() {
        let h = Health::default();
        for _ in 1..FAIL_FAST_ATTEMPTS {
            assert!(!fail(&h, Cause::Status(401)));
        }
        assert!(fail(&h, Cause::Status(401)));
        let halt = h.halt().unwrap();
        assert_eq!(
            (halt.attempts, halt.fix.as_str()),
            (FAIL_FAST_ATTEMPTS, "fix it")
        );
    }

    #[tokio::test]
    async fn a_halted_backend_refuses_until_a_probe_is_due_and_a_probe_answered_ends_the_halt() {
        let h = Health::default();
        for _ in 0..FAIL_FAST_ATTEMPTS {
            fail(&h, Cause::Refused("a".into()));
        }
        assert!(h.halt().is_some());
        assert!(matches!(h.admit().await, Admit::Refused(_)));
        h.probe_now();
        assert!(h.halt().is_none(), "a probe is due");
        let Admit::Probe(guard) = h.admit().await else {
            panic!("the first caller probes");
        };
        // The probe fails: the halt stands, and nobody probes until the next is due.
        assert!(fail(&h, Cause::Refused("a".into())));
        drop(guard);
        assert!(matches!(h.admit().await, Admit::Refused(_)));
        h.probe_now();
        let Admit::Probe(guard) = h.admit().await else {
            panic!("a probe is due again");
        };
        // Meanwhile another caller waits for the probe's outcome.
        let waiting = tokio::spawn({
            let state = h.state.clone();
            async move { Health { state }.admit().await }
        });
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "a caller waits while a probe is under way"
        );
        h.succeeded();
        drop(guard);
        assert!(matches!(waiting.await.unwrap(), Admit::Go));
        assert!(h.halt().is_none());
    }

    #[test]
    fn a_success_a_rate_limit_or_a_different_failure_resets_the_count() {
        let h = Health::default();
        for _ in 1..FAIL_FAST_ATTEMPTS {
            fail(&h, Cause::Status(500));
        }
        fail(&h, Cause::Status(429));
        assert!(!fail(&h, Cause::Status(500)));
        for _ in 1..FAIL_FAST_ATTEMPTS {
            fail(&h, Cause::Refused("a".into()));
        }
        assert!(!fail(&h, Cause::Refused("b".into())));
        h.succeeded();
        for _ in 0..3 * FAIL_FAST_ATTEMPTS {
            assert!(!fail(&h, Cause::Refused("b".into())));
        }
        assert!(h.halt().is_none());
    }
}

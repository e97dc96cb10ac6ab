//! When to stop calling: a backend stops (halts) at once when the provider
//! refuses in a way every request would repeat (a spent quota, a wrong key,
//! an unknown model, a wait past the retry policy's longest); after
//! [`FAIL_FAST_ATTEMPTS`] identical failures when it never worked, or when
//! no connection could be made that many times in a row (nothing listening,
//! a host that does not resolve: a server down, from the start or mid-run);
//! and when it has answered
//! nothing but "later" for longer than the retry policy's patience (a
//! provider that rate-limits or is overloaded for good). Retrying any of
//! these unit by unit for hours helps nobody.
//!
//! A halt lasts as long as its cause: every [`PROBE_EVERY`] one call is let
//! through as a probe (the others wait for it), and a probe that is answered
//! ends the halt.

use crate::provider::{Class, Reason};
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
    /// What to do about a transport failure, for the one line that stops
    /// the run; a refusal's fix comes from its [`Reason`].
    pub fn fix(&self) -> String {
        match self {
            Cause::Refused(_) => "start the server, or correct the URL in the model spec".into(),
            Cause::UnknownHost(_) => "correct the host name in the model spec's URL".into(),
            Cause::TimedOut(_) => {
                "check that the server is up, or raise --request-timeout-s".into()
            }
            Cause::Status(_) | Cause::Other => "check the server's log".into(),
        }
    }

    /// Whether this cause counts toward the fail-fast streak: rate limiting
    /// (429) shows a working server, so it never does (the patience does).
    fn counts(&self) -> bool {
        !matches!(self, Cause::Status(429))
    }

    /// Whether no connection was made: nothing reached a server, so the
    /// failure is the backend's (it is down or misnamed), never a unit's.
    pub fn unreached(&self) -> bool {
        matches!(self, Cause::Refused(_) | Cause::UnknownHost(_))
    }
}

/// How a backend came to halt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HaltKind {
    /// Its every attempt failed the same way, and none ever succeeded.
    Repeated,
    /// The provider refused for a reason every request would repeat.
    Refused(Reason),
    /// It answered nothing but "later" for this many seconds.
    Unanswered(u64),
}

/// Why a backend halted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Halt {
    /// The failure that halted it, in words.
    pub cause: String,
    /// What to do about it.
    pub fix: String,
    /// Attempts that failed this way.
    pub attempts: u32,
    /// How it came to halt.
    pub kind: HaltKind,
}

impl Halt {
    /// The one line that stops a run, naming `who` was called.
    pub fn line(&self, who: &str) -> String {
        match &self.kind {
            HaltKind::Repeated => format!(
                "stopped after {} attempts to reach {who} failed the same way: {}; {}",
                self.attempts, self.cause, self.fix
            ),
            HaltKind::Refused(reason) => format!(
                "stopped at once: {who} refused ({}): {}; {}",
                reason.name(),
                self.cause,
                self.fix
            ),
            HaltKind::Unanswered(secs) => format!(
                "stopped after {secs} s in which {who} answered nothing but \"later\" (the retry policy's patience): {}; {}",
                self.cause, self.fix
            ),
        }
    }
}

/// One failed attempt, as the halt logic sees it.
#[derive(Clone, Debug)]
pub struct Failed<'a> {
    /// How it failed, to tell two failures apart.
    pub cause: Cause,
    /// What it means for the backend.
    pub class: Class,
    /// The provider's reason, when it answered with one.
    pub reason: Option<Reason>,
    /// Its words, with any key removed.
    pub text: &'a str,
    /// What to do about it.
    pub fix: String,
}

struct State {
    succeeded: bool,
    streak: Option<(Cause, u32)>,
    /// Since when every attempt was told "later", with no answer between.
    unanswered_since: Option<Instant>,
    /// How long that may last before the backend halts.
    patience: Duration,
    halt: Option<Halt>,
    /// When the halt began.
    halted_at: Option<Instant>,
    /// When a halted backend may try a call again.
    next_probe: Option<Instant>,
    /// Whether a probe is under way.
    probing: bool,
}

impl Default for State {
    fn default() -> State {
        State {
            succeeded: false,
            streak: None,
            unanswered_since: None,
            patience: Duration::MAX,
            halt: None,
            halted_at: None,
            next_probe: None,
            probing: false,
        }
    }
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

    /// A record that halts a backend told "later" with no answer for
    /// longer than `patience`.
    pub fn with_patience(patience: Duration) -> Health {
        let health = Health::default();
        if let Ok(mut s) = health.state.lock() {
            s.patience = patience;
        }
        health
    }

    /// An attempt sent at `sent` succeeded: from now on the backend halts
    /// by repetition only when it cannot be reached, and a halt ends, unless it began after the
    /// attempt was sent (an answer to a request made before the refusal
    /// says nothing of whether the refusal has passed; only a later
    /// attempt, the probe, can end it).
    pub fn succeeded(&self, sent: Instant) {
        if let Ok(mut s) = self.state.lock() {
            s.succeeded = true;
            s.streak = None;
            s.unanswered_since = None;
            if s.halted_at.is_some_and(|at| sent < at) {
                return;
            }
            s.halt = None;
            s.halted_at = None;
            s.next_probe = None;
        }
    }

    /// Whether any attempt of this backend was ever answered.
    pub fn answered_before(&self) -> bool {
        self.state.lock().map(|s| s.succeeded).unwrap_or(false)
    }

    /// An attempt failed; true when the backend is halted after it.
    pub fn failed(&self, failed: Failed<'_>) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        let now = Instant::now();
        if s.halt.is_some() {
            // A probe failed: the halt stands until the next one.
            s.next_probe = Some(now + PROBE_EVERY);
            return true;
        }
        let n = match &s.streak {
            Some((c, n)) if *c == failed.cause => n + 1,
            _ => 1,
        };
        let kind = match failed.class {
            Class::Halt => Some(HaltKind::Refused(failed.reason.unwrap_or(Reason::Other))),
            // The server answered, if only for this request.
            Class::PerUnit => {
                s.unanswered_since = None;
                None
            }
            Class::RetryLater => {
                let since = *s.unanswered_since.get_or_insert(now);
                let waited = now.duration_since(since);
                if waited >= s.patience {
                    Some(HaltKind::Unanswered(waited.as_secs()))
                } else if (!s.succeeded || failed.cause.unreached())
                    && failed.cause.counts()
                    && n >= FAIL_FAST_ATTEMPTS
                {
                    // A backend that never worked, or one that stopped
                    // taking connections (a server down mid-run): an outage,
                    // the same on one machine and on a fleet.
                    Some(HaltKind::Repeated)
                } else {
                    None
                }
            }
        };
        s.streak = failed.cause.counts().then_some((failed.cause, n));
        if let Some(kind) = kind {
            s.halt = Some(Halt {
                cause: failed.text.to_string(),
                fix: failed.fix,
                attempts: n,
                kind,
            });
            s.halted_at = Some(now);
            s.next_probe = Some(now + PROBE_EVERY);
        }
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

    fn fail_as(h: &Health, cause: Cause, class: Class) -> bool {
        h.failed(Failed {
            cause,
            class,
            reason: None,
            text: "boom",
            fix: "fix it".into(),
        })
    }

    fn fail(h: &Health, c: Cause) -> bool {
        fail_as(h, c, Class::RetryLater)
    }

    #[test]
    fn the_same_failure_again_and_again_halts_a_backend_that_never_worked() {
        let h = Health::default();
        for _ in 1..FAIL_FAST_ATTEMPTS {
            assert!(!fail(&h, Cause::Status(502)));
        }
        assert!(fail(&h, Cause::Status(502)));
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
        h.succeeded(Instant::now());
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
        h.succeeded(Instant::now());
        // A server that answered and now fails is given the patience…
        for _ in 0..3 * FAIL_FAST_ATTEMPTS {
            assert!(!fail(&h, Cause::Status(500)));
        }
        assert!(h.halt().is_none());
    }

    #[test]
    fn a_backend_that_worked_and_stops_taking_connections_halts_as_one_that_never_did() {
        let h = Health::default();
        h.succeeded(Instant::now());
        for _ in 1..FAIL_FAST_ATTEMPTS {
            assert!(!fail(&h, Cause::Refused("a".into())));
        }
        assert!(
            fail(&h, Cause::Refused("a".into())),
            "a server down mid-run"
        );
        let halt = h.halt().unwrap();
        assert_eq!(
            (halt.attempts, halt.kind),
            (FAIL_FAST_ATTEMPTS, HaltKind::Repeated)
        );
        // Once back, a probe's answer ends the halt.
        h.probe_now();
        h.succeeded(Instant::now());
        assert!(h.halt().is_none());
    }

    #[test]
    fn a_refusal_every_request_would_repeat_halts_at_once_even_after_answers() {
        let h = Health::default();
        h.succeeded(Instant::now());
        assert!(!fail_as(&h, Cause::Status(400), Class::PerUnit));
        assert!(h.halt().is_none(), "a refusal of one request never halts");
        assert!(fail_as(&h, Cause::Status(429), Class::Halt));
        let halt = h.halt().unwrap();
        assert_eq!(
            (halt.attempts, halt.kind),
            (1, HaltKind::Refused(Reason::Other))
        );
    }

    #[test]
    fn being_told_later_past_the_patience_halts_even_a_backend_that_worked() {
        let h = Health::with_patience(Duration::from_millis(30));
        h.succeeded(Instant::now());
        assert!(
            !fail(&h, Cause::Status(429)),
            "the first 429 starts the clock"
        );
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(fail(&h, Cause::Status(429)));
        assert!(matches!(h.halt().unwrap().kind, HaltKind::Unanswered(_)));
        // An answer in between restarts the clock.
        let h = Health::with_patience(Duration::from_millis(30));
        fail(&h, Cause::Status(429));
        std::thread::sleep(Duration::from_millis(35));
        h.succeeded(Instant::now());
        assert!(!fail(&h, Cause::Status(429)));
    }

    #[test]
    fn an_answer_to_a_request_sent_before_a_halt_does_not_end_it() {
        let h = Health::default();
        let sent_before = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(fail_as(&h, Cause::Status(404), Class::Halt));
        // The request in flight when the refusal came is answered after it.
        h.succeeded(sent_before);
        assert!(h.halt().is_some(), "the halt stands");
        assert!(h.answered_before());
        // A request sent after the halt (the probe) ends it when answered.
        h.succeeded(Instant::now());
        assert!(h.halt().is_none());
    }
}

//! Failing fast: a backend whose every attempt so far failed the same way
//! (nothing listening, a wrong key, an unknown model) is misconfigured, and
//! retrying it for hours helps nobody. After [`FAIL_FAST_ATTEMPTS`] such
//! attempts with no success in between, the backend halts and says why.

use std::sync::Mutex;

/// Identical failed attempts, with no success yet, that halt a backend.
pub const FAIL_FAST_ATTEMPTS: u32 = 8;

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
}

/// A backend's record of how its attempts went.
#[derive(Default)]
pub struct Health {
    state: Mutex<State>,
}

impl Health {
    /// An attempt succeeded: from now on the backend never halts.
    pub fn succeeded(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.succeeded = true;
            s.streak = None;
        }
    }

    /// An attempt failed with `cause`, described as `text`; true when this
    /// failure halts the backend.
    pub fn failed(&self, cause: Cause, text: &str, fix: impl FnOnce(&Cause) -> String) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.succeeded || s.halt.is_some() {
            return s.halt.is_some();
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
        }
        s.streak = Some((cause, n));
        s.halt.is_some()
    }

    /// Why the backend halted, if it did.
    pub fn halt(&self) -> Option<Halt> {
        self.state.lock().ok().and_then(|s| s.halt.clone())
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

//! What follows a failed attempt, for direct calls and batch requests
//! alike: try again after a wait, fail this call, or halt the backend.

use crate::health::{Failed, Health};
use crate::provider::{Class, Reason};
use crate::secret::Credentials;
use crate::{jitter, CallError, Failure};
use autoeval_models::RetryPolicy;
use std::time::Duration;

/// What follows a failed attempt.
pub(crate) enum Next {
    /// Try again after this wait.
    Retry(Duration),
    /// The call ends with this error.
    Fail(CallError),
}

/// Who made the attempt, for the words of the failure.
pub(crate) struct Caller<'a> {
    /// What the request carried, removed from any text kept.
    pub credentials: &'a Credentials,
    /// Where the key comes from, for the fix.
    pub key_variable: Option<&'static str>,
    /// What was asked, put before the failure's words ("" for a chat call).
    pub what: &'a str,
}

/// Decides what follows failed attempt number `attempt`. A refusal every
/// request would repeat, a Retry-After past the policy's longest wait, or
/// being told "later" past its patience halts the backend: the call ends
/// [`CallError::Halted`], so that its unit stays pending. Otherwise a
/// failure worth repeating is retried within the policy's attempts, and
/// the rest end the call as an API failure.
pub(crate) fn after_failure(
    health: &Health,
    policy: &RetryPolicy,
    failure: Failure,
    attempt: u32,
    caller: &Caller<'_>,
) -> Next {
    // A server may echo the key in its error body: no text keeps it.
    let mut message = caller.credentials.redact(&failure.message);
    if !caller.what.is_empty() {
        message = format!("{}: {message}", caller.what);
    }
    let answered_before = health.answered_before();
    let (mut class, mut fix) = match failure.reason {
        None => (Class::RetryLater, failure.cause.fix()),
        Some(reason) => (
            reason.class(answered_before),
            reason.fix(caller.key_variable),
        ),
    };
    if let Some(wait) = failure.retry_after.filter(|w| *w > policy.max_delay) {
        // Waiting per unit would hold the run for as long; none may wait it.
        class = Class::Halt;
        message = format!(
            "{message} (Retry-After asks for {}, past the retry policy's longest wait of {} s)",
            long_wait(wait),
            policy.max_delay.as_secs()
        );
        fix = "wait until the provider's limit resets, then rerun".into();
    }
    let halted = health.failed(Failed {
        cause: failure.cause.clone(),
        class,
        reason: failure.reason,
        text: &message,
        fix,
    });
    if halted {
        return Next::Fail(CallError::Halted {
            cause: message,
            attempts: attempt,
        });
    }
    let retried = match class {
        Class::RetryLater => true,
        Class::PerUnit => failure.reason.is_some_and(Reason::retried_alone),
        Class::Halt => false,
    };
    // Nothing was sent to a server (no connection was made, whether or not
    // the backend answered before): the call is not a unit's failure but
    // the backend's, so it waits past its attempts for the backend's
    // verdict (a halt, which leaves its unit pending, or an answer). The
    // fail-fast streak and the patience bound that wait.
    let unreached = failure.cause.unreached();
    if !retried || (attempt >= policy.max_attempts.max(1) && !unreached) {
        return Next::Fail(CallError::Api {
            status: failure.status,
            message,
            attempts: attempt,
        });
    }
    // Past its own attempts (a call waiting for the verdict), a call waits
    // no longer than its last attempt did.
    let step = attempt.min(policy.max_attempts.max(1));
    Next::Retry(policy.delay(step, failure.retry_after, jitter()))
}

/// A wait in words: seconds, or hours when long.
fn long_wait(wait: Duration) -> String {
    match wait.as_secs() {
        s if s >= 7200 => format!("{} h", s / 3600),
        s => format!("{s} s"),
    }
}

//! How a failed attempt is told to the call observer.

use crate::health::Cause;
use autoeval_models::AttemptOutcome;

/// The outcome of a failed attempt.
pub(crate) fn outcome_of(cause: &Cause) -> AttemptOutcome {
    match cause {
        Cause::Status(429) => AttemptOutcome::RateLimited,
        Cause::Status(s) if *s >= 500 => AttemptOutcome::ServerError,
        Cause::Status(_) => AttemptOutcome::ClientError,
        Cause::TimedOut(_) => AttemptOutcome::Timeout,
        Cause::Refused(_) | Cause::UnknownHost(_) => AttemptOutcome::Unreachable,
        Cause::Other => AttemptOutcome::Other,
    }
}

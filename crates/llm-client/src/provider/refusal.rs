//! What a provider's refusal means for the run: wait and try again, stop
//! the backend at once, or fail this one request. The reason is read from
//! the reply by the provider's module; what each reason means is said here once.

use serde::{Deserialize, Serialize};

/// What a failed request means for the backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The provider is busy, not refusing: the request is tried again after
    /// a wait, within the retry policy's attempts and patience.
    RetryLater,
    /// Every request would fail the same way until someone acts: the
    /// backend stops at once, and what it has not sent stays pending.
    Halt,
    /// This request alone failed: it becomes the unit's API failure and
    /// never stops the backend.
    PerUnit,
}

/// Why a provider refused a request, as far as its reply tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Too many requests or tokens for now (HTTP 429).
    RateLimit,
    /// The provider says it is overloaded (Anthropic's 529, a 503 that says so).
    Overloaded,
    /// Any other server error (5xx).
    ServerError,
    /// The server gave up waiting for the request (408).
    Timeout,
    /// The account's quota or credit is spent.
    QuotaExhausted,
    /// The key is missing, wrong or revoked (401).
    Auth,
    /// The key may not use this model or API (403).
    Permission,
    /// No such model, or no such path at the base address (404).
    UnknownModel,
    /// The prompt and the token cap do not fit the model's context.
    ContextLength,
    /// The server refuses the request's shape (400, 422).
    BadRequest,
    /// The request is larger than the API takes at all (413, or one
    /// request past a whole tokens-per-minute budget).
    TooLarge,
    /// The server cannot serve the model as it was started, whatever the
    /// request (short of memory, a feature not enabled).
    Unservable,
    /// The provider's content filter refused this prompt: the next prompt
    /// may well pass, so it never stops a backend.
    Filtered,
    /// A successful status whose body is not the answer expected.
    Malformed,
    /// Any other refusal (another 4xx).
    Other,
}

impl Reason {
    /// What this reason means for the backend; `answered_before` says
    /// whether any request of this backend was answered. A request shape,
    /// size or context the server refuses halts a backend that never worked
    /// (its settings are wrong for every request) and fails only this
    /// request of one that did (this prompt is the odd one).
    pub fn class(self, answered_before: bool) -> Class {
        match self {
            Reason::RateLimit | Reason::Overloaded | Reason::ServerError | Reason::Timeout => {
                Class::RetryLater
            }
            Reason::QuotaExhausted
            | Reason::Auth
            | Reason::Permission
            | Reason::UnknownModel
            | Reason::Unservable => Class::Halt,
            Reason::ContextLength | Reason::BadRequest | Reason::TooLarge | Reason::Other
                if !answered_before =>
            {
                Class::Halt
            }
            Reason::ContextLength
            | Reason::BadRequest
            | Reason::Other
            | Reason::TooLarge
            | Reason::Filtered
            | Reason::Malformed => Class::PerUnit,
        }
    }

    /// Whether a request failing for this reason alone is worth sending
    /// again: only a reply that could not be read (it may read next time).
    pub fn retried_alone(self) -> bool {
        self == Reason::Malformed
    }

    /// Its name in records and messages.
    pub fn name(self) -> &'static str {
        match self {
            Reason::RateLimit => "rate limit",
            Reason::Overloaded => "overloaded",
            Reason::ServerError => "server error",
            Reason::Timeout => "server timeout",
            Reason::QuotaExhausted => "quota exhausted",
            Reason::Auth => "authentication refused",
            Reason::Permission => "permission denied",
            Reason::UnknownModel => "unknown model or path",
            Reason::ContextLength => "context length exceeded",
            Reason::BadRequest => "request refused",
            Reason::TooLarge => "request too large",
            Reason::Unservable => "server cannot serve the model",
            Reason::Filtered => "prompt filtered",
            Reason::Malformed => "malformed reply",
            Reason::Other => "refused",
        }
    }

    /// What to do about it, for the one line that stops the run;
    /// `key_variable` names where the key comes from.
    pub fn fix(self, key_variable: Option<&str>) -> String {
        let key_in = key_variable
            .map(|v| format!(" in {v} (environment or --secrets file)"))
            .unwrap_or_default();
        match self {
            Reason::QuotaExhausted => {
                "the account's quota or credit is spent: add credit or raise the plan's limit at the provider".into()
            }
            Reason::Auth => format!("set a valid API key{key_in}"),
            Reason::Permission => format!(
                "use a key{key_in} whose project or organisation may use this model"
            ),
            Reason::UnknownModel => {
                "check the model name and the base URL (the server knows no such model or path)".into()
            }
            Reason::ContextLength => {
                "lower the model's max-tokens (`[model.\"SPEC\"] max-tokens = N` in the config, or `?max-tokens=N` after the spec), or serve the model with a longer context".into()
            }
            Reason::BadRequest | Reason::Other => {
                "the server refuses the request's shape: check the model's settings (a reasoning model needs reasoning=true; extra fields must be ones it knows)".into()
            }
            Reason::RateLimit => {
                "the provider rate-limits past the retry policy's patience: lower --concurrency, or wait until its limit resets".into()
            }
            Reason::Overloaded | Reason::ServerError | Reason::Timeout => {
                "the provider has not answered within the retry policy's patience: check its status page or the server's log, then rerun".into()
            }
            Reason::Unservable => {
                "the server cannot serve this model as it was started (memory, a flag): see its log and start it so that it can".into()
            }
            Reason::Filtered => {
                "the provider's content filter refused the prompt; the unit is an API failure to read, not to rerun".into()
            }
            Reason::TooLarge | Reason::Malformed => "check the server's log".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_shape_halts_only_a_backend_that_never_worked() {
        for r in [
            Reason::ContextLength,
            Reason::BadRequest,
            Reason::TooLarge,
            Reason::Other,
        ] {
            assert_eq!(r.class(false), Class::Halt, "{r:?}");
            assert_eq!(r.class(true), Class::PerUnit, "{r:?}");
        }
        for r in [Reason::QuotaExhausted, Reason::Auth, Reason::UnknownModel] {
            assert_eq!(r.class(true), Class::Halt, "{r:?}");
        }
        assert_eq!(Reason::RateLimit.class(false), Class::RetryLater);
        // A filtered prompt is that prompt's, even the first one's.
        assert_eq!(Reason::Filtered.class(false), Class::PerUnit);
    }
}

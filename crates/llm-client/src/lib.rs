//! LLM backends: any OpenAI-compatible chat-completions server, Anthropic's
//! messages API, and the built-in reference model, behind one call,
//! [`Backend::chat`]. Each backend has a concurrency limit, retries 429,
//! 5xx, timeouts and dropped connections with exponential backoff and jitter
//! (honouring Retry-After), caches replies so a rerun never pays twice, and
//! counts tokens and cost. A call that fails for good is an API failure,
//! never a model's non-compliance. Keys come from the environment or a
//! secrets file and never appear in errors.

mod adaptive;
mod backend;
mod batch;
mod cache;
mod claim;
mod error;
mod health;
mod observe;
mod options;
mod provider;
mod retry;
mod secret;

pub use autoeval_models::{
    estimate_tokens, AttemptOutcome, BatchCounts, BatchJournal, BatchSettings, BatchSpend,
    CacheFuture, CacheUnavailable, CachedReply, CallObserver, Cell, LocalGate, RateGate,
    RateLimits, ResponseCache, TokenHistory, WaitCause,
};
pub use batch::MemoryJournal;
pub use cache::{CacheOpenError, DiskCache, CACHE_FILE};
pub use claim::{CACHE_OUTAGE_WAIT, CLAIM_TTL};
pub use health::{Cause, Halt, HaltKind, FAIL_FAST_ATTEMPTS, PROBE_EVERY};
pub use provider::{reason_of, Class, Reason};
pub use secret::ApiKey;

/// How a built-in model answers the A4 question: whether two formulas are equivalent.
pub use autoeval_reference_model::Judge as BuiltinJudge;
pub use backend::{Backend, ADAPTIVE_FLOOR, DEFAULT_MAX_REPLY_BYTES};
pub use error::{CallError, Reply};
pub use options::{BackendOptions, BaseUrls};

pub(crate) use backend::http::{
    address_of, parse_answer, refusal, root_cause, Answer, Failure, Refused,
};
pub(crate) use backend::turns::jitter;

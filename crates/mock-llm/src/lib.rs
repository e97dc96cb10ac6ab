//! A local model server that answers with the reference model in each
//! API the model client speaks: OpenAI's chat completions and Responses,
//! Azure OpenAI's paths, Anthropic's messages, Gemini's generateContent and
//! Bedrock's Converse; and through the batch APIs of OpenAI (and Azure),
//! Anthropic and Gemini (`batch.rs`; each provider's shapes and routes in
//! `provider/`). It can play a reasoning model that spends its cap
//! thinking on a share of the prompts. Tests and benchmarks
//! use it to drive the real HTTP path: it can add latency, answer 429 with
//! Retry-After past a request rate or past a number of requests at once,
//! answer 500, drop connections, fail or expire batched requests, and it
//! counts what it served (`GET /stats`), how often each prompt was asked
//! (`GET /prompts`) and each batched request submitted (`GET /batch-submissions`).

mod answer;
mod batch;
mod config;
mod provider;
mod record;
mod shared;
mod store;
mod wire;

pub use config::{Arrival, MockConfig, Refusal, Stats};
pub use shared::{prompt_digest, prompt_share};

use axum::routing::get;
use axum::Router;
use shared::Shared;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The server's routes: `POST /v1/chat/completions`, `/v1/responses`,
/// `/v1/messages`, `/v1beta/models/MODEL:generateContent`,
/// `/model/MODEL/converse`, and Azure's `/openai/…`; the batch APIs (`POST
/// /v1/files`, `POST /v1/batches`, `GET /v1/batches/{id}`, `GET
/// /v1/files/{id}/content`, `POST /v1/messages/batches`, `GET
/// /v1/messages/batches/{id}` and its `/results`, `POST
/// /v1beta/models/MODEL:batchGenerateContent`, `GET /v1beta/batches/{id}`);
/// `GET /recorded-requests` (the last requests as they came); `GET /stats`, `GET /prompts` (requests per
/// [`prompt_digest`]), `GET /batch-submissions` (times each `custom_id`
/// was submitted) and `GET /timeline` (every [`Arrival`], in order).
pub fn router(config: MockConfig) -> Router {
    let shared = Arc::new(Shared {
        config,
        requests: AtomicU64::new(0),
        completions: AtomicU64::new(0),
        rate_limited: AtomicU64::new(0),
        server_errors: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        unauthorized: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        over_context: AtomicU64::new(0),
        truncated: AtomicU64::new(0),
        window: Mutex::new((Instant::now(), 0)),
        prompts: Mutex::default(),
        epoch: Instant::now(),
        timeline: Mutex::default(),
        in_flight: AtomicU64::new(0),
        files_made: AtomicU64::new(0),
        batches_made: AtomicU64::new(0),
        batch_requests: AtomicU64::new(0),
        batch_succeeded: AtomicU64::new(0),
        batch_failed: AtomicU64::new(0),
        batch_expired: AtomicU64::new(0),
        batch_polls: AtomicU64::new(0),
        batch_draws: AtomicU64::new(0),
        batches: Mutex::default(),
        recorded: Mutex::default(),
    });
    Router::new()
        .merge(provider::routes())
        .route("/batch-submissions", get(answer::batch_submissions))
        .route("/stats", get(answer::stats))
        .route("/prompts", get(answer::prompts))
        .route("/timeline", get(answer::timeline))
        .route("/recorded-requests", get(record::recorded))
        // Prompts carry the model's own English, which can be large.
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            record::keep,
        ))
        .with_state(shared)
}

//! Each provider's API as the mock server plays it, one module each: its
//! direct requests and replies, its batch API's routes and objects, and the
//! lines its batch results are written in. The batches themselves (kept,
//! ended after their delay, some failed or expired) are `batch.rs`'s.

mod anthropic;
mod bedrock;
mod gemini;
mod openai;

use crate::shared::Shared;
use axum::Router;
use std::sync::Arc;

/// Every provider's routes.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    openai::routes()
        .merge(anthropic::routes())
        .merge(gemini::routes())
        .merge(bedrock::routes())
}

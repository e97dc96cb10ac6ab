//! Amazon Bedrock's Converse API, as the mock server plays it: `POST
//! /model/MODEL_ID/converse`.

use crate::answer::{answer, with_model, Body};
use crate::shared::Shared;
use crate::wire::{Completion, Got, Wire};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;

/// The Converse API.
pub(crate) struct Converse;

impl Wire for Converse {
    fn name(&self) -> &'static str {
        "bedrock"
    }

    fn well_formed(&self, req: &Value) -> bool {
        req["messages"].is_array()
    }

    fn max_tokens(&self, req: &Value) -> Option<u64> {
        req["inferenceConfig"]["maxTokens"].as_u64()
    }

    /// Claude's extended thinking refused as on Anthropic's own API, in
    /// Bedrock's `ValidationException` body.
    fn refusal(&self, req: &Value) -> Option<Value> {
        let config = &req["inferenceConfig"];
        super::anthropic::thinking_refusal_of(
            &req["additionalModelRequestFields"]["thinking"],
            config["maxTokens"].as_u64(),
            config.get("temperature").and_then(Value::as_f64),
        )
        .map(|why| json!({"message": format!("The model returned the following errors: {why}")}))
    }

    fn reply(&self, done: &Completion, _n: u64, _model: &str) -> Value {
        let stop = if done.cut { "max_tokens" } else { "end_turn" };
        json!({
            "output": {"message": {"role": "assistant", "content": [{"text": done.text}]}},
            "stopReason": stop,
            "usage": {"inputTokens": done.prompt_tokens, "outputTokens": done.completion_tokens,
                "totalTokens": done.prompt_tokens + done.completion_tokens},
            "metrics": {"latencyMs": 1},
        })
    }

    // Converse has no batches here: its batch inference works through S3.
    fn batch_id(&self, n: u64) -> String {
        format!("bedrock-batch-{n}")
    }

    fn result_line(&self, _n: u64, custom_id: &str, _got: Got<'_>) -> (String, bool) {
        (json!({ "recordId": custom_id }).to_string(), true)
    }

    fn ended_status(&self, _expired: bool) -> &'static str {
        "Completed"
    }

    fn results_in_files(&self) -> bool {
        false
    }
}

/// Its routes.
pub(super) fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/model/{model}/converse", post(converse))
}

/// `POST /model/{model}/converse`.
async fn converse(
    State(s): State<Arc<Shared>>,
    Path(model): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    answer(s, headers, with_model(body, model), &Converse).await
}

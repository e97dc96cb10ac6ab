//! Amazon Bedrock's Converse API, as the mock server plays it: `POST
//! /model/MODEL_ID/converse`, each request kept as it came (method, path
//! as sent, headers, body) for `GET /recorded-requests`, so that a test can
//! check its signature with another signer.

use crate::answer::answer;
use crate::shared::Shared;
use crate::wire::{Completion, Got, Wire};
use axum::extract::{OriginalUri, Path, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

/// The Converse API.
pub(crate) struct Converse;

/// Requests kept for `GET /recorded-requests`, newest last.
const RECORDED: usize = 1000;

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
    Router::new()
        .route("/model/{model}/converse", post(converse))
        .route("/recorded-requests", get(recorded))
}

/// `POST /model/{model}/converse`.
async fn converse(
    State(s): State<Arc<Shared>>,
    Path(model): Path<String>,
    OriginalUri(uri): OriginalUri,
    method: Method,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    {
        let mut kept = s.recorded.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == RECORDED {
            kept.remove(0);
        }
        let header_list: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        kept.push(json!({
            "method": method.as_str(),
            "path": uri.to_string(),
            "headers": header_list,
            "body": String::from_utf8_lossy(&body),
        }));
    }
    let parsed = serde_json::from_slice::<Value>(&body)
        .map(|mut v| {
            v["model"] = Value::String(model);
            Json(v)
        })
        .map_err(|e| e.to_string());
    match parsed {
        Ok(json) => answer(s, headers, Ok(json), &Converse).await,
        Err(why) => crate::batch::error(axum::http::StatusCode::BAD_REQUEST, &why),
    }
}

/// `GET /recorded-requests`: the Converse requests as they came.
async fn recorded(State(s): State<Arc<Shared>>) -> Json<Vec<Value>> {
    Json(s.recorded.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

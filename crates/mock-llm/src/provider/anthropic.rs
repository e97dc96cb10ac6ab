//! Anthropic's messages API and Message Batches, as the mock server plays
//! them: `/v1/messages`; `/v1/messages/batches`, results as JSONL at its
//! `results_url`.

use crate::answer::call_route;
use crate::batch::{created, error, rfc3339};
use crate::shared::{Authorized, Shared, API_ERROR};
use crate::store::{Origin, Request};
use crate::wire::{Completion, Got, Wire};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::Arc;

/// The messages API.
pub(crate) struct Messages;

impl Wire for Messages {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn well_formed(&self, req: &Value) -> bool {
        req["messages"].is_array() && req["model"].is_string() && req["max_tokens"].is_u64()
    }

    fn refusal(&self, req: &Value) -> Option<Value> {
        thinking_refusal(req).map(|message| {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        })
    }

    fn reply(&self, done: &Completion, n: u64, model: &str) -> Value {
        let stop = if done.cut { "max_tokens" } else { "end_turn" };
        json!({
            "id": format!("msg_mock{n}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": done.text}],
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {"input_tokens": done.prompt_tokens, "output_tokens": done.completion_tokens},
        })
    }

    fn batch_id(&self, n: u64) -> String {
        format!("msgbatch_mock{n}")
    }

    fn result_line(&self, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool) {
        let line = match got {
            Got::Expired => json!({"custom_id": custom_id, "result": {"type": "expired"}}),
            Got::Errored => {
                json!({"custom_id": custom_id, "result": {"type": "errored", "error": {"type": "error", "error": {"type": "api_error", "message": API_ERROR}}}})
            }
            Got::Refused(body) => {
                json!({"custom_id": custom_id, "result": {"type": "errored", "error": body}})
            }
            Got::Answered(done, model) => {
                json!({"custom_id": custom_id, "result": {"type": "succeeded", "message": self.reply(done, n, model)}})
            }
        };
        (line.to_string(), false)
    }

    fn ended_status(&self, _expired: bool) -> &'static str {
        "ended"
    }

    fn results_in_files(&self) -> bool {
        false
    }
}

/// Its routes.
pub(super) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1/messages", call_route(&Messages))
        .route("/v1/messages/batches", post(create))
        .route("/v1/messages/batches/{id}", get(get_batch))
        .route("/v1/messages/batches/{id}/results", get(results))
}

/// `POST /v1/messages/batches`: Anthropic's batch of message requests.
async fn create(
    State(s): State<Arc<Shared>>,
    Authorized(headers): Authorized,
    Json(body): Json<Value>,
) -> Response {
    let Some(list) = body["requests"].as_array() else {
        return error(StatusCode::BAD_REQUEST, "requests is missing");
    };
    let mut requests = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let id_ok = r["custom_id"].as_str().is_some_and(|c| {
            (1..=64).contains(&c.len())
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        let params = &r["params"];
        if !id_ok
            || !params["messages"].is_array()
            || !params["model"].is_string()
            || !params["max_tokens"].is_u64()
        {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("requests.{i} is not a message batch request"),
            );
        }
        requests.push(Request {
            custom_id: r["custom_id"].as_str().unwrap_or_default().to_string(),
            model: params["model"].as_str().unwrap_or_default().to_string(),
            body: params.clone(),
        });
    }
    created(s.make_batch(&Messages, Origin::default(), requests), |id| {
        object(&s, id, &headers)
    })
}

/// `GET /v1/messages/batches/{id}`.
async fn get_batch(
    State(s): State<Arc<Shared>>,
    Authorized(headers): Authorized,
    Path(id): Path<String>,
) -> Response {
    s.polled(&id);
    object(&s, &id, &headers)
}

/// `GET /v1/messages/batches/{id}/results`.
async fn results(State(s): State<Arc<Shared>>, _: Authorized, Path(id): Path<String>) -> Response {
    let store = s.batch_store();
    match store.batches.get(&id).and_then(|b| b.ended.as_ref()) {
        Some(ended) => {
            let mut body = ended.output.join("\n");
            body.push('\n');
            body.into_response()
        }
        None => error(StatusCode::NOT_FOUND, "the batch has not ended"),
    }
}

fn object(s: &Shared, id: &str, headers: &HeaderMap) -> Response {
    let store = s.batch_store();
    let Some(b) = store
        .batches
        .get(id)
        .filter(|b| b.wire.name() == Messages.name())
    else {
        return error(StatusCode::NOT_FOUND, "no such batch");
    };
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let (status, counts, url, ended_at) = match &b.ended {
        None => (
            "in_progress",
            json!({"processing": b.requests.len(), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}),
            None,
            None,
        ),
        Some(e) => (
            "ended",
            json!({"processing": 0, "succeeded": e.succeeded, "errored": e.errored, "canceled": 0, "expired": e.expired}),
            Some(format!("http://{host}/v1/messages/batches/{id}/results")),
            Some(rfc3339(e.ended_at)),
        ),
    };
    Json(json!({
        "id": id, "type": "message_batch", "processing_status": status,
        "request_counts": counts, "ended_at": ended_at, "created_at": rfc3339(b.created_at),
        "expires_at": rfc3339(b.created_at + 86_400), "archived_at": null,
        "cancel_initiated_at": null, "results_url": url,
    }))
    .into_response()
}

/// Where Anthropic's extended thinking is explained, as its refusals link it.
const THINKING_DOCS: &str = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

/// Why Anthropic refuses a request with extended thinking on, in its words:
/// a budget under 1,024 tokens, a cap not above the budget, or a
/// temperature other than 1.
fn thinking_refusal(req: &Value) -> Option<String> {
    let temperature = req.get("temperature").and_then(Value::as_f64);
    thinking_refusal_of(&req["thinking"], req["max_tokens"].as_u64(), temperature)
}

/// Why Claude refuses extended thinking `thinking` beside the token cap
/// `max_tokens` and `temperature`, wherever it is served (Anthropic's API,
/// Bedrock's Converse).
pub(crate) fn thinking_refusal_of(
    thinking: &Value,
    max_tokens: Option<u64>,
    temperature: Option<f64>,
) -> Option<String> {
    if thinking["type"] != "enabled" {
        return None;
    }
    let budget = thinking["budget_tokens"].as_u64().unwrap_or(0);
    if budget < 1024 {
        return Some(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
        );
    }
    if max_tokens.unwrap_or(0) <= budget {
        return Some(format!("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at {THINKING_DOCS}#max-tokens-and-context-window-size"));
    }
    if temperature.is_some_and(|t| t != 1.0) {
        return Some(format!("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at {THINKING_DOCS}#important-considerations-when-using-extended-thinking"));
    }
    None
}

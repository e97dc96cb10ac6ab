//! Google's Gemini API and its Batch Mode, as the mock server plays them:
//! `POST /v1beta/models/MODEL:generateContent`; `POST
//! /v1beta/models/MODEL:batchGenerateContent` with its requests inline, the
//! batch an operation at `/v1beta/batches/ID` whose metadata holds its
//! state and, once it ended, its responses; `GET /v1beta/batches` lists them.

use crate::answer::{answer, with_model, Body};
use crate::batch::{batch_reply, created, error, page_size, rfc3339};
use crate::shared::{Authorized, Shared, API_ERROR};
use crate::store::{Origin, Request};
use crate::wire::{Completion, Got, Wire};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The generateContent API.
pub(crate) struct GenerateContent;

impl Wire for GenerateContent {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn well_formed(&self, req: &Value) -> bool {
        req["contents"].is_array()
    }

    fn refusal(&self, req: &Value) -> Option<Value> {
        let model = req["model"].as_str().unwrap_or_default();
        let budget = req["generationConfig"]["thinkingConfig"]["thinkingBudget"].as_i64()?;
        budget_refusal(model, budget).map(|message| {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        })
    }

    fn prompt(&self, req: &Value) -> String {
        let Some(contents) = req["contents"].as_array() else {
            return String::new();
        };
        contents
            .iter()
            .rev()
            .find(|c| c["role"] == "user" || c["role"].is_null())
            .and_then(|c| c["parts"].as_array())
            .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect())
            .unwrap_or_default()
    }

    fn max_tokens(&self, req: &Value) -> Option<u64> {
        req["generationConfig"]["maxOutputTokens"].as_u64()
    }

    fn reply(&self, done: &Completion, n: u64, model: &str) -> Value {
        let mut content = json!({"role": "model"});
        if !done.text.is_empty() {
            content["parts"] = json!([{ "text": done.text }]);
        }
        let finish = if done.cut { "MAX_TOKENS" } else { "STOP" };
        let answered = done.completion_tokens - done.reasoning_tokens;
        let mut usage = json!({
            "promptTokenCount": done.prompt_tokens,
            "candidatesTokenCount": answered,
            "totalTokenCount": done.prompt_tokens + done.completion_tokens,
        });
        if done.reasoning_tokens > 0 {
            usage["thoughtsTokenCount"] = json!(done.reasoning_tokens);
        }
        json!({
            "candidates": [{"content": content, "finishReason": finish, "index": 0}],
            "usageMetadata": usage,
            "modelVersion": model,
            "responseId": format!("mock{n}"),
        })
    }

    fn batch_id(&self, n: u64) -> String {
        format!("batches/mock{n}")
    }

    fn result_line(&self, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool) {
        let metadata = json!({ "key": custom_id });
        let line = match got {
            Got::Expired => {
                json!({"error": {"code": 504, "message": "the batch expired before this request ran", "status": "DEADLINE_EXCEEDED"}, "metadata": metadata})
            }
            Got::Errored => {
                json!({"error": {"code": 500, "message": API_ERROR, "status": "INTERNAL"}, "metadata": metadata})
            }
            Got::Refused(body) => json!({"error": body["error"], "metadata": metadata}),
            Got::Answered(done, model) => {
                json!({"response": self.reply(done, n, model), "metadata": metadata})
            }
        };
        (line.to_string(), false)
    }

    fn ended_status(&self, expired: bool) -> &'static str {
        if expired {
            "BATCH_STATE_EXPIRED"
        } else {
            "BATCH_STATE_SUCCEEDED"
        }
    }

    fn results_in_files(&self) -> bool {
        false
    }
}

/// Its routes.
pub(super) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1beta/models/{call}", post(call))
        .route("/v1beta/batches", get(list))
        .route("/v1beta/batches/{id}", get(get_batch))
}

/// `POST /v1beta/models/MODEL:generateContent` and `…:batchGenerateContent`.
async fn call(
    State(s): State<Arc<Shared>>,
    Path(call): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let Some((model, method)) = call.rsplit_once(':') else {
        return error(StatusCode::NOT_FOUND, "no such method");
    };
    let model = model.to_string();
    match method {
        "generateContent" => answer(s, headers, with_model(body, model), &GenerateContent).await,
        "batchGenerateContent" => match body {
            Ok(Json(body)) => create(&s, &headers, &model, &body),
            Err(e) => error(StatusCode::BAD_REQUEST, &e.body_text()),
        },
        _ => error(StatusCode::NOT_FOUND, "no such method"),
    }
}

/// A batch of the requests inline in `body`.
fn create(s: &Shared, headers: &HeaderMap, model: &str, body: &Value) -> Response {
    if let Some(refused) = s.refuse_unauthorized(headers) {
        return refused;
    }
    let batch = &body["batch"];
    let Some(list) = batch["inputConfig"]["requests"]["requests"].as_array() else {
        return error(
            StatusCode::BAD_REQUEST,
            "batch.inputConfig.requests.requests is missing",
        );
    };
    let mut requests = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let Some(key) = r["metadata"]["key"].as_str() else {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("request {i} has no metadata.key"),
            );
        };
        if !GenerateContent.well_formed(&r["request"]) {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("request {i} has no contents"),
            );
        }
        requests.push(Request {
            custom_id: key.to_string(),
            model: model.to_string(),
            body: r["request"].clone(),
        });
    }
    let origin = Origin {
        display_name: batch["displayName"].as_str().map(String::from),
        model: Some(model.to_string()),
        ..Origin::default()
    };
    created(s.make_batch(&GenerateContent, origin, requests), |id| {
        operation(s, id)
    })
}

/// `GET /v1beta/batches?pageSize=N&pageToken=T`: the batches, newest first.
async fn list(
    State(s): State<Arc<Shared>>,
    _: Authorized,
    Query(page): Query<HashMap<String, String>>,
) -> Response {
    let size = page_size(&page, "pageSize", 50, 1000);
    let start: usize = page
        .get("pageToken")
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let ids = s.batch_ids_newest_first(|b| b.wire.name() == GenerateContent.name());
    let operations: Vec<Value> = ids
        .iter()
        .skip(start)
        .take(size)
        .filter_map(|id| described(s.as_ref(), id))
        .collect();
    let mut reply = json!({ "operations": operations });
    if start + size < ids.len() {
        reply["nextPageToken"] = json!((start + size).to_string());
    }
    Json(reply).into_response()
}

/// `GET /v1beta/batches/{id}`.
async fn get_batch(
    State(s): State<Arc<Shared>>,
    _: Authorized,
    Path(id): Path<String>,
) -> Response {
    let id = format!("batches/{id}");
    s.polled(&id);
    operation(&s, &id)
}

fn operation(s: &Shared, id: &str) -> Response {
    batch_reply(described(s, id))
}

/// Batch `id` as the API describes it: an operation whose metadata is the batch.
fn described(s: &Shared, id: &str) -> Option<Value> {
    let store = s.batch_store();
    let b = store
        .batches
        .get(id)
        .filter(|b| b.wire.name() == GenerateContent.name())?;
    let total = b.requests.len();
    let created = rfc3339(b.created_at);
    let mut batch = json!({
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "model": format!("models/{}", b.origin.model.as_deref().unwrap_or_default()),
        "displayName": b.origin.display_name,
        "name": id,
        "createTime": created,
        "updateTime": created,
    });
    let mut op = json!({"name": id, "done": b.ended.is_some()});
    match &b.ended {
        None => {
            batch["state"] = json!("BATCH_STATE_RUNNING");
            batch["batchStats"] = json!({"requestCount": total.to_string(), "pendingRequestCount": total.to_string()});
        }
        Some(e) => {
            let responses: Vec<Value> = e
                .output
                .iter()
                .filter_map(|line| serde_json::from_str(line).ok())
                .collect();
            let output = json!({"inlinedResponses": {"inlinedResponses": responses}});
            batch["state"] = json!(e.status);
            batch["endTime"] = json!(rfc3339(e.ended_at));
            batch["batchStats"] = json!({
                "requestCount": total.to_string(),
                "successfulRequestCount": e.succeeded.to_string(),
                "failedRequestCount": (e.errored + e.expired).to_string(),
            });
            batch["output"] = output.clone();
            let mut response = output;
            response["@type"] = json!(
                "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
            );
            op["response"] = response;
        }
    }
    op["metadata"] = batch;
    Some(op)
}

/// Why Gemini refuses a thinking budget for `model`, in its words: the 2.5
/// models' ranges (Pro 128 to 32,768, never off; Flash 0 to 24,576;
/// Flash-Lite 512 to 24,576, or 0); -1 asks for a dynamic budget.
fn budget_refusal(model: &str, budget: i64) -> Option<String> {
    let (low, high, off) = if model.starts_with("gemini-2.5-pro") {
        (128, 32_768, false)
    } else if model.starts_with("gemini-2.5-flash-lite") {
        (512, 24_576, true)
    } else if model.starts_with("gemini-2.5-flash") {
        (0, 24_576, true)
    } else {
        return None;
    };
    if budget == -1 || (low..=high).contains(&budget) || (off && budget == 0) {
        return None;
    }
    Some(if budget == 0 {
        "Budget 0 is invalid. This model only works in thinking mode.".to_string()
    } else {
        format!("The thinking budget {budget} is invalid. Please choose a value between {low} and {high}.")
    })
}

//! OpenAI's chat completions, Responses API and Batch API, as the mock
//! server plays them (and as OpenAI-compatible servers and Azure OpenAI
//! speak them): `/v1/chat/completions`, `/v1/responses`; a JSONL file
//! uploaded to `/v1/files`, a batch made of it on `/v1/batches`, its output
//! and error files. Azure's paths are the same under `/openai`, with a
//! deployment's own path beside them.

use crate::answer::{answer, call_route, with_model, Body};
use crate::batch::{batch_reply, created, error, page_size};
use crate::shared::{Authorized, Shared, API_ERROR};
use crate::store::{unix_now, Origin, Request};
use crate::wire::{Completion, Got, Wire};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The chat-completions API.
pub(crate) struct ChatCompletions;

impl Wire for ChatCompletions {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn well_formed(&self, req: &Value) -> bool {
        req["messages"].is_array() && req["model"].is_string()
    }

    fn refusal(&self, req: &Value) -> Option<Value> {
        if !reasoning_model(req["model"].as_str().unwrap_or_default()) {
            return None;
        }
        if req.get("max_tokens").is_some() {
            return Some(invalid_request(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "max_tokens",
                json!("unsupported_parameter"),
            ));
        }
        default_only(req, "unsupported_value")
    }

    fn reply(&self, done: &Completion, n: u64, model: &str) -> Value {
        let mut usage = json!({"prompt_tokens": done.prompt_tokens, "completion_tokens": done.completion_tokens, "total_tokens": done.prompt_tokens + done.completion_tokens});
        if done.reasoning_tokens > 0 {
            usage["completion_tokens_details"] = json!({"reasoning_tokens": done.reasoning_tokens});
        }
        let finish = if done.cut { "length" } else { "stop" };
        json!({
            "id": format!("mock-{n}"),
            "object": "chat.completion",
            "created": unix_now(),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": done.text}, "finish_reason": finish}],
            "usage": usage,
        })
    }

    fn batch_id(&self, n: u64) -> String {
        format!("batch_mock{n}")
    }

    fn result_line(&self, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool) {
        file_result_line(self, n, custom_id, got)
    }

    fn ended_status(&self, expired: bool) -> &'static str {
        if expired {
            "expired"
        } else {
            "completed"
        }
    }

    fn results_in_files(&self) -> bool {
        true
    }
}

/// The Responses API.
pub(crate) struct Responses;

impl Wire for Responses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn well_formed(&self, req: &Value) -> bool {
        req["model"].is_string() && (req["input"].is_string() || req["input"].is_array())
    }

    fn refusal(&self, req: &Value) -> Option<Value> {
        let model = req["model"].as_str().unwrap_or_default();
        if !reasoning_model(model) {
            return None;
        }
        // The Responses API refuses the parameter outright, whatever its value.
        ["temperature", "top_p"]
            .into_iter()
            .find(|p| req.get(*p).is_some())
            .map(|p| {
                invalid_request(
                    &format!("Unsupported parameter: '{p}' is not supported with this model."),
                    p,
                    Value::Null,
                )
            })
    }

    fn prompt(&self, req: &Value) -> String {
        match &req["input"] {
            Value::String(s) => s.clone(),
            input => crate::wire::last_user_message(&json!({ "messages": input })),
        }
    }

    fn max_tokens(&self, req: &Value) -> Option<u64> {
        req["max_output_tokens"].as_u64()
    }

    fn reply(&self, done: &Completion, n: u64, model: &str) -> Value {
        let mut output = Vec::new();
        if done.reasoning_tokens > 0 {
            output.push(json!({"type": "reasoning", "id": format!("rs_mock{n}"), "summary": []}));
        }
        if !done.text.is_empty() {
            output.push(json!({"type": "message", "id": format!("msg_mock{n}"), "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": done.text, "annotations": []}]}));
        }
        let (status, incomplete) = if done.cut {
            ("incomplete", json!({"reason": "max_output_tokens"}))
        } else {
            ("completed", Value::Null)
        };
        json!({
            "id": format!("resp_mock{n}"), "object": "response", "created_at": unix_now(),
            "status": status, "incomplete_details": incomplete, "error": null,
            "model": model, "output": output, "instructions": null, "metadata": {},
            "parallel_tool_calls": true, "temperature": 1.0, "top_p": 1.0,
            "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": done.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": done.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": done.reasoning_tokens},
                "total_tokens": done.prompt_tokens + done.completion_tokens},
        })
    }

    fn batch_id(&self, n: u64) -> String {
        format!("batch_mock{n}")
    }

    fn result_line(&self, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool) {
        file_result_line(self, n, custom_id, got)
    }

    fn ended_status(&self, expired: bool) -> &'static str {
        ChatCompletions.ended_status(expired)
    }

    fn results_in_files(&self) -> bool {
        true
    }
}

/// A line of a Batch API output (or error) file, for either endpoint.
fn file_result_line(wire: &dyn Wire, n: u64, custom_id: &str, got: Got<'_>) -> (String, bool) {
    let line = match &got {
        Got::Expired => {
            json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
        }
        Got::Errored => {
            json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": {"status_code": 500, "request_id": format!("req_{n}"), "body": {"error": {"message": API_ERROR, "type": "server_error"}}}, "error": null})
        }
        Got::Refused(body) => {
            json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": {"status_code": 400, "request_id": format!("req_{n}"), "body": body}, "error": null})
        }
        Got::Answered(done, model) => {
            json!({"id": format!("batch_req_{n}"), "custom_id": custom_id, "response": {"status_code": 200, "request_id": format!("req_{n}"), "body": wire.reply(done, n, model)}, "error": null})
        }
    };
    (line.to_string(), !matches!(got, Got::Answered(..)))
}

/// The wire a Batch API endpoint's requests speak.
fn wire_of_endpoint(endpoint: &str) -> Option<&'static dyn Wire> {
    match endpoint {
        "/v1/chat/completions" | "/chat/completions" => Some(&ChatCompletions),
        "/v1/responses" | "/responses" => Some(&Responses),
        _ => None,
    }
}

/// Its routes.
pub(super) fn routes() -> Router<Arc<Shared>> {
    let api = Router::new()
        .route("/v1/chat/completions", call_route(&ChatCompletions))
        .route("/v1/responses", call_route(&Responses))
        .route("/v1/files", post(upload))
        .route("/v1/files/{id}/content", get(file_content))
        .route("/v1/batches", post(create).get(list))
        .route("/v1/batches/{id}", get(get_batch));
    // Azure's resource: the same API under `/openai`, and a deployment's own path.
    let resource = api.clone().route(
        "/deployments/{deployment}/chat/completions",
        post(deployment_chat),
    );
    api.nest("/openai", resource)
}

/// `POST /openai/deployments/{deployment}/chat/completions?api-version=…`:
/// the deployment is the model.
async fn deployment_chat(
    State(s): State<Arc<Shared>>,
    Path(deployment): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if !query.contains_key("api-version") {
        return error(
            StatusCode::NOT_FOUND,
            "api-version is required on a deployment's path",
        );
    }
    answer(s, headers, with_model(body, deployment), &ChatCompletions).await
}

/// `POST /v1/files`: a multipart upload of a batch input file.
async fn upload(State(s): State<Arc<Shared>>, _: Authorized, mut form: Multipart) -> Response {
    let (mut purpose, mut file, mut filename) = (None, None, None);
    loop {
        match form.next_field().await {
            Ok(Some(field)) => {
                let name = field.name().unwrap_or_default().to_string();
                if name == "file" {
                    filename = field.file_name().map(String::from);
                }
                let Ok(bytes) = field.bytes().await else {
                    return error(StatusCode::BAD_REQUEST, "a part could not be read");
                };
                match name.as_str() {
                    "purpose" => purpose = Some(String::from_utf8_lossy(&bytes).into_owned()),
                    "file" => file = Some(bytes.to_vec()),
                    _ => {}
                }
            }
            Ok(None) => break,
            Err(e) => return error(StatusCode::BAD_REQUEST, &e.body_text()),
        }
    }
    if purpose.as_deref() != Some("batch") {
        return error(StatusCode::BAD_REQUEST, "purpose must be \"batch\"");
    }
    let Some(file) = file else {
        return error(StatusCode::BAD_REQUEST, "no file part");
    };
    let n = s.files_made.fetch_add(1, Ordering::Relaxed);
    let id = format!("file-mock{n}");
    let bytes = file.len();
    s.batch_store().files.insert(id.clone(), file);
    Json(json!({
        "id": id, "object": "file", "bytes": bytes, "created_at": unix_now(),
        "filename": filename.unwrap_or_default(), "purpose": "batch",
    }))
    .into_response()
}

/// `POST /v1/batches`: a batch of the requests in an uploaded file.
async fn create(State(s): State<Arc<Shared>>, _: Authorized, Json(body): Json<Value>) -> Response {
    let endpoint = body["endpoint"].as_str().unwrap_or_default().to_string();
    let Some(wire) = wire_of_endpoint(&endpoint) else {
        return error(
            StatusCode::BAD_REQUEST,
            "endpoint must be /v1/chat/completions or /v1/responses",
        );
    };
    if body["completion_window"] != "24h" {
        return error(StatusCode::BAD_REQUEST, "completion_window must be 24h");
    }
    let Some(file_id) = body["input_file_id"].as_str() else {
        return error(StatusCode::BAD_REQUEST, "input_file_id is missing");
    };
    let Some(file) = s.batch_store().files.get(file_id).cloned() else {
        return error(StatusCode::NOT_FOUND, "no such file");
    };
    let mut requests = Vec::new();
    for (i, line) in String::from_utf8_lossy(&file).lines().enumerate() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("line {} is not JSON", i + 1),
            );
        };
        let ok = v["method"] == "POST"
            && v["url"] == endpoint.as_str()
            && v["custom_id"].is_string()
            && wire.well_formed(&v["body"]);
        if !ok {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("line {} is not a batch request to {endpoint}", i + 1),
            );
        }
        requests.push(Request {
            custom_id: v["custom_id"].as_str().unwrap_or_default().to_string(),
            model: v["body"]["model"].as_str().unwrap_or_default().to_string(),
            body: v["body"].clone(),
        });
    }
    let origin = Origin {
        input_file_id: Some(file_id.to_string()),
        endpoint: Some(endpoint),
        ..Origin::default()
    };
    created(s.make_batch(wire, origin, requests), |id| object(&s, id))
}

/// `GET /v1/batches?limit=N&after=ID`: the batches, newest first, a page at a time.
async fn list(
    State(s): State<Arc<Shared>>,
    _: Authorized,
    Query(page): Query<HashMap<String, String>>,
) -> Response {
    let limit = page_size(&page, "limit", 20, 100);
    let made = s.batch_ids_newest_first(|b| b.origin.input_file_id.is_some());
    let start = page
        .get("after")
        .and_then(|after| made.iter().position(|id| id == after))
        .map_or(0, |i| i + 1);
    let ids: Vec<String> = made.into_iter().skip(start).collect();
    let has_more = ids.len() > limit;
    let data: Vec<Value> = ids
        .iter()
        .take(limit)
        .filter_map(|id| described(&s, id))
        .collect();
    Json(json!({
        "object": "list", "data": data, "has_more": has_more,
        "first_id": data.first().map(|b| b["id"].clone()),
        "last_id": data.last().map(|b| b["id"].clone()),
    }))
    .into_response()
}

/// `GET /v1/batches/{id}`.
async fn get_batch(
    State(s): State<Arc<Shared>>,
    _: Authorized,
    Path(id): Path<String>,
) -> Response {
    s.polled(&id);
    object(&s, &id)
}

/// `GET /v1/files/{id}/content`.
async fn file_content(
    State(s): State<Arc<Shared>>,
    _: Authorized,
    Path(id): Path<String>,
) -> Response {
    match s.batch_store().files.get(&id) {
        Some(bytes) => bytes.clone().into_response(),
        None => error(StatusCode::NOT_FOUND, "no such file"),
    }
}

fn object(s: &Shared, id: &str) -> Response {
    batch_reply(described(s, id))
}

/// Batch `id` as OpenAI describes a batch.
fn described(s: &Shared, id: &str) -> Option<Value> {
    let store = s.batch_store();
    let b = store
        .batches
        .get(id)
        .filter(|b| b.origin.input_file_id.is_some())?;
    let total = b.requests.len() as u64;
    let (status, completed, failed, output, errors, ended_at) = match &b.ended {
        None => ("in_progress", 0, 0, None, None, None),
        Some(e) => (
            e.status,
            e.succeeded,
            e.errored + e.expired,
            e.output_file_id.clone(),
            e.error_file_id.clone(),
            Some(e.ended_at),
        ),
    };
    Some(json!({
        "id": id, "object": "batch", "endpoint": b.origin.endpoint, "errors": null,
        "input_file_id": b.origin.input_file_id, "completion_window": "24h", "status": status,
        "output_file_id": output, "error_file_id": errors, "created_at": b.created_at,
        "in_progress_at": b.created_at, "expires_at": b.created_at + 86_400,
        "completed_at": if status == "completed" { ended_at } else { None },
        "expired_at": if status == "expired" { ended_at } else { None },
        "request_counts": {"total": total, "completed": completed, "failed": failed},
        "metadata": null,
    }))
}

/// Whether OpenAI serves `model` as a reasoning model, which refuses
/// `max_tokens` and any temperature or `top_p` but its default: the
/// o-series and the gpt-5 family but for its chat models. The server's own
/// rule, kept apart from the client's, so a test of the client fails
/// where OpenAI would refuse it.
fn reasoning_model(model: &str) -> bool {
    let digit_after_o =
        model.starts_with('o') && model[1..].starts_with(|c: char| c.is_ascii_digit());
    digit_after_o || (model.starts_with("gpt-5") && !model.starts_with("gpt-5-chat"))
}

/// A chat-completions reasoning model's refusal of a temperature or
/// `top_p` other than its default of 1.
fn default_only(req: &Value, code: &str) -> Option<Value> {
    ["temperature", "top_p"].into_iter().find_map(|p| {
        let value = req.get(p)?;
        (value.as_f64() != Some(1.0)).then(|| {
            invalid_request(
                &format!("Unsupported value: '{p}' does not support {value} with this model. Only the default (1) value is supported."),
                p,
                json!(code),
            )
        })
    })
}

/// OpenAI's body for a request it refuses as invalid.
fn invalid_request(message: &str, param: &str, code: Value) -> Value {
    json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}})
}

//! OpenAI's chat-completions API and the servers that speak it (vLLM,
//! Ollama, llama.cpp and the local mock): bearer keys, `/chat/completions`,
//! `choices[0].message`, and errors as `{"error": {"message", "type",
//! "code"}}` (OpenAI, newer vLLM, Ollama, llama.cpp), `{"object": "error",
//! "message", "type", "code"}` (older vLLM) or `{"error": "…"}` (Ollama's own).

use super::{
    add_extra, finish_of, message_of, reported_usage, BatchListing, BatchResults, BatchState,
    FileBatches, Line, Provider, Reason, Submission,
};
use crate::Answer;
use autoeval_models::provider::Takes;
use autoeval_models::{GenerationParams, ModelSpec};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

/// Any OpenAI-compatible chat-completions server.
pub(crate) struct OpenAiCompatible;

/// OpenAI's Batch API for chat completions.
const CHAT_BATCHES: FileBatchApi = FileBatchApi {
    prefix: "",
    endpoint: "/v1/chat/completions",
};

impl Provider for OpenAiCompatible {
    fn chat_path(&self, _model: &str, _params: &GenerationParams) -> String {
        "/chat/completions".into()
    }

    fn request_body(&self, model: &str, p: &GenerationParams, takes: Takes, prompt: &str) -> Value {
        chat_body(model, p, takes, prompt)
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        read_chat_answer(v, spec)
    }

    fn reason(&self, status: u16, _headers: &HeaderMap, body: &Value) -> Reason {
        chat_reason(status, body)
    }

    fn file_batch_api(&self) -> Option<&'static FileBatchApi> {
        Some(&CHAT_BATCHES)
    }

    fn batch_name(&self) -> &'static str {
        "openai"
    }
}

/// A chat-completions request body.
pub(super) fn chat_body(model: &str, p: &GenerationParams, takes: Takes, prompt: &str) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &p.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.push(json!({"role": "user", "content": prompt}));
    let mut body = json!({"model": model, "messages": messages});
    if takes.temperature {
        body["temperature"] = json!(p.temperature);
    }
    // No cap at all when the settings give none: a local server then
    // fills the model's context, as the public implementation asked it.
    // Reasoning models refuse `max_tokens` and take `max_completion_tokens`.
    if let Some(cap) = p.max_tokens {
        let field = if p.reasoning {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body[field] = json!(cap);
    }
    if let Some(seed) = p.seed {
        body["seed"] = json!(seed);
    }
    if let Some(effort) = &p.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    add_extra(&mut body, p, takes);
    body
}

/// A chat-completions reply's answer; reasoning tokens from
/// `completion_tokens_details`, where the server reports them.
pub(super) fn read_chat_answer(v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
    let message = v["choices"][0].get("message").ok_or("no choices")?;
    // A null content (a reasoning model that ran out of tokens, a refusal)
    // is an empty answer: the model's, not the API's, failure.
    let text = message["content"].as_str().unwrap_or_default();
    let usage = reported_usage(&v["usage"], "prompt_tokens", "completion_tokens").map(|mut u| {
        u.reasoning_tokens = v["usage"]["completion_tokens_details"]["reasoning_tokens"]
            .as_u64()
            .unwrap_or(0);
        u
    });
    Ok(Answer {
        text: text.to_string(),
        usage,
        too_long: false,
        finish_reason: finish_of(spec, v["choices"][0]["finish_reason"].as_str()),
    })
}

/// Why a chat-completions server refused a request.
pub(super) fn chat_reason(status: u16, body: &Value) -> Reason {
    let error = if body["error"].is_object() {
        &body["error"]
    } else {
        body
    };
    let word = |field: &str| error[field].as_str().unwrap_or_default().to_lowercase();
    let (code, kind) = (word("code"), word("type"));
    let message = message_of(body);
    let is = |w: &str| code == w || kind == w;
    if is("insufficient_quota") || BILLING_CODES.iter().any(|c| is(c)) || spent(&message) {
        return Reason::QuotaExhausted;
    }
    // OpenAI: one request larger than the whole tokens-per-minute
    // budget, under the same code as a rate limit; no wait helps it.
    if message.starts_with("request too large for") {
        return Reason::TooLarge;
    }
    if is("context_length_exceeded")
        || is("exceed_context_size_error")
        || too_long_for_context(&message)
    {
        return Reason::ContextLength;
    }
    if is("invalid_api_key") || is("authentication_error") {
        return Reason::Auth;
    }
    // llama.cpp's router answers an unknown model with 400, Ollama's
    // type said `api_error` for everything before 0.18.
    let unknown_model = message.contains("model")
        && (message.contains("not found") || message.contains("does not exist"));
    if is("model_not_found") || (unknown_model && matches!(status, 400 | 404)) {
        return Reason::UnknownModel;
    }
    if is("not_supported_error") || cannot_serve(&message) {
        return Reason::Unservable;
    }
    match status {
        429 => Reason::RateLimit,
        // Unavailable for now: overloaded, busy, loading the model.
        503 | 529 => Reason::Overloaded,
        _ => super::refusal_of_status(status),
    }
}

/// OpenAI's codes for a spent account, beside `insufficient_quota`.
const BILLING_CODES: [&str; 5] = [
    "billing_hard_limit_reached",
    "credit_balance_exhausted",
    "organization_spend_limit_exceeded",
    "project_spend_limit_exceeded",
    "organization_usage_limit_exceeded",
];

/// Words by which a server says it cannot serve the model as it was
/// started, whatever the request (Ollama short of memory, llama.cpp
/// without a flag): a 5xx that no retry mends.
fn cannot_serve(message: &str) -> bool {
    message.contains("requires more system memory") || message.contains("--jinja")
}

/// Words by which OpenAI-compatible servers say the account's money is spent.
fn spent(message: &str) -> bool {
    message.contains("exceeded your current quota")
        || message.contains("check your plan and billing")
        || message.contains("credit balance is too low")
}

/// Words by which servers say prompt and cap exceed the model's context
/// (OpenAI and vLLM: "maximum context length is N tokens", "the model's
/// context length is only N tokens"; llama.cpp: "exceeds the available
/// context size", "Context size has been exceeded"; Ollama: "longer than
/// the context length"; Anthropic: "prompt is too long", "exceed context
/// limit", "exceeds model context window").
pub(super) fn too_long_for_context(message: &str) -> bool {
    [
        "maximum context length",
        "context length is only",
        "context length exceeded",
        "longer than the context length",
        "available context size",
        "context size has been exceeded",
        "context window",
        "exceed context limit",
        "prompt is too long",
    ]
    .iter()
    .any(|words| message.contains(words))
}

/// OpenAI's Batch API (and the same API elsewhere) for one endpoint:
/// a JSONL file of requests uploaded to `{prefix}/files`, a batch made
/// of it at `{prefix}/batches`, its output and error files.
pub(crate) struct FileBatchApi {
    /// What the API's paths start with under the base address.
    pub(super) prefix: &'static str,
    /// The endpoint each request goes to, as a batch line names it.
    pub(super) endpoint: &'static str,
}

impl FileBatchApi {
    /// `requests` as one uploaded file.
    pub(super) fn submission(&self, requests: &[(String, Value)]) -> Submission {
        let mut jsonl = Vec::new();
        for (custom_id, body) in requests {
            let line = json!({
                "custom_id": custom_id,
                "method": "POST",
                "url": self.endpoint,
                "body": body,
            });
            jsonl.extend_from_slice(line.to_string().as_bytes());
            jsonl.push(b'\n');
        }
        Submission::File {
            path: format!("{}/files", self.prefix),
            jsonl,
        }
    }

    /// The path of batch `id`.
    pub(super) fn batch_path(&self, id: &str) -> String {
        format!("{}/batches/{id}", self.prefix)
    }

    /// The path of a file's content.
    pub(super) fn results_file_path(&self, file_id: &str) -> String {
        format!("{}/files/{file_id}/content", self.prefix)
    }
}

impl FileBatches for FileBatchApi {
    fn batch_of_file(&self, file_id: &str) -> (String, Value) {
        let body = json!({
            "input_file_id": file_id,
            "endpoint": self.endpoint,
            "completion_window": "24h",
        });
        (format!("{}/batches", self.prefix), body)
    }
}

impl BatchListing for FileBatchApi {
    fn page_path(&self, next: Option<&str>) -> String {
        match next {
            None => format!("{}/batches?limit=100", self.prefix),
            Some(after) => format!("{}/batches?limit=100&after={after}", self.prefix),
        }
    }

    fn page(&self, page: &Value) -> Option<(Vec<Value>, Option<String>)> {
        let data = page["data"].as_array()?.clone();
        let next = match page["has_more"] == true {
            true => data.last().and_then(|b| b["id"].as_str()).map(String::from),
            false => None,
        };
        Some((data, next))
    }

    fn made_of(&self, batch: &Value, file_id: &str) -> bool {
        batch["input_file_id"] == file_id
    }

    fn id(&self, batch: &Value) -> Option<String> {
        batch["id"].as_str().map(String::from)
    }
}

/// A Batch API batch's state.
pub(super) fn batch_state(v: &Value) -> Result<BatchState, &'static str> {
    let status = v["status"].as_str().unwrap_or_default().to_string();
    let file = |k: &str| v[k].as_str().map(String::from);
    Ok(match status.as_str() {
        "completed" | "expired" | "cancelled" => BatchState::Ended {
            results: BatchResults::Files {
                output: file("output_file_id"),
                errors: file("error_file_id"),
            },
            status,
        },
        "failed" => {
            let why = v["errors"]["data"]
                .as_array()
                .and_then(|d| d.first())
                .and_then(|e| e["message"].as_str())
                .unwrap_or("the provider refused the batch")
                .to_string();
            BatchState::Ended {
                results: BatchResults::Refused(why),
                status,
            }
        }
        _ => BatchState::InFlight,
    })
}

/// One line of a Batch API output or error file.
pub(super) fn batch_line(line: &str) -> Option<(String, Line)> {
    let v: Value = serde_json::from_str(line).ok()?;
    let custom_id = v["custom_id"].as_str()?.to_string();
    let response = &v["response"];
    let status = response["status_code"].as_u64().map(|s| s as u16);
    let got = match status {
        Some(s) if (200..300).contains(&s) => Line::Answered {
            status,
            body: response["body"].to_string(),
        },
        _ => {
            let message = v["error"]["message"]
                .as_str()
                .or_else(|| response["body"]["error"]["message"].as_str())
                .unwrap_or("failed in its batch");
            let code = v["error"]["code"].as_str().unwrap_or_default();
            let expired = code == "batch_expired";
            let why = if code.is_empty() {
                message.to_string()
            } else {
                format!("{code}: {message}")
            };
            if expired {
                Line::Expired
            } else {
                Line::Failed { status, why }
            }
        }
    };
    Some((custom_id, got))
}

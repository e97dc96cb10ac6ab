//! OpenAI's chat-completions API and the servers that speak it (vLLM,
//! Ollama, llama.cpp and the local mock): bearer keys, `/chat/completions`,
//! `choices[0].message`, and errors as `{"error": {"message", "type",
//! "code"}}` (OpenAI, newer vLLM, Ollama, llama.cpp), `{"object": "error",
//! "message", "type", "code"}` (older vLLM) or `{"error": "…"}` (Ollama's own).

use super::{
    add_extra, message_of, reported_usage, BatchResults, BatchState, FileBatches, Line, Provider,
    Reason, Submission,
};
use crate::{Answer, ApiKey};
use autoeval_models::GenerationParams;
use serde_json::{json, Value};

/// Any OpenAI-compatible chat-completions server.
pub(crate) struct OpenAiCompatible;

impl Provider for OpenAiCompatible {
    fn default_base(&self) -> &'static str {
        "https://api.openai.com/v1"
    }

    fn chat_path(&self) -> &'static str {
        "/chat/completions"
    }

    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        key: Option<&ApiKey>,
    ) -> reqwest::RequestBuilder {
        match key {
            Some(k) => r.bearer_auth(k.expose()),
            None => r,
        }
    }

    fn request_body(&self, model: &str, p: &GenerationParams, prompt: &str) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &p.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": prompt}));
        let mut body = json!({"model": model, "messages": messages});
        // No cap at all when the settings give none: a local server then
        // fills the model's context, as the public implementation asked it.
        if p.reasoning {
            // o1/o3-style models reject max_tokens and any temperature.
            if let Some(cap) = p.max_tokens {
                body["max_completion_tokens"] = json!(cap);
            }
        } else {
            body["temperature"] = json!(p.temperature);
            if let Some(cap) = p.max_tokens {
                body["max_tokens"] = json!(cap);
            }
        }
        if let Some(seed) = p.seed {
            body["seed"] = json!(seed);
        }
        add_extra(&mut body, p);
        body
    }

    fn read_answer(&self, v: &Value) -> Result<Answer, &'static str> {
        let message = v["choices"][0].get("message").ok_or("no choices")?;
        // A null content (a reasoning model that ran out of tokens, a refusal)
        // is an empty answer: the model's, not the API's, failure.
        let text = message["content"].as_str().unwrap_or_default();
        Ok(Answer {
            text: text.to_string(),
            usage: reported_usage(&v["usage"], "prompt_tokens", "completion_tokens"),
            too_long: false,
            finish_reason: v["choices"][0]["finish_reason"].as_str().map(String::from),
        })
    }

    fn reason(&self, status: u16, body: &Value) -> Reason {
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

    fn batch_name(&self) -> &'static str {
        "openai"
    }

    fn batch_submission(&self, requests: &[(String, Value)]) -> Submission {
        let mut jsonl = Vec::new();
        for (custom_id, body) in requests {
            let line = json!({
                "custom_id": custom_id,
                "method": "POST",
                "url": "/v1/chat/completions",
                "body": body,
            });
            jsonl.extend_from_slice(line.to_string().as_bytes());
            jsonl.push(b'\n');
        }
        Submission::File {
            path: "/files",
            jsonl,
        }
    }

    fn file_batches(&self) -> Option<&dyn FileBatches> {
        Some(self)
    }

    fn batch_path(&self, id: &str) -> String {
        format!("/batches/{id}")
    }

    fn batch_state(&self, v: &Value) -> Result<BatchState, &'static str> {
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

    fn results_file_path(&self, file_id: &str) -> String {
        format!("/files/{file_id}/content")
    }

    fn batch_line(&self, line: &str) -> Option<(String, Line)> {
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
                let why = if code.is_empty() {
                    message.to_string()
                } else {
                    format!("{code}: {message}")
                };
                Line::Failed { status, why }
            }
        };
        Some((custom_id, got))
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

impl FileBatches for OpenAiCompatible {
    fn batch_of_file(&self, file_id: &str) -> (&'static str, Value) {
        let body = json!({
            "input_file_id": file_id,
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        });
        ("/batches", body)
    }

    fn batch_listing(&self) -> &'static str {
        "/batches?limit=100"
    }

    fn made_of(&self, batch: &Value, file_id: &str) -> bool {
        batch["input_file_id"] == file_id
    }
}

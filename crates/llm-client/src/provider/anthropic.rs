//! Anthropic's messages API: the key in `x-api-key` beside
//! `anthropic-version`, `/v1/messages`, an answer's `content` blocks, and
//! errors as `{"type": "error", "error": {"type", "message"}}`.

use super::{
    add_extra, finish_of, message_of, openai::too_long_for_context, reported_usage, with_key,
    BatchResults, BatchState, Line, Provider, Reason, Submission,
};
use crate::secret::Credentials;
use crate::Answer;
use autoeval_models::provider::{cap_beside_thinking, Takes};
use autoeval_models::{GenerationParams, ModelSpec};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

/// The version of Anthropic's API the requests are written for.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic's messages API.
pub(crate) struct Anthropic;

impl Provider for Anthropic {
    fn chat_path(&self, _model: &str, _params: &GenerationParams) -> String {
        "/v1/messages".into()
    }

    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        credentials: &Credentials,
    ) -> reqwest::RequestBuilder {
        let r = r.header("anthropic-version", ANTHROPIC_VERSION);
        with_key(r, credentials, Some("x-api-key"))
    }

    fn request_body(&self, model: &str, p: &GenerationParams, takes: Takes, prompt: &str) -> Value {
        // The API requires a cap: with none asked for, its models' ceiling;
        // beside a thinking budget, above it.
        let cap = p
            .max_tokens
            .unwrap_or(autoeval_models::provider::ANTHROPIC_OUTPUT_CEILING);
        let mut body = json!({
            "model": model,
            "max_tokens": cap_beside_thinking(cap, p.thinking_budget),
            "messages": [{"role": "user", "content": prompt}],
        });
        if takes.temperature {
            body["temperature"] = json!(p.temperature);
        }
        if let Some(system) = &p.system {
            body["system"] = json!(system);
        }
        if let Some(budget) = p.thinking_budget {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        add_extra(&mut body, p, takes);
        body
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        let text: String = v["content"]
            .as_array()
            .ok_or("no content")?
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect();
        Ok(Answer {
            text,
            usage: reported_usage(&v["usage"], "input_tokens", "output_tokens"),
            too_long: false,
            finish_reason: finish_of(spec, v["stop_reason"].as_str()),
        })
    }

    fn reason(&self, status: u16, _headers: &HeaderMap, body: &Value) -> Reason {
        let kind = body["error"]["type"].as_str().unwrap_or_default();
        let message = message_of(body);
        // A spend cap comes as a rate limit that no wait within the month mends.
        let spend_cap = body["error"]["details"]["error_code"] == "enforced_spend_limit_reached";
        match kind {
            "billing_error" => Reason::QuotaExhausted,
            _ if spend_cap => Reason::QuotaExhausted,
            "invalid_request_error"
                if message.contains("credit balance") || message.contains("api usage limits") =>
            {
                Reason::QuotaExhausted
            }
            "invalid_request_error" if too_long_for_context(&message) => Reason::ContextLength,
            "invalid_request_error" => Reason::BadRequest,
            "authentication_error" => Reason::Auth,
            "permission_error" => Reason::Permission,
            "not_found_error" => Reason::UnknownModel,
            "request_too_large" => Reason::TooLarge,
            "rate_limit_error" => Reason::RateLimit,
            "overloaded_error" => Reason::Overloaded,
            "api_error" if message.contains("overloaded") => Reason::Overloaded,
            "api_error" => Reason::ServerError,
            _ => super::refusal_of_status(status),
        }
    }

    fn batch_name(&self) -> &'static str {
        "anthropic"
    }

    fn batch_submission(&self, _model: &str, requests: &[(String, Value)]) -> Submission {
        let list: Vec<Value> = requests
            .iter()
            .map(|(custom_id, body)| json!({"custom_id": custom_id, "params": body}))
            .collect();
        Submission::Inline {
            path: "/v1/messages/batches".into(),
            body: json!({ "requests": list }),
            marker: None,
        }
    }

    fn batch_path(&self, id: &str) -> String {
        format!("/v1/messages/batches/{id}")
    }

    fn batch_state(&self, v: &Value) -> Result<BatchState, &'static str> {
        let status = v["processing_status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if status != "ended" {
            return Ok(BatchState::InFlight);
        }
        let url = v["results_url"]
            .as_str()
            .ok_or("an ended batch without results_url")?;
        Ok(BatchState::Ended {
            status,
            results: BatchResults::Url(url.to_string()),
        })
    }

    fn results_file_path(&self, file_id: &str) -> String {
        format!("/v1/files/{file_id}/content")
    }

    fn batch_line(&self, line: &str) -> Option<(String, Line)> {
        let v: Value = serde_json::from_str(line).ok()?;
        let custom_id = v["custom_id"].as_str()?.to_string();
        let result = &v["result"];
        let failed = |why: String| Line::Failed { status: None, why };
        let got = match result["type"].as_str().unwrap_or_default() {
            "succeeded" => Line::Answered {
                status: None,
                body: result["message"].to_string(),
            },
            "errored" => {
                let e = &result["error"]["error"];
                failed(format!(
                    "{}: {}",
                    e["type"].as_str().unwrap_or("error"),
                    e["message"].as_str().unwrap_or("failed in its batch")
                ))
            }
            "expired" => Line::Expired,
            other => failed(format!("{other}: not run in its batch")),
        };
        Some((custom_id, got))
    }
}

//! Google's Gemini API: `/v1beta/models/MODEL:generateContent`, the key in
//! `x-goog-api-key`, `contents` of `parts`, `generationConfig` with
//! `maxOutputTokens` and `thinkingConfig`; an answer's candidate parts
//! (thoughts aside) and `usageMetadata`; errors as `{"error": {"code",
//! "message", "status"}}`; Batch Mode with its requests inline, each batch
//! named after its requests so that a lost creation reply is found.

use super::{
    finish_of, message_of, openai::too_long_for_context, with_key, BatchListing, BatchResults,
    BatchState, Line, Provider, Reason, Submission,
};
use crate::secret::Credentials;
use crate::Answer;
use autoeval_models::provider::Takes;
use autoeval_models::{GenerationParams, ModelSpec, Usage};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The Gemini API.
pub(crate) struct Gemini;

/// The API version its paths are under.
const VERSION: &str = "/v1beta";

/// `model` as the API's paths name it: without a `models/` prefix.
fn bare(model: &str) -> &str {
    model.strip_prefix("models/").unwrap_or(model)
}

impl Provider for Gemini {
    fn chat_path(&self, model: &str, _params: &GenerationParams) -> String {
        format!("{VERSION}/models/{}:generateContent", bare(model))
    }

    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        credentials: &Credentials,
    ) -> reqwest::RequestBuilder {
        with_key(r, credentials, Some("x-goog-api-key"))
    }

    fn request_body(
        &self,
        _model: &str,
        p: &GenerationParams,
        takes: Takes,
        prompt: &str,
    ) -> Value {
        let mut config = json!({});
        if takes.temperature {
            config["temperature"] = json!(p.temperature);
        }
        if let Some(cap) = p.max_tokens {
            config["maxOutputTokens"] = json!(cap);
        }
        if let Some(seed) = p.seed {
            config["seed"] = json!(seed);
        }
        let mut thinking = serde_json::Map::new();
        if let Some(budget) = p.thinking_budget {
            thinking.insert("thinkingBudget".into(), json!(budget));
        }
        if let Some(effort) = &p.reasoning_effort {
            thinking.insert("thinkingLevel".into(), json!(effort));
        }
        if !thinking.is_empty() {
            config["thinkingConfig"] = Value::Object(thinking);
        }
        // Sampling fields beside these are the generation config's own (`topP`, `stopSequences`).
        for (k, v) in &p.extra {
            config[k] = v.clone();
        }
        let mut body = json!({
            "contents": [{"role": "user", "parts": [{"text": prompt}]}],
            "generationConfig": config,
        });
        if let Some(system) = &p.system {
            body["systemInstruction"] = json!({"parts": [{"text": system}]});
        }
        body
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        let candidate = &v["candidates"][0];
        // A prompt blocked outright has no candidate, only its feedback.
        let blocked = v["promptFeedback"]["blockReason"].as_str();
        if candidate.is_null() && blocked.is_none() {
            return Err("no candidates");
        }
        let text: String = candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|part| part["thought"] != true)
            .filter_map(|part| part["text"].as_str())
            .collect();
        let u = &v["usageMetadata"];
        let thoughts = u["thoughtsTokenCount"].as_u64().unwrap_or(0);
        let usage = u["promptTokenCount"].as_u64().map(|prompt| Usage {
            prompt_tokens: prompt,
            // Thinking is billed as output, beside the candidates.
            completion_tokens: u["candidatesTokenCount"].as_u64().unwrap_or(0) + thoughts,
            reasoning_tokens: thoughts,
        });
        let word = candidate["finishReason"].as_str().or(blocked);
        Ok(Answer {
            text,
            usage,
            too_long: false,
            finish_reason: finish_of(spec, word),
        })
    }

    fn reason(&self, status: u16, _headers: &HeaderMap, body: &Value) -> Reason {
        let kind = body["error"]["status"].as_str().unwrap_or_default();
        let message = message_of(body);
        let details = body["error"]["details"].to_string();
        match kind {
            // A day's quota is gone until tomorrow; a minute's comes back.
            "RESOURCE_EXHAUSTED" if details.contains("PerDay") => Reason::QuotaExhausted,
            "RESOURCE_EXHAUSTED" => Reason::RateLimit,
            "INVALID_ARGUMENT" if details.contains("API_KEY_INVALID") => Reason::Auth,
            "INVALID_ARGUMENT" if message.contains("api key not valid") => Reason::Auth,
            "INVALID_ARGUMENT"
                if too_long_for_context(&message)
                    || message.contains("exceeds the maximum number of tokens") =>
            {
                Reason::ContextLength
            }
            "INVALID_ARGUMENT" => Reason::BadRequest,
            "UNAUTHENTICATED" => Reason::Auth,
            // Also a country or a billing state the API is not offered in.
            "PERMISSION_DENIED" | "FAILED_PRECONDITION" => Reason::Permission,
            "NOT_FOUND" => Reason::UnknownModel,
            "UNAVAILABLE" => Reason::Overloaded,
            "DEADLINE_EXCEEDED" => Reason::Timeout,
            "INTERNAL" => Reason::ServerError,
            _ => super::refusal_of_status(status),
        }
    }

    fn batch_name(&self) -> &'static str {
        "gemini"
    }

    fn batch_submission(&self, model: &str, requests: &[(String, Value)]) -> Submission {
        let mut digest = Sha256::new();
        let inlined: Vec<Value> = requests
            .iter()
            .map(|(custom_id, body)| {
                digest.update(custom_id.as_bytes());
                json!({"request": body, "metadata": {"key": custom_id}})
            })
            .collect();
        let hex: String = digest.finalize()[..12]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        // The batch's name is made of its requests: a retry after a lost
        // reply finds the batch by it.
        let marker = format!("autoeval-{hex}");
        Submission::Inline {
            path: format!("{VERSION}/models/{}:batchGenerateContent", bare(model)),
            body: json!({"batch": {
                "displayName": marker,
                "inputConfig": {"requests": {"requests": inlined}},
            }}),
            marker: Some(marker),
        }
    }

    fn batch_listing(&self) -> Option<&dyn BatchListing> {
        Some(self)
    }

    fn batch_path(&self, id: &str) -> String {
        format!("{VERSION}/{id}")
    }

    fn batch_state(&self, v: &Value) -> Result<BatchState, &'static str> {
        let batch = &v["metadata"];
        let state = batch["state"].as_str().unwrap_or_default().to_string();
        let ended = |results| {
            Ok(BatchState::Ended {
                status: state.clone(),
                results,
            })
        };
        match state.as_str() {
            "BATCH_STATE_SUCCEEDED" | "BATCH_STATE_EXPIRED" | "BATCH_STATE_CANCELLED" => {
                let output = if batch["output"].is_object() {
                    &batch["output"]
                } else {
                    &v["response"]
                };
                if let Some(file) = output["responsesFile"].as_str() {
                    return ended(BatchResults::Files {
                        output: Some(file.to_string()),
                        errors: None,
                    });
                }
                let lines = output["inlinedResponses"]["inlinedResponses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(Value::to_string)
                    .collect();
                ended(BatchResults::Lines(lines))
            }
            "BATCH_STATE_FAILED" => {
                let why = v["error"]["message"]
                    .as_str()
                    .unwrap_or("the provider refused the batch")
                    .to_string();
                ended(BatchResults::Refused(why))
            }
            _ => Ok(BatchState::InFlight),
        }
    }

    fn results_file_path(&self, file_id: &str) -> String {
        format!("/download{VERSION}/{file_id}:download?alt=media")
    }

    fn batch_line(&self, line: &str) -> Option<(String, Line)> {
        let v: Value = serde_json::from_str(line).ok()?;
        let key = v["metadata"]["key"]
            .as_str()
            .or(v["key"].as_str())?
            .to_string();
        let got = if v["response"].is_object() {
            Line::Answered {
                status: None,
                body: v["response"].to_string(),
            }
        } else {
            let e = &v["error"];
            Line::Failed {
                status: e["code"].as_u64().and_then(|c| u16::try_from(c).ok()),
                why: format!(
                    "{}: {}",
                    e["status"].as_str().unwrap_or("error"),
                    e["message"].as_str().unwrap_or("failed in its batch")
                ),
            }
        };
        Some((key, got))
    }
}

impl BatchListing for Gemini {
    fn page_path(&self, next: Option<&str>) -> String {
        match next {
            None => format!("{VERSION}/batches?pageSize=100"),
            Some(token) => format!("{VERSION}/batches?pageSize=100&pageToken={token}"),
        }
    }

    fn page(&self, page: &Value) -> Option<(Vec<Value>, Option<String>)> {
        let batches = match &page["operations"] {
            Value::Array(list) => list.clone(),
            // An account with no batches gets an empty object.
            Value::Null => Vec::new(),
            _ => return None,
        };
        Some((batches, page["nextPageToken"].as_str().map(String::from)))
    }

    fn made_of(&self, batch: &Value, marker: &str) -> bool {
        batch["metadata"]["displayName"] == marker
    }

    fn id(&self, batch: &Value) -> Option<String> {
        batch["name"].as_str().map(String::from)
    }
}

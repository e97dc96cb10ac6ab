//! OpenAI's Responses API: `/responses` with `input`, `instructions`,
//! `max_output_tokens` and `reasoning.effort`; an answer's `output`
//! message items; `status: incomplete` with its reason; errors and the
//! Batch API as its chat completions have them.

use super::openai::{chat_reason, FileBatchApi};
use super::{add_extra, finish_of, Provider, Reason};
use crate::Answer;
use autoeval_models::provider::Takes;
use autoeval_models::{GenerationParams, ModelSpec, Usage};
use reqwest::header::HeaderMap;
use serde_json::{json, Value};

/// The Responses API.
pub(crate) struct Responses;

/// Its Batch API: the same as chat completions', for `/v1/responses`.
const BATCHES: FileBatchApi = FileBatchApi {
    prefix: "",
    endpoint: "/v1/responses",
};

impl Provider for Responses {
    fn chat_path(&self, _model: &str, _params: &GenerationParams) -> String {
        "/responses".into()
    }

    fn request_body(&self, model: &str, p: &GenerationParams, takes: Takes, prompt: &str) -> Value {
        let mut body = json!({"model": model, "input": prompt});
        if let Some(system) = &p.system {
            body["instructions"] = json!(system);
        }
        if let Some(cap) = p.max_tokens {
            body["max_output_tokens"] = json!(cap);
        }
        // Reasoning models take no temperature; the API has no seed.
        if takes.temperature {
            body["temperature"] = json!(p.temperature);
        }
        if let Some(effort) = &p.reasoning_effort {
            body["reasoning"] = json!({ "effort": effort });
        }
        add_extra(&mut body, p, takes);
        body
    }

    fn read_answer(&self, v: &Value, spec: &ModelSpec) -> Result<Answer, &'static str> {
        let output = v["output"].as_array().ok_or("no output")?;
        let text: String = output
            .iter()
            .filter(|item| item["type"] == "message")
            .flat_map(|item| item["content"].as_array().into_iter().flatten())
            .filter(|part| part["type"] == "output_text")
            .filter_map(|part| part["text"].as_str())
            .collect();
        let u = &v["usage"];
        let usage = match (u["input_tokens"].as_u64(), u["output_tokens"].as_u64()) {
            (Some(input), Some(output)) => Some(Usage {
                prompt_tokens: input,
                completion_tokens: output,
                reasoning_tokens: u["output_tokens_details"]["reasoning_tokens"]
                    .as_u64()
                    .unwrap_or(0),
            }),
            _ => None,
        };
        // An incomplete response says why in its details; a complete one
        // says so in its status.
        let word = match v["status"].as_str() {
            Some("incomplete") => v["incomplete_details"]["reason"].as_str(),
            status => status,
        };
        Ok(Answer {
            text,
            usage,
            too_long: false,
            finish_reason: finish_of(spec, word),
        })
    }

    fn reason(&self, status: u16, _headers: &HeaderMap, body: &Value) -> Reason {
        chat_reason(status, body)
    }

    fn file_batch_api(&self) -> Option<&'static FileBatchApi> {
        Some(&BATCHES)
    }

    fn batch_name(&self) -> &'static str {
        "openai-responses"
    }
}

//! Each provider's API in one module behind one trait: where a chat request
//! goes and how it is authorized, the request's shape, how an answer is
//! read, and what a refusal means. OpenAI-compatible servers (OpenAI,
//! vLLM, Ollama, llama.cpp) share one module, Anthropic has its own; the
//! built-in models never reach HTTP.

mod anthropic;
mod openai;
mod refusal;

pub use refusal::{Class, Reason};

use crate::{Answer, ApiKey};
use autoeval_models::{GenerationParams, ModelSpec};
use serde_json::Value;

/// One provider's HTTP API.
pub(crate) trait Provider: Sync {
    /// The address of its API when none is configured.
    fn default_base(&self) -> &'static str;
    /// The path of a chat request under the base address.
    fn chat_path(&self) -> &'static str;
    /// `r` carrying the key and any header the API requires.
    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        key: Option<&ApiKey>,
    ) -> reqwest::RequestBuilder;
    /// The body of one chat request for `prompt` to `model`.
    fn request_body(&self, model: &str, params: &GenerationParams, prompt: &str) -> Value;
    /// The answer in a successful reply, or what it lacks.
    fn read_answer(&self, reply: &Value) -> Result<Answer, &'static str>;
    /// Why the API refused a request with `status` and `body`.
    fn reason(&self, status: u16, body: &Value) -> Reason;
}

/// The provider of `spec`'s API.
pub(crate) fn of(spec: &ModelSpec) -> &'static dyn Provider {
    match spec {
        ModelSpec::Anthropic { .. } => &anthropic::Anthropic,
        _ => &openai::OpenAiCompatible,
    }
}

/// Why `spec`'s provider refused a request with `status` and this body.
pub fn reason_of(spec: &ModelSpec, status: u16, body: &[u8]) -> Reason {
    let body: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    of(spec).reason(status, &body)
}

/// The API's base address: the spec's own, the configured one, or the provider's.
pub(crate) fn base_url_of(spec: &ModelSpec, configured: Option<&str>) -> String {
    match spec {
        ModelSpec::OpenaiCompatible { base_url, .. } => base_url.clone(),
        _ => configured.unwrap_or(of(spec).default_base()).to_string(),
    }
}

/// The body of one chat request for `prompt`, in the shape of `spec`'s API.
pub(crate) fn request_body(spec: &ModelSpec, params: &GenerationParams, prompt: &str) -> Value {
    of(spec).request_body(&spec.model(), params, prompt)
}

/// Adds the extra body fields, replacing fields of the same name.
fn add_extra(body: &mut Value, params: &GenerationParams) {
    if let Some(b) = body.as_object_mut() {
        for (k, v) in &params.extra {
            b.insert(k.clone(), v.clone());
        }
    }
}

/// Token counts from a reply's usage object, when the server sent one.
fn reported_usage(usage: &Value, prompt: &str, completion: &str) -> Option<autoeval_models::Usage> {
    Some(autoeval_models::Usage {
        prompt_tokens: usage.get(prompt)?.as_u64()?,
        completion_tokens: usage.get(completion)?.as_u64()?,
    })
}

/// The error's words in a body, wherever the provider puts them, lowercased.
fn message_of(body: &Value) -> String {
    let text = match body {
        Value::String(s) => s.as_str(),
        _ => body["error"]["message"]
            .as_str()
            .or_else(|| body["error"].as_str())
            .or_else(|| body["message"].as_str())
            .or_else(|| body["detail"].as_str())
            .unwrap_or_default(),
    };
    text.to_lowercase()
}

/// The reason a status alone tells, when the body names none.
fn refusal_of_status(status: u16) -> Reason {
    match status {
        401 => Reason::Auth,
        402 => Reason::QuotaExhausted,
        403 => Reason::Permission,
        404 => Reason::UnknownModel,
        408 => Reason::Timeout,
        413 => Reason::TooLarge,
        400 | 422 => Reason::BadRequest,
        429 => Reason::RateLimit,
        529 => Reason::Overloaded,
        500..=599 => Reason::ServerError,
        _ => Reason::Other,
    }
}

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
use autoeval_models::provider::Api;
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

    /// Its batch API's name, as the journal keeps it.
    fn batch_name(&self) -> &'static str;
    /// How `requests` (custom id, request body) are submitted as one batch.
    fn batch_submission(&self, requests: &[(String, Value)]) -> Submission;
    /// Its API's way of making a batch of an uploaded file, when it
    /// submits batches as files ([`Submission::File`]); none when it takes
    /// them inline.
    fn file_batches(&self) -> Option<&dyn FileBatches> {
        None
    }
    /// The path of batch `id`'s state.
    fn batch_path(&self, id: &str) -> String;
    /// A batch's state, read from its reply.
    fn batch_state(&self, reply: &Value) -> Result<BatchState, &'static str>;
    /// The path of a results file's content.
    fn results_file_path(&self, file_id: &str) -> String;
    /// One line of an ended batch's results: the request's id and what it got.
    fn batch_line(&self, line: &str) -> Option<(String, Line)>;
}

/// How a batch is submitted.
pub(crate) enum Submission {
    /// The requests in one JSON `body` posted to `path`; the reply's `id`
    /// names the batch. Such a batch carries nothing to find it by, so a
    /// retry after a lost reply may make a second.
    Inline {
        /// Where the body goes.
        path: &'static str,
        /// The requests.
        body: Value,
    },
    /// The requests uploaded as a JSONL file (`jsonl`) to `path`, then a
    /// batch made of the file ([`FileBatches::batch_of_file`]); a retry finds
    /// the batch a lost reply made by its file ([`FileBatches::made_of`]).
    File {
        /// Where the file goes.
        path: &'static str,
        /// The file: one request a line.
        jsonl: Vec<u8>,
    },
}

/// The batch API of a provider that makes a batch of an uploaded file
/// ([`Submission::File`]): the batch made of the file, and, for a retry
/// after a lost reply, the batch a file already made.
pub(crate) trait FileBatches: Sync {
    /// The path and body that make a batch of file `file_id`.
    fn batch_of_file(&self, file_id: &str) -> (&'static str, Value);
    /// The path listing batches, newest first, a page of a hundred
    /// (`after=ID` pages on).
    fn batch_listing(&self) -> &'static str;
    /// Whether `batch`, as listed, was made of file `file_id`.
    fn made_of(&self, batch: &Value, file_id: &str) -> bool;
}

/// A batch's state at the provider.
pub(crate) enum BatchState {
    /// Not ended.
    InFlight,
    /// Ended with `status`; its results are at `results`.
    Ended {
        /// The provider's word for how it ended.
        status: String,
        /// Where the results are.
        results: BatchResults,
    },
}

/// Where an ended batch's results are.
pub(crate) enum BatchResults {
    /// Files of result lines: the output, and the errors.
    Files {
        /// The output file's id.
        output: Option<String>,
        /// The error file's id.
        errors: Option<String>,
    },
    /// One address of result lines.
    Url(String),
    /// None: the batch as a whole failed, for this reason.
    Refused(String),
}

/// What one request of an ended batch got.
pub(crate) enum Line {
    /// A reply with `status` and this body, read as a chat reply.
    Answered {
        /// Its HTTP status, when the line gives one.
        status: Option<u16>,
        /// The reply's body.
        body: String,
    },
    /// No reply: why, and the status when the line gives one.
    Failed {
        /// Its HTTP status.
        status: Option<u16>,
        /// Why, in the provider's words.
        why: String,
    },
}

/// The provider of `spec`'s API, by the shape of the API it speaks.
pub(crate) fn of(spec: &ModelSpec) -> &'static dyn Provider {
    match spec.api() {
        Api::Messages => &anthropic::Anthropic,
        Api::ChatCompletions | Api::InProcess => &openai::OpenAiCompatible,
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
    spec.base_url()
        .or(configured)
        .unwrap_or(of(spec).default_base())
        .to_string()
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

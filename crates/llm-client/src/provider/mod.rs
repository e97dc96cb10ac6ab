//! Each provider's API in one module behind one trait: where a chat request
//! goes and how it is authorized, the request's shape, how an answer is
//! read, and what a refusal means. OpenAI-compatible servers (OpenAI,
//! vLLM, Ollama, llama.cpp) share one module, Anthropic has its own; the
//! built-in models never reach HTTP.

mod anthropic;
mod azure;
mod bedrock;
mod gemini;
mod openai;
mod refusal;
mod responses;

pub use refusal::{Class, Reason};

use crate::secret::Credentials;
use crate::{Answer, ApiKey};
use autoeval_models::provider::{Api, Takes};
use autoeval_models::{GenerationParams, ModelSpec};
use reqwest::header::HeaderMap;
use serde_json::Value;

/// One provider's HTTP API.
pub(crate) trait Provider: Sync {
    /// The address of its API when neither the spec, a variable nor the
    /// provider's own entry gives one (Bedrock's, from the region).
    fn default_base(&self, _credentials: &Credentials) -> Option<String> {
        None
    }
    /// The path of a chat request to `model` under the base address.
    fn chat_path(&self, model: &str, params: &GenerationParams) -> String;
    /// Its credentials, each variable's value read by `lookup` (the
    /// environment, then the secrets file); why not, when it needs some
    /// and has none.
    fn credentials(
        &self,
        spec: &ModelSpec,
        lookup: &dyn Fn(&str) -> Option<ApiKey>,
    ) -> Result<Credentials, String> {
        let key = spec
            .key_variable()
            .and_then(|var| Some((lookup(var)?, var)));
        if key.is_none() && spec.provider().requires_key() {
            let var = spec.key_variable().unwrap_or("the API key variable");
            return Err(format!(
                "{spec} needs an API key: set {var} in the environment or in the secrets file"
            ));
        }
        Ok(Credentials {
            key,
            ..Credentials::default()
        })
    }
    /// `r` carrying the key and any header the API requires: by default
    /// the key as a bearer token.
    fn authorize(
        &self,
        r: reqwest::RequestBuilder,
        credentials: &Credentials,
    ) -> reqwest::RequestBuilder {
        with_key(r, credentials, None)
    }
    /// Signs `request`, built whole, when the API signs each request
    /// rather than carry a key.
    fn sign(
        &self,
        _request: &mut reqwest::Request,
        _credentials: &Credentials,
    ) -> Result<(), String> {
        Ok(())
    }
    /// The body of one chat request for `prompt` to `model`.
    /// `takes` says which sampling settings the model takes; one it does
    /// not is left out.
    fn request_body(
        &self,
        model: &str,
        params: &GenerationParams,
        takes: Takes,
        prompt: &str,
    ) -> Value;
    /// The answer in a successful reply, or what it lacks; `spec`'s
    /// provider says what its finish reasons mean.
    fn read_answer(&self, reply: &Value, spec: &ModelSpec) -> Result<Answer, &'static str>;
    /// Why the API refused a request with `status`, `headers` and `body`.
    fn reason(&self, status: u16, headers: &HeaderMap, body: &Value) -> Reason;

    /// Its batch API's name, as the journal keeps it.
    fn batch_name(&self) -> &'static str;
    /// OpenAI's Batch API, for an API that batches through it (its batch
    /// methods then default to it); `None` for one with its own.
    fn file_batch_api(&self) -> Option<&'static openai::FileBatchApi> {
        None
    }
    /// How `requests` (custom id, request body) to `model` are submitted as one batch.
    fn batch_submission(&self, _model: &str, requests: &[(String, Value)]) -> Submission {
        match self.file_batch_api() {
            Some(api) => api.submission(requests),
            None => Submission::Inline {
                path: String::new(),
                body: Value::Null,
                marker: None,
            },
        }
    }
    /// Its API's way of making a batch of an uploaded file, when it
    /// submits batches as files ([`Submission::File`]); none when it takes
    /// them inline.
    fn file_batches(&self) -> Option<&dyn FileBatches> {
        self.file_batch_api().map(|api| api as &dyn FileBatches)
    }
    /// How its batches are listed, to find the one a lost reply made.
    fn batch_listing(&self) -> Option<&dyn BatchListing> {
        self.file_batch_api().map(|api| api as &dyn BatchListing)
    }
    /// The path of batch `id`'s state.
    fn batch_path(&self, id: &str) -> String {
        self.file_batch_api()
            .map_or_else(|| id.to_string(), |api| api.batch_path(id))
    }
    /// A batch's state, read from its reply.
    fn batch_state(&self, reply: &Value) -> Result<BatchState, &'static str> {
        match self.file_batch_api() {
            Some(_) => openai::batch_state(reply),
            None => Err("this API has no batches here"),
        }
    }
    /// The path of a results file's content.
    fn results_file_path(&self, file_id: &str) -> String {
        self.file_batch_api()
            .map_or_else(|| file_id.to_string(), |api| api.results_file_path(file_id))
    }
    /// One line of an ended batch's results: the request's id and what it got.
    fn batch_line(&self, line: &str) -> Option<(String, Line)> {
        self.file_batch_api().and_then(|_| openai::batch_line(line))
    }
}

/// How a batch is submitted.
pub(crate) enum Submission {
    /// The requests in one JSON `body` posted to `path`; the reply's `id`
    /// (or `name`) names the batch. A batch with a `marker` (a name made
    /// of its requests) is found by it after a lost reply; one without
    /// carries nothing to find it by, so a retry after a lost reply may
    /// make a second.
    Inline {
        /// Where the body goes.
        path: String,
        /// The requests.
        body: Value,
        /// The name the batch carries, when the API keeps one.
        marker: Option<String>,
    },
    /// The requests uploaded as a JSONL file (`jsonl`) to `path`, then a
    /// batch made of the file ([`FileBatches::batch_of_file`]); a retry finds
    /// the batch a lost reply made by its file ([`FileBatches::made_of`]).
    File {
        /// Where the file goes.
        path: String,
        /// The file: one request a line.
        jsonl: Vec<u8>,
    },
}

/// The batch API of a provider that makes a batch of an uploaded file
/// ([`Submission::File`]).
pub(crate) trait FileBatches: Sync {
    /// The path and body that make a batch of file `file_id`.
    fn batch_of_file(&self, file_id: &str) -> (String, Value);
}

/// How a provider lists its batches, newest first: a retry after a lost
/// reply finds the batch that reply was for by its file or its marker.
pub(crate) trait BatchListing: Sync {
    /// The path of the first page (`None`) or of the page after `next`.
    fn page_path(&self, next: Option<&str>) -> String;
    /// The batches a page lists, and what names the page after it.
    fn page(&self, page: &Value) -> Option<(Vec<Value>, Option<String>)>;
    /// Whether `batch`, as listed, was made of `made_of`: a file's id or a marker.
    fn made_of(&self, batch: &Value, made_of: &str) -> bool;
    /// A listed batch's id.
    fn id(&self, batch: &Value) -> Option<String>;
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
    /// The result lines themselves, in the state's reply.
    Lines(Vec<String>),
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
    /// No reply: the batch ended (its window closed) before this request ran.
    Expired,
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
        Api::Responses => &responses::Responses,
        Api::DeploymentChat => &azure::Azure,
        Api::GenerateContent => &gemini::Gemini,
        Api::Converse => &bedrock::Bedrock,
        Api::ChatCompletions | Api::InProcess => &openai::OpenAiCompatible,
    }
}

/// Why `spec`'s provider refused a request with `status`, `headers` and this body.
pub fn reason_of(spec: &ModelSpec, status: u16, headers: &HeaderMap, body: &[u8]) -> Reason {
    let body: Value = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    of(spec).reason(status, headers, &body)
}

/// The API's base address: the spec's own, the configured one, the
/// provider's, or the one its module computes (none: an empty address,
/// which the first request's failure names).
pub(crate) fn base_url_of(
    spec: &ModelSpec,
    configured: Option<&str>,
    credentials: &Credentials,
) -> String {
    spec.base_url()
        .or(configured)
        .or(spec.provider().default_base_url())
        .map(String::from)
        .or_else(|| of(spec).default_base(credentials))
        .unwrap_or_default()
}

/// The body of one chat request for `prompt`, in the shape of `spec`'s API.
pub(crate) fn request_body(spec: &ModelSpec, params: &GenerationParams, prompt: &str) -> Value {
    let model = spec.model();
    let takes = spec.provider().takes(&model, params);
    of(spec).request_body(&model, params, takes, prompt)
}

/// The credentials of `spec`'s provider, each variable read from the
/// environment or `secrets_file`.
pub(crate) fn credentials_of(
    spec: &ModelSpec,
    secrets_file: Option<&std::path::Path>,
) -> Result<Credentials, String> {
    of(spec).credentials(spec, &|var| ApiKey::lookup(var, secrets_file))
}

/// What `spec`'s provider means by its finish reason `word`, if it gave one.
fn finish_of(spec: &ModelSpec, word: Option<&str>) -> Option<autoeval_models::Finish> {
    word.map(|w| spec.provider().finish(w))
}

/// Adds the extra body fields, replacing fields of the same name.
fn add_extra(body: &mut Value, params: &GenerationParams, takes: Takes) {
    if let Some(b) = body.as_object_mut() {
        for (k, v) in &params.extra {
            if k == "top_p" && !takes.top_p {
                continue;
            }
            b.insert(k.clone(), v.clone());
        }
    }
}

/// Token counts from a reply's usage object, when the server sent one.
fn reported_usage(usage: &Value, prompt: &str, completion: &str) -> Option<autoeval_models::Usage> {
    Some(autoeval_models::Usage::new(
        usage.get(prompt)?.as_u64()?,
        usage.get(completion)?.as_u64()?,
    ))
}

/// The bearer or header key of `credentials` on `r`: `header` names the
/// header, `None` for `Authorization: Bearer`.
fn with_key(
    r: reqwest::RequestBuilder,
    credentials: &Credentials,
    header: Option<&str>,
) -> reqwest::RequestBuilder {
    match (credentials.key(), header) {
        (Some(k), None) => r.bearer_auth(k.expose()),
        (Some(k), Some(name)) => r.header(name, k.expose()),
        (None, _) => r,
    }
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

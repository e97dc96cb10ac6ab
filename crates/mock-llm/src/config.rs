//! How the mock server behaves, and what it counts.

use axum::http::{header, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How the server behaves.
#[derive(Clone, PartialEq)]
pub struct MockConfig {
    /// Which built-in model answers.
    pub play: autoeval_reference_model::Builtin,
    /// Delay before every answer.
    pub latency: Duration,
    /// Fraction of requests that fail: half with 500, half by dropping the connection.
    pub error_rate: f64,
    /// Requests per minute before answering 429 with Retry-After, enforced
    /// per second (`rpm / 60` a second, at least one); `None` for no limit.
    pub rate_limit_rpm: Option<u32>,
    /// The Retry-After header a 429 carries (`1` when `None`): any text, to
    /// see what a client makes of a server's number.
    pub retry_after: Option<String>,
    /// Bytes of filler added to every answer's English, to send replies
    /// as large as wanted.
    pub pad_reply_bytes: usize,
    /// Fraction of prompts (chosen by a hash of the prompt, so the same
    /// prompt always) answered cut at the token cap: the first half of the
    /// reply, with `finish_reason` `length`; a judge's reply is cut in its
    /// explanation after its verdict (`[Answer] yes, because A formal…`).
    pub truncate_rate: f64,
    /// `Some(key)` to answer 401 to a request not carrying `Bearer key`,
    /// echoing the `Authorization` it was sent in the error's message, as
    /// some providers do: the worst a server can hand back to a client.
    pub require_key: Option<String>,
    /// Requests answered at once before more are answered 429 (with
    /// Retry-After 0): a provider's concurrency limit; `None` for none.
    pub max_concurrent: Option<usize>,
    /// How long a batch is in progress before it ends.
    pub batch_delay: Duration,
    /// Fraction of batched requests that fail inside their batch (drawn
    /// per request served, so a retry may pass).
    pub batch_failure_rate: f64,
    /// Which batches (by the order they were made, from 0) expire: their
    /// window closes with the first half of their requests answered.
    pub expire_batches: Vec<usize>,
    /// Which batches (by the order they were made, from 0) are made but
    /// answered 502: the reply to their creation is lost on the way, as
    /// when a connection drops after the provider acted.
    pub lose_batch_replies: Vec<usize>,
    /// Fraction of prompts (by a hash of the prompt) a reasoning model
    /// thinks about until the token cap, answering nothing (cut at the
    /// cap, every output token a thinking token); when above 0, the other
    /// answers are thought about too, three thinking tokens a word.
    pub thinking_rate: f64,
    /// Keep every `POST` request as it came, for `GET /recorded-requests`.
    pub record_requests: bool,
    /// A provider's error reply given to every chat request past the
    /// first few: a spent quota, an absurd Retry-After, an unknown model.
    pub refusal: Option<Refusal>,
    /// The model's context length in tokens, as vLLM enforces it: a request
    /// whose prompt (four characters a token) plus its `max_tokens` exceeds
    /// it is answered 400 with vLLM's words; one without `max_tokens` fits
    /// whenever its prompt does. `None` for no limit.
    pub context_length: Option<u64>,
}

/// A recorded provider error: its status, headers and body, answered to
/// every chat request after the first `after`.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// Headers sent with it (`retry-after`, …).
    pub headers: Vec<(String, String)>,
    /// The body, sent as JSON (a string is sent as its text).
    pub body: serde_json::Value,
    /// Requests answered normally before the refusals begin.
    pub after: u64,
}

impl Refusal {
    /// The refusal a fixture file describes: `{"status", "headers", "body"}`.
    pub fn from_fixture(fixture: &serde_json::Value, after: u64) -> Result<Refusal, String> {
        let status = fixture["status"]
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .ok_or("the fixture has no numeric \"status\"")?;
        let headers = fixture["headers"]
            .as_object()
            .map(|h| {
                h.iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), String::from),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Refusal {
            status,
            headers,
            body: fixture["body"].clone(),
            after,
        })
    }

    /// The reply, as the provider sent it.
    pub(crate) fn response(&self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let mut builder = Response::builder().status(status);
        for (k, v) in &self.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let (kind, body) = match &self.body {
            serde_json::Value::String(text) => ("text/plain", text.clone()),
            json => ("application/json", json.to_string()),
        };
        builder
            .header(header::CONTENT_TYPE, kind)
            .body(axum::body::Body::from(body))
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for MockConfig {
    // The key it requires is a secret: a debug print says only whether there is one.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockConfig")
            .field("play", &self.play)
            .field("latency", &self.latency)
            .field("error_rate", &self.error_rate)
            .field("rate_limit_rpm", &self.rate_limit_rpm)
            .field("retry_after", &self.retry_after)
            .field("pad_reply_bytes", &self.pad_reply_bytes)
            .field("truncate_rate", &self.truncate_rate)
            .field("thinking_rate", &self.thinking_rate)
            .field("record_requests", &self.record_requests)
            .field("require_key", &self.require_key.as_ref().map(|_| "***"))
            .field("max_concurrent", &self.max_concurrent)
            .field("batch_delay", &self.batch_delay)
            .field("batch_failure_rate", &self.batch_failure_rate)
            .field("expire_batches", &self.expire_batches)
            .field("lose_batch_replies", &self.lose_batch_replies)
            .field("refusal", &self.refusal)
            .finish()
    }
}

impl Default for MockConfig {
    fn default() -> MockConfig {
        MockConfig {
            play: autoeval_reference_model::Builtin::Exact,
            latency: Duration::ZERO,
            error_rate: 0.0,
            rate_limit_rpm: None,
            retry_after: None,
            pad_reply_bytes: 0,
            truncate_rate: 0.0,
            thinking_rate: 0.0,
            record_requests: false,
            require_key: None,
            max_concurrent: None,
            batch_delay: Duration::ZERO,
            batch_failure_rate: 0.0,
            expire_batches: Vec::new(),
            lose_batch_replies: Vec::new(),
            refusal: None,
            context_length: None,
        }
    }
}

/// One request as the server saw it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// When it came, in ms since the server started.
    pub at_ms: f64,
    /// The HTTP status it was answered with (200 also for a dropped connection).
    pub status: u16,
    /// Prompt plus completion tokens reported for it (0 unless completed).
    pub tokens: u64,
}

/// What the server has served so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Every chat request received.
    pub requests: u64,
    /// Requests answered with a completion.
    pub completions: u64,
    /// Requests answered 429.
    pub rate_limited: u64,
    /// Requests answered 500.
    pub server_errors: u64,
    /// Requests whose connection was dropped.
    pub dropped: u64,
    /// Requests answered 401 (their key was not the one required).
    #[serde(default)]
    pub unauthorized: u64,
    /// Requests answered with the configured refusal.
    #[serde(default)]
    pub refused: u64,
    /// Requests answered 400 for asking more than the model's context.
    #[serde(default)]
    pub over_context: u64,
    /// Replies cut at the token cap (`--truncate-rate`).
    #[serde(default)]
    pub truncated: u64,
    /// Batch input files uploaded, and output and error files made.
    #[serde(default)]
    pub files: u64,
    /// Batches made, through either API.
    #[serde(default)]
    pub batches: u64,
    /// Requests submitted in batches.
    #[serde(default)]
    pub batch_requests: u64,
    /// Batched requests answered.
    #[serde(default)]
    pub batch_succeeded: u64,
    /// Batched requests that failed inside their batch.
    #[serde(default)]
    pub batch_failed: u64,
    /// Batched requests whose batch expired before them.
    #[serde(default)]
    pub batch_expired: u64,
    /// Polls of a batch's state.
    #[serde(default)]
    pub batch_polls: u64,
}

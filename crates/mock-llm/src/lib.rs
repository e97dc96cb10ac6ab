//! A local model server that answers with the reference model, in
//! OpenAI's chat-completions shape and Anthropic's messages shape, and
//! through both providers' batch APIs (`batch.rs`). Tests and benchmarks
//! use it to drive the real HTTP path: it can add latency, answer 429 with
//! Retry-After past a request rate or past a number of requests at once,
//! answer 500, drop connections, fail or expire batched requests, and it
//! counts what it served (`GET /stats`), how often each prompt was asked
//! (`GET /prompts`) and each batched request submitted (`GET /batch-submissions`).

mod batch;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the server behaves.
#[derive(Clone, PartialEq)]
pub struct MockConfig {
    /// `None` for the exact reference model, `Some(rate)` for reference-noisy.
    pub noise: Option<f64>,
    /// `Some(rate)` to answer as `reference-chatty:RATE` (formulas dressed in prose, ASCII or equations).
    pub chatty: Option<f64>,
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
    fn response(&self) -> Response {
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
            .field("noise", &self.noise)
            .field("chatty", &self.chatty)
            .field("latency", &self.latency)
            .field("error_rate", &self.error_rate)
            .field("rate_limit_rpm", &self.rate_limit_rpm)
            .field("retry_after", &self.retry_after)
            .field("pad_reply_bytes", &self.pad_reply_bytes)
            .field("truncate_rate", &self.truncate_rate)
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
            noise: None,
            chatty: None,
            latency: Duration::ZERO,
            error_rate: 0.0,
            rate_limit_rpm: None,
            retry_after: None,
            pad_reply_bytes: 0,
            truncate_rate: 0.0,
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

struct Shared {
    config: MockConfig,
    requests: AtomicU64,
    completions: AtomicU64,
    rate_limited: AtomicU64,
    server_errors: AtomicU64,
    dropped: AtomicU64,
    unauthorized: AtomicU64,
    refused: AtomicU64,
    over_context: AtomicU64,
    truncated: AtomicU64,
    /// Start of the current one-second window and requests in it.
    window: Mutex<(Instant, u32)>,
    /// Requests per prompt digest.
    prompts: Mutex<HashMap<String, u64>>,
    /// When the server started, for arrival times.
    epoch: Instant,
    /// Every request, in the order they were answered.
    timeline: Mutex<Vec<Arrival>>,
    /// Requests being answered now.
    in_flight: AtomicU64,
    files_made: AtomicU64,
    batches_made: AtomicU64,
    batch_requests: AtomicU64,
    batch_succeeded: AtomicU64,
    batch_failed: AtomicU64,
    batch_expired: AtomicU64,
    batch_polls: AtomicU64,
    /// Draws of batched requests served, for their failures.
    batch_draws: AtomicU64,
    /// Files and batches.
    batches: Mutex<batch::Store>,
}

/// The message of an injected failure.
const API_ERROR: &str = "injected failure";

/// One answer, to be written in either provider's shape.
struct Completion {
    text: String,
    finish_reason: &'static str,
    prompt_tokens: usize,
    completion_tokens: usize,
}

impl Completion {
    /// A chat completion, OpenAI's shape.
    fn openai(&self, n: u64, model: &str) -> serde_json::Value {
        json!({
            "id": format!("mock-{n}"),
            "object": "chat.completion",
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.text}, "finish_reason": self.finish_reason}],
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens, "total_tokens": self.prompt_tokens + self.completion_tokens},
        })
    }

    /// A message, Anthropic's shape.
    fn anthropic(&self, n: u64, model: &str) -> serde_json::Value {
        let stop = if self.finish_reason == "length" {
            "max_tokens"
        } else {
            "end_turn"
        };
        json!({
            "id": format!("msg_mock{n}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": self.text}],
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": self.completion_tokens},
        })
    }
}

/// The last user message of a chat or messages request body: a string, or
/// the text of its content blocks.
fn last_user_message(body: &serde_json::Value) -> String {
    let Some(messages) = body["messages"].as_array() else {
        return String::new();
    };
    let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") else {
        return String::new();
    };
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect()
        }
        _ => String::new(),
    }
}

impl Shared {
    /// vLLM's 400 for a request longer than the model's context.
    fn over_context(&self, req: &serde_json::Value, prompt: &str) -> Option<Response> {
        let context = self.config.context_length?;
        let input = (prompt.chars().count() as u64).div_ceil(4);
        let output = req["max_tokens"]
            .as_u64()
            .or_else(|| req["max_completion_tokens"].as_u64())
            .unwrap_or(0);
        if input + output <= context {
            return None;
        }
        self.over_context.fetch_add(1, Ordering::Relaxed);
        let message = format!(
            "This model's maximum context length is {context} tokens. However, you requested \
             {output} output tokens and your prompt contains at least {input} input tokens, for \
             a total of at least {} tokens. Please reduce the length of the input prompt or the \
             number of requested output tokens. (parameter=input_tokens, value={input})",
            input + output
        );
        let body = json!({"error": {"message": message, "type": "BadRequestError",
            "param": "input_tokens", "code": 400}});
        Some((StatusCode::BAD_REQUEST, Json(body)).into_response())
    }

    /// A 401 for a request without the required key (bearer or `x-api-key`).
    fn refuse_unauthorized(&self, headers: &axum::http::HeaderMap) -> Option<Response> {
        let key = self.config.require_key.as_ref()?;
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let x_api_key = headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if bearer == format!("Bearer {key}") || x_api_key == key {
            return None;
        }
        self.unauthorized.fetch_add(1, Ordering::Relaxed);
        self.log(Instant::now(), StatusCode::UNAUTHORIZED, 0);
        let message = format!("Incorrect API key provided: {bearer}{x_api_key}");
        Some(
            (
                StatusCode::UNAUTHORIZED,
                Json(json!({"error": {"message": message, "code": "invalid_api_key"}})),
            )
                .into_response(),
        )
    }

    /// Counts one request of `prompt`.
    fn count_prompt(&self, prompt: &str) {
        *self
            .prompts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(prompt_digest(prompt))
            .or_default() += 1;
    }

    /// The answer to `prompt` as configured: padded, cut when its hash says so.
    fn complete(&self, prompt: &str) -> Completion {
        let text = pad(reply(&self.config, prompt), self.config.pad_reply_bytes);
        let cut = prompt_share(prompt) < self.config.truncate_rate;
        if cut {
            self.truncated.fetch_add(1, Ordering::Relaxed);
        }
        let (text, finish_reason) = match (cut, text.rsplit_once('\n')) {
            // A judge cut while explaining after its verdict: the verdict
            // is there to read, and must not be read.
            (true, Some((why, verdict))) if autoeval_reference_model::is_judge_prompt(prompt) => {
                let half = why.chars().count() / 2;
                let explained: String = why.chars().take(half).collect();
                (format!("{verdict}, because {explained}"), "length")
            }
            (true, _) => {
                let half = text
                    .char_indices()
                    .nth(text.chars().count() / 2)
                    .map_or(0, |(i, _)| i);
                (text[..half].to_string(), "length")
            }
            (false, _) => (text, "stop"),
        };
        Completion {
            prompt_tokens: prompt.split_whitespace().count(),
            completion_tokens: text.split_whitespace().count(),
            text,
            finish_reason,
        }
    }

    fn log(&self, arrived: Instant, status: StatusCode, tokens: u64) {
        let at_ms = arrived.duration_since(self.epoch).as_secs_f64() * 1e3;
        self.timeline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arrival {
                at_ms,
                status: status.as_u16(),
                tokens,
            });
    }
}

/// The key of a prompt in `GET /prompts`: SHA-256 of its text, in hex.
pub fn prompt_digest(prompt: &str) -> String {
    Sha256::digest(prompt.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A pseudo-random draw in [0, 1) for request number `n`: the same run of
/// requests meets the same failures.
fn draw(n: u64) -> f64 {
    let mut x = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Which shape a direct request came in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    OpenAi,
    Anthropic,
}

/// `POST /v1/chat/completions`.
async fn chat(
    State(s): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
    body: Result<Json<serde_json::Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    answer(s, headers, body, Shape::OpenAi).await
}

/// `POST /v1/messages`: Anthropic's shape.
async fn messages(
    State(s): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
    body: Result<Json<serde_json::Value>, axum::extract::rejection::JsonRejection>,
) -> Response {
    answer(s, headers, body, Shape::Anthropic).await
}

/// Counts a request being answered while it is held.
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn answer(
    s: Arc<Shared>,
    headers: axum::http::HeaderMap,
    body: Result<Json<serde_json::Value>, axum::extract::rejection::JsonRejection>,
    shape: Shape,
) -> Response {
    let arrived = Instant::now();
    let n = s.requests.fetch_add(1, Ordering::Relaxed);
    let now_in_flight = s.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
    let _held = InFlight(&s.in_flight);
    if let Some(refused) = s.refuse_unauthorized(&headers) {
        return refused;
    }
    let Json(req) = match body {
        Ok(b) => b,
        Err(e) => {
            s.log(arrived, StatusCode::BAD_REQUEST, 0);
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({"error": {"message": e.body_text()}})),
            )
                .into_response();
        }
    };
    let well_formed = req["messages"].is_array()
        && req["model"].is_string()
        && (shape == Shape::OpenAi || req["max_tokens"].is_u64());
    if !well_formed {
        s.log(arrived, StatusCode::BAD_REQUEST, 0);
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "model and messages are required (and max_tokens, for messages)"}})),
        )
            .into_response();
    }
    let prompt = last_user_message(&req);
    s.count_prompt(&prompt);
    if let Some(refusal) = s.config.refusal.as_ref().filter(|r| n >= r.after) {
        s.refused.fetch_add(1, Ordering::Relaxed);
        s.log(
            arrived,
            StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST),
            0,
        );
        return refusal.response();
    }
    if let Some(refused) = s.over_context(&req, &prompt) {
        s.log(arrived, StatusCode::BAD_REQUEST, 0);
        return refused;
    }
    if let Some(limit) = s.config.max_concurrent {
        if now_in_flight > limit as u64 {
            s.rate_limited.fetch_add(1, Ordering::Relaxed);
            s.log(arrived, StatusCode::TOO_MANY_REQUESTS, 0);
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, "0".to_string())],
                Json(json!({"error": {"message": "too many requests at once"}})),
            )
                .into_response();
        }
    }
    if let Some(rpm) = s.config.rate_limit_rpm {
        let per_second = (rpm / 60).max(1);
        let mut w = s.window.lock().unwrap_or_else(|e| e.into_inner());
        if w.0.elapsed() >= Duration::from_secs(1) {
            *w = (Instant::now(), 0);
        }
        if w.1 >= per_second {
            let wait = s.config.retry_after.clone().unwrap_or_else(|| "1".into());
            s.rate_limited.fetch_add(1, Ordering::Relaxed);
            s.log(arrived, StatusCode::TOO_MANY_REQUESTS, 0);
            return (
                StatusCode::TOO_MANY_REQUESTS,
                [(header::RETRY_AFTER, wait)],
                Json(json!({"error": {"message": "rate limit reached"}})),
            )
                .into_response();
        }
        w.1 += 1;
    }
    tokio::time::sleep(s.config.latency).await;
    let u = draw(n);
    if u < s.config.error_rate / 2.0 {
        s.server_errors.fetch_add(1, Ordering::Relaxed);
        s.log(arrived, StatusCode::INTERNAL_SERVER_ERROR, 0);
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": {"message": API_ERROR}})),
        )
            .into_response();
    }
    if u < s.config.error_rate {
        s.dropped.fetch_add(1, Ordering::Relaxed);
        s.log(arrived, StatusCode::OK, 0);
        // A body that fails mid-stream makes the server close the connection.
        return Response::builder()
            .status(StatusCode::OK)
            .body(failing_body())
            .unwrap_or_default();
    }
    let done = if autoeval_reference_model::is_judge_prompt(&prompt) {
        // The A4 question is proved, off the async runtime.
        let shared = s.clone();
        let asked = prompt.clone();
        match tokio::task::spawn_blocking(move || shared.complete(&asked)).await {
            Ok(done) => done,
            Err(e) => Completion {
                text: format!("I could not decide ({e})."),
                finish_reason: "stop",
                prompt_tokens: prompt.split_whitespace().count(),
                completion_tokens: 4,
            },
        }
    } else {
        s.complete(&prompt)
    };
    s.completions.fetch_add(1, Ordering::Relaxed);
    s.log(
        arrived,
        StatusCode::OK,
        (done.prompt_tokens + done.completion_tokens) as u64,
    );
    let model = req["model"].as_str().unwrap_or_default();
    Json(match shape {
        Shape::OpenAi => done.openai(n, model),
        Shape::Anthropic => done.anthropic(n, model),
    })
    .into_response()
}

/// Where a prompt falls in [0, 1), by a hash of its text.
pub fn prompt_share(prompt: &str) -> f64 {
    let h = prompt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// The reference model's reply, as configured; its judge proves with Z3.
fn reply(config: &MockConfig, prompt: &str) -> String {
    let judge: autoeval_reference_model::Judge = Arc::new(autoeval_verify::equivalent);
    match config.chatty {
        Some(rate) => autoeval_reference_model::answer_chatty(prompt, rate, Some(&judge)),
        None => autoeval_reference_model::answer_noisy(
            prompt,
            config.noise.unwrap_or(0.0),
            Some(&judge),
        ),
    }
}

/// `text` after `bytes` of filler words (none when 0): an answer read
/// leniently still ends in its formula.
fn pad(text: String, bytes: usize) -> String {
    if bytes == 0 {
        return text;
    }
    let mut out = "and so on ".repeat(bytes.div_ceil(10));
    out.push_str(&text);
    out
}

/// A body that fails before its first byte, so the server closes the connection mid-response.
fn failing_body() -> axum::body::Body {
    let broken = futures_util::stream::once(async {
        Err::<axum::body::Bytes, std::io::Error>(std::io::Error::other(
            "injected dropped connection",
        ))
    });
    axum::body::Body::from_stream(broken)
}

async fn stats(State(s): State<Arc<Shared>>) -> Json<Stats> {
    Json(Stats {
        requests: s.requests.load(Ordering::Relaxed),
        completions: s.completions.load(Ordering::Relaxed),
        rate_limited: s.rate_limited.load(Ordering::Relaxed),
        server_errors: s.server_errors.load(Ordering::Relaxed),
        dropped: s.dropped.load(Ordering::Relaxed),
        unauthorized: s.unauthorized.load(Ordering::Relaxed),
        refused: s.refused.load(Ordering::Relaxed),
        over_context: s.over_context.load(Ordering::Relaxed),
        truncated: s.truncated.load(Ordering::Relaxed),
        files: s.files_made.load(Ordering::Relaxed),
        batches: s.batches_made.load(Ordering::Relaxed),
        batch_requests: s.batch_requests.load(Ordering::Relaxed),
        batch_succeeded: s.batch_succeeded.load(Ordering::Relaxed),
        batch_failed: s.batch_failed.load(Ordering::Relaxed),
        batch_expired: s.batch_expired.load(Ordering::Relaxed),
        batch_polls: s.batch_polls.load(Ordering::Relaxed),
    })
}

async fn prompts(State(s): State<Arc<Shared>>) -> Json<HashMap<String, u64>> {
    Json(s.prompts.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

async fn batch_submissions(State(s): State<Arc<Shared>>) -> Json<HashMap<String, u64>> {
    Json(s.submissions())
}

async fn timeline(State(s): State<Arc<Shared>>) -> Json<Vec<Arrival>> {
    let mut all = s.timeline.lock().unwrap_or_else(|e| e.into_inner()).clone();
    all.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    Json(all)
}

/// The server's routes: `POST /v1/chat/completions` and `POST
/// /v1/messages`; the batch APIs (`POST /v1/files`, `POST /v1/batches`,
/// `GET /v1/batches/{id}`, `GET /v1/files/{id}/content`, `POST
/// /v1/messages/batches`, `GET /v1/messages/batches/{id}` and its
/// `/results`); `GET /stats`, `GET /prompts` (requests per
/// [`prompt_digest`]), `GET /batch-submissions` (times each `custom_id`
/// was submitted) and `GET /timeline` (every [`Arrival`], in order).
pub fn router(config: MockConfig) -> Router {
    let shared = Arc::new(Shared {
        config,
        requests: AtomicU64::new(0),
        completions: AtomicU64::new(0),
        rate_limited: AtomicU64::new(0),
        server_errors: AtomicU64::new(0),
        dropped: AtomicU64::new(0),
        unauthorized: AtomicU64::new(0),
        refused: AtomicU64::new(0),
        over_context: AtomicU64::new(0),
        truncated: AtomicU64::new(0),
        window: Mutex::new((Instant::now(), 0)),
        prompts: Mutex::default(),
        epoch: Instant::now(),
        timeline: Mutex::default(),
        in_flight: AtomicU64::new(0),
        files_made: AtomicU64::new(0),
        batches_made: AtomicU64::new(0),
        batch_requests: AtomicU64::new(0),
        batch_succeeded: AtomicU64::new(0),
        batch_failed: AtomicU64::new(0),
        batch_expired: AtomicU64::new(0),
        batch_polls: AtomicU64::new(0),
        batch_draws: AtomicU64::new(0),
        batches: Mutex::default(),
    });
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/v1/messages", post(messages))
        .route("/v1/files", post(batch::upload))
        .route("/v1/files/{id}/content", get(batch::file_content))
        .route(
            "/v1/batches",
            post(batch::create_openai).get(batch::list_openai),
        )
        .route("/v1/batches/{id}", get(batch::get_openai))
        .route("/v1/messages/batches", post(batch::create_anthropic))
        .route("/v1/messages/batches/{id}", get(batch::get_anthropic))
        .route(
            "/v1/messages/batches/{id}/results",
            get(batch::anthropic_results),
        )
        .route("/batch-submissions", get(batch_submissions))
        .route("/stats", get(stats))
        .route("/prompts", get(prompts))
        .route("/timeline", get(timeline))
        // Prompts carry the model's own English, which can be large.
        .layer(axum::extract::DefaultBodyLimit::max(64 << 20))
        .with_state(shared)
}

//! The server's shared state and the helpers every handler uses.

use crate::wire::Completion;
use crate::{Arrival, MockConfig};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A request the server's key admits (or any, when it requires none), by
/// its headers: a handler that takes it answers only such requests, and
/// any other is answered 401 before the handler runs.
pub(crate) struct Authorized(pub(crate) axum::http::HeaderMap);

impl axum::extract::FromRequestParts<Arc<Shared>> for Authorized {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        s: &Arc<Shared>,
    ) -> Result<Self, Response> {
        match s.refuse_unauthorized(&parts.headers) {
            Some(refused) => Err(refused),
            None => Ok(Authorized(parts.headers.clone())),
        }
    }
}

/// What the server's handlers share: its settings, counts and batches.
pub(crate) struct Shared {
    pub(crate) config: MockConfig,
    pub(crate) requests: AtomicU64,
    pub(crate) completions: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) server_errors: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) unauthorized: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) over_context: AtomicU64,
    pub(crate) truncated: AtomicU64,
    /// Start of the current one-second window and requests in it.
    pub(crate) window: Mutex<(Instant, u32)>,
    /// Requests per prompt digest.
    pub(crate) prompts: Mutex<HashMap<String, u64>>,
    /// When the server started, for arrival times.
    pub(crate) epoch: Instant,
    /// Every request, in the order they were answered.
    pub(crate) timeline: Mutex<Vec<Arrival>>,
    /// Requests being answered now.
    pub(crate) in_flight: AtomicU64,
    pub(crate) files_made: AtomicU64,
    pub(crate) batches_made: AtomicU64,
    pub(crate) batch_requests: AtomicU64,
    pub(crate) batch_succeeded: AtomicU64,
    pub(crate) batch_failed: AtomicU64,
    pub(crate) batch_expired: AtomicU64,
    pub(crate) batch_polls: AtomicU64,
    /// Draws of batched requests served, for their failures.
    pub(crate) batch_draws: AtomicU64,
    /// Files and batches.
    pub(crate) batches: Mutex<crate::store::Store>,
    /// Signed requests as they came, for `GET /recorded-requests`.
    pub(crate) recorded: Mutex<Vec<serde_json::Value>>,
}

/// Tokens a reasoning model thinks per word of its answer.
const THOUGHT_PER_WORD: usize = 3;

/// Tokens a reasoning model spends thinking when it thinks until a cap and none was set.
const THINKING_WITHOUT_CAP: usize = 32_768;

/// The message of an injected failure.
pub(crate) const API_ERROR: &str = "injected failure";

impl Shared {
    /// vLLM's 400 for a request longer than the model's context.
    pub(crate) fn over_context(&self, cap: Option<u64>, prompt: &str) -> Option<Response> {
        let context = self.config.context_length?;
        let input = (prompt.chars().count() as u64).div_ceil(4);
        let output = cap.unwrap_or(0);
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

    /// A 401 for a request without the required key (bearer, `x-api-key`,
    /// `api-key`, `x-goog-api-key`, or a signature by that access key id).
    pub(crate) fn refuse_unauthorized(&self, headers: &axum::http::HeaderMap) -> Option<Response> {
        let key = self.config.require_key.as_ref()?;
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        // Each API's own header for a key; a signed request names its
        // access key's id, which stands for the key here.
        let x_api_key = ["x-api-key", "api-key", "x-goog-api-key"]
            .into_iter()
            .find_map(|name| headers.get(name).and_then(|v| v.to_str().ok()))
            .unwrap_or_default();
        let signed_by = bearer
            .strip_prefix("AWS4-HMAC-SHA256 Credential=")
            .and_then(|c| c.split('/').next());
        if bearer == format!("Bearer {key}") || x_api_key == key || signed_by == Some(key.as_str())
        {
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
    pub(crate) fn count_prompt(&self, prompt: &str) {
        *self
            .prompts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(prompt_digest(prompt))
            .or_default() += 1;
    }

    /// The answer to `prompt` under a cap of `cap` tokens, as configured:
    /// padded, cut when its hash says so, thought about by a reasoning model.
    pub(crate) fn complete(&self, prompt: &str, cap: Option<u64>) -> Completion {
        let text = pad(reply(&self.config, prompt), self.config.pad_reply_bytes);
        let prompt_tokens = prompt.split_whitespace().count();
        // A reasoning model that thinks until the cap answers nothing.
        let thinking = self.config.thinking_rate > 0.0;
        if thinking && prompt_share(&format!("think:{prompt}")) < self.config.thinking_rate {
            self.truncated.fetch_add(1, Ordering::Relaxed);
            let spent = cap.map_or(THINKING_WITHOUT_CAP, |c| c as usize);
            return Completion {
                text: String::new(),
                cut: true,
                prompt_tokens,
                completion_tokens: spent,
                reasoning_tokens: spent,
            };
        }
        let cut = prompt_share(prompt) < self.config.truncate_rate;
        if cut {
            self.truncated.fetch_add(1, Ordering::Relaxed);
        }
        let (text, cut) = match (cut, text.rsplit_once('\n')) {
            // A judge cut while explaining after its verdict: the verdict
            // is there to read, and must not be read.
            (true, Some((why, verdict))) if autoeval_reference_model::is_judge_prompt(prompt) => {
                let half = why.chars().count() / 2;
                let explained: String = why.chars().take(half).collect();
                (format!("{verdict}, because {explained}"), true)
            }
            (true, _) => {
                let half = text
                    .char_indices()
                    .nth(text.chars().count() / 2)
                    .map_or(0, |(i, _)| i);
                (text[..half].to_string(), true)
            }
            (false, _) => (text, false),
        };
        let words = text.split_whitespace().count();
        // A reasoning model thinks a while before it answers.
        let reasoning_tokens = if thinking {
            THOUGHT_PER_WORD * words.max(1)
        } else {
            0
        };
        Completion {
            prompt_tokens,
            completion_tokens: words + reasoning_tokens,
            reasoning_tokens,
            text,
            cut,
        }
    }

    pub(crate) fn log(&self, arrived: Instant, status: StatusCode, tokens: u64) {
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
pub(crate) fn draw(n: u64) -> f64 {
    let mut x = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// Where a prompt falls in [0, 1), by a hash of its text.
pub fn prompt_share(prompt: &str) -> f64 {
    let h = prompt.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// The reference model's reply, as configured; its judge proves with Z3.
pub(crate) fn reply(config: &MockConfig, prompt: &str) -> String {
    let judge: autoeval_reference_model::Judge = Arc::new(autoeval_verify::equivalent);
    autoeval_reference_model::answer_as(config.play, prompt, Some(&judge))
}

/// `text` after `bytes` of filler words (none when 0): an answer read
/// leniently still ends in its formula.
pub(crate) fn pad(text: String, bytes: usize) -> String {
    if bytes == 0 {
        return text;
    }
    let mut out = "and so on ".repeat(bytes.div_ceil(10));
    out.push_str(&text);
    out
}

/// A body that fails before its first byte, so the server closes the connection mid-response.
pub(crate) fn failing_body() -> axum::body::Body {
    let broken = futures_util::stream::once(async {
        Err::<axum::body::Bytes, std::io::Error>(std::io::Error::other(
            "injected dropped connection",
        ))
    });
    axum::body::Body::from_stream(broken)
}

#[cfg(test)]
mod judge_tests {
    use super::*;
    use autoeval_reference_model::Builtin;

    #[test]
    fn the_server_plays_the_judge_models_as_the_in_process_backend_does() {
        let prompt = "Say whether two propositional logic formulae are equivalent.\n\n[Formula 1]\np1 ∧ p2\n\n[Formula 2]\np2 ∧ p1";
        let exact = MockConfig::default();
        let r = reply(&exact, prompt);
        assert!(r.ends_with("[Answer] yes"), "{r}");
        let always_wrong = MockConfig {
            play: Builtin::JudgeNoisy(1.0),
            ..MockConfig::default()
        };
        assert!(reply(&always_wrong, prompt).ends_with("[Answer] no"));
    }
}

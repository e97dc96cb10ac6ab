//! Answering a direct request, and the counts the server reports.

use crate::shared::{draw, failing_body, Shared, API_ERROR};
use crate::wire::{Completion, Wire};
use crate::{Arrival, Stats};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{post, MethodRouter};
use axum::Json;
use serde_json::json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counts a request being answered while it is held.
struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A model call's body as a handler takes it: JSON, or why it is not.
pub(crate) type Body = Result<Json<serde_json::Value>, axum::extract::rejection::JsonRejection>;

/// The route of a model call in `wire`'s form whose body names the model.
pub(crate) fn call_route(wire: &'static dyn Wire) -> MethodRouter<Arc<Shared>> {
    post(
        move |State(s): State<Arc<Shared>>, headers: axum::http::HeaderMap, body: Body| {
            answer(s, headers, body, wire)
        },
    )
}

/// `body` with its model set to `model`, for the APIs that name the model
/// in the path instead.
pub(crate) fn with_model(body: Body, model: String) -> Body {
    body.map(|Json(mut v)| {
        v["model"] = serde_json::Value::String(model);
        Json(v)
    })
}

/// A direct request, answered in `wire`'s shape: refused, failed or
/// answered by the reference model as the configuration says.
pub(crate) async fn answer(
    s: Arc<Shared>,
    headers: axum::http::HeaderMap,
    body: Body,
    wire: &'static dyn Wire,
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
    if !wire.well_formed(&req) {
        s.log(arrived, StatusCode::BAD_REQUEST, 0);
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": {"message": "model and messages are required (and max_tokens, for messages)"}})),
        )
            .into_response();
    }
    if let Some(body) = wire.refusal(&req) {
        s.log(arrived, StatusCode::BAD_REQUEST, 0);
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    let prompt = wire.prompt(&req);
    let cap = wire.max_tokens(&req);
    s.count_prompt(&prompt);
    if let Some(refused) = refused(&s, cap, &prompt, n, now_in_flight, arrived) {
        return refused;
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
        match tokio::task::spawn_blocking(move || shared.complete(&asked, cap)).await {
            Ok(done) => done,
            Err(e) => Completion {
                text: format!("I could not decide ({e})."),
                cut: false,
                prompt_tokens: prompt.split_whitespace().count(),
                completion_tokens: 4,
                reasoning_tokens: 0,
            },
        }
    } else {
        s.complete(&prompt, cap)
    };
    s.completions.fetch_add(1, Ordering::Relaxed);
    s.log(
        arrived,
        StatusCode::OK,
        (done.prompt_tokens + done.completion_tokens) as u64,
    );
    let model = req["model"].as_str().unwrap_or_default();
    Json(wire.reply(&done, n, model)).into_response()
}

/// The refusal the configuration makes of request `n` (`now_in_flight`
/// with it): the refusal it plays, a context too short, too many at once,
/// or past the rate; `None` to answer it.
fn refused(
    s: &Shared,
    cap: Option<u64>,
    prompt: &str,
    n: u64,
    now_in_flight: u64,
    arrived: Instant,
) -> Option<Response> {
    if let Some(refusal) = s.config.refusal.as_ref().filter(|r| n >= r.after) {
        s.refused.fetch_add(1, Ordering::Relaxed);
        s.log(
            arrived,
            StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::BAD_REQUEST),
            0,
        );
        return Some(refusal.response());
    }
    if let Some(refused) = s.over_context(cap, prompt) {
        s.log(arrived, StatusCode::BAD_REQUEST, 0);
        return Some(refused);
    }
    if let Some(limit) = s.config.max_concurrent {
        if now_in_flight > limit as u64 {
            s.rate_limited.fetch_add(1, Ordering::Relaxed);
            s.log(arrived, StatusCode::TOO_MANY_REQUESTS, 0);
            return Some(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, "0".to_string())],
                    Json(json!({"error": {"message": "too many requests at once"}})),
                )
                    .into_response(),
            );
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
            return Some(
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, wait)],
                    Json(json!({"error": {"message": "rate limit reached"}})),
                )
                    .into_response(),
            );
        }
        w.1 += 1;
    }
    None
}

/// `GET /stats`.
pub(crate) async fn stats(State(s): State<Arc<Shared>>) -> Json<Stats> {
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

/// `GET /prompts`.
pub(crate) async fn prompts(State(s): State<Arc<Shared>>) -> Json<HashMap<String, u64>> {
    Json(s.prompts.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

/// `GET /batch-submissions`.
pub(crate) async fn batch_submissions(State(s): State<Arc<Shared>>) -> Json<HashMap<String, u64>> {
    Json(s.submissions())
}

/// `GET /timeline`.
pub(crate) async fn timeline(State(s): State<Arc<Shared>>) -> Json<Vec<Arrival>> {
    let mut all = s.timeline.lock().unwrap_or_else(|e| e.into_inner()).clone();
    all.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    Json(all)
}

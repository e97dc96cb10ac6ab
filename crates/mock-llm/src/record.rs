//! The requests as they came (method, path as sent, headers, body), kept
//! when [`crate::MockConfig::record_requests`] says so, for `GET
//! /recorded-requests`: a test holds them to a provider's own request
//! types, or checks their signatures with another signer.

use crate::shared::Shared;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};
use std::sync::Arc;

/// Requests kept, newest last.
const KEPT: usize = 5000;

/// Bodies longer than this are kept as their length alone.
const LONGEST_BODY: usize = 8 << 20;

/// Keeps a `POST` request as it came, then passes it on.
pub(crate) async fn keep(State(s): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if !s.config.record_requests || request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
        return axum::response::IntoResponse::into_response(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
        );
    };
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let kept_body = if bytes.len() <= LONGEST_BODY {
        Value::String(String::from_utf8_lossy(&bytes).into_owned())
    } else {
        json!({ "bytes": bytes.len() })
    };
    {
        let mut kept = s.recorded.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push(json!({
            "method": parts.method.as_str(),
            "path": parts.uri.to_string(),
            "headers": headers,
            "body": kept_body,
        }));
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// `GET /recorded-requests`.
pub(crate) async fn recorded(State(s): State<Arc<Shared>>) -> Json<Vec<Value>> {
    Json(s.recorded.lock().unwrap_or_else(|e| e.into_inner()).clone())
}

//! What batch mode sends, checked against the providers' documented
//! formats by stubs that read every request (JSON, multipart, JSONL) and
//! answer with the documented examples' shapes, extra fields and all.

use crate::common::serve_app as serve;
use autoeval_llm_client::{Backend, BackendOptions, BatchSettings};
use autoeval_models::{ModelSpec, RetryPolicy, Sample, Stage};
use axum::extract::{Multipart, Path};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::Json;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a stub saw: (what, headers of note, body).
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// The JSONL lines a batch file held, each checked against OpenAI's
/// documented request line: exactly `custom_id`, `method`, `url`, `body`.
fn check_openai_line(line: &str) -> Value {
    let v: Value = serde_json::from_str(line).unwrap();
    assert_eq!(keys(&v), set(&["custom_id", "method", "url", "body"]));
    assert_eq!(v["method"], "POST");
    assert_eq!(v["url"], "/v1/chat/completions");
    assert!(v["custom_id"].as_str().unwrap().len() <= 64);
    assert_eq!(v["body"]["model"], "gpt-4o-mini");
    assert_eq!(v["body"]["messages"][0]["role"], "user");
    assert!(v["body"]["max_tokens"].is_u64());
    v
}

/// OpenAI's Batch API as documented: upload, create, retrieve, file content.
fn openai_stub(seen: Seen) -> axum::Router {
    let lines: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (s1, s2, s3, s4) = (seen.clone(), seen.clone(), seen.clone(), seen);
    let (l1, l2) = (lines.clone(), lines);
    axum::Router::new()
        .route(
            "/v1/files",
            post(move |headers: HeaderMap, mut form: Multipart| {
                let (seen, lines) = (s1.clone(), l1.clone());
                async move {
                    assert_eq!(headers["authorization"], "Bearer sk-shape");
                    let mut parts = serde_json::Map::new();
                    while let Some(field) = form.next_field().await.unwrap() {
                        let name = field.name().unwrap().to_string();
                        let file_name = field.file_name().map(String::from);
                        let text = field.text().await.unwrap();
                        if name == "file" {
                            assert!(file_name.unwrap().ends_with(".jsonl"));
                            for line in text.lines() {
                                lines.lock().unwrap().push(check_openai_line(line));
                            }
                        }
                        parts.insert(name, json!(text.len()));
                    }
                    let parts = Value::Object(parts);
                    assert_eq!(keys(&parts), set(&["purpose", "file"]));
                    seen.lock().unwrap().push(("upload".into(), parts));
                    Json(json!({"id": "file-abc123", "object": "file", "bytes": 120000, "created_at": 1677610602, "filename": "batch.jsonl", "purpose": "batch"}))
                }
            }),
        )
        .route(
            "/v1/batches",
            post(move |headers: HeaderMap, Json(body): Json<Value>| {
                let seen = s2.clone();
                async move {
                    assert_eq!(headers["authorization"], "Bearer sk-shape");
                    assert_eq!(
                        keys(&body),
                        set(&["input_file_id", "endpoint", "completion_window"])
                    );
                    assert_eq!(body["input_file_id"], "file-abc123");
                    assert_eq!(body["endpoint"], "/v1/chat/completions");
                    assert_eq!(body["completion_window"], "24h");
                    seen.lock().unwrap().push(("create".into(), body));
                    Json(json!({"id": "batch_abc123", "object": "batch", "endpoint": "/v1/chat/completions", "errors": null, "input_file_id": "file-abc123", "completion_window": "24h", "status": "validating", "output_file_id": null, "error_file_id": null, "created_at": 1711471533, "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": null}))
                }
            }),
        )
        .route(
            "/v1/batches/{id}",
            get(move |Path(id): Path<String>| {
                let seen = s3.clone();
                async move {
                    let n = {
                        let mut seen = seen.lock().unwrap();
                        seen.push(("retrieve".into(), json!(id)));
                        seen.iter().filter(|(w, _)| w == "retrieve").count()
                    };
                    // In progress at the first poll, completed at the second.
                    let (status, output) = if n < 2 {
                        ("in_progress", Value::Null)
                    } else {
                        ("completed", json!("file-out"))
                    };
                    Json(json!({"id": id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": null, "input_file_id": "file-abc123", "completion_window": "24h", "status": status, "output_file_id": output, "error_file_id": if n < 2 { Value::Null } else { json!("file-err") }, "created_at": 1711471533, "request_counts": {"total": 2, "completed": 1, "failed": 1}, "metadata": null}))
                }
            }),
        )
        .route(
            "/v1/files/{id}/content",
            get(move |Path(id): Path<String>| {
                let (seen, lines) = (s4.clone(), l2.clone());
                async move {
                    seen.lock().unwrap().push(("content".into(), json!(id)));
                    let lines = lines.lock().unwrap();
                    let (first, second) = (&lines[0]["custom_id"], &lines[1]["custom_id"]);
                    if id == "file-out" {
                        format!("{}\n", json!({"id": "batch_req_123", "custom_id": first, "response": {"status_code": 200, "request_id": "req_123", "body": {"id": "chatcmpl-123", "object": "chat.completion", "created": 1711652795, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "p ∧ q"}, "logprobs": null, "finish_reason": "stop"}], "usage": {"prompt_tokens": 22, "completion_tokens": 2, "total_tokens": 24}, "system_fingerprint": "fp_123"}}, "error": null}))
                    } else {
                        format!("{}\n", json!({"id": "batch_req_456", "custom_id": second, "response": {"status_code": 400, "request_id": "req_456", "body": {"error": {"message": "Invalid value for 'max_tokens'", "type": "invalid_request_error"}}}, "error": null}))
                    }
                }
            }),
        )
}

/// Anthropic's Message Batches as documented: create, retrieve, results.
fn anthropic_stub(seen: Seen, base: Arc<Mutex<String>>) -> axum::Router {
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen);
    let ids: Arc<Mutex<Vec<String>>> = Arc::default();
    let (i1, i2) = (ids.clone(), ids);
    let check_headers = |h: &HeaderMap| {
        assert_eq!(h["x-api-key"], "sk-ant-shape");
        assert_eq!(h["anthropic-version"], "2023-06-01");
        assert!(!h.contains_key("authorization"));
    };
    axum::Router::new()
        .route(
            "/v1/messages/batches",
            post(move |headers: HeaderMap, Json(body): Json<Value>| {
                let (seen, ids) = (s1.clone(), i1.clone());
                async move {
                    check_headers(&headers);
                    assert_eq!(headers["content-type"], "application/json");
                    assert_eq!(keys(&body), set(&["requests"]));
                    for r in body["requests"].as_array().unwrap() {
                        assert_eq!(keys(r), set(&["custom_id", "params"]));
                        let id = r["custom_id"].as_str().unwrap();
                        assert!((1..=64).contains(&id.len()));
                        assert!(id
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
                        ids.lock().unwrap().push(id.to_string());
                        let p = &r["params"];
                        assert_eq!(p["model"], "claude-haiku-4-5");
                        assert!(p["max_tokens"].is_u64());
                        assert_eq!(p["messages"][0]["role"], "user");
                        assert!(p["messages"][0]["content"].is_string());
                    }
                    seen.lock().unwrap().push(("create".into(), body));
                    Json(json!({"id": "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d", "type": "message_batch", "processing_status": "in_progress", "request_counts": {"processing": 2, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}, "ended_at": null, "created_at": "2024-09-24T18:37:24.100435Z", "expires_at": "2024-09-25T18:37:24.100435Z", "cancel_initiated_at": null, "results_url": null}))
                }
            }),
        )
        .route(
            "/v1/messages/batches/{id}",
            get(move |headers: HeaderMap, Path(id): Path<String>| {
                let (seen, base) = (s2.clone(), base.clone());
                async move {
                    check_headers(&headers);
                    seen.lock().unwrap().push(("retrieve".into(), json!(id)));
                    let url = format!("{}/v1/messages/batches/{id}/results", base.lock().unwrap());
                    Json(json!({"id": id, "type": "message_batch", "processing_status": "ended", "request_counts": {"processing": 0, "succeeded": 1, "errored": 1, "canceled": 0, "expired": 0}, "ended_at": "2024-09-24T19:37:24.100435Z", "created_at": "2024-09-24T18:37:24.100435Z", "expires_at": "2024-09-25T18:37:24.100435Z", "cancel_initiated_at": null, "results_url": url}))
                }
            }),
        )
        .route(
            "/v1/messages/batches/{id}/results",
            get(move |headers: HeaderMap| {
                let (seen, ids) = (s3.clone(), i2.clone());
                async move {
                    check_headers(&headers);
                    seen.lock().unwrap().push(("results".into(), Value::Null));
                    let ids = ids.lock().unwrap();
                    format!(
                        "{}\n{}\n",
                        json!({"custom_id": ids[0], "result": {"type": "succeeded", "message": {"id": "msg_014VwiXbi91y3JMjcpyGBHX5", "type": "message", "role": "assistant", "model": "claude-haiku-4-5", "content": [{"type": "text", "text": "p ∧ q"}], "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 11, "output_tokens": 36}}}}),
                        json!({"custom_id": ids[1], "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "Validation error: max_tokens"}}}})
                    )
                }
            }),
        )
}

fn backend(spec: &str, base_url: &str, var: &str, key: &str) -> Backend {
    let secrets = std::env::temp_dir().join(format!(
        "autoeval-batch-shape-{var}-{}.json",
        std::process::id()
    ));
    std::fs::write(&secrets, json!({ var: key }).to_string()).unwrap();
    let spec: ModelSpec = spec.parse().unwrap();
    Backend::new(
        spec,
        BackendOptions {
            secrets_file: Some(secrets),
            base_url: Some(base_url.to_string()),
            retry: RetryPolicy {
                max_attempts: 1,
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(1),
            },
            batch: Some(BatchSettings {
                size: 2,
                wait: Duration::from_millis(50),
                poll: Duration::from_millis(10),
            }),
            ..BackendOptions::default()
        },
    )
    .unwrap()
}

fn sample(n: u32) -> Sample {
    Sample {
        unit: format!("shape-{n}"),
        round: 1,
        stage: Stage::Informalize,
    }
}

/// Two calls into one batch; the answer of the first and the failure of the second.
async fn two_calls(b: &Backend) -> (String, String) {
    let (one, two) = (sample(1), sample(2));
    let (first, second) = tokio::join!(
        b.chat("Translate p ∧ q.", &one),
        b.chat("Translate q ∨ r.", &two)
    );
    // The stub answers the request written first; which call that is depends on timing.
    let (ok, err) = match (first, second) {
        (Ok(r), Err(e)) | (Err(e), Ok(r)) => (r, e),
        other => panic!("one answer and one failure expected, got {other:?}"),
    };
    assert!(ok.batched);
    (ok.text, err.to_string())
}

#[tokio::test]
async fn openai_batches_are_a_jsonl_upload_and_a_24h_batch_read_back_from_both_files() {
    let seen: Seen = Arc::default();
    let base = serve(openai_stub(seen.clone())).await;
    let b = backend(
        "openai:gpt-4o-mini",
        &format!("{base}/v1"),
        "OPENAI_API_KEY",
        "sk-shape",
    );
    let (text, failure) = two_calls(&b).await;
    assert_eq!(text, "p ∧ q");
    assert!(
        failure.contains("Invalid value for 'max_tokens'"),
        "{failure}"
    );
    assert!(!failure.contains("sk-shape"));
    let order: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(w, _)| w.clone())
        .collect();
    assert_eq!(
        order,
        ["upload", "create", "retrieve", "retrieve", "content", "content"],
        "one upload, one batch, polled until completed, both files read"
    );
}

#[tokio::test]
async fn anthropic_batches_are_one_request_list_read_back_from_its_results_url() {
    let seen: Seen = Arc::default();
    let base_cell: Arc<Mutex<String>> = Arc::default();
    let base = serve(anthropic_stub(seen.clone(), base_cell.clone())).await;
    *base_cell.lock().unwrap() = base.clone();
    let b = backend(
        "anthropic:claude-haiku-4-5",
        &base,
        "ANTHROPIC_API_KEY",
        "sk-ant-shape",
    );
    let (text, failure) = two_calls(&b).await;
    assert_eq!(text, "p ∧ q");
    assert!(
        failure.contains("Validation error: max_tokens"),
        "{failure}"
    );
    let order: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(w, _)| w.clone())
        .collect();
    assert_eq!(order, ["create", "retrieve", "results"]);
}

//! Backends over real HTTP: the mock server, and stubs that check request shapes.

use crate::common::{serve_app as serve, stats};
use autoeval_llm_client::{Backend, BackendOptions, CallError, DiskCache};
use autoeval_mock_llm::{router, MockConfig};
use autoeval_models::{ModelSpec, RetryPolicy, Sample, Stage};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn mock_backend(base: &str, options: BackendOptions) -> Backend {
    let spec: ModelSpec = format!("openai-compatible:reference@{base}/v1")
        .parse()
        .unwrap();
    Backend::new(spec, options).unwrap()
}

/// Sample `n` of the informalization stage of one test unit.
fn sample(n: u32) -> Sample {
    Sample {
        unit: format!("test-unit-{n}"),
        round: 1,
        stage: Stage::Informalize,
    }
}

fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(2),
    }
}

#[tokio::test]
async fn the_reference_model_answers_through_http() {
    let base = serve(router(MockConfig::default())).await;
    let b = mock_backend(&base, BackendOptions::default());
    let english = b
        .chat(
            "[TASK]\npropositional logic\n\n[FORMULA]\n(p1 ∧ ¬p2)\n",
            &sample(0),
        )
        .await
        .unwrap();
    assert!(english.text.contains("proposition p1"), "{}", english.text);
    assert!(english.usage.prompt_tokens > 0 && english.attempts == 1 && !english.cached);
    let back = b
        .chat(&format!("[NL DESCRIPTION]\n{}\n", english.text), &sample(0))
        .await
        .unwrap();
    assert_eq!(back.text, "(p1 ∧ ¬p2)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn errors_and_rate_limits_are_retried_until_every_call_succeeds() {
    let config = MockConfig {
        error_rate: 0.3,
        rate_limit_rpm: Some(1800),
        ..MockConfig::default()
    };
    let base = serve(router(config)).await;
    let options = BackendOptions {
        concurrency: 16,
        retry: fast_retries(30),
        ..BackendOptions::default()
    };
    let b = Arc::new(mock_backend(&base, options));
    // Collected, so that every call is spawned before the first is awaited.
    let calls: Vec<_> = (0..120)
        .map(|i| {
            let b = b.clone();
            tokio::spawn(async move { b.chat(&format!("[FORMULA]\np{i}\n"), &sample(0)).await })
        })
        .collect();
    let mut retried = 0;
    for call in calls {
        let reply = call.await.unwrap().unwrap();
        assert!(reply.text.starts_with("proposition p"));
        retried += (reply.attempts > 1) as usize;
    }
    let s = stats(&base).await;
    assert_eq!(s.completions, 120, "{s:?}");
    assert_eq!(
        s.requests,
        s.completions + s.rate_limited + s.server_errors + s.dropped,
        "{s:?}"
    );
    assert!(
        s.server_errors > 0 && s.dropped > 0 && s.rate_limited > 0,
        "{s:?}"
    );
    assert!(retried > 20, "{retried} calls were retried");
}

#[tokio::test]
async fn a_retry_after_past_the_policys_longest_wait_halts_the_backend_at_once() {
    // The second call within the second gets 429 with Retry-After: 1e20.
    let base = serve(router(MockConfig {
        rate_limit_rpm: Some(60),
        retry_after: Some("1e20".into()),
        ..MockConfig::default()
    }))
    .await;
    let b = mock_backend(
        &base,
        BackendOptions {
            concurrency: 1,
            retry: fast_retries(5),
            ..BackendOptions::default()
        },
    );
    b.chat("[FORMULA]\np1\n", &sample(0)).await.unwrap();
    let second = tokio::time::timeout(
        Duration::from_secs(60),
        b.chat("[FORMULA]\np2\n", &sample(1)),
    )
    .await
    .expect("no call waits for the server's number");
    let Err(CallError::Halted { cause, attempts }) = second else {
        panic!("a wait no unit can make halts the backend: {second:?}");
    };
    assert_eq!(attempts, 1, "{cause}");
    assert!(cause.contains("Retry-After"), "{cause}");
    assert_eq!(stats(&base).await.rate_limited, 1, "one refusal was enough");
    let halt = b
        .halt()
        .expect("the backend stays halted until a probe is due");
    assert!(
        halt.line("m")
            .contains("wait until the provider's limit resets"),
        "{}",
        halt.line("m")
    );
}

#[tokio::test]
async fn retry_after_is_honoured() {
    // One request a second: the second call gets 429 with Retry-After: 1.
    let base = serve(router(MockConfig {
        rate_limit_rpm: Some(60),
        ..MockConfig::default()
    }))
    .await;
    let b = mock_backend(
        &base,
        BackendOptions {
            concurrency: 1,
            retry: fast_retries(5),
            ..BackendOptions::default()
        },
    );
    let first = b.chat("[FORMULA]\np1\n", &sample(0)).await.unwrap();
    let started = Instant::now();
    let second = b.chat("[FORMULA]\np2\n", &sample(0)).await.unwrap();
    assert_eq!(first.attempts, 1);
    assert!(second.attempts >= 2);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "waited only {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn calls_that_keep_failing_are_api_failures() {
    let base = serve(router(MockConfig {
        error_rate: 1.0,
        ..MockConfig::default()
    }))
    .await;
    let b = mock_backend(
        &base,
        BackendOptions {
            retry: fast_retries(4),
            ..BackendOptions::default()
        },
    );
    match b.chat("[FORMULA]\np1\n", &sample(0)).await {
        Err(CallError::Api { attempts, .. }) => assert_eq!(attempts, 4),
        other => panic!("expected an API failure, got {other:?}"),
    }
    assert_eq!(stats(&base).await.requests, 4);
}

#[tokio::test]
async fn a_second_identical_run_is_served_from_the_cache() {
    let dir = std::env::temp_dir().join(format!("autoeval-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let base = serve(router(MockConfig::default())).await;
    let run = || async {
        let cache = Arc::new(DiskCache::new(&dir).unwrap());
        let b = mock_backend(
            &base,
            BackendOptions {
                cache: Some(cache),
                ..BackendOptions::default()
            },
        );
        let mut cached = 0;
        for i in 0..25 {
            cached += b
                .chat(&format!("[FORMULA]\n(p{i} ∨ p1)\n"), &sample(0))
                .await
                .unwrap()
                .cached as usize;
        }
        // One prompt asked for five different samples: five requests, never
        // one reply shared among them.
        for n in 1..=5 {
            cached += b
                .chat("[FORMULA]\n(p1 ∨ p2)\n", &sample(n))
                .await
                .unwrap()
                .cached as usize;
        }
        cached
    };
    assert_eq!(run().await, 0);
    let after_first = stats(&base).await.requests;
    assert_eq!(after_first, 30);
    assert_eq!(run().await, 30);
    assert_eq!(
        stats(&base).await.requests,
        after_first,
        "the second run sent requests"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn keys_never_reach_errors_or_debug_output() {
    use axum::http::HeaderMap;
    // A server that echoes the credentials it received, as some error pages do.
    let echo = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|h: HeaderMap| async move {
            let auth = h
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            (
                axum::http::StatusCode::UNAUTHORIZED,
                format!("invalid key: {auth}"),
            )
        }),
    );
    let base = serve(echo).await;
    let secret = "sk-test-DO-NOT-LEAK-123";
    let file = std::env::temp_dir().join(format!("autoeval-secrets-{}.json", std::process::id()));
    std::fs::write(&file, format!(r#"{{"OPENAI_API_KEY": "{secret}"}}"#)).unwrap();
    let options = BackendOptions {
        secrets_file: Some(file.clone()),
        base_url: Some(format!("{base}/v1")),
        ..BackendOptions::default()
    };
    let b = Backend::new("openai:gpt-4o".parse().unwrap(), options).unwrap();
    let err = b.chat("hello", &sample(0)).await.unwrap_err();
    let shown = format!("{err} {err:?} {b:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("***") && shown.contains("401"), "{shown}");
    // Refused again and again, the backend halts: the halt's words, which
    // go into records and Redis, keep no key either.
    for _ in 0..12 {
        let _ = b.chat("hello", &sample(0)).await;
    }
    let halt = b
        .halt()
        .expect("a key refused every time halts the backend");
    let said = format!("{halt:?}");
    assert!(!said.contains(secret) && said.contains("***"), "{said}");
    std::fs::remove_file(&file).unwrap();
    let missing = Backend::new(
        "anthropic:claude".parse().unwrap(),
        BackendOptions::default(),
    )
    .unwrap_err();
    assert!(missing.to_string().contains("ANTHROPIC_API_KEY"));
}

#[tokio::test]
async fn anthropic_requests_have_the_messages_shape() {
    use axum::http::HeaderMap;
    use axum::Json;
    use serde_json::{json, Value};
    let stub = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(|h: HeaderMap, Json(body): Json<Value>| async move {
            let ok = h.get("x-api-key").is_some_and(|v| v == "ak-test")
                && h.get("anthropic-version").is_some()
                && h.get("authorization").is_none()
                && body["model"] == "claude-test"
                && body["max_tokens"].as_u64().is_some()
                && body["messages"][0]["role"] == "user"
                && body["messages"][0]["content"] == "Say yes.";
            if !ok {
                return (axum::http::StatusCode::BAD_REQUEST, Json(json!({"error": format!("bad request shape: {body}")})));
            }
            (
                axum::http::StatusCode::OK,
                Json(json!({"content": [{"type": "text", "text": "yes"}], "usage": {"input_tokens": 7, "output_tokens": 1}})),
            )
        }),
    );
    let base = serve(stub).await;
    let file = std::env::temp_dir().join(format!("autoeval-secrets-a-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"ANTHROPIC_API_KEY": "ak-test"}"#).unwrap();
    let options = BackendOptions {
        secrets_file: Some(file.clone()),
        base_url: Some(base),
        ..BackendOptions::default()
    };
    let b = Backend::new("anthropic:claude-test".parse().unwrap(), options).unwrap();
    let reply = b.chat("Say yes.", &sample(0)).await.unwrap();
    assert_eq!(reply.text, "yes");
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (7, 1)
    );
    std::fs::remove_file(&file).unwrap();
}

#[tokio::test]
async fn a_reply_past_the_size_limit_is_too_long_not_read_whole_and_charged_an_estimate() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let sent = Arc::new(AtomicU64::new(0));
    let counter = sent.clone();
    // Five megabytes of answer, a JSON string never closed within the limit.
    let stub = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut body = String::from(r#"{"choices":[{"message":{"content":""#);
                body.push_str(&"p ∧ q ".repeat(5 * 1024 * 1024 / 8));
                body.push_str(r#""}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#);
                ([("content-type", "application/json")], body)
            }
        }),
    );
    let base = serve(stub).await;
    let dir = std::env::temp_dir().join(format!("autoeval-too-long-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let options = BackendOptions {
        cache: Some(Arc::new(DiskCache::new(dir.clone()).unwrap())),
        ..BackendOptions::default()
    };
    let b = mock_backend(&base, options);
    let reply = b.chat("Translate p ∧ q.", &sample(1)).await.unwrap();
    assert!(reply.too_long && reply.text.is_empty(), "{reply:?}");
    assert_eq!(
        reply.attempts, 1,
        "a reply too long is an answer, not a failure to retry"
    );
    assert!(
        reply.usage.completion_tokens > 0,
        "charged an estimate: {:?}",
        reply.usage
    );
    // Kept as what it was: asked again, the cache says too long, and nothing is sent.
    let again = b.chat("Translate p ∧ q.", &sample(1)).await.unwrap();
    assert!(again.cached && again.too_long);
    assert_eq!(sent.load(Ordering::SeqCst), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

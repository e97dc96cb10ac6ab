//! Round trips through the real HTTP path against the mock server.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_generate::{generate_batch, DatasetConfig, DatasetKind};
use autoeval_llm_client::{Backend, BackendOptions};
use autoeval_mock_llm::{router, MockConfig};
use autoeval_models::{ModelSpec, RetryPolicy};
use autoeval_prompts::{Family, Shots, Templates};
use autoeval_translate::{round_trip, Request};
use autoeval_verify::{check, InProcessZ3, Kind, Settings, Verdict};
use std::time::Duration;

/// A backend for `spec` that retries quickly, up to `attempts` attempts in all.
fn backend(spec: &str, attempts: u32, secrets_file: Option<std::path::PathBuf>) -> Backend {
    let spec: ModelSpec = spec.parse().unwrap();
    let retry = RetryPolicy {
        max_attempts: attempts,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(200),
    };
    Backend::new(
        spec,
        BackendOptions {
            retry,
            secrets_file,
            ..BackendOptions::default()
        },
    )
    .unwrap()
}

/// A zero-shot round trip of `(p1 ∧ p2)`.
fn conjunction_request() -> Request<'static> {
    Request {
        family: Family::Propositional,
        phi0: "(p1 ∧ p2)",
        shots: Shots::ZeroShot,
        alphabet: &[],
        unit: "test-unit".into(),
        round: 1,
    }
}

async fn serve(config: MockConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router(config)).await.unwrap() });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dataset_round_trips_through_http_with_flaky_service() {
    let base = serve(MockConfig {
        error_rate: 0.3,
        ..MockConfig::default()
    })
    .await;
    let backend = backend(&format!("openai-compatible:reference@{base}"), 20, None);
    let templates = Templates::builtin();
    let sigma = ['0', '1'];
    for kind in DatasetKind::ALL {
        let cfg = DatasetConfig {
            per_bucket: 2,
            ..DatasetConfig::table1(kind)
        };
        let items = generate_batch(&cfg, 0).unwrap().items;
        let family = Family::of_dataset(kind.name()).unwrap();
        let check_kind: Kind = kind.check_kind().parse().unwrap();
        for (n, item) in items.iter().enumerate() {
            let shots = if n % 2 == 0 {
                Shots::ZeroShot
            } else {
                Shots::FewShot
            };
            let req = Request {
                family,
                phi0: &item.fs,
                shots,
                alphabet: &sigma,
                unit: "test-unit".into(),
                round: 1,
            };
            let rt = round_trip(&backend, &templates, &req).await;
            assert_eq!(rt.api_failure, None);
            assert_eq!(rt.strict.non_compliance, None, "{rt:?}");
            assert_eq!(
                rt.lenient, rt.strict,
                "a formula alone reads the same both ways"
            );
            assert!(!rt.copy_check.as_ref().unwrap().copied);
            assert_eq!(rt.templates.len(), 2);
            assert!(rt.attempts >= 2 && rt.usage.prompt_tokens > 0);
            let phi1 = rt.strict.phi1.unwrap();
            let o = check(
                check_kind,
                &item.fs,
                &phi1,
                &Settings::default(),
                &InProcessZ3,
            );
            assert_eq!(o.verdict, Verdict::Equivalent, "{} -> {phi1}", item.fs);
        }
    }
}

#[tokio::test]
async fn an_unreachable_service_halts_its_backend_and_is_never_non_compliance() {
    let backend = backend("openai-compatible:reference@http://127.0.0.1:9/v1", 2, None);
    let req = conjunction_request();
    let rt = round_trip(&backend, &Templates::builtin(), &req).await;
    // Nothing ever reached a server: the call waits past its two attempts
    // for the backend's halt, which leaves the unit pending.
    assert!(rt.halted && rt.never_sent(), "{rt:?}");
    let why = rt.api_failure.clone().unwrap();
    assert!(why.contains("connection refused"), "{why}");
    assert_eq!(rt.strict, Default::default());
    assert_eq!(rt.lenient, Default::default());
}

/// A log sink the test can read back.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn keys_reach_neither_results_nor_logs() {
    use axum::http::HeaderMap;
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    // A failing server that echoes the credentials it received.
    let echo = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|h: HeaderMap| async move {
            let auth = h
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                format!("overloaded, caller {auth}"),
            )
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, echo).await.unwrap() });
    let secret = "sk-live-NEVER-SHOW-789";
    let file =
        std::env::temp_dir().join(format!("autoeval-secrets-rt-{}.json", std::process::id()));
    std::fs::write(
        &file,
        format!(r#"{{"OPENAI_COMPATIBLE_API_KEY": "{secret}"}}"#),
    )
    .unwrap();
    let backend = backend(
        &format!("openai-compatible:m@http://{addr}/v1"),
        3,
        Some(file.clone()),
    );
    let req = conjunction_request();
    let rt = round_trip(&backend, &Templates::builtin(), &req).await;
    std::fs::remove_file(&file).unwrap();
    let result = serde_json::to_string(&rt).unwrap();
    assert!(rt.api_failure.is_some(), "{result}");
    assert!(
        result.contains("***"),
        "the echoed key should show as redacted: {result}"
    );
    let logged = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logged.contains("retrying"),
        "no log lines were captured: {logged}"
    );
    for text in [&result, &logged] {
        assert!(!text.contains(secret), "the key leaked: {text}");
    }
}

/// The A4 question asked of a backend: what cannot be asked is answered
/// with why, never sent.
#[tokio::test]
async fn a_judge_question_this_build_cannot_ask_is_answered_with_why_and_never_sent() {
    // Nothing listens here: a call sent would fail with "connection refused".
    let spec: ModelSpec = "openai-compatible:m@http://127.0.0.1:9/v1".parse().unwrap();
    let retry = RetryPolicy {
        max_attempts: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(200),
    };
    let options = BackendOptions {
        retry,
        ..BackendOptions::default()
    };
    let nobody = Backend::new(spec, options).unwrap();
    let question = autoeval_proto::JudgeTask {
        id: "x-0-0-0".into(),
        dataset: "lambda-calculus".into(),
        style: "cot".into(),
        phi0: "p1".into(),
        phi1: "p1".into(),
        ..Default::default()
    };
    let answered = autoeval_translate::judge::ask(
        &nobody,
        &autoeval_prompts::Templates::builtin(),
        question.into(),
    )
    .await
    .unwrap();
    let why = answered.api_failure.unwrap();
    assert!(
        why.contains("cannot ask about dataset \"lambda-calculus\""),
        "{why}"
    );
    assert_eq!(answered.judgement, None);
}

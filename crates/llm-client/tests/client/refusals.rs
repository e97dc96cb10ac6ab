//! Provider errors, as each provider documents or sends them (the fixtures
//! under `fixtures/provider-errors`, with their sources), read into a
//! reason and a class; and what a backend does against a server that keeps
//! answering one of them: how many requests it sends before it stops.

use crate::common::{serve, stats};
use autoeval_llm_client::{reason_of, Backend, BackendOptions, CallError, Class, Reason};
use autoeval_mock_llm::{MockConfig, Refusal, Stats};
use autoeval_models::{ModelSpec, RetryPolicy, Sample, Stage};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/provider-errors")
}

/// Every fixture, as (path relative to the fixtures, its JSON).
fn fixtures() -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for provider in std::fs::read_dir(fixtures_dir()).unwrap() {
        let provider = provider.unwrap().path();
        if !provider.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&provider).unwrap() {
            let file = file.unwrap().path();
            let name = file
                .strip_prefix(fixtures_dir())
                .unwrap()
                .display()
                .to_string();
            let json: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            all.push((name, json));
        }
    }
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// The reason a fixture's `cause` names, as the fixtures' README defines them.
fn reason_named(cause: &str) -> Reason {
    match cause {
        "quota" => Reason::QuotaExhausted,
        "rate_limit" => Reason::RateLimit,
        "auth" => Reason::Auth,
        "permission" => Reason::Permission,
        "unknown_model" => Reason::UnknownModel,
        "context_length" => Reason::ContextLength,
        "bad_request" => Reason::BadRequest,
        "overloaded" => Reason::Overloaded,
        "server_error" => Reason::ServerError,
        "too_large" => Reason::TooLarge,
        "unservable" => Reason::Unservable,
        "filtered" => Reason::Filtered,
        other => panic!("a fixture names an unknown cause {other:?}"),
    }
}

fn class_named(class: &str) -> Class {
    match class {
        "retry_later" => Class::RetryLater,
        "halt" => Class::Halt,
        "per_unit" => Class::PerUnit,
        other => panic!("a fixture names an unknown class {other:?}"),
    }
}

/// The spec whose provider module reads a fixture of `provider`.
fn spec_of(provider: &str) -> ModelSpec {
    match provider {
        "anthropic" => "anthropic:claude-sonnet-4-5".parse().unwrap(),
        "openai" => "openai:gpt-4o".parse().unwrap(),
        "openai-responses" => "openai-responses:o4-mini".parse().unwrap(),
        "gemini" => "gemini:gemini-2.5-flash".parse().unwrap(),
        "azure" => "azure:gpt-4o@https://example.openai.azure.com"
            .parse()
            .unwrap(),
        "bedrock" => "bedrock:anthropic.claude-3-haiku-20240307-v1:0"
            .parse()
            .unwrap(),
        _ => "openai-compatible:m@http://127.0.0.1:1/v1".parse().unwrap(),
    }
}

/// A fixture's headers, as a reply carries them.
fn headers_of(fixture: &Value) -> reqwest::header::HeaderMap {
    let mut headers = reqwest::header::HeaderMap::new();
    for (k, v) in fixture["headers"].as_object().into_iter().flatten() {
        headers.insert(
            reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            reqwest::header::HeaderValue::from_str(v.as_str().unwrap()).unwrap(),
        );
    }
    headers
}

#[test]
fn every_recorded_provider_error_is_read_as_the_cause_and_class_it_documents() {
    let all = fixtures();
    assert!(all.len() >= 40, "{} fixtures", all.len());
    let mut wrong = Vec::new();
    println!(
        "{:<58} {:>6}  {:<26} class (never answered / answered before)",
        "fixture", "status", "reason"
    );
    for (name, f) in &all {
        let status = u16::try_from(f["status"].as_u64().unwrap()).unwrap();
        let body = match &f["body"] {
            Value::String(text) => text.clone().into_bytes(),
            json => json.to_string().into_bytes(),
        };
        let headers = headers_of(f);
        let reason = reason_of(
            &spec_of(f["provider"].as_str().unwrap()),
            status,
            &headers,
            &body,
        );
        let (fresh, seasoned) = (reason.class(false), reason.class(true));
        println!(
            "{name:<58} {status:>6}  {:<26} {fresh:?} / {seasoned:?}",
            reason.name()
        );
        let expected = reason_named(f["cause"].as_str().unwrap());
        let documented = class_named(f["class"].as_str().unwrap());
        // A refused shape or context halts a backend that never worked and
        // fails one request of one that did: a fixture names one of the two.
        let class_holds = fresh == documented || seasoned == documented;
        if reason != expected || !class_holds {
            wrong.push(format!("{name}: read {reason:?} ({fresh:?}/{seasoned:?}), documented {expected:?} ({documented:?})"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn fixture(name: &str) -> Value {
    fixtures().into_iter().find(|(n, _)| n == name).unwrap().1
}

/// What `calls` calls at `concurrency` at once made of a server that
/// answers `refusal` to every request: the errors, the requests it saw, and
/// how long until every call ended.
async fn against(
    refusal: Refusal,
    calls: u32,
    concurrency: usize,
    retry: RetryPolicy,
) -> (Vec<CallError>, Stats, Duration) {
    let base = serve(MockConfig {
        refusal: Some(refusal),
        ..MockConfig::default()
    })
    .await;
    let spec: ModelSpec = format!("openai-compatible:reference@{base}/v1")
        .parse()
        .unwrap();
    let backend = std::sync::Arc::new(
        Backend::new(
            spec,
            BackendOptions {
                concurrency,
                retry,
                ..BackendOptions::default()
            },
        )
        .unwrap(),
    );
    let started = Instant::now();
    let mut handles = Vec::new();
    for n in 0..calls {
        let b = backend.clone();
        handles.push(tokio::spawn(async move {
            let sample = Sample {
                unit: format!("unit-{n}"),
                round: 1,
                stage: Stage::Informalize,
            };
            b.chat("[TASK]\npropositional logic\n\n[FORMULA]\np1\n", &sample)
                .await
        }));
    }
    let mut errors = Vec::new();
    for h in handles {
        errors.push(h.await.unwrap().unwrap_err());
    }
    (errors, stats(&base).await, started.elapsed())
}

#[tokio::test]
async fn a_spent_quota_or_an_absurd_retry_after_stops_the_backend_after_the_requests_in_flight() {
    let policy = RetryPolicy::default();
    let quota = Refusal::from_fixture(&fixture("openai/insufficient-quota.json"), 0).unwrap();
    let mut endless = fixture("openai/rate-limit-requests.json");
    endless["headers"]["retry-after"] = Value::String("1e20".into());
    let endless = Refusal::from_fixture(&endless, 0).unwrap();
    for (what, refusal) in [("quota", quota), ("Retry-After 1e20", endless)] {
        let (errors, seen, took) = against(refusal, 1000, 16, policy).await;
        let bound = 16 + u64::from(policy.max_attempts);
        println!(
            "{what}: 1000 calls ended after {} requests in {:.2} s",
            seen.requests,
            took.as_secs_f64()
        );
        assert!(
            seen.requests <= bound,
            "{what}: {} requests, more than {bound}",
            seen.requests
        );
        assert!(
            errors.iter().all(|e| matches!(e, CallError::Halted { .. })),
            "{what}: every call ends halted, leaving its unit pending: {:?}",
            errors
                .iter()
                .find(|e| !matches!(e, CallError::Halted { .. }))
        );
    }
}

#[tokio::test]
async fn a_provider_that_only_ever_says_later_stops_the_backend_within_the_policys_patience() {
    let policy = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(200),
    };
    let mut later = fixture("anthropic/overloaded.json");
    later["provider"] = Value::String("openai".into());
    let (errors, seen, took) =
        against(Refusal::from_fixture(&later, 0).unwrap(), 400, 4, policy).await;
    println!(
        "overloaded forever: 400 calls ended after {} requests in {:.2} s (patience {:?})",
        seen.requests,
        took.as_secs_f64(),
        policy.patience()
    );
    // Without the patience, each of 100 rounds of 4 calls would wait out its
    // three attempts: at least 100 * 2 waits of up to 200 ms, and 1200 requests.
    assert!(seen.requests < 400, "{} requests", seen.requests);
    assert!(errors.iter().any(|e| matches!(e, CallError::Halted { .. })));
}

//! What each backend variant sends, checked by stubs that read the JSON
//! they receive and answer the way the servers people run do.

use autoeval_llm_client::{Backend, BackendOptions, CallError};
use autoeval_models::{GenerationParams, ModelSettings, ModelSpec, RetryPolicy, Sample, Stage};
use axum::{http::StatusCode, Json};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Seen = Arc<Mutex<Vec<Value>>>;

/// An OpenAI-compatible stub that keeps every body it receives. Like
/// OpenAI's API, it refuses `max_tokens` and `temperature` for `o3-*`
/// models; it answers with `usage` only when `with_usage`, and with a null
/// content for the model `empty`.
async fn stub(with_usage: bool) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let kept = seen.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |Json(body): Json<Value>| {
            let kept = kept.clone();
            async move {
                kept.lock().unwrap().push(body.clone());
                let model = body["model"].as_str().unwrap_or_default();
                if model.starts_with("o3")
                    && (body.get("max_tokens").is_some() || body.get("temperature").is_some())
                {
                    return (
                        StatusCode::BAD_REQUEST,
                        Json(json!({"error": {"message": "Unsupported parameter: 'max_tokens'"}})),
                    );
                }
                let content = if model == "empty" {
                    Value::Null
                } else {
                    json!("p1 ∧ p2")
                };
                let mut reply =
                    json!({"choices": [{"message": {"role": "assistant", "content": content}}]});
                if with_usage {
                    reply["usage"] = json!({"prompt_tokens": 11, "completion_tokens": 3});
                }
                (StatusCode::OK, Json(reply))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/v1"), seen)
}

fn sample() -> Sample {
    Sample {
        unit: "shape".into(),
        round: 1,
        stage: Stage::Autoformalize,
    }
}

/// A backend for `model` at `base`, its settings written as a spec's `?…` tail.
fn backend(model: &str, base: &str, tail: &str) -> Backend {
    let written = format!("openai-compatible:{model}@{base}{tail}");
    let model: autoeval_models::Model = written.parse().unwrap();
    let (spec, settings) = (model.spec().clone(), model.own_settings());
    let options = BackendOptions {
        params: spec.params(settings, &GenerationParams::default()),
        retry: RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
        },
        ..BackendOptions::default()
    };
    Backend::new(spec, options).unwrap()
}

fn last(seen: &Seen) -> Value {
    seen.lock().unwrap().last().cloned().unwrap()
}

#[tokio::test]
async fn a_plain_model_gets_max_tokens_and_temperature_and_one_user_message() {
    let (base, seen) = stub(true).await;
    let reply = backend("llama3:8b", &base, "")
        .chat("Say p.", &sample())
        .await
        .unwrap();
    assert_eq!(reply.text, "p1 ∧ p2");
    let body = last(&seen);
    assert_eq!(body["model"], "llama3:8b");
    assert_eq!(body["max_tokens"], 1024);
    assert_eq!(body["temperature"], 0.1);
    assert!(body.get("max_completion_tokens").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": "Say p."}])
    );
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (11, 3)
    );
}

#[tokio::test]
async fn a_reasoning_model_gets_max_completion_tokens_and_no_temperature() {
    let (base, seen) = stub(true).await;
    let refused = backend("o3-mini", &base, "")
        .chat("Say p.", &sample())
        .await;
    // A shape refused before anything was answered is every request's: it halts.
    assert!(
        matches!(&refused, Err(CallError::Halted { cause, .. }) if cause.contains("HTTP 400") && cause.contains("Unsupported parameter")),
        "{refused:?}"
    );
    let reply = backend("o3-mini", &base, "?reasoning=true&max_tokens=300")
        .chat("Say p.", &sample())
        .await
        .unwrap();
    assert_eq!(reply.text, "p1 ∧ p2");
    let body = last(&seen);
    assert_eq!(body["max_completion_tokens"], 300);
    assert!(body.get("max_tokens").is_none() && body.get("temperature").is_none());
}

#[tokio::test]
async fn a_system_prompt_comes_first_and_extra_fields_are_sent_as_given() {
    let (base, seen) = stub(true).await;
    let tail = "?system=Answer tersely&top_p=0.9&seed=7&stop=[\"\\n\\n\"]&temperature=0";
    backend("m", &base, tail)
        .chat("Say p.", &sample())
        .await
        .unwrap();
    let body = last(&seen);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "Answer tersely"})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Say p."})
    );
    assert_eq!(body["top_p"], 0.9);
    assert_eq!(body["seed"], 7);
    assert_eq!(body["stop"], json!(["\n\n"]));
    assert_eq!(body["temperature"], 0.0);
}

#[tokio::test]
async fn extra_fields_from_the_config_replace_the_defaults() {
    let (base, seen) = stub(true).await;
    let table = ModelSettings {
        extra: [
            ("max_tokens".to_string(), json!(64)),
            ("n".to_string(), json!(1)),
        ]
        .into(),
        ..ModelSettings::default()
    };
    let spec: ModelSpec = format!("openai-compatible:m@{base}").parse().unwrap();
    let options = BackendOptions {
        params: spec.params(&table, &GenerationParams::default()),
        ..BackendOptions::default()
    };
    Backend::new(spec, options)
        .unwrap()
        .chat("Say p.", &sample())
        .await
        .unwrap();
    let body = last(&seen);
    assert_eq!(
        (body["max_tokens"].clone(), body["n"].clone()),
        (json!(64), json!(1))
    );
}

#[tokio::test]
async fn a_reply_without_usage_is_charged_an_estimate_marked_so_and_a_null_content_is_empty() {
    let (base, _) = stub(false).await;
    let spec: ModelSpec = format!("openai-compatible:gpt-4o@{base}").parse().unwrap();
    let priced = Backend::new(spec, BackendOptions::default()).unwrap();
    let reply = priced.chat("Say p.", &sample()).await.unwrap();
    assert_eq!(reply.text, "p1 ∧ p2");
    // Four characters a token, rounded up: "Say p." is 6, "p1 ∧ p2" 7.
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (2, 2)
    );
    assert!(reply.usage_estimated, "the usage is marked as an estimate");
    assert!(
        reply.cost.is_some_and(|c| c > 0.0),
        "a priced model's estimated usage is charged: {:?}",
        reply.cost
    );
    let empty = backend("empty", &base, "")
        .chat("Say p.", &sample())
        .await
        .unwrap();
    assert_eq!(
        empty.text, "",
        "a null content is an empty answer, not an API failure"
    );
}

//! The A4 question asked of a backend: what cannot be asked is answered
//! with why, never sent.

use autoeval_llm_client::{Backend, BackendOptions};
use autoeval_models::{ModelSpec, RetryPolicy};
use autoeval_prompts::Templates;
use std::time::Duration;

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
    let answered = autoeval_judge::ask(&nobody, &Templates::builtin(), question.into())
        .await
        .unwrap();
    let why = answered.api_failure.unwrap();
    assert!(
        why.contains("cannot ask about dataset \"lambda-calculus\""),
        "{why}"
    );
    assert_eq!(answered.judgement, None);
}

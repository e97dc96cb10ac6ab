//! Batch mode over real HTTP against the mock server's two batch APIs:
//! answers equal to direct calls at half the price, failed and expired
//! requests tried again in later batches, and a journal that keeps a
//! second backend from submitting what the first already did.

use crate::common::{serve, stats};
use autoeval_llm_client::{
    Backend, BackendOptions, BatchJournal, BatchSettings, BatchSpend, CallError, MemoryJournal,
    Reply,
};
use autoeval_mock_llm::MockConfig;
use autoeval_models::{
    BatchCounts, GenerationParams, ModelSettings, ModelSpec, RetryPolicy, Sample, Stage,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

async fn submissions(base: &str) -> HashMap<String, u64> {
    reqwest::get(format!("{base}/batch-submissions"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

fn sample(n: usize) -> Sample {
    Sample {
        unit: format!("batch-unit-{n}"),
        round: 1,
        stage: Stage::Informalize,
    }
}

fn prompt(n: usize) -> String {
    format!("Translate the following formula into English: p{n} ∧ ¬q{n}")
}

fn batching(size: usize) -> BatchSettings {
    BatchSettings {
        size,
        wait: Duration::from_millis(100),
        poll: Duration::from_millis(20),
    }
}

/// A secrets file holding `var`'s key, unique to this test.
fn secrets(var: &str, name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "autoeval-batch-test-{name}-{}.json",
        std::process::id()
    ));
    std::fs::write(&path, format!("{{\"{var}\": \"sk-test\"}}")).unwrap();
    path
}

/// A backend for `spec` at the mock server `base`, priced as gpt-4o-mini.
fn backend(
    spec: &str,
    base: &str,
    batch: Option<BatchSettings>,
    journal: Option<Arc<dyn BatchJournal>>,
    attempts: u32,
) -> Backend {
    backend_charging(spec, base, batch, journal, attempts, None)
}

/// [`backend`], charging its batches to `spend`.
fn backend_charging(
    spec: &str,
    base: &str,
    batch: Option<BatchSettings>,
    journal: Option<Arc<dyn BatchJournal>>,
    attempts: u32,
    batch_spend: Option<Arc<dyn BatchSpend>>,
) -> Backend {
    let spec: ModelSpec = spec.parse().unwrap();
    let (secrets_file, base_url) = match spec.backend() {
        "anthropic" => (
            Some(secrets("ANTHROPIC_API_KEY", "anthropic")),
            Some(base.to_string()),
        ),
        "openai" => (
            Some(secrets("OPENAI_API_KEY", "openai")),
            Some(format!("{base}/v1")),
        ),
        "openai-responses" => (Some(secrets("OPENAI_API_KEY", "responses")), None),
        "gemini" => (Some(secrets("GEMINI_API_KEY", "gemini")), None),
        "azure" => (Some(secrets("AZURE_OPENAI_API_KEY", "azure")), None),
        _ => (None, None),
    };
    let prices = autoeval_models::PriceTable::builtin()
        .extended_with(&format!(
            r#"{{"{spec}": {{"input": 0.15, "output": 0.6, "batch_input": 0.075, "batch_output": 0.3}}}}"#
        ))
        .unwrap();
    let options = BackendOptions {
        retry: RetryPolicy {
            max_attempts: attempts,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(50),
        },
        // As the builder asks it: a reasoning model known by its name.
        params: spec.params(&ModelSettings::default(), &GenerationParams::default()),
        prices,
        secrets_file,
        base_url,
        batch,
        journal,
        batch_spend,
        ..BackendOptions::default()
    };
    Backend::new(spec, options).unwrap()
}

/// Every charge of a batch, in order: (batch, USD, tokens).
#[derive(Default)]
struct Charges(std::sync::Mutex<Vec<(String, f64, u64)>>);

impl BatchSpend for Charges {
    fn charge<'a>(
        &'a self,
        _model: &'a str,
        id: &'a str,
        usd: f64,
        tokens: u64,
    ) -> autoeval_models::CacheFuture<'a, Result<(), autoeval_models::JournalUnavailable>> {
        self.0.lock().unwrap().push((id.to_string(), usd, tokens));
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn each_batch_is_charged_its_estimate_when_submitted_then_what_its_answers_cost() {
    let base = serve(MockConfig::default()).await;
    let charges = Arc::new(Charges::default());
    let journal = Arc::new(MemoryJournal::default());
    let b = Arc::new(backend_charging(
        "openai:gpt-4o-mini",
        &base,
        Some(batching(10)),
        Some(journal.clone()),
        1,
        Some(charges.clone()),
    ));
    let replies: Vec<Reply> = ask_all(&b, 25)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let charges = charges.0.lock().unwrap().clone();
    let batches = journal.batches().await.unwrap();
    assert_eq!(batches.len(), 3);
    assert_eq!(charges.len(), 6, "two charges a batch: {charges:?}");
    for batch in &batches {
        let mine: Vec<&(String, f64, u64)> = charges.iter().filter(|c| c.0 == batch.id).collect();
        assert_eq!(mine.len(), 2, "{charges:?}");
        let (estimate, cost) = (mine[0], mine[1]);
        assert!(
            estimate.1 > 0.0 && estimate.2 > 0,
            "an estimate at submission: {estimate:?}"
        );
        let end = batch.end.as_ref().unwrap();
        assert_eq!((cost.1, cost.2), (end.cost.unwrap(), end.tokens));
    }
    // The final charges add up to what the answers cost, counted here from the replies.
    let charged: f64 = batches
        .iter()
        .map(|b| b.end.as_ref().unwrap().cost.unwrap())
        .sum();
    let paid: f64 = replies.iter().map(|r| r.cost.unwrap()).sum();
    let tokens: u64 = replies
        .iter()
        .map(|r| r.usage.prompt_tokens + r.usage.completion_tokens)
        .sum();
    assert!((charged - paid).abs() < 1e-12, "{charged} vs {paid}");
    assert_eq!(
        batches
            .iter()
            .map(|b| b.end.as_ref().unwrap().tokens)
            .sum::<u64>(),
        tokens
    );
}

/// `n` calls at once, in order.
async fn ask_all(b: &Arc<Backend>, n: usize) -> Vec<Result<Reply, CallError>> {
    let calls = (0..n).map(|i| {
        let b = b.clone();
        async move { b.chat(&prompt(i), &sample(i)).await }
    });
    futures_util::future::join_all(calls).await
}

async fn batch_answers_equal_direct_ones_at_half_the_price(spec: &str) {
    let base = serve(MockConfig::default()).await;
    let spec = spec.replace("BASE", &base);
    let direct = Arc::new(backend(&spec, &base, None, None, 1));
    let direct_replies = ask_all(&direct, 25).await;
    let before = stats(&base).await;
    assert_eq!(before.completions, 25);
    let journal = Arc::new(MemoryJournal::default());
    let batched = Arc::new(backend(
        &spec,
        &base,
        Some(batching(10)),
        Some(journal.clone()),
        1,
    ));
    let batched_replies = ask_all(&batched, 25).await;
    let after = stats(&base).await;
    // 25 calls at once, ten a batch: three batches, no direct request.
    assert_eq!(after.batches, 3, "{after:?}");
    assert_eq!(after.batch_requests, 25);
    assert_eq!(after.completions, 25, "no call went directly");
    for (d, b) in direct_replies.iter().zip(&batched_replies) {
        let (d, b) = (d.as_ref().unwrap(), b.as_ref().unwrap());
        assert_eq!(d.text, b.text);
        assert_eq!(d.usage, b.usage);
        assert_eq!(b.cost.unwrap() * 2.0, d.cost.unwrap(), "half the price");
        assert!(b.batched && !d.batched);
        assert_eq!(b.attempts, 1);
    }
    let counts = BatchCounts::of(&journal.batches().await.unwrap());
    assert_eq!(
        (counts.submitted, counts.completed, counts.in_progress),
        (3, 3, 0)
    );
    assert_eq!(counts.requests_succeeded, 25);
}

#[tokio::test]
async fn openai_batches_answer_as_direct_calls_do_at_half_the_price() {
    batch_answers_equal_direct_ones_at_half_the_price("openai:gpt-4o-mini").await;
}

#[tokio::test]
async fn anthropic_batches_answer_as_direct_calls_do_at_half_the_price() {
    batch_answers_equal_direct_ones_at_half_the_price("anthropic:claude-haiku-4-5").await;
}

#[tokio::test]
async fn responses_batches_answer_as_direct_calls_do_at_half_the_price() {
    batch_answers_equal_direct_ones_at_half_the_price("openai-responses:o4-mini@BASE/v1").await;
}

#[tokio::test]
async fn gemini_batches_answer_as_direct_calls_do_at_half_the_price() {
    batch_answers_equal_direct_ones_at_half_the_price("gemini:gemini-2.5-flash@BASE").await;
}

#[tokio::test]
async fn azure_batches_answer_as_direct_calls_do_at_half_the_price() {
    batch_answers_equal_direct_ones_at_half_the_price("azure:gpt-4o@BASE").await;
}

#[tokio::test]
async fn openai_compatible_servers_are_batched_through_their_base_address() {
    batch_answers_equal_direct_ones_at_half_the_price("openai-compatible:reference@BASE/v1").await;
}

#[tokio::test]
async fn failed_and_expired_requests_are_tried_again_in_later_batches_then_fail() {
    for spec in ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"] {
        // The first batch expires with half its requests answered.
        let base = serve(MockConfig {
            expire_batches: vec![0],
            ..MockConfig::default()
        })
        .await;
        let b = Arc::new(backend(spec, &base, Some(batching(20)), None, 3));
        let replies = ask_all(&b, 20).await;
        let attempts: Vec<u32> = replies
            .iter()
            .map(|r| r.as_ref().unwrap().attempts)
            .collect();
        assert_eq!(attempts.iter().filter(|a| **a == 1).count(), 10, "{spec}");
        assert_eq!(attempts.iter().filter(|a| **a == 2).count(), 10, "{spec}");
        let s = stats(&base).await;
        assert_eq!(
            (s.batches, s.batch_requests, s.batch_expired),
            (2, 30, 10),
            "{spec}"
        );

        // Every request fails in its batch: three tries, then an API failure.
        let base = serve(MockConfig {
            batch_failure_rate: 1.0,
            ..MockConfig::default()
        })
        .await;
        let b = Arc::new(backend(spec, &base, Some(batching(5)), None, 3));
        for r in ask_all(&b, 5).await {
            match r {
                Err(CallError::Api {
                    attempts, message, ..
                }) => {
                    assert_eq!(attempts, 3, "{spec}");
                    assert!(message.contains("injected failure"), "{message}");
                }
                other => panic!("{spec}: expected an API failure, got {other:?}"),
            }
        }
        let s = stats(&base).await;
        assert_eq!(
            (s.batches, s.batch_requests, s.batch_failed),
            (3, 15, 15),
            "{spec}"
        );
    }
}

#[tokio::test]
async fn a_call_recorded_in_the_journal_is_polled_and_never_submitted_again() {
    let base = serve(MockConfig {
        batch_delay: Duration::from_millis(300),
        ..MockConfig::default()
    })
    .await;
    let journal: Arc<dyn BatchJournal> = Arc::new(MemoryJournal::default());
    let first = Arc::new(backend(
        "openai:gpt-4o-mini",
        &base,
        Some(batching(8)),
        Some(journal.clone()),
        1,
    ));
    // The first backend submits and is dropped while its batch is in flight.
    let asking = {
        let first = first.clone();
        tokio::spawn(async move { ask_all(&first, 8).await })
    };
    while journal.batches().await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    asking.abort();
    drop(first);
    let second = Arc::new(backend(
        "openai:gpt-4o-mini",
        &base,
        Some(batching(8)),
        Some(journal.clone()),
        1,
    ));
    let replies = ask_all(&second, 8).await;
    assert!(replies.iter().all(|r| r.is_ok()));
    let s = stats(&base).await;
    assert_eq!((s.batches, s.batch_requests), (1, 8), "{s:?}");
    assert!(submissions(&base).await.values().all(|n| *n == 1));
}

#[tokio::test]
async fn a_batch_whose_creation_reply_is_lost_is_found_and_followed_never_made_twice() {
    // OpenAI's batch is found by its file; Gemini's, sent inline, by its name.
    for spec in ["openai:gpt-4o-mini", "gemini:gemini-2.5-flash@BASE"] {
        lost_creation_replies_are_found(spec).await;
    }
}

async fn lost_creation_replies_are_found(spec: &str) {
    // The first and third batches are made, but the reply saying so is lost.
    let base = serve(MockConfig {
        lose_batch_replies: vec![0, 2],
        ..MockConfig::default()
    })
    .await;
    let spec = spec.replace("BASE", &base);
    let journal = Arc::new(MemoryJournal::default());
    let b = Arc::new(backend(
        &spec,
        &base,
        Some(batching(10)),
        Some(journal.clone()),
        3,
    ));
    let replies = ask_all(&b, 25).await;
    for r in &replies {
        let r = r.as_ref().unwrap();
        assert!(r.batched);
        assert_eq!(r.attempts, 1, "answered in the batch first made");
    }
    let s = stats(&base).await;
    assert_eq!((s.batches, s.batch_requests), (3, 25), "{s:?}");
    let made = submissions(&base).await;
    assert_eq!(made.len(), 25);
    assert!(made.values().all(|n| *n == 1), "{made:?}");
    let counts = BatchCounts::of(&journal.batches().await.unwrap());
    assert_eq!((counts.submitted, counts.completed), (3, 3));
}

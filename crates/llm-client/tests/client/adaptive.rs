//! Adaptive concurrency against a provider that answers 429 past 20
//! requests at once: the backend, configured for far more, settles just
//! under the provider's limit. Its throughput is held against a backend
//! fixed at exactly 20 on the same server, measured in the same run, and
//! the 429s are counted by the server itself.

use crate::common::serve_app as serve;
use autoeval_llm_client::{Backend, BackendOptions, CallObserver};
use autoeval_mock_llm::{router, Arrival, MockConfig};
use autoeval_models::{AttemptOutcome, ModelSpec, RetryPolicy, Sample, Stage, Usage};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The provider's limit on requests at once.
const LIMIT: usize = 20;
/// How long the provider takes to answer.
const LATENCY: Duration = Duration::from_millis(100);

async fn timeline(base: &str) -> Vec<Arrival> {
    reqwest::get(format!("{base}/timeline"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Every limit the backend reported, for the gauge's sake.
#[derive(Default)]
struct Limits(Mutex<Vec<usize>>);

impl CallObserver for Limits {
    fn attempt(&self, _: &ModelSpec, _: AttemptOutcome, _: f64) {}
    fn retry(&self, _: &ModelSpec) {}
    fn cached(&self, _: &ModelSpec) {}
    fn paid(&self, _: &ModelSpec, _: Usage, _: Option<f64>) {}
    fn failed(&self, _: &ModelSpec) {}
    fn concurrency(&self, _: &ModelSpec, limit: usize) {
        self.0.lock().unwrap().push(limit);
    }
}

/// `calls` calls from `callers` callers at once; the seconds they took.
async fn drive(backend: Arc<Backend>, callers: usize, calls: usize, tag: &str) -> f64 {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let loops: Vec<_> = (0..callers)
        .map(|_| {
            let (b, next, tag) = (backend.clone(), next.clone(), tag.to_string());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= calls {
                        return;
                    }
                    let sample = Sample {
                        unit: format!("{tag}-{i}"),
                        round: 1,
                        stage: Stage::Informalize,
                    };
                    let reply = b.chat(&format!("[FORMULA]\np{i}\n"), &sample).await;
                    assert!(reply.unwrap().text.starts_with("proposition p"));
                }
            })
        })
        .collect();
    for l in loops {
        l.await.unwrap();
    }
    started.elapsed().as_secs_f64()
}

fn backend(base: &str, concurrency: usize, adaptive: bool, observer: Arc<Limits>) -> Arc<Backend> {
    let spec: ModelSpec = format!("openai-compatible:reference@{base}/v1")
        .parse()
        .unwrap();
    let options = BackendOptions {
        concurrency,
        adaptive_concurrency: adaptive,
        retry: RetryPolicy {
            max_attempts: 50,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_secs(1),
        },
        observer: Some(observer),
        ..BackendOptions::default()
    };
    Arc::new(Backend::new(spec, options).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_settles_under_a_providers_limit_of_twenty_at_nine_tenths_of_its_throughput() {
    let config = MockConfig {
        latency: LATENCY,
        max_concurrent: Some(LIMIT),
        ..MockConfig::default()
    };
    // The best there is: exactly the limit, never a 429.
    let fixed_base = serve(router(config.clone())).await;
    let fixed = backend(&fixed_base, LIMIT, false, Arc::default());
    let fixed_calls = 1500;
    let fixed_s = drive(fixed, 64, fixed_calls, "fixed").await;
    let fixed_tput = fixed_calls as f64 / fixed_s;
    let fixed_429 = timeline(&fixed_base)
        .await
        .iter()
        .filter(|a| a.status == 429)
        .count();
    assert_eq!(fixed_429, 0, "exactly the limit is never refused");

    // Configured for 64 at once, three times what the provider takes.
    let base = serve(router(config)).await;
    let limits = Arc::new(Limits::default());
    let adaptive = backend(&base, 64, true, limits.clone());
    let calls = 4000;
    let adaptive_s = drive(adaptive.clone(), 64, calls, "adaptive").await;
    let tput = calls as f64 / adaptive_s;

    let arrivals = timeline(&base).await;
    let first = arrivals
        .iter()
        .map(|a| a.at_ms)
        .fold(f64::INFINITY, f64::min);
    let late: Vec<&Arrival> = arrivals
        .iter()
        .filter(|a| a.at_ms - first >= 10_000.0)
        .collect();
    let late_429 = late.iter().filter(|a| a.status == 429).count();
    let all_429 = arrivals.iter().filter(|a| a.status == 429).count();
    let completed = arrivals.iter().filter(|a| a.status == 200).count();
    assert_eq!(completed, calls, "each call answered once");
    let share_late = late_429 as f64 / late.len() as f64;
    let reported = limits.0.lock().unwrap().clone();
    let ideal = LIMIT as f64 / LATENCY.as_secs_f64();
    eprintln!(
        "fixed at {LIMIT}: {fixed_calls} calls in {fixed_s:.2} s, {fixed_tput:.1}/s ({:.1}% of the ideal {ideal:.0}/s); adaptive from 64: {calls} calls in {adaptive_s:.2} s, {tput:.1}/s = {:.1}% of the fixed run's ({:.1}% of the ideal); 429s: {all_429} of {} requests in all, {late_429} of {} ({:.2}%) after the first ten seconds; limit now {}, lowest {}, {} changes",
        100.0 * fixed_tput / ideal,
        100.0 * tput / fixed_tput,
        100.0 * tput / ideal,
        arrivals.len(),
        late.len(),
        100.0 * share_late,
        adaptive.concurrency(),
        reported.iter().min().unwrap(),
        reported.len(),
    );
    assert!(
        late.len() > 500,
        "the run went on past ten seconds: {}",
        late.len()
    );
    assert!(
        tput >= 0.9 * fixed_tput,
        "throughput {tput:.1}/s is under 90% of {fixed_tput:.1}/s"
    );
    assert!(
        share_late < 0.05,
        "{:.2}% answered 429 after ten seconds",
        100.0 * share_late
    );
    // It backed off, and came to rest near the limit rather than at the ceiling.
    assert!(reported.iter().any(|l| *l <= LIMIT), "{reported:?}");
    assert!(
        adaptive.concurrency() <= LIMIT + 2,
        "{}",
        adaptive.concurrency()
    );
    assert!(
        adaptive.concurrency() >= LIMIT * 3 / 4,
        "{}",
        adaptive.concurrency()
    );
}

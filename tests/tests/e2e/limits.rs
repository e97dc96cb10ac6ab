//! Fleet-wide rate limits: three LLM workers share a model's requests- and
//! tokens-per-minute limits through Redis, and a 429 one of them meets holds
//! every caller of that model. What the limits allowed is read off the mock
//! server's own record of when each request came and what it cost.

use autoeval_e2e::fleet::{get_json, wait_for, Fleet, AMQP, REDIS};
use autoeval_llm_client::{Backend, BackendOptions, RateGate};
use autoeval_mock_llm::Arrival;
use autoeval_models::{ModelSpec, RetryPolicy, Sample, Stage};
use autoeval_redis_store::RedisGate;
use std::sync::Arc;
use std::time::Duration;

/// The mock server's record of every request, in order of arrival.
fn timeline(fleet: &Fleet) -> Vec<Arrival> {
    serde_json::from_value(get_json(&format!(
        "http://127.0.0.1:{}/timeline",
        fleet.port
    )))
    .expect("the mock server's timeline")
}

/// The largest total of `weight` over requests arriving within any `width` ms.
fn busiest(arrivals: &[Arrival], width: f64, weight: impl Fn(&Arrival) -> u64) -> u64 {
    let mut most = 0;
    let mut total = 0;
    let mut first = 0;
    for (i, a) in arrivals.iter().enumerate() {
        total += weight(a);
        while arrivals[first].at_ms <= arrivals[i].at_ms - width {
            total -= weight(&arrivals[first]);
            first += 1;
        }
        most = most.max(total);
    }
    most
}

/// Runs `units_flags` on a fleet of three workers whose model carries
/// `limit` (a spec tail), to the end, and returns the mock server's timeline.
fn limited_run(name: &str, limit: &str, plan: &[&str]) -> Vec<Arrival> {
    let mut fleet = Fleet::new(name, &["--latency-ms", "20"]);
    fleet.model = format!("{}?{limit}", fleet.model);
    for _ in 0..3 {
        fleet.start_worker(8);
    }
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        "--model",
        &fleet.model,
        "--quiet",
        "--out",
        &out,
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
        "--seed",
        "3",
        "--fleet",
        "--amqp",
        AMQP,
        "--redis",
        REDIS,
    ];
    args.extend_from_slice(plan);
    let run = fleet.autoeval_output(&args);
    assert!(
        run.status.success(),
        "the limited run failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    for w in &mut fleet.workers {
        assert!(w.terminate().success());
    }
    let arrivals = timeline(&fleet);
    // Kept beside the workers' logs, for a look when a limit was not kept.
    let kept = serde_json::to_string(&arrivals).expect("arrivals as JSON");
    std::fs::write(fleet.dir.join("timeline.json"), kept).expect("the timeline written");
    arrivals
}

/// Totals of `weight` per ten seconds from the first arrival, to show how the run went.
fn per_ten_seconds(arrivals: &[Arrival], weight: impl Fn(&Arrival) -> u64) -> Vec<u64> {
    let start = arrivals[0].at_ms;
    let mut out = Vec::new();
    for a in arrivals {
        let slot = ((a.at_ms - start) / 10_000.0) as usize;
        out.resize(out.len().max(slot + 1), 0);
        out[slot] += weight(a);
    }
    out
}

/// The requests (or tokens) that arrived in the first two minutes.
fn first_two_minutes(arrivals: &[Arrival], weight: impl Fn(&Arrival) -> u64) -> u64 {
    let start = arrivals[0].at_ms;
    arrivals
        .iter()
        .take_while(|a| a.at_ms < start + 120_000.0)
        .map(weight)
        .sum()
}

#[test]
fn three_workers_share_600_requests_a_minute() {
    let _turn = autoeval_e2e::turn(module_path!());
    // 700 units of two calls each: 140 s at the limit.
    let arrivals = limited_run(
        "limits-rpm",
        "requests-per-minute=600",
        &["--per-bucket", "4"],
    );
    let span_s = (arrivals.last().unwrap().at_ms - arrivals[0].at_ms) / 1e3;
    assert!(
        span_s >= 120.0,
        "the run lasted {span_s:.0} s, not two minutes"
    );
    let most = busiest(&arrivals, 60_000.0, |_| 1);
    eprintln!("requests per 10 s: {:?}", per_ten_seconds(&arrivals, |_| 1));
    let sent = first_two_minutes(&arrivals, |_| 1);
    eprintln!(
        "{} requests over {span_s:.1} s; busiest minute {most}; first two minutes {sent} ({:.1}% of 1,200)",
        arrivals.len(),
        sent as f64 / 12.0
    );
    assert!(
        most <= 630,
        "{most} requests in one minute (limit 600 + 5%)"
    );
    assert!(
        sent >= 1_080,
        "{sent} requests in two minutes (90% of the limit is 1,080)"
    );
}

#[test]
fn three_workers_share_60000_tokens_a_minute() {
    let _turn = autoeval_e2e::turn(module_path!());
    // About 175 units of ~740 tokens: a little over two minutes at the limit.
    let arrivals = limited_run(
        "limits-tpm",
        "tokens-per-minute=60000",
        &["--per-bucket", "1"],
    );
    let tokens: u64 = arrivals.iter().map(|a| a.tokens).sum();
    let span_s = (arrivals.last().unwrap().at_ms - arrivals[0].at_ms) / 1e3;
    assert!(
        span_s >= 120.0,
        "the run lasted {span_s:.0} s, not two minutes"
    );
    let most = busiest(&arrivals, 60_000.0, |a| a.tokens);
    eprintln!(
        "tokens per 10 s: {:?}",
        per_ten_seconds(&arrivals, |a| a.tokens)
    );
    let sent = first_two_minutes(&arrivals, |a| a.tokens);
    eprintln!(
        "{tokens} tokens in {} requests over {span_s:.1} s; busiest minute {most}; first two minutes {sent} ({:.1}% of 120,000)",
        arrivals.len(),
        sent as f64 / 1_200.0
    );
    assert!(
        most <= 63_000,
        "{most} tokens in one minute (limit 60,000 + 5%)"
    );
    assert!(
        sent >= 108_000,
        "{sent} tokens in two minutes (90% of the limit is 108,000)"
    );
}

#[test]
fn a_429_holds_every_worker_until_its_retry_after_has_passed() {
    let _turn = autoeval_e2e::turn(module_path!());
    // One request a second; a second one within the second is answered 429, Retry-After: 1.
    let fleet = Fleet::new("limits-429", &["--rate-limit", "60"]);
    let spec: ModelSpec = fleet.model.parse().expect("the mock's spec");
    // Two backends, each with its own connection to the fleet's gate: two workers.
    let worker = |gate: RedisGate| {
        Arc::new(
            Backend::new(
                spec.clone(),
                BackendOptions {
                    retry: RetryPolicy {
                        max_attempts: 5,
                        ..RetryPolicy::default()
                    },
                    gate: Some(Arc::new(gate)),
                    ..BackendOptions::default()
                },
            )
            .expect("a backend"),
        )
    };
    let (a, b) = fleet.block_on(async {
        let gate =
            || async { RedisGate::new(autoeval_redis_store::connect(REDIS).await.expect("redis")) };
        (worker(gate().await), worker(gate().await))
    });
    let sample = |i: u32| Sample {
        unit: format!("limits-429-{i}"),
        round: 1,
        stage: Stage::Informalize,
    };
    let first = fleet.block_on(a.chat("[FORMULA]\np1\n", &sample(0)));
    assert!(first.is_ok(), "{first:?}");
    // The second, within the same second, meets a 429 and holds the model.
    let second = {
        let a = a.clone();
        fleet.spawn(async move { a.chat("[FORMULA]\np2\n", &sample(1)).await })
    };
    let watcher = fleet.block_on(async {
        RedisGate::new(autoeval_redis_store::connect(REDIS).await.expect("redis"))
    });
    let key = spec.to_string();
    wait_for("the 429's hold in Redis", Duration::from_secs(30), || {
        !fleet.block_on(watcher.held(&key)).is_zero()
    });
    // The other worker asks while the hold stands: it waits like the first.
    let other = fleet.block_on(b.chat("[FORMULA]\np3\n", &sample(2)));
    assert!(other.is_ok(), "{other:?}");
    let retried = fleet.block_on(second).expect("the task ends");
    assert!(retried.is_ok(), "{retried:?}");
    let arrivals = timeline(&fleet);
    let refused = arrivals
        .iter()
        .find(|r| r.status == 429)
        .expect("a 429")
        .at_ms;
    let early: Vec<&Arrival> = arrivals
        .iter()
        .filter(|r| r.at_ms > refused && r.at_ms < refused + 1_000.0)
        .collect();
    eprintln!("arrivals: {arrivals:?}");
    assert!(
        early.is_empty(),
        "requests came within the 1 s Retry-After of the 429 at {refused} ms: {early:?}"
    );
    assert!(
        arrivals.len() >= 4,
        "the first, its 429, and both later requests: {arrivals:?}"
    );
    // A hold ends by itself.
    fleet.block_on(watcher.back_off(&key, Duration::from_millis(300)));
    assert!(!fleet.block_on(watcher.held(&key)).is_zero());
    wait_for("the hold ends", Duration::from_secs(30), || {
        fleet.block_on(watcher.held(&key)).is_zero()
    });
}

//! Copies of one request running at once pay once: workers that share the
//! run's reply cache in Redis claim the call, one asks the model and the
//! others wait for its reply; a claim whose holder died expires and is
//! taken over. Counted at the mock server.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{Fleet, REDIS};
use autoeval_llm_client::{Backend, BackendOptions, ResponseCache};
use autoeval_models::{cache_key, GenerationParams, ModelSpec, Sample, Stage};
use autoeval_redis_store::RedisCache;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Chat requests the mock server received so far.
fn requests(fleet: &Fleet) -> u64 {
    fleet.mock_stats()["requests"].as_u64().unwrap()
}

/// A worker's backend: its own connection and cache handle on the run.
fn backend(fleet: &Fleet, spec: &ModelSpec) -> Arc<Backend> {
    let cache = fleet.block_on(async {
        RedisCache::new(
            autoeval_redis_store::connect(REDIS).await.unwrap(),
            &fleet.run(),
        )
    });
    Arc::new(
        Backend::new(
            spec.clone(),
            BackendOptions {
                cache: Some(Arc::new(cache)),
                ..BackendOptions::default()
            },
        )
        .unwrap(),
    )
}

const PROMPT: &str = "[FORMULA]\n(p1 & p2)\n";

fn sample(unit: &str) -> Sample {
    Sample {
        unit: unit.into(),
        round: 1,
        stage: Stage::Informalize,
    }
}

#[test]
fn six_copies_of_one_request_at_once_pay_once() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fleet = Fleet::new("claim-copies", &["--latency-ms", "500"]);
    let spec: ModelSpec = fleet.model.parse().unwrap();
    let copies: Vec<_> = (0..6)
        .map(|_| {
            let b = backend(&fleet, &spec);
            fleet.spawn(async move { b.chat(PROMPT, &sample("u1")).await })
        })
        .collect();
    let replies: Vec<_> = copies
        .into_iter()
        .map(|c| fleet.block_on(c).unwrap().unwrap())
        .collect();
    assert_eq!(requests(&fleet), 1, "six copies, one request");
    let paid = replies.iter().filter(|r| !r.cached).count();
    assert_eq!(
        paid, 1,
        "one copy paid, the others were answered by the cache"
    );
    assert!(
        replies
            .iter()
            .all(|r| r.text == replies[0].text && !r.text.is_empty()),
        "every copy has the one reply"
    );
    // Another sample of the same prompt is another request.
    let other = backend(&fleet, &spec);
    fleet.block_on(other.chat(PROMPT, &sample("u2"))).unwrap();
    assert_eq!(requests(&fleet), 2);
}

#[test]
fn a_claim_whose_holder_died_expires_and_is_taken_over() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fleet = Fleet::new("claim-expiry", &[]);
    let spec: ModelSpec = fleet.model.parse().unwrap();
    let key = cache_key(&spec, PROMPT, &GenerationParams::default(), &sample("u1"));
    // A holder that claimed the call and died: its claim is never renewed.
    let dead = fleet.block_on(async {
        RedisCache::new(
            autoeval_redis_store::connect(REDIS).await.unwrap(),
            &fleet.run(),
        )
    });
    let claimed_at = Instant::now();
    let claim = dead.new_claim();
    assert!(
        fleet
            .block_on(dead.claim(&key, &claim, Duration::from_secs(2)))
            .unwrap(),
        "the first claim is granted"
    );
    assert!(
        fleet
            .block_on(dead.claim(&key, &claim, Duration::from_secs(2)))
            .unwrap(),
        "the same claim asked again (its first answer lost) holds it still"
    );
    assert!(
        !fleet
            .block_on(dead.claim(&key, &dead.new_claim(), Duration::from_secs(2)))
            .unwrap(),
        "a held claim is not granted to another"
    );
    let copy = backend(&fleet, &spec);
    let reply = fleet
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(60), copy.chat(PROMPT, &sample("u1"))).await
        })
        .expect("the copy takes the expired claim over")
        .unwrap();
    assert!(!reply.cached && !reply.text.is_empty());
    // The claim was set after `claimed_at` for two seconds.
    assert!(
        claimed_at.elapsed() >= Duration::from_secs(2),
        "the copy called while the claim was held ({:?})",
        claimed_at.elapsed()
    );
    assert_eq!(requests(&fleet), 1, "the copy called the model itself once");
}

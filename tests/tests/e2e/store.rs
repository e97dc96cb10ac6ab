//! The run store against the real Redis: each round is kept once, the
//! counters equal a recount, and the arrival log hands readers every round
//! in the order it was recorded, forgotten rounds included as gaps.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::REDIS;
use autoeval_proto::{ResultRecord, Verdict};
use autoeval_redis_store::{counter_field, Budgets, Cap, CapsSet, RunStore};
use std::collections::BTreeMap;

fn round(id: &str, round: u32, verdict: Verdict) -> ResultRecord {
    ResultRecord {
        id: id.into(),
        dataset: "plogic".into(),
        complexity: 3,
        model: "m".into(),
        prompt: "zero-shot".into(),
        round,
        verdict,
        phi0: "p".into(),
        ..ResultRecord::default()
    }
}

/// The counters a recount of `records` gives, computed here without the store.
fn recount(records: &[ResultRecord]) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for r in records {
        *counts.entry(counter_field(r)).or_default() += 1;
    }
    counts
}

/// The store of a run named after `name` and this process, emptied.
async fn empty_store(name: &str) -> RunStore {
    let run = format!("{name}-{}", std::process::id());
    let store = RunStore::new(
        autoeval_redis_store::connect(REDIS).await.expect("redis"),
        &run,
    );
    store.delete().await.unwrap();
    store
}

#[tokio::test]
async fn a_round_is_kept_once_counted_once_and_arrives_in_order() {
    let _turn = autoeval_e2e::turn(module_path!());
    let store = empty_store("store-test").await;
    let a1 = round("a", 1, Verdict::Equivalent);
    let a2 = round("a", 2, Verdict::ApiFailure);
    let b1 = round("b", 1, Verdict::NotEquivalent);
    assert!(store.record(&a1, 2).await.unwrap());
    assert!(store.record(&b1, 2).await.unwrap());
    assert!(store.record(&a2, 2).await.unwrap());
    // A redelivered task records nothing and counts nothing.
    let mut again = b1.clone();
    again.verdict = Verdict::Equivalent;
    assert!(!store.record(&again, 2).await.unwrap());
    assert_eq!(store.done().await.unwrap(), 2, "a ended at round 2, b at 1");
    assert_eq!(
        store.counts().await.unwrap(),
        recount(&[a1.clone(), b1.clone(), a2.clone()])
    );

    // Read two at a time, the rounds come in the order they were recorded.
    let first = store.arrivals(0, 2).await.unwrap();
    let next = first.next;
    let rest = store.arrivals(next, 2).await.unwrap();
    let end = rest.next;
    let (first, rest) = (first.rounds, rest.rounds);
    let order: Vec<(String, Option<ResultRecord>)> = first.into_iter().chain(rest).collect();
    assert_eq!((next, end), (2, 3));
    assert_eq!(
        order.iter().map(|(_, r)| r.clone()).collect::<Vec<_>>(),
        vec![Some(a1.clone()), Some(b1.clone()), Some(a2.clone())]
    );

    // Forgotten, the failed round is a gap in the log; recorded again, it
    // arrives again after everything before it.
    assert!(store.forget(&a2.round_key()).await.unwrap());
    assert_eq!(store.done().await.unwrap(), 1);
    assert_eq!(store.recorded().await.unwrap(), 2);
    let seen = store.arrivals(2, 10).await.unwrap().rounds;
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1, None, "a forgotten round reads as a gap");
    let a2_redone = round("a", 2, Verdict::Equivalent);
    assert!(store.record(&a2_redone, 2).await.unwrap());
    let fresh = store.arrivals(end, 10).await.unwrap();
    assert_eq!(fresh.next, 4);
    let fresh = fresh.rounds;
    assert_eq!(fresh[0].1.as_ref(), Some(&a2_redone));
    assert_eq!(
        store.counts().await.unwrap(),
        recount(&[a1, b1, a2_redone])
            .into_iter()
            .chain([(counter_field(&a2), 0)])
            .collect(),
        "forgetting takes the count back"
    );
    store.delete().await.unwrap();
    assert!(store.meta().await.unwrap().is_empty());
    assert_eq!(store.arrivals(0, 10).await.unwrap().rounds.len(), 0);
}

#[tokio::test]
async fn a_bundle_of_rounds_is_recorded_in_one_step_each_round_once() {
    let _turn = autoeval_e2e::turn(module_path!());
    let store = empty_store("store-bundle-test").await;
    let a1 = round("a", 1, Verdict::Equivalent);
    let b1 = round("b", 1, Verdict::NotEquivalent);
    let c1 = round("c", 1, Verdict::Timeout);
    assert!(store.record(&a1, 1).await.unwrap());
    // A bundle delivered again after a crash holds a round stored before,
    // and (sent twice) one round twice: each is kept and counted once.
    let mut b1_again = b1.clone();
    b1_again.verdict = Verdict::Equivalent;
    let bundle = [a1.clone(), b1.clone(), c1.clone(), b1_again];
    assert_eq!(
        store.record_all(&bundle, 1).await.unwrap(),
        vec![false, true, true, false]
    );
    assert_eq!(store.record_all(&[], 1).await.unwrap(), Vec::<bool>::new());
    assert_eq!(store.done().await.unwrap(), 3);
    assert_eq!(store.recorded().await.unwrap(), 3);
    assert_eq!(
        store.counts().await.unwrap(),
        recount(&[a1.clone(), b1.clone(), c1.clone()])
    );
    let order = store.arrivals(0, 10).await.unwrap().rounds;
    assert_eq!(
        order.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
        vec![Some(a1), Some(b1), Some(c1)]
    );
    store.delete().await.unwrap();
}

#[tokio::test]
async fn rounds_taken_leave_redis_but_stay_recorded_and_the_log_goes_on_where_it_was() {
    let _turn = autoeval_e2e::turn(module_path!());
    let store = empty_store("store-trim-test").await;
    store.start_arrivals().await.unwrap();
    let a1 = round("a", 1, Verdict::Equivalent);
    let b1 = round("b", 1, Verdict::NotEquivalent);
    let c1 = round("c", 1, Verdict::Timeout);
    store
        .record_all(&[a1.clone(), b1.clone()], 2)
        .await
        .unwrap();
    let read = store.arrivals(0, 10).await.unwrap();
    let fields: Vec<String> = read.rounds.iter().map(|(f, _)| f.clone()).collect();
    assert!(store.trim_taken(&read, &fields).await.unwrap());
    assert_eq!(store.recorded().await.unwrap(), 0, "the records left Redis");
    assert_eq!(store.marked().await.unwrap(), 2, "their marks stayed");
    assert_eq!(store.arrivals_base().await.unwrap(), Some(2));
    // A task delivered again after its record was taken counts nothing.
    let mut b1_again = b1.clone();
    b1_again.verdict = Verdict::Equivalent;
    assert!(!store.record(&b1_again, 2).await.unwrap());
    assert_eq!(
        store.counts().await.unwrap(),
        recount(&[a1.clone(), b1.clone()])
    );
    // The log goes on at the position after the rounds taken.
    assert!(store.record(&c1, 2).await.unwrap());
    let fresh = store.arrivals(0, 10).await.unwrap();
    assert_eq!(
        fresh.next, 3,
        "a reader from the start is moved past what was trimmed"
    );
    assert_eq!(
        fresh
            .rounds
            .iter()
            .map(|(_, r)| r.clone())
            .collect::<Vec<_>>(),
        vec![Some(c1.clone())]
    );
    // A trim of what was read before the log moved on does nothing.
    assert!(!store.trim_taken(&read, &fields).await.unwrap());
    assert_eq!(store.arrivals(2, 10).await.unwrap().rounds.len(), 1);
    // A log Redis lost (no start) is never trimmed: its entries were not read.
    let mut conn = autoeval_redis_store::connect(REDIS).await.unwrap();
    redis::cmd("DEL")
        .arg(autoeval_proto::fleet::run_key(store.run(), "arrivals-base"))
        .query_async::<()>(&mut conn)
        .await
        .unwrap();
    let lost = store.arrivals(0, 10).await.unwrap();
    assert_eq!(lost.base, None);
    assert!(!store.trim_taken(&lost, &[]).await.unwrap());
    // A round forgotten after it was taken is taken back from the counts, and may be recorded anew.
    assert!(store.forget(&b1.round_key()).await.unwrap());
    assert_eq!(store.counts().await.unwrap()[&counter_field(&b1)], 0);
    assert!(store.record(&b1_again, 2).await.unwrap());
    store.delete().await.unwrap();
}

#[tokio::test]
async fn a_taken_unit_costs_redis_under_300_bytes_and_a_finished_run_expires_whole() {
    let _turn = autoeval_e2e::turn(module_path!());
    let store = empty_store("store-size-test").await;
    let model = "openai-compatible:reference@http://127.0.0.1:41234/v1";
    let units = 20_000u32;
    store.start_arrivals().await.unwrap();
    let mut records = Vec::new();
    for n in 0..units {
        let mut r = round(
            &format!("plogic-b{}-c{}-{n:06}", n % 10, n % 40),
            1,
            Verdict::Equivalent,
        );
        r.model = model.into();
        r.complexity = n % 40;
        r.english = Some("x".repeat(300));
        r.phi1 = Some("(p1 & ~p2) | p3".into());
        records.push(r);
    }
    for chunk in records.chunks(500) {
        store.record_all(chunk, 1).await.unwrap();
    }
    let bytes = |store: &RunStore| {
        let store = store.clone();
        async move {
            let mut conn = autoeval_redis_store::connect(REDIS).await.unwrap();
            let mut total = 0u64;
            for key in store.existing_keys().await.unwrap() {
                let n: Option<u64> = redis::cmd("MEMORY")
                    .arg("USAGE")
                    .arg(&key)
                    .arg("SAMPLES")
                    .arg(0)
                    .query_async(&mut conn)
                    .await
                    .unwrap();
                total += n.unwrap_or(0);
            }
            total
        }
    };
    let before = bytes(&store).await;
    loop {
        let read = store.arrivals(0, 2000).await.unwrap();
        if read.rounds.is_empty() {
            break;
        }
        let fields: Vec<String> = read.rounds.iter().map(|(f, _)| f.clone()).collect();
        assert!(store.trim_taken(&read, &fields).await.unwrap());
    }
    let after = bytes(&store).await;
    let per_unit = after as f64 / f64::from(units);
    println!(
        "Redis per unit: {:.0} bytes with the records, {per_unit:.0} bytes once taken",
        before as f64 / f64::from(units)
    );
    assert!(per_unit < 300.0, "{per_unit:.0} bytes a unit once taken");
    assert_eq!(store.done().await.unwrap(), u64::from(units));

    store.finish(1).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !store.existing_keys().await.unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the finished run's keys did not expire"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(store.existing_keys().await.unwrap().len(), 0);
}

#[tokio::test]
async fn each_payer_is_charged_its_total_once_and_a_budget_redis_lost_is_made_whole() {
    let _turn = autoeval_e2e::turn(module_path!());
    let run = format!("ledger-test-{}", std::process::id());
    let conn = autoeval_redis_store::connect(REDIS).await.expect("redis");
    let store = RunStore::new(conn.clone(), &run);
    store.delete().await.unwrap();
    store
        .set_caps(Cap::Keep, Cap::To(1_000_000), false)
        .await
        .unwrap();
    let (a, b) = (Budgets::new(conn.clone()), Budgets::new(conn.clone()));
    // Each payer sends what it has paid in all: a retried or overtaken
    // charge adds nothing.
    a.charge(&run, 0.5, 100).await.unwrap();
    a.charge(&run, 1.25, 250).await.unwrap();
    b.charge(&run, 0.25, 40).await.unwrap();
    a.charge(&run, 0.5, 100).await.unwrap();
    let read = store.budget().await.unwrap();
    assert_eq!(read.spent_tokens, 250 + 40);
    assert_eq!(read.spent_usd, 1.25 + 0.25);
    assert_eq!(read.paid.len(), 2, "{:?}", read.paid);
    // After that read, a takes a charge Redis then loses with the budget;
    // b charges the empty Redis before the restore.
    a.charge(&run, 1.5, 300).await.unwrap();
    store.delete().await.unwrap();
    b.charge(&run, 0.375, 60).await.unwrap();
    store.restore_budget(&read).await.unwrap();
    let restored = store.budget().await.unwrap();
    assert_eq!(restored.cap_tokens, Some(1_000_000), "the cap is put back");
    assert_eq!(
        restored.spent_tokens,
        250 + 60,
        "a as last read, b as charged since"
    );
    // a's next charge carries the one the lost Redis had taken.
    a.charge(&run, 1.625, 320).await.unwrap();
    let now = store.budget().await.unwrap();
    assert_eq!(now.spent_tokens, 320 + 60);
    assert_eq!(now.spent_usd, 1.625 + 0.375);
    store.delete().await.unwrap();
}

#[tokio::test]
async fn a_batch_is_charged_its_estimate_when_submitted_and_its_cost_when_it_ends() {
    let _turn = autoeval_e2e::turn(module_path!());
    let run = format!("batch-budget-test-{}", std::process::id());
    let conn = autoeval_redis_store::connect(REDIS).await.expect("redis");
    let store = RunStore::new(conn.clone(), &run);
    store.delete().await.unwrap();
    store
        .set_caps(Cap::To(1.0), Cap::Keep, false)
        .await
        .unwrap();
    let (worker, batches) = (Budgets::new(conn.clone()), Budgets::new(conn.clone()));
    // A direct call paid 0.25; batch b1 is submitted with an estimate of 0.5.
    worker.charge(&run, 0.25, 100).await.unwrap();
    let none = batches
        .charge_batch(&run, "m", "b1", 0.5, 1000)
        .await
        .unwrap();
    assert_eq!(none, None, "0.75 of 1.00 spent");
    // Charged again (a retried write): it counts once.
    batches
        .charge_batch(&run, "m", "b1", 0.5, 1000)
        .await
        .unwrap();
    let read = store.budget().await.unwrap();
    assert_eq!((read.spent_usd, read.spent_tokens), (0.75, 1100));
    // b2's estimate reaches the cap: the run pauses at the submission.
    let paused = batches
        .charge_batch(&run, "m", "b2", 0.5, 1000)
        .await
        .unwrap();
    assert!(paused.unwrap().contains("cost cap"), "paused at submission");
    // Their results cost less than estimated: the spend comes down to them.
    batches
        .charge_batch(&run, "m", "b1", 0.375, 800)
        .await
        .unwrap();
    batches
        .charge_batch(&run, "m", "b2", 0.125, 300)
        .await
        .unwrap();
    let read = store.budget().await.unwrap();
    assert_eq!(read.spent_usd, 0.25 + 0.375 + 0.125);
    assert_eq!(read.spent_tokens, 100 + 800 + 300);
    assert!(read.paused.is_some(), "a pause stands until resume");
    // A budget Redis lost is put back with each batch at its last charge.
    store.delete().await.unwrap();
    store.restore_budget(&read).await.unwrap();
    let restored = store.budget().await.unwrap();
    assert_eq!(restored.spent_usd, read.spent_usd);
    assert_eq!(restored.spent_tokens, read.spent_tokens);
    store.delete().await.unwrap();
}

#[tokio::test]
async fn a_refused_change_of_caps_changes_nothing() {
    let _turn = autoeval_e2e::turn(module_path!());
    let run = format!("caps-test-{}", std::process::id());
    let conn = autoeval_redis_store::connect(REDIS).await.expect("redis");
    let store = RunStore::new(conn.clone(), &run);
    store.delete().await.unwrap();
    store
        .set_caps(Cap::Keep, Cap::To(100), false)
        .await
        .unwrap();
    let paused = Budgets::new(conn).charge(&run, 0.0, 150).await.unwrap();
    assert!(paused.is_some(), "the charge past the cap pauses the run");
    let cap = || async { store.budget().await.unwrap().cap_tokens };
    // Below what was spent: refused, the cap as it was.
    assert_eq!(
        store.set_caps(Cap::Keep, Cap::To(120), true).await.unwrap(),
        CapsSet::Spent
    );
    assert_eq!(cap().await, Some(100));
    // Above it, but not resuming: the paused run stays paused, its cap too.
    assert_eq!(
        store
            .set_caps(Cap::Keep, Cap::To(1_000), false)
            .await
            .unwrap(),
        CapsSet::Paused
    );
    assert_eq!(cap().await, Some(100));
    assert!(store.budget().await.unwrap().paused.is_some());
    // Resumed with more: the new cap, and the run goes on.
    assert_eq!(
        store
            .set_caps(Cap::Keep, Cap::To(1_000), true)
            .await
            .unwrap(),
        CapsSet::Resumed(Vec::new())
    );
    let now = store.budget().await.unwrap();
    assert_eq!((now.cap_tokens, now.paused), (Some(1_000), None));
    store.delete().await.unwrap();
}

#[tokio::test]
async fn each_workers_concurrency_limits_are_summed_per_model_while_it_lives() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_models::{CallObserver, ModelSpec, Waits};
    use autoeval_redis_store::Holding;
    use std::sync::Arc;
    let run = format!("concurrency-test-{}", std::process::id());
    let conn = autoeval_redis_store::connect(REDIS).await.expect("redis");
    let store = RunStore::new(conn.clone(), &run);
    store.delete().await.unwrap();
    let spec: ModelSpec = "openai:gpt-4o-mini".parse().unwrap();
    let mut reporters = Vec::new();
    let mut holds = Vec::new();
    for (worker, limit) in [("w1", 18), ("w2", 7)] {
        let waits = Arc::new(Waits::default());
        // A backend starts at its ceiling, then adapts: the last limit stands.
        CallObserver::concurrency(waits.as_ref(), &spec, 32);
        CallObserver::concurrency(waits.as_ref(), &spec, limit);
        let holding = Holding::new(format!("{worker}-{run}")).with_waits(waits);
        holds.push(holding.hold(&run, "translate", 0));
        reporters.push(holding.spawn_reporter(conn.clone()));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let expected = BTreeMap::from([(spec.to_string(), (18 + 7, 2))]);
    while store.concurrency().await.unwrap() != expected {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            store.concurrency().await.unwrap()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    for r in reporters {
        r.abort();
    }
    store.delete().await.unwrap();
}

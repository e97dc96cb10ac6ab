//! Batch mode on the fleet: a worker keeps its batched tasks in Redis and
//! acknowledges their deliveries while the batches run; when it is killed
//! with batches in flight, another worker adopts its tasks once its lease
//! lapses, polls the same batches and finishes the run, and no request is
//! submitted twice.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{get_json, wait_for, Fleet};
use autoeval_llm_client::{BatchCounts, BatchJournal};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

#[test]
fn a_worker_killed_with_batches_in_flight_is_succeeded_by_another_that_finishes_them() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("batch-takeover", &["--batch-delay-ms", "6000"]);
    let config = fleet.dir.join("batch.toml");
    std::fs::write(
        &config,
        format!(
            "[model.\"{}\"]\nbatch = true\nbatch-size = 2000\nbatch-wait-s = 0.5\nbatch-poll-s = 0.2\n",
            fleet.model
        ),
    )
    .unwrap();
    fleet.start_verifier(2);
    fleet.start_worker_with(8, &["--custody-lease-s", "2"]);
    let out = fleet.out.to_str().unwrap().to_string();
    let model = fleet.model.clone();
    let mut args = vec![
        "run",
        "--model",
        &model,
        "--dataset",
        "plogic",
        "--dataset",
        "regex",
    ];
    args.extend([
        "--per-bucket",
        "4",
        "--batches",
        "1",
        "--prompt",
        "zero-shot",
    ]);
    args.extend([
        "--out",
        &out,
        "--quiet",
        "--config",
        config.to_str().unwrap(),
    ]);
    args.extend(fleet.on_fleet());
    let coordinator = fleet.autoeval(&args);
    let stats = |f: &Fleet| get_json(&format!("http://127.0.0.1:{}/stats", f.port));
    // The first worker submits a batch, which takes 6 s at the provider,
    // and records it in the run's journal before it waits.
    let journal = fleet.store().journal();
    let recorded = |fleet: &Fleet| {
        fleet
            .block_on(journal.batches())
            .map(|b| BatchCounts::of(&b))
            .unwrap_or_default()
    };
    wait_for(
        "a batch submitted and recorded",
        Duration::from_secs(120),
        || recorded(&fleet).submitted >= 1,
    );
    let submitted_before_kill = stats(&fleet)["batch_requests"].as_u64().unwrap();
    // `status` tells the batch in flight, with its requests and age.
    let status = |fleet: &Fleet| {
        let status = fleet.autoeval_output(&["status", &out, "--fleet"]);
        assert!(status.status.success(), "{status:?}");
        String::from_utf8_lossy(&status.stdout).into_owned()
    };
    let line = format!(
        "batches: 1 submitted ({submitted_before_kill} requests), 1 in progress ({submitted_before_kill} requests, oldest "
    );
    let said = status(&fleet);
    // A batched model sends no direct requests: it has no concurrency to tell.
    assert!(!said.contains("concurrency: "), "{said}");
    assert!(said.contains(&line), "{said}");
    assert!(said.contains("in flight: batch_mock0"), "{said}");
    eprintln!("status with the batch in flight:\n{said}");
    fleet.workers[0].kill9();
    let at_kill = stats(&fleet);
    assert_eq!(
        at_kill["batch_succeeded"].as_u64().unwrap(),
        0,
        "the batch was in flight at the kill: {at_kill}"
    );
    assert_eq!(
        recorded(&fleet).in_progress,
        1,
        "the journal holds it in flight"
    );
    // Its deliveries were acknowledged: nothing of the run waits in its queue.
    fleet.start_worker_with(8, &["--custody-lease-s", "2"]);
    let output = coordinator.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the run finished: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let records = fleet.stored();
    let units: BTreeSet<_> = records.iter().map(|r| r.unit()).collect();
    assert_eq!(units.len(), records.len(), "each unit recorded once");
    let calls = 2 * records.len() as u64;
    let end = stats(&fleet);
    let submissions: HashMap<String, u64> = serde_json::from_value(get_json(&format!(
        "http://127.0.0.1:{}/batch-submissions",
        fleet.port
    )))
    .unwrap();
    assert_eq!(end["batch_requests"].as_u64().unwrap(), calls, "{end}");
    assert_eq!(submissions.len() as u64, calls);
    assert!(
        submissions.values().all(|n| *n == 1),
        "no request submitted twice"
    );
    assert_eq!(end["completions"].as_u64().unwrap(), 0, "no direct call");
    let successor = std::fs::read_to_string(fleet.worker_log(1)).unwrap();
    let adopted = successor.matches("adopted a kept task").count();
    assert!(
        adopted > 0,
        "the second worker adopted the first one's tasks"
    );
    eprintln!(
        "{} units; the first worker submitted {submitted_before_kill} requests and was killed with its batch in flight; the second adopted {adopted} kept tasks; server: {} batches, {} requests for {calls} calls, each custom_id once, {} polls",
        records.len(),
        end["batches"],
        end["batch_requests"],
        end["batch_polls"],
    );
}

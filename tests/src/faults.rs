//! What a run under faults must leave, shared by the tests that throw
//! faults at the fleet: the run completes anyway, every (unit, round) is
//! recorded once, no chain goes on past a round that lost the meaning, the
//! counters equal a recount, the model is asked at most twice per unit and
//! no task ends in the dead letters.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use crate::fleet::{get_json, recount, wait_for, Fleet};
use autoeval_mock_llm::Arrival;
use autoeval_proto::{ResultRecord, Verdict};
use std::collections::BTreeMap;
use std::time::Duration;

/// About 2,000 units over the five datasets, two rounds each.
pub const PLAN: [&str; 20] = [
    "--dataset",
    "ksat",
    "--dataset",
    "plogic",
    "--dataset",
    "fol",
    "--dataset",
    "fol-english",
    "--dataset",
    "regex",
    "--prompt",
    "zero-shot",
    "--batches",
    "1",
    "--per-bucket",
    "12",
    "--rounds",
    "2",
    "--seed",
    "11",
];

/// A token cap no run here reaches: every round trip is charged to the run's budget.
pub const CAP: &str = "1000000000000";

/// The coordinator's command line for the run on `fleet`.
pub fn run_args(fleet: &Fleet) -> Vec<String> {
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args: Vec<String> = ["run", "--model", &fleet.model, "--quiet", "--out", &out]
        .map(String::from)
        .to_vec();
    args.extend(PLAN.map(String::from));
    args.extend(
        [
            "--budget-tokens",
            CAP,
            "--fleet",
            "--amqp",
            &fleet.amqp,
            "--redis",
            &fleet.redis,
        ]
        .map(String::from),
    );
    args
}

/// Starts the coordinator of the run on `fleet`.
pub fn start_run(fleet: &Fleet) -> std::process::Child {
    let args = run_args(fleet);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fleet.autoeval(&args)
}

/// Waits until `at` units of the run are done, the coordinator still running.
pub fn wait_done(fleet: &Fleet, coordinator: &mut std::process::Child, at: u64) {
    let store = fleet.store();
    wait_for(
        &format!("{at} units done"),
        Duration::from_secs(600),
        || {
            if let Some(status) = coordinator.try_wait().unwrap() {
                let mut said = String::new();
                if let Some(mut err) = coordinator.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut err, &mut said);
                }
                let dead = fleet
                    .block_on(fleet.broker().dead_letters(usize::MAX))
                    .unwrap_or_default();
                let run = fleet.run();
                let why: Vec<&str> = dead
                    .iter()
                    .filter(|d| d.run == run)
                    .map(|d| d.reason.as_str())
                    .take(3)
                    .collect();
                panic!("the coordinator ended early ({status}): {said}; dead letters: {why:?}");
            }
            fleet.block_on(store.done()).unwrap_or(0) >= at
        },
    );
}

/// Starts the run on `fleet`, lets `fault` strike once `at` units are done,
/// and checks what every fault must leave; `reconciled` says whether the
/// coordinator must have had to put the run back together.
pub fn survives(fleet: &mut Fleet, at: u64, reconciled: bool, fault: impl FnOnce(&mut Fleet)) {
    fleet.start_worker(16);
    fleet.start_verifier(2);
    let mut coordinator = start_run(fleet);
    wait_done(fleet, &mut coordinator, at);
    fault(fleet);
    completes(fleet, coordinator, Some(reconciled));
}

/// Waits for `coordinator` and checks what every fault must leave: the run
/// completed, one chain per unit, counters equal to a recount, at most two
/// model calls per round plus two per unit, no dead letters, and the
/// budget charged what the model server counts.
pub fn completes(
    fleet: &Fleet,
    coordinator: std::process::Child,
    reconciled: Option<bool>,
) -> Vec<ResultRecord> {
    let ended = coordinator.wait_with_output().unwrap();
    // Shown with a failure: what the coordinator said, reconciliations included.
    eprintln!("coordinator: {}", String::from_utf8_lossy(&ended.stderr));
    assert!(
        ended.status.success(),
        "the run did not complete: {}",
        String::from_utf8_lossy(&ended.stderr)
    );
    let text = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap();
    let records: Vec<ResultRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let units = one_chain_per_unit(&records);
    assert!(units >= 1_500, "{units} units");
    let counts = fleet.block_on(fleet.store().counts()).unwrap();
    assert_eq!(counts, recount(&records), "the counters equal a recount");
    let requests = fleet.mock_stats()["requests"].as_u64().unwrap();
    let rounds = records.len() as u64;
    // Two calls per round; what a fault loses may be asked once more (a
    // reply cache in the Redis that was lost is lost with it).
    assert!(
        requests <= 2 * rounds + 2 * units as u64,
        "{requests} requests for {rounds} rounds of {units} units"
    );
    let dead = fleet
        .block_on(fleet.broker().dead_letters(usize::MAX))
        .unwrap();
    let run = fleet.run();
    assert!(
        dead.iter().all(|d| d.run != run),
        "dead letters of the run: {:?}",
        dead.iter().filter(|d| d.run == run).collect::<Vec<_>>()
    );
    let note = fleet
        .block_on(fleet.store().meta())
        .unwrap()
        .get(autoeval_proto::meta::RECONCILED)
        .cloned();
    if let Some(reconciled) = reconciled {
        assert_eq!(
            note.is_some(),
            reconciled,
            "reconciliation expected {reconciled}: {note:?}"
        );
    }
    let spent = fleet.block_on(fleet.store().budget()).unwrap().spent_tokens;
    let served: u64 = timeline(fleet).iter().map(|a| a.tokens).sum();
    eprintln!(
        "{units} units, {rounds} rounds, {requests} model requests; {spent} tokens charged, {served} served; reconciled: {note:?}"
    );
    if spent != served {
        // Shown with the failure: what each process paid, and what its metrics counted.
        for (k, w) in fleet.workers.iter().enumerate() {
            if let Some(h) = &w.health {
                let text = reqwest::blocking::get(format!("{h}/metrics"))
                    .and_then(|r| r.text())
                    .unwrap_or_default();
                let tokens: Vec<&str> = text
                    .lines()
                    .filter(|l| {
                        l.starts_with("autoeval_llm_tokens_total")
                            || l.starts_with("autoeval_tasks_settled_total")
                            || l.starts_with("autoeval_llm_requests_total")
                    })
                    .collect();
                eprintln!("worker {k}: {tokens:#?}");
            }
        }
        let key = autoeval_proto::fleet::run_key(&fleet.run(), "budget");
        let budget: std::collections::BTreeMap<String, String> = fleet.block_on(async {
            let mut conn = autoeval_redis_store::connect(&fleet.redis).await.unwrap();
            redis::AsyncCommands::hgetall(&mut conn, key).await.unwrap()
        });
        eprintln!("budget: {budget:#?}");
    }
    assert_eq!(spent, served, "the budget charged what the server served");
    records
}

/// The mock server's record of every request.
pub fn timeline(fleet: &Fleet) -> Vec<Arrival> {
    serde_json::from_value(get_json(&format!(
        "http://127.0.0.1:{}/timeline",
        fleet.port
    )))
    .expect("the mock server's timeline")
}

/// Checks that each unit's rounds are 1..=k, each once, every round before
/// the last equivalent; returns how many units there are.
pub fn one_chain_per_unit(records: &[ResultRecord]) -> usize {
    let mut chains: BTreeMap<_, BTreeMap<u32, Verdict>> = BTreeMap::new();
    for r in records {
        let rounds = chains.entry(r.unit()).or_default();
        assert!(
            rounds.insert(r.round, r.verdict).is_none(),
            "{} recorded twice",
            r.round_key()
        );
    }
    for (unit, rounds) in &chains {
        let numbers: Vec<u32> = rounds.keys().copied().collect();
        let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
        assert_eq!(numbers, expected, "{unit}: rounds");
        let last = *numbers.last().unwrap();
        assert!(
            rounds
                .iter()
                .all(|(n, v)| *n == last || *v == Verdict::Equivalent),
            "{unit}: a round after one that lost the meaning: {rounds:?}"
        );
    }
    chains.len()
}

/// Watches a run's units done, to tell the longest time without one more.
pub struct ProgressWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<Progress>,
}

/// What a [`ProgressWatch`] saw.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// The longest time between two reads that found more units done.
    pub longest: Duration,
    /// Reads that found more units done.
    pub advances: u64,
    /// Reads that failed (Redis away or failing over).
    pub failed_reads: u64,
}

/// Starts watching `fleet`'s run every 100 ms: it progresses when more
/// units are done in Redis than at the last read, or its directory's
/// results grew (the coordinator takes done units out of Redis into them).
pub fn watch_progress(fleet: &Fleet) -> ProgressWatch {
    use std::sync::atomic::Ordering;
    let store = fleet.store();
    let results = fleet.out.join("results.jsonl");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let task = fleet.spawn(async move {
        let mut seen = Progress::default();
        let (mut done_then, mut length_then) = (None, None);
        let mut since = std::time::Instant::now();
        while !stopped.load(Ordering::Relaxed) {
            let done = match store.done().await {
                Ok(done) => Some(done),
                Err(_) => {
                    seen.failed_reads += 1;
                    None
                }
            };
            let length = std::fs::metadata(&results).map_or(0, |m| m.len());
            let more_done = done.is_some_and(|d| done_then.is_some_and(|t| d > t));
            let grew = length_then.is_some_and(|t| length > t);
            if more_done || grew {
                seen.longest = seen.longest.max(since.elapsed());
                seen.advances += 1;
                since = std::time::Instant::now();
            }
            done_then = done.or(done_then);
            length_then = Some(length);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        seen
    });
    ProgressWatch { stop, task }
}

impl ProgressWatch {
    /// Stops watching; answers what it saw.
    pub fn stop(self, fleet: &Fleet) -> Progress {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        fleet.block_on(self.task).expect("the watch ends")
    }
}

//! Faults the fleet was not built around, each in its own run against the
//! real RabbitMQ and Redis with the mock server as the model: the run
//! completes anyway, every (unit, round) is recorded once, no chain goes on
//! past a round that lost the meaning, the counters equal a recount, the
//! model is asked at most twice per unit and no task ends in the dead letters.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{free_port, recount, wait_for, Fleet, Process, AMQP, ONE_AT_A_TIME};
use autoeval_proto::{ResultRecord, Verdict};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

/// About 2,000 units over the five datasets, two rounds each.
const PLAN: [&str; 20] = [
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

/// A Redis of the test's own, which it can stop without saving and start empty.
struct OwnRedis {
    port: u16,
    server: Option<Process>,
}

impl OwnRedis {
    fn start() -> OwnRedis {
        let mut redis = OwnRedis {
            port: free_port(),
            server: None,
        };
        redis.restart();
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (nothing is saved) and starts an empty one on the same port.
    fn restart(&mut self) {
        if let Some(mut old) = self.server.take() {
            old.kill9();
        }
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .args(["--enable-debug-command", "local"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.server = Some(Process {
            child,
            health: None,
        });
        let port = self.port;
        wait_for("the test's Redis answers", Duration::from_secs(30), || {
            Command::new("redis-cli")
                .args(["-p", &port.to_string(), "ping"])
                .output()
                .is_ok_and(|o| o.stdout.starts_with(b"PONG"))
        });
    }
}

/// Starts the run on `fleet`, lets `fault` strike once `at` units are done,
/// and checks what every fault must leave; `reconciled` says whether the
/// coordinator must have had to put the run back together.
fn survives(fleet: &mut Fleet, at: u64, reconciled: bool, fault: impl FnOnce(&mut Fleet)) {
    fleet.start_worker(16);
    fleet.start_verifier(2);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = vec!["run", "--model", &fleet.model, "--quiet", "--out", &out];
    args.extend_from_slice(&PLAN);
    let redis = fleet.redis.clone();
    args.extend(["--fleet", "--amqp", AMQP, "--redis", &redis]);
    let mut coordinator = fleet.autoeval(&args);
    let store = fleet.store();
    wait_for(
        &format!("{at} units done"),
        Duration::from_secs(600),
        || {
            assert!(
                coordinator.try_wait().unwrap().is_none(),
                "the coordinator ended early"
            );
            fleet.block_on(store.done()).unwrap_or(0) >= at
        },
    );
    fault(fleet);
    let ended = coordinator.wait_with_output().unwrap();
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
    assert_eq!(
        note.is_some(),
        reconciled,
        "reconciliation expected {reconciled}: {note:?}"
    );
    eprintln!("{units} units, {rounds} rounds, {requests} model requests; reconciled: {note:?}");
}

/// Checks that each unit's rounds are 1..=k, each once, every round before
/// the last equivalent; returns how many units there are.
fn one_chain_per_unit(records: &[ResultRecord]) -> usize {
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

#[test]
fn a_redis_that_restarts_empty_mid_run_loses_no_unit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut redis = OwnRedis::start();
    let mut fleet = Fleet::new("chaos-redis", &["--model", "reference-noisy:0.2"]);
    fleet.redis = redis.url();
    survives(&mut fleet, 600, true, |_| redis.restart());
}

#[test]
fn the_stage_queues_purged_mid_run_are_published_again() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-purge", &["--model", "reference-noisy:0.2"]);
    survives(&mut fleet, 600, true, |fleet| {
        let broker = fleet.broker();
        // The verify queue is every run's, but this test runs alone.
        let dropped: u32 = [
            autoeval_proto::fleet::translate_queue(&fleet.model),
            autoeval_proto::fleet::VERIFY_QUEUE.to_string(),
        ]
        .iter()
        .map(|q| fleet.block_on(broker.purge_queue(q)).unwrap())
        .sum();
        fleet.block_on(broker.close());
        assert!(dropped > 0, "the purge dropped nothing");
        eprintln!("purged {dropped} messages");
    });
}

#[test]
fn a_redis_that_stops_answering_for_ten_seconds_spends_no_delivery_attempt() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let redis = OwnRedis::start();
    let mut fleet = Fleet::new("chaos-sleep", &["--model", "reference-noisy:0.2"]);
    fleet.redis = redis.url();
    let port = redis.port.to_string();
    survives(&mut fleet, 600, false, |_| {
        // Answers only once it has slept: the fleet waits, it does not churn.
        let slept = Command::new("redis-cli")
            .args(["-p", &port, "DEBUG", "SLEEP", "10"])
            .output()
            .expect("redis-cli runs");
        assert!(slept.status.success());
    });
}

//! Faults the fleet was not built around, each in its own run against the
//! real RabbitMQ and Redis with the mock server as the model: the run
//! completes anyway, every (unit, round) is recorded once, no chain goes on
//! past a round that lost the meaning, the counters equal a recount, the
//! model is asked at most twice per unit and no task ends in the dead letters.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::faults::{completes, one_chain_per_unit, start_run, survives, wait_done};
use autoeval_e2e::fleet::{wait_for, Fleet, OwnRedis, Process, ONE_AT_A_TIME};
use autoeval_proto::ResultRecord;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_redis_that_restarts_empty_mid_run_loses_no_unit() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut redis = OwnRedis::start();
    let mut fleet = Fleet::new("chaos-redis", &["--model", "reference-noisy:0.2"]);
    fleet.redis = redis.url();
    fleet.start_worker(16);
    fleet.start_verifier(2);
    let mut coordinator = start_run(&fleet);
    wait_done(&fleet, &mut coordinator, 600);
    redis.restart();
    completes(&fleet, coordinator, Some(true));
}

#[test]
fn the_stage_queues_purged_mid_run_are_published_again() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-purge", &["--model", "reference-noisy:0.2"]);
    survives(&mut fleet, 600, true, |fleet| {
        let broker = fleet.broker();
        // The verify queue is every run's, but this test runs alone.
        let dropped: u32 = [
            broker.topology().translate_queue(&fleet.model),
            broker.topology().verify_queue(),
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
    let _turn = autoeval_e2e::turn(module_path!());
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

#[test]
fn rabbitmq_stopped_and_started_mid_run_loses_nothing() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-broker", &["--model", "reference-noisy:0.2"]);
    survives(&mut fleet, 600, false, |_| {
        // The application stops (every connection and consumer with it) and
        // starts again with its queues from disk.
        for action in ["stop_app", "start_app", "await_startup"] {
            rabbitmqctl(&[action]);
        }
    });
}

#[test]
fn a_round_removed_by_hand_is_shown_by_status_and_redone_by_resume() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-gap", &["--model", "reference"]);
    fleet.start_worker(16);
    fleet.start_verifier(2);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args: Vec<&str> = vec!["run", "--model", &fleet.model, "--quiet", "--out", &out];
    args.extend([
        "--dataset",
        "plogic",
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
        "--per-bucket",
        "2",
        "--rounds",
        "2",
    ]);
    args.extend(fleet.on_fleet());
    let ran = fleet.autoeval_output(&args);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    // Round 1 of one unit whose round 2 is recorded, removed by hand.
    let path = fleet.out.join("results.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<ResultRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let units = one_chain_per_unit(&records);
    let later = records
        .iter()
        .find(|r| r.round == 2)
        .expect("a second round");
    let kept: Vec<&str> = text
        .lines()
        .zip(&records)
        .filter(|(_, r)| !(r.unit() == later.unit() && r.round == 1))
        .map(|(line, _)| line)
        .collect();
    std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    let mut status: Vec<&str> = vec!["status", &out];
    status.extend(fleet.on_fleet().into_iter().skip(1));
    let said = fleet.autoeval_output(&status);
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(said.contains("chains with a gap: 1"), "{said}");
    assert!(said.contains(&later.unit().to_string()), "{said}");
    let mut resume: Vec<&str> = vec!["resume", &out, "--quiet"];
    resume.extend(fleet.on_fleet());
    let resumed = fleet.autoeval_output(&resume);
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let records: Vec<ResultRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        one_chain_per_unit(&records),
        units,
        "every chain whole again"
    );
    assert!(records
        .iter()
        .any(|r| r.unit() == later.unit() && r.round == 1));
}

/// Tasks of `stage` a service took from its queues, from its metrics.
fn tasks_received(service: &Process, stage: &str) -> u64 {
    let health = service.health.as_ref().unwrap();
    let text = reqwest::blocking::get(format!("{health}/metrics"))
        .and_then(|r| r.text())
        .unwrap();
    let series = format!("tasks_received_total{{stage=\"{stage}\"}}");
    text.lines()
        .filter(|l| l.contains(&series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

/// `rabbitmqctl ARGS`, which must succeed; its output.
fn rabbitmqctl(args: &[&str]) -> String {
    let done = Command::new("rabbitmqctl")
        .args(args)
        .output()
        .expect("rabbitmqctl runs");
    assert!(
        done.status.success(),
        "rabbitmqctl {args:?}: {}",
        String::from_utf8_lossy(&done.stderr)
    );
    String::from_utf8_lossy(&done.stdout).into_owned()
}

/// A memory alarm on the broker while it lives: every publishing connection
/// is blocked mid-publish until it is dropped.
struct MemoryAlarm;

impl MemoryAlarm {
    fn raise() -> MemoryAlarm {
        rabbitmqctl(&["set_vm_memory_high_watermark", "0"]);
        MemoryAlarm
    }
}

impl Drop for MemoryAlarm {
    fn drop(&mut self) {
        // RabbitMQ's default watermark.
        rabbitmqctl(&["set_vm_memory_high_watermark", "0.4"]);
    }
}

#[test]
fn a_coordinator_killed_while_publishing_and_started_again_publishes_each_unit_once_more_at_most() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-kill", &["--model", "reference-noisy:0.2"]);
    fleet.start_worker(16);
    fleet.start_verifier(2);
    // The alarm blocks the coordinator's connection at its first publish:
    // it is killed in the middle of publishing, some of it maybe through.
    let alarm = MemoryAlarm::raise();
    let mut first = start_run(&fleet);
    wait_for(
        "the coordinator blocked while publishing",
        Duration::from_secs(120),
        || {
            assert!(
                first.try_wait().unwrap().is_none(),
                "the coordinator ended early"
            );
            rabbitmqctl(&["list_connections", "-q", "client_properties", "state"])
                .lines()
                .any(|l| {
                    l.contains("\"autoeval-coordinator\"") && l.trim_end().ends_with("blocked")
                })
        },
    );
    first.kill().unwrap();
    first.wait().unwrap();
    drop(alarm);
    let published = fleet
        .block_on(fleet.store().meta())
        .unwrap()
        .contains_key(autoeval_proto::meta::PUBLISHED);
    assert!(!published, "the run was noted as published before the kill");
    let again = start_run(&fleet);
    let records = completes(&fleet, again, None);
    let units = records
        .iter()
        .map(ResultRecord::unit)
        .collect::<std::collections::BTreeSet<_>>()
        .len() as u64;
    let taken = tasks_received(&fleet.workers[0], "translate");
    // A clean run takes one translate task per round.
    assert!(
        taken <= records.len() as u64 + units,
        "{taken} translate tasks taken for {} rounds of {units} units",
        records.len()
    );
    eprintln!(
        "killed while publishing; {taken} translate tasks taken for {} rounds of {units} units",
        records.len()
    );
}

#[test]
fn two_copies_of_a_verify_bundle_with_different_answers_go_on_once() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_proto::wire::{decode, encode, MessageKind};
    use autoeval_proto::{Reading, VerifyTask};
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("chaos-copies", &["--model", "reference-noisy:0.2"]);
    fleet.start_worker(16);
    let coordinator = start_run(&fleet);
    // Before any verifier runs, the test takes verify bundles and publishes
    // each twice: as it was, and with an answer that reads as no formula.
    let broker = fleet.broker();
    let mut consumer = fleet
        .block_on(broker.consume(&broker.topology().verify_queue(), 64, "chaos-copies"))
        .unwrap();
    let run = fleet.run();
    let mut copied = 0;
    while copied < 40 {
        let task = fleet.block_on(consumer.next()).unwrap().unwrap();
        if task.meta.run != run {
            fleet.block_on(task.requeue()).unwrap();
            continue;
        }
        let (header, mut tasks): (_, Vec<VerifyTask>) =
            decode(&task.data, MessageKind::Verify).unwrap();
        let original = task.data.clone();
        for t in &mut tasks {
            let unreadable = Reading {
                phi1: None,
                non_compliance: Some("a copy whose answer differs".into()),
            };
            t.translation.strict = unreadable.clone();
            t.translation.lenient = unreadable;
        }
        let changed = encode(&header, &tasks).unwrap();
        // Half the time the changed copy comes first.
        let order = if copied % 2 == 0 {
            [original, changed]
        } else {
            [changed, original]
        };
        for bytes in order {
            fleet
                .block_on(broker.publish(&task.routing_key, &bytes, &task.meta))
                .unwrap();
        }
        fleet.block_on(task.ack()).unwrap();
        copied += 1;
    }
    fleet.block_on(consumer.close());
    fleet.start_verifier(2);
    fleet.start_verifier(2);
    let records = completes(&fleet, coordinator, None);
    let unreadable = records
        .iter()
        .filter(|r| r.reason.as_deref() == Some("a copy whose answer differs"))
        .count();
    eprintln!(
        "{copied} bundles published twice; {unreadable} rounds recorded from the changed copy"
    );
    assert!(unreadable > 0, "no changed copy was ever recorded first");
}

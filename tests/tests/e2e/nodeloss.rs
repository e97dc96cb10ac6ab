//! The fleet on a three-node RabbitMQ cluster and a Redis primary with a
//! replica behind three Sentinels, all started by the test on loopback
//! ports of its own, losing a node mid-run: (a) the node that leads the
//! model's stage queue killed with SIGKILL, (b) a node stopped for 30 s and
//! started again, (c) the Redis primary killed with SIGKILL, (d) (a) and
//! (c) at once. Each run exits 0 with every (unit, round) recorded once
//! (the checks every fault must pass, `faults::completes`), the model asked
//! for no more than the rounds need plus what was in flight, and the
//! longest time without progress within 30 s.
//!
//! The four share one cluster, started once (about half a minute): they
//! run one after the other in one test, each reported even when another
//! fails.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::faults::{completes, start_run, wait_done, watch_progress, Progress};
use autoeval_e2e::fleet::{Fleet, ONE_AT_A_TIME};
use autoeval_local_servers::{RabbitCluster, SentinelRedis};
use std::time::Duration;

/// Each LLM worker's concurrency; two workers run.
const CONCURRENCY: u16 = 8;

/// The longest time without progress a node's loss may cost.
const LONGEST_STALL: Duration = Duration::from_secs(30);

/// What one scenario printed.
struct Figures {
    units: usize,
    rounds: u64,
    requests: u64,
    progress: Progress,
}

/// A node lost, given the cluster, the Redis and the fleet mid-run.
type Fault = fn(&mut RabbitCluster, &mut SentinelRedis, &Fleet);

/// The node that leads the fleet's translate queue.
fn leader(cluster: &RabbitCluster, fleet: &Fleet) -> usize {
    let queue = fleet.topology().translate_queue(&fleet.model);
    cluster
        .leader_of(&queue)
        .unwrap_or_else(|| panic!("{queue} has a leader"))
}

fn kill_the_leader(cluster: &mut RabbitCluster, _: &mut SentinelRedis, fleet: &Fleet) {
    let k = leader(cluster, fleet);
    eprintln!("killing node {} (SIGKILL), the leader", k + 1);
    cluster.kill9(k);
}

fn stop_a_node_for_30_s(cluster: &mut RabbitCluster, _: &mut SentinelRedis, fleet: &Fleet) {
    let k = leader(cluster, fleet);
    eprintln!("stopping node {} for 30 s", k + 1);
    cluster.stop(k).unwrap();
    // The fault is a node away for this long, not a wait for a condition.
    std::thread::sleep(Duration::from_secs(30));
    cluster.restart(k).unwrap();
    eprintln!("node {} runs again", k + 1);
}

fn kill_the_redis_primary(_: &mut RabbitCluster, redis: &mut SentinelRedis, _: &Fleet) {
    let k = redis.kill_primary().unwrap();
    eprintln!("killed the Redis primary (SIGKILL)");
    redis.wait_promoted_from(k).unwrap();
}

fn kill_both(cluster: &mut RabbitCluster, redis: &mut SentinelRedis, fleet: &Fleet) {
    let k = leader(cluster, fleet);
    cluster.kill9(k);
    let r = redis.kill_primary().unwrap();
    eprintln!("killed node {} and the Redis primary (SIGKILL)", k + 1);
    redis.wait_promoted_from(r).unwrap();
}

/// Checks what `autoeval status` and the metrics say of where the fleet's
/// workers and verifiers are connected: each on a node of the cluster and
/// on the Redis primary of now; after a failover, each followed it.
fn where_connected(fleet: &Fleet, cluster: &RabbitCluster, redis: &SentinelRedis, failover: bool) {
    let out = fleet.out.to_string_lossy().into_owned();
    let said = fleet.autoeval_output(&["status", &out]);
    let text = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&said.stderr)
    );
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("autoeval-worker@") || l.contains("autoeval-verifier@"))
        .collect();
    assert_eq!(lines.len(), 4, "two workers and two verifiers: {text}");
    let primary = format!("Redis 127.0.0.1:{}", redis.primary().unwrap());
    for line in &lines {
        let on_a_node =
            (0..cluster.len()).any(|k| line.contains(&format!("127.0.0.1:{}/", cluster.port(k))));
        assert!(on_a_node, "a node of the cluster: {line}");
        assert!(line.contains(&primary), "the primary now: {line}");
        assert_eq!(line.contains("followed 1 failover"), failover, "{line}");
    }
    for worker in &fleet.workers {
        let metrics = get_text(&format!("{}/metrics", worker.health.as_ref().unwrap()));
        let followed = metrics
            .lines()
            .find_map(|l| l.strip_prefix("autoeval_redis_failovers_total "))
            .unwrap_or_else(|| panic!("no failover counter: {metrics}"));
        assert_eq!(followed, if failover { "1" } else { "0" });
        assert!(
            metrics
                .contains("autoeval_broker_connections_total{node=\"amqp://guest:***@127.0.0.1:"),
            "{metrics}"
        );
    }
}

fn get_text(url: &str) -> String {
    reqwest::blocking::get(url)
        .and_then(|r| r.text())
        .unwrap_or_else(|e| panic!("GET {url}: {e}"))
}

/// One run on the cluster and a Redis of its own, losing what `fault` takes.
fn scenario(cluster: &mut RabbitCluster, name: &str, fault: Fault, latency_ms: u32) -> Figures {
    let latency = latency_ms.to_string();
    let mock = ["--model", "reference-noisy:0.2", "--latency-ms", &latency];
    let mut fleet = Fleet::new(&format!("nodeloss-{name}"), &mock);
    let mut redis = SentinelRedis::start(&fleet.dir, "nodeloss-s3cret").unwrap();
    fleet.amqp = cluster.urls();
    fleet.redis = redis.url(0);
    for _ in 0..2 {
        fleet.start_worker(CONCURRENCY);
        fleet.start_verifier(1);
    }
    let mut coordinator = start_run(&fleet);
    wait_done(&fleet, &mut coordinator, 400);
    let names = fleet.topology();
    for queue in [names.translate_queue(&fleet.model), names.dead_queue()] {
        assert_eq!(
            cluster.members_of(&queue).len(),
            3,
            "{queue} has a replica on each node"
        );
    }
    let watch = watch_progress(&fleet);
    let primary_before = redis.primary().unwrap();
    fault(cluster, &mut redis, &fleet);
    if let Some(status) = coordinator.try_wait().unwrap() {
        let said = coordinator.wait_with_output().unwrap();
        panic!(
            "the run ended ({status}) before the fault did: {}",
            String::from_utf8_lossy(&said.stderr)
        );
    }
    let records = completes(&fleet, coordinator, None);
    let progress = watch.stop(&fleet);
    let failover = redis.primary() != Some(primary_before);
    where_connected(&fleet, cluster, &redis, failover);
    let units = records
        .iter()
        .map(|r| r.unit())
        .collect::<std::collections::HashSet<_>>()
        .len();
    Figures {
        units,
        rounds: records.len() as u64,
        requests: fleet.mock_stats()["requests"].as_u64().unwrap(),
        progress,
    }
}

#[test]
fn the_fleet_finishes_its_run_through_the_loss_of_a_broker_node_or_the_redis_primary() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = autoeval_e2e::scratch("nodeloss-cluster");
    let mut cluster = RabbitCluster::start(&scratch, 3).unwrap();
    // The model answers slowly where a fault lasts: the run goes on past it.
    let scenarios: [(&str, Fault, u32); 4] = [
        ("a-leader-killed", kill_the_leader, 20),
        ("b-node-stopped-30s", stop_a_node_for_30_s, 250),
        ("c-redis-primary-killed", kill_the_redis_primary, 20),
        ("d-both-killed", kill_both, 20),
    ];
    let mut failed = Vec::new();
    // In flight at a fault: what the workers hold, each task two calls.
    let in_flight = 2 * 2 * u64::from(CONCURRENCY);
    for (name, fault, latency_ms) in scenarios {
        for k in 0..cluster.len() {
            if !cluster.is_up(k) {
                cluster.restart(k).unwrap();
            }
        }
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scenario(&mut cluster, name, fault, latency_ms)
        }));
        match ran {
            Ok(f) => {
                let needed = 2 * f.rounds;
                eprintln!(
                    "{name}: {} units, {} rounds, each once; {} model calls against {needed} needed ({:.3}×); longest without progress {:.1} s ({} advances seen, {} reads failed)",
                    f.units,
                    f.rounds,
                    f.requests,
                    f.requests as f64 / needed as f64,
                    f.progress.longest.as_secs_f64(),
                    f.progress.advances,
                    f.progress.failed_reads,
                );
                if f.requests > needed + in_flight {
                    failed.push(format!("{name}: {} calls, {needed} needed", f.requests));
                }
                if f.progress.longest > LONGEST_STALL {
                    let longest = f.progress.longest.as_secs_f64();
                    failed.push(format!("{name}: {longest:.1} s without progress"));
                }
            }
            Err(_) => failed.push(format!("{name}: failed (above)")),
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

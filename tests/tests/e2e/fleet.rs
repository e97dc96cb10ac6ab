//! The fleet end to end: the coordinator, LLM workers and verifier workers
//! as separate processes against the real RabbitMQ and Redis, with the mock
//! server as the model.

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{Fleet, AMQP, ONE_AT_A_TIME, REDIS};
use autoeval_e2e::jsonl;
use autoeval_proto::fleet::Topology;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Output;

/// One batch of 30 items per complexity value: over 5,000 units over the
/// five datasets, each formula distinct, so each prompt belongs to one unit.
/// The prover's wall-clock limit is generous so that its resource limit,
/// which counts work rather than time, decides what is undecided: the
/// verdicts are then a function of the input, not of how busy the machine is.
const PLAN: [&str; 10] = [
    "--timeout-ms",
    "120000",
    "--prompt",
    "zero-shot",
    "--batches",
    "1",
    "--per-bucket",
    "30",
    "--seed",
    "7",
];

fn run_args<'a>(fleet: &'a Fleet, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run", "--model", &fleet.model, "--quiet", "--out", out];
    args.extend_from_slice(&PLAN);
    args.extend_from_slice(extra);
    args
}

fn fleet_flags() -> Vec<&'static str> {
    vec!["--fleet", "--amqp", AMQP, "--redis", REDIS]
}

fn succeeded(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

type Key = (String, String, String, u64, u64);

/// Verdict and φ1 of each (unit, round) of a results file.
fn outcomes(dir: &Path) -> BTreeMap<Key, (String, Option<String>)> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results.jsonl");
    let mut out = BTreeMap::new();
    for r in jsonl(&text) {
        let key = (
            r["id"].as_str().unwrap().to_string(),
            r["model"].as_str().unwrap().to_string(),
            r["prompt"].as_str().unwrap().to_string(),
            r["repeat"].as_u64().unwrap(),
            r["round"].as_u64().unwrap(),
        );
        let value = (
            r["verdict"].as_str().unwrap().to_string(),
            r["phi1"].as_str().map(String::from),
        );
        assert!(out.insert(key, value).is_none(), "a round recorded twice");
    }
    out
}

#[test]
fn a_fleet_run_gives_the_verdicts_of_the_one_machine_run_unit_by_unit() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-e2e", &["--model", "reference-noisy:0.2"]);
    for _ in 0..2 {
        fleet.start_worker(16);
        fleet.start_verifier(1);
    }
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = run_args(&fleet, &out, &[]);
    args.extend(fleet_flags());
    succeeded(&fleet.autoeval_output(&args), "the fleet run");
    let local = fleet.dir.join("one-machine").to_string_lossy().into_owned();
    succeeded(
        &fleet.autoeval_output(&run_args(&fleet, &local, &[])),
        "the one-machine run",
    );
    let (a, b) = (outcomes(&fleet.out), outcomes(Path::new(&local)));
    let units = a.keys().filter(|k| k.4 == 1).count();
    let by_dataset = a.keys().fold(HashMap::<&str, usize>::new(), |mut m, k| {
        *m.entry(k.0.split('-').next().unwrap()).or_default() += 1;
        m
    });
    eprintln!("{units} units, rounds by dataset {by_dataset:?}");
    assert!(units >= 5000, "{units} units");
    assert_eq!(
        by_dataset.len(),
        4,
        "ksat, plogic, fol (and fol-english), regex"
    );
    let wrong = a.iter().filter(|(_, (v, _))| v != "equivalent").count();
    assert!(
        wrong > 100,
        "the noisy model makes mistakes to compare: {wrong}"
    );
    assert_eq!(a.len(), b.len());
    let differ: Vec<_> = a
        .iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, v)| (k, v, b.get(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "{} rounds differ (fleet, one machine): {:?}",
        differ.len(),
        &differ[..differ.len().min(5)]
    );
    // Every process reported ready and stops cleanly on SIGTERM.
    for p in fleet.workers.iter_mut().chain(fleet.verifiers.iter_mut()) {
        assert!(p.terminate().success());
    }
}

/// Waits until the run has recorded at least `n` units' outcomes.
fn wait_done(fleet: &Fleet, coordinator: &mut std::process::Child, n: u64) {
    let store = fleet.store();
    autoeval_e2e::fleet::wait_for(
        &format!("{n} units done"),
        std::time::Duration::from_secs(600),
        || {
            assert!(
                coordinator.try_wait().unwrap().is_none(),
                "the coordinator ended early"
            );
            fleet.block_on(store.done()).unwrap_or(0) >= n
        },
    );
}

#[test]
fn killed_workers_and_servers_that_drop_every_connection_lose_nothing_and_pay_nothing_twice() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_proto::fleet::BUNDLE_SIZE;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Latency keeps calls in flight when the worker is killed.
    let mut fleet = Fleet::new("fleet-faults", &["--latency-ms", "20"]);
    let concurrency = 16;
    for _ in 0..2 {
        fleet.start_worker(concurrency);
        fleet.start_verifier(1);
    }
    let out = fleet.out.to_string_lossy().into_owned();
    let health = format!("127.0.0.1:{}", autoeval_e2e::fleet::free_port());
    let mut args = run_args(&fleet, &out, &["--health-addr", &health]);
    args.extend(fleet_flags());
    let mut coordinator = fleet.autoeval(&args);
    let units = 5_000u64;
    wait_done(&fleet, &mut coordinator, units / 10);
    // The coordinator, like every process of the fleet, answers health
    // checks, and is ready once the run is published (which, on a busy
    // machine, may end after the first units are done).
    autoeval_e2e::fleet::wait_for(
        "the coordinator ready",
        std::time::Duration::from_secs(120),
        || {
            reqwest::blocking::get(format!("http://{health}/readyz"))
                .is_ok_and(|r| r.status().is_success())
        },
    );
    // Workers tell Redis the tasks they hold, and `status` shows them per
    // shard. A worker's prefetch is enough bundles for twice its
    // concurrency, plus one: it holds at most that many full bundles.
    let bundle = BUNDLE_SIZE as u64;
    let in_hand = ((2 * u64::from(concurrency)).div_ceil(bundle) + 1) * bundle;
    let store = fleet.store();
    let translating = |fleet: &autoeval_e2e::fleet::Fleet| -> u64 {
        fleet
            .block_on(store.held())
            .unwrap()
            .iter()
            .filter(|((stage, _), _)| stage == "translate")
            .map(|(_, n)| n)
            .sum()
    };
    autoeval_e2e::fleet::wait_for(
        "tasks in hand told to Redis",
        std::time::Duration::from_secs(60),
        || translating(&fleet) > 0,
    );
    assert!(translating(&fleet) <= 2 * in_hand);
    let status = fleet.autoeval_output(&["status", &out, "--amqp", AMQP, "--redis", REDIS]);
    succeeded(&status, "status");
    let table = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(table.contains("taken:workers"), "{table}");
    fleet.workers[0].kill9();
    // A killed worker's tasks stop being counted once its word expires.
    autoeval_e2e::fleet::wait_for(
        "the killed worker's tasks no longer counted",
        std::time::Duration::from_secs(60),
        || translating(&fleet) <= in_hand,
    );
    wait_done(&fleet, &mut coordinator, units / 4);
    fleet.verifiers[0].kill9();
    wait_done(&fleet, &mut coordinator, units * 2 / 5);
    // Every connection to the broker, the coordinator's included, closes at once.
    let closed = std::process::Command::new("rabbitmqctl")
        .args(["close_all_connections", "fault test"])
        .output()
        .expect("rabbitmqctl runs");
    assert!(
        closed.status.success(),
        "{}",
        String::from_utf8_lossy(&closed.stderr)
    );
    // And Redis drops every client connection too.
    let killed = std::process::Command::new("redis-cli")
        .args(["CLIENT", "KILL", "TYPE", "normal"])
        .output()
        .expect("redis-cli runs");
    assert!(
        killed.status.success(),
        "{}",
        String::from_utf8_lossy(&killed.stderr)
    );
    // What was recorded by now was paid for; none of it may be asked again.
    let before: Vec<_> = fleet.stored();
    let counts_before = fleet.prompt_counts();
    let output = coordinator.wait_with_output().unwrap();
    succeeded(&output, "the fleet run");

    let records = fleet.stored();
    let total = outcomes(&fleet.out).len();
    let keys: std::collections::HashSet<_> = records.iter().map(|r| (r.unit(), r.round)).collect();
    eprintln!(
        "{} rounds stored ({} distinct), {total} in results.jsonl; {} recorded before the broker and Redis dropped their connections",
        records.len(),
        keys.len(),
        before.len()
    );
    assert!(total as u64 > units);
    assert_eq!(
        records.len(),
        total,
        "exactly one result per unit and round"
    );
    assert_eq!(keys.len(), total);
    let counters = fleet.block_on(fleet.store().counts()).unwrap();
    let counters: BTreeMap<String, i64> = counters.into_iter().filter(|(_, n)| *n != 0).collect();
    assert_eq!(
        counters,
        autoeval_e2e::fleet::recount(&records),
        "counters equal a recount"
    );

    let counts = fleet.prompt_counts();
    for r in &before {
        for d in autoeval_e2e::fleet::prompt_digests(r).expect("a translated round") {
            assert_eq!(
                counts.get(&d),
                counts_before.get(&d),
                "a recorded round was asked again"
            );
        }
    }
    // Two units may share a prompt (the same English back), so each prompt
    // is expected as often as the rounds that asked it.
    let mut expected: HashMap<String, u64> = HashMap::new();
    for r in &records {
        for d in autoeval_e2e::fleet::prompt_digests(r).expect("a translated round") {
            *expected.entry(d).or_default() += 1;
        }
    }
    let resent: u64 = counts
        .iter()
        .map(|(d, &c)| c.saturating_sub(expected.get(d).copied().unwrap_or(0)))
        .sum();
    let requests: u64 = counts.values().sum();
    eprintln!(
        "mock server: {requests} requests for {} distinct prompts; {resent} sent again (in flight when a worker was killed)",
        counts.len()
    );
    assert!(expected
        .iter()
        .all(|(d, &n)| counts.get(d).copied().unwrap_or(0) >= n));
    assert!(
        resent <= 2 * u64::from(concurrency),
        "only the calls in flight in the killed worker are sent again: {resent}"
    );
}

/// A small plan (one batch, two items per complexity value).
const SMALL: [&str; 4] = ["--per-bucket", "2", "--worker-wait-s", "0"];

fn small_run_args<'a>(
    fleet: &'a Fleet,
    out: &'a str,
    models: &[&'a str],
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--quiet",
        "--out",
        out,
        "--prompt",
        "zero-shot",
        "--batches",
        "1",
    ];
    for m in models {
        args.extend(["--model", m]);
    }
    args.extend_from_slice(&SMALL);
    args.extend(fleet_flags());
    args.extend_from_slice(extra);
    let _ = fleet;
    args
}

#[test]
fn poison_ends_in_the_dead_letter_queue_with_its_reason_and_rerun_completes_the_run() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_amqp::Meta;
    use autoeval_proto::fleet::translate_key;
    use autoeval_proto::wire::WIRE_VERSION;
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-poison", &[]);
    fleet.start_worker(8);
    fleet.start_verifier(1);
    let run = fleet.run();
    // A model the mock server answers but no worker serves yet.
    let unserved = format!("openai-compatible:other@http://127.0.0.1:{}/v1", fleet.port);
    let broker = fleet.broker();
    let meta = |unit: &str| Meta::one(&run, unit);
    let key = translate_key(&fleet.model);
    let mut other_version = 99u32.to_le_bytes().to_vec();
    other_version.extend_from_slice(b"a body of another layout");
    fleet.block_on(async {
        broker
            .publish(&key, b"\xff\xfe not a message", &meta("garbage#1"))
            .await
            .unwrap();
        broker
            .publish(&key, &other_version, &meta("future#1"))
            .await
            .unwrap();
    });
    let out = fleet.out.to_string_lossy().into_owned();
    let args = small_run_args(&fleet, &out, &[&fleet.model, &unserved], &[]);
    let first = fleet.autoeval_output(&args);
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(!first.status.success(), "the run cannot complete: {said}");
    assert!(
        said.contains("units have tasks in the dead-letter queue"),
        "{said}"
    );

    let status = fleet.autoeval_output(&["status", &out, "--amqp", AMQP, "--redis", REDIS]);
    succeeded(&status, "status");
    let shown = String::from_utf8_lossy(&status.stdout).into_owned();
    eprintln!("{shown}");
    let version_reason = format!("schema version 99; this build reads version {WIRE_VERSION}");
    for reason in [
        "undecodable message",
        version_reason.as_str(),
        "no worker serves that model",
    ] {
        assert!(shown.contains(reason), "status names {reason:?}:\n{shown}");
    }
    let done_before = fleet.block_on(fleet.store().done()).unwrap();

    // The cause fixed: a worker serves the other model.
    let served = std::mem::replace(&mut fleet.model, unserved);
    fleet.start_worker(8);
    fleet.model = served;
    let mut again = vec!["rerun", &out, "--failed", "--quiet"];
    again.extend(fleet_flags());
    succeeded(&fleet.autoeval_output(&again), "rerun --failed");
    let results = outcomes(&fleet.out);
    let units = results.keys().filter(|k| k.4 == 1).count() as u64;
    eprintln!("{done_before} units done before the fix, {units} after the rerun");
    assert!(done_before > 0 && done_before < units);
    assert_eq!(fleet.block_on(fleet.store().done()).unwrap(), units);
    let models: std::collections::BTreeSet<_> = results.keys().map(|k| k.1.clone()).collect();
    assert_eq!(models.len(), 2, "both models' units are in the results");
    let left = fleet.block_on(autoeval_e2e_dead(&broker, &run));
    assert_eq!(
        left, 0,
        "the run's dead letters were taken out when republished"
    );
}

async fn autoeval_e2e_dead(broker: &autoeval_amqp::Broker, run: &str) -> usize {
    broker
        .dead_letters(usize::MAX)
        .await
        .unwrap()
        .iter()
        .filter(|d| d.run == run)
        .count()
}

#[test]
fn failures_left_by_a_flaky_server_are_redone_by_rerun_without_asking_a_succeeded_unit_again() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-flaky", &["--error-rate", "0.3"]);
    fleet.start_worker(8);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let args = small_run_args(&fleet, &out, &[&fleet.model], &["--max-attempts", "1"]);
    let first = fleet.autoeval_output(&args);
    assert_eq!(
        first.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let after_first = outcomes(&fleet.out);
    let failed = after_first
        .values()
        .filter(|(v, _)| v == "api_failure")
        .count();
    let succeeded_first: Vec<_> = fleet
        .stored()
        .into_iter()
        .filter(|r| r.verdict.name() != "api_failure")
        .collect();
    let counts_first = fleet.prompt_counts();
    eprintln!("first pass: {failed} of {} units failed", after_first.len());
    assert!(failed > 0);
    let mut again = vec!["rerun", &out, "--failed", "--quiet"];
    again.extend(fleet_flags());
    let mut passes = 1;
    loop {
        let rerun = fleet.autoeval_output(&again);
        passes += 1;
        if rerun.status.success() {
            break;
        }
        assert_eq!(
            rerun.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&rerun.stderr)
        );
        assert!(passes < 40, "rerun never reached every unit");
    }
    let last = outcomes(&fleet.out);
    eprintln!("100% after {passes} passes");
    assert_eq!(last.len(), after_first.len());
    assert!(last.values().all(|(v, _)| v != "api_failure"));
    let counts = fleet.prompt_counts();
    for r in &succeeded_first {
        for d in autoeval_e2e::fleet::prompt_digests(r).expect("a translated round") {
            assert_eq!(
                counts.get(&d),
                counts_first.get(&d),
                "a succeeded unit was asked again"
            );
        }
    }
}

#[test]
fn a_task_that_keeps_failing_is_dead_lettered_by_the_broker_after_its_delivery_limit() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_amqp::{Broker, Meta};
    use autoeval_proto::fleet::{translate_key, DELIVERY_LIMIT};
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let run = format!("delivery-limit-{}", std::process::id());
    let model = format!("nobody-serves:{run}");
    let (deliveries, letters) = runtime.block_on(async {
        let broker = Broker::connect(AMQP, &Topology::default(), "autoeval-test")
            .await
            .unwrap();
        let queue = broker.declare_translate(&model).await.unwrap();
        let meta = Meta::one(&run, "u#1");
        broker
            .publish(&translate_key(&model), b"work", &meta)
            .await
            .unwrap();
        // A worker that fails the task every time and hands it back.
        let mut consumer = broker.consume(&queue, 1, "").await.unwrap();
        let mut deliveries = 0;
        // Until the broker has dead-lettered it: a condition, not a clock.
        let limit = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let dead = broker.dead_letters(usize::MAX).await.unwrap();
            if dead.iter().any(|d| d.run == run) {
                break;
            }
            assert!(std::time::Instant::now() < limit, "never dead-lettered");
            let wait = std::time::Duration::from_millis(50);
            if let Ok(Some(Ok(task))) = tokio::time::timeout(wait, consumer.next()).await {
                deliveries += 1;
                assert_eq!(task.meta.run, run);
                task.requeue().await.unwrap();
            }
        }
        consumer.close().await;
        let letters = broker.take_dead_letters(&run).await.unwrap();
        broker.delete_queue(&queue).await.unwrap();
        broker.close().await;
        (deliveries, letters)
    });
    eprintln!("{deliveries} deliveries; dead letters: {letters:?}");
    assert_eq!(letters.len(), 1, "kept, not dropped");
    assert!(
        letters[0].reason.contains("delivered too often"),
        "{:?}",
        letters[0]
    );
    assert!(
        (DELIVERY_LIMIT as usize..=DELIVERY_LIMIT as usize + 1).contains(&deliveries),
        "{deliveries} deliveries for a limit of {DELIVERY_LIMIT}"
    );
}

#[test]
fn the_fleet_judges_every_decided_pair_once_and_asks_nothing_again() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-judge", &["--model", "reference-noisy:0.3"]);
    fleet.start_worker(8);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let model = fleet.model.clone();
    succeeded(
        &fleet.autoeval_output(&small_run_args(&fleet, &out, &[&model], &[])),
        "the fleet run",
    );
    // What the judge should say, from the run's formal verdicts alone.
    let results = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap();
    let expected: BTreeMap<(String, u32), &str> = jsonl(&results)
        .iter()
        .filter(|r| matches!(r["verdict"].as_str(), Some("equivalent" | "not_equivalent")))
        .map(|r| {
            let unit = format!(
                "{}|{}|{}|{}",
                r["id"].as_str().unwrap(),
                r["model"].as_str().unwrap(),
                r["prompt"].as_str().unwrap(),
                r["repeat"]
            );
            let says = if r["verdict"] == "equivalent" {
                "yes"
            } else {
                "no"
            };
            ((unit, r["round"].as_u64().unwrap() as u32), says)
        })
        .collect();
    assert!(
        expected.values().any(|s| *s == "no"),
        "the noisy model errs"
    );
    let mut judge = vec![
        "judge", &out, "--judge", &model, "--prompt", "yesno", "--quiet",
    ];
    judge.extend(fleet_flags());
    succeeded(&fleet.autoeval_output(&judge), "the fleet judge");
    let file = std::fs::read_dir(&fleet.out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("judge-") && name.ends_with("-yesno.jsonl")
        })
        .expect("a judge file");
    let read = || jsonl(&std::fs::read_to_string(&file).unwrap());
    let judged = read();
    let got: BTreeMap<(String, u32), String> = judged
        .iter()
        .map(|j| {
            let unit = format!(
                "{}|{}|{}|{}",
                j["id"].as_str().unwrap(),
                j["model"].as_str().unwrap(),
                j["prompt"].as_str().unwrap(),
                j["repeat"]
            );
            let says = j["judgement"].as_str().unwrap_or("failed").to_string();
            ((unit, j["round"].as_u64().unwrap() as u32), says)
        })
        .collect();
    eprintln!("{} pairs judged on the fleet", got.len());
    assert_eq!(judged.len(), expected.len(), "one line per decided pair");
    for (pair, says) in &expected {
        assert_eq!(got.get(pair).map(String::as_str), Some(*says), "{pair:?}");
    }
    // The same command again finds every pair judged and asks nothing.
    let before = fleet.mock_stats()["requests"].as_u64();
    succeeded(&fleet.autoeval_output(&judge), "the judge again");
    assert_eq!(fleet.mock_stats()["requests"].as_u64(), before);
    assert_eq!(read().len(), expected.len());

    // Another machine's `report RUN --fleet` reads the run's settings and
    // judgements from Redis; its rounds are in the coordinator's directory,
    // and the command says so.
    let bare = fleet.dir.join("bare").join(fleet.run());
    let bare_text = bare.to_string_lossy().into_owned();
    let said = fleet.autoeval_output(&["report", &bare_text, "--fleet", "--redis", REDIS]);
    let said = String::from_utf8_lossy(&said.stderr);
    assert!(
        said.contains("the rest are in the run directory of the coordinator"),
        "{said}"
    );
    assert!(
        bare.join("config.toml").exists(),
        "the settings came from Redis"
    );
    // With the coordinator's results beside them (a shared volume, a copy),
    // `report --fleet` and `export --fleet` give the run, judgements included.
    let elsewhere = fleet.dir.join("elsewhere").join(fleet.run());
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(
        fleet.out.join("results.jsonl"),
        elsewhere.join("results.jsonl"),
    )
    .unwrap();
    let there = elsewhere.to_string_lossy().into_owned();
    let report = fleet.autoeval_output(&["report", &there, "--fleet", "--redis", REDIS]);
    succeeded(&report, "report --fleet");
    assert!(elsewhere.join("report.html").exists());
    assert_eq!(
        outcomes(&elsewhere),
        outcomes(&fleet.out),
        "the rounds are the run's"
    );
    let judged_there = std::fs::read_to_string(elsewhere.join(file.file_name().unwrap()))
        .expect("the judge file read from Redis");
    let mut a: Vec<String> = jsonl(&judged_there).iter().map(|j| j.to_string()).collect();
    let mut b: Vec<String> = judged.iter().map(|j| j.to_string()).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b, "the judgements read from Redis are the run's");
    let csv = elsewhere.join("rounds.csv");
    let csv_text = csv.to_string_lossy().into_owned();
    let export = fleet.autoeval_output(&[
        "export", &there, "--fleet", "--redis", REDIS, "--format", "csv", "--out", &csv_text,
    ]);
    succeeded(&export, "export --fleet");
    let rows = csv::Reader::from_path(&csv).unwrap().records().count();
    assert_eq!(rows, results.lines().count(), "one row per round");
}

#[test]
fn queue_depths_are_read_on_one_channel_that_outlives_a_missing_queue() {
    let _turn = autoeval_e2e::turn(module_path!());
    use autoeval_amqp::{Broker, Meta};
    use autoeval_proto::fleet::translate_key;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let broker = Broker::connect(AMQP, &Topology::default(), "autoeval-test")
            .await
            .unwrap();
        let model = format!("depth-test-{}", std::process::id());
        let queue = broker.declare_translate(&model).await.unwrap();
        broker
            .publish(
                &translate_key(&model),
                b"x",
                &Meta::one("depth-test", "u#1"),
            )
            .await
            .unwrap();
        // The broker counts the message once it has confirmed it; wait for the count.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while broker.depth(&queue).await.unwrap() != Some((1, 0)) {
            assert!(std::time::Instant::now() < deadline, "never counted");
            tokio::task::yield_now().await;
        }
        // The broker closes the channel a missing queue was asked on; the
        // next read opens another and reads right.
        for _ in 0..3 {
            assert_eq!(broker.depth("autoeval.no-such-queue").await.unwrap(), None);
            assert_eq!(broker.depth(&queue).await.unwrap(), Some((1, 0)));
            assert_eq!(broker.depth(&queue).await.unwrap(), Some((1, 0)));
        }
        broker.delete_queue(&queue).await.unwrap();
        broker.close().await;
    });
}

#[test]
fn two_runs_with_the_same_out_from_different_directories_each_complete_with_their_own_records() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("fleet-same-out", &[]);
    fleet.start_worker(8);
    fleet.start_verifier(1);
    // Two people, each in a directory of their own, both with `--out results`;
    // different datasets, so that each run's records are told apart.
    let mut runs = Vec::new();
    for (who, dataset) in [("alice", "plogic"), ("bob", "ksat")] {
        let home = fleet.dir.join(who);
        std::fs::create_dir_all(&home).unwrap();
        let mut args = fleet.small_run(&fleet.model, dataset, "results");
        args.extend(fleet.on_fleet());
        args.push("--quiet");
        let child = std::process::Command::new(autoeval_e2e::fleet::binary("autoeval"))
            .args(&args)
            .envs(fleet.service_env())
            .current_dir(&home)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("autoeval starts");
        runs.push((home.join("results"), dataset, child));
    }
    let mut names = Vec::new();
    for (out, dataset, child) in runs {
        let done = child.wait_with_output().expect("autoeval ends");
        succeeded(&done, dataset);
        let records = jsonl(&std::fs::read_to_string(out.join("results.jsonl")).unwrap());
        assert!(!records.is_empty(), "{dataset} has records");
        assert!(
            records.iter().all(|r| r["dataset"] == dataset),
            "{dataset}'s run holds only its own records"
        );
        let name = autoeval_e2e::fleet::run_of(&out);
        assert!(name.starts_with("results-"), "{name}");
        // Redis knows each run by its own name, with its own rounds.
        let store = fleet.block_on(async {
            autoeval_redis_store::RunStore::new(
                autoeval_redis_store::connect(REDIS).await.unwrap(),
                &name,
            )
        });
        assert_eq!(
            fleet.block_on(store.done()).unwrap() as usize,
            records.len(),
            "{name}: one outcome per unit"
        );
        eprintln!("{dataset}: run {name}, {} records", records.len());
        names.push((name, store));
    }
    assert_ne!(names[0].0, names[1].0, "two runs, two names");
    for (_, store) in names {
        let _ = fleet.block_on(store.delete());
    }
}

#[test]
fn two_fleets_on_one_broker_each_with_its_own_redis_database_never_take_each_others_work() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Both fleets evaluate the same model, served by the first one's mock
    // server, so they would share every queue if names were not per fleet.
    let mut fleets = [
        Fleet::new("fleet-db13", &["--model", "reference-noisy:0.2"]),
        Fleet::new("fleet-db14", &[]),
    ];
    let model = fleets[0].model.clone();
    for (fleet, db) in fleets.iter_mut().zip([13, 14]) {
        fleet.redis = format!("{REDIS}/{db}");
        fleet.model = model.clone();
        fleet.start_worker(8);
        fleet.start_verifier(1);
    }
    let names: Vec<Topology> = fleets.iter().map(Fleet::topology).collect();
    assert_eq!(names[0].verify_queue(), "autoeval.db13.verify");
    assert_eq!(names[1].verify_queue(), "autoeval.db14.verify");
    let runs: Vec<_> = fleets
        .iter()
        .map(|fleet| {
            let out = fleet.out.to_string_lossy().into_owned();
            let mut args = fleet.small_run(&model, "plogic", &out);
            let at = args.iter().position(|a| *a == "--per-bucket").unwrap();
            args[at + 1] = "4";
            args.push("--quiet");
            args.extend(fleet.on_fleet());
            fleet.autoeval(&args)
        })
        .collect();
    for ((fleet, child), names) in fleets.iter().zip(runs).zip(&names) {
        let done = child.wait_with_output().unwrap();
        let redis = &fleet.redis;
        succeeded(&done, &format!("the run of the fleet on {redis}"));
        let records = jsonl(&std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap());
        let store = fleet.store();
        let meta = fleet.block_on(store.meta()).unwrap();
        let units: u64 = meta["units"].parse().unwrap();
        assert!(units >= 40, "{redis}: {units} units");
        let done = fleet.block_on(store.done()).unwrap();
        assert_eq!(done, units, "{redis}: every unit has its outcome");
        assert!(
            records.len() as u64 >= units,
            "{redis}: every unit recorded"
        );
        let broker = fleet.broker();
        let letters = fleet.block_on(broker.dead_letters(10_000)).unwrap();
        let dead = letters.iter().filter(|l| l.run == fleet.run()).count();
        assert_eq!(dead, 0, "{redis}: no dead letter of its run");
        // Each fleet's verifier took from its own queue, and only from it.
        let (_, consumers) = fleet
            .block_on(broker.depth(&names.verify_queue()))
            .unwrap()
            .expect("the fleet's verify queue");
        assert_eq!(consumers, 1, "{redis}: its one verifier");
        fleet.block_on(broker.close());
        // `status DIR`, told no address, asks the run's own fleet, as its
        // directory keeps it.
        let status = std::process::Command::new(autoeval_e2e::fleet::binary("autoeval"))
            .args(["status", &fleet.out.to_string_lossy()])
            .env_remove("AUTOEVAL_AMQP")
            .env_remove("AUTOEVAL_REDIS")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&status.stdout);
        assert!(
            status.status.success() && said.contains(&format!("run {}:", fleet.run())),
            "{said}{}",
            String::from_utf8_lossy(&status.stderr)
        );
        assert!(said.contains(&names.verify_queue()), "{said}");
        eprintln!("{redis}: {} units recorded, no dead letter", records.len());
    }
}

/// Arguments as the `&str`s a command takes.
fn strs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

/// `decided.json` of the run in `dir`.
fn decided(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("decided.json")).expect("decided.json");
    serde_json::from_str(&text).expect("decided.json is JSON")
}

#[test]
fn a_fleet_run_until_decided_decides_as_one_machine_and_a_killed_coordinator_resumes_to_the_same() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Two servers: a perfect translator and one that errs on 30% of the items.
    let mut fleet = Fleet::new("fleet-decided", &["--latency-ms", "20"]);
    let noisy_port = autoeval_e2e::fleet::free_port();
    let _noisy = autoeval_e2e::fleet::mock_server(
        noisy_port,
        &["--latency-ms", "20", "--model", "reference-noisy:0.3"],
    );
    let noisy = format!("openai-compatible:reference-noisy@http://127.0.0.1:{noisy_port}/v1");
    fleet.start_worker_with(4, &["--model", &noisy]);
    fleet.start_verifier(1);
    let requests = |fleet: &Fleet| -> u64 {
        let other = autoeval_e2e::fleet::get_json(&format!("http://127.0.0.1:{noisy_port}/stats"));
        fleet.mock_stats()["requests"].as_u64().unwrap() + other["requests"].as_u64().unwrap()
    };
    let model = fleet.model.clone();
    let args = |out: &str| -> Vec<String> {
        [
            "run",
            "--until",
            "decided",
            "--decide",
            "order",
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "10",
            "--batches",
            "2",
            "--seed",
            "7",
            "--quiet",
            "--worker-wait-s",
            "60",
            "--model",
            &model,
            "--model",
            &noisy,
            "--out",
            out,
        ]
        .map(String::from)
        .to_vec()
    };
    let on_fleet = |out: &str| -> Vec<String> {
        let mut a = args(out);
        a.extend(fleet_flags().into_iter().map(String::from));
        a
    };

    // On the fleet, uninterrupted.
    let whole = fleet.out.to_string_lossy().into_owned();
    let asked_before = requests(&fleet);
    succeeded(
        &fleet.autoeval_output(&strs(&on_fleet(&whole))),
        "the fleet run",
    );
    let asked_whole = requests(&fleet) - asked_before;
    let first = decided(&fleet.out);
    assert_eq!(first["all_decided"], true, "{first:#}");
    let units = first["units"].as_u64().unwrap();
    let plan = first["plan_units"].as_u64().unwrap();
    assert!(units * 2 < plan, "decided after {units} of {plan} units");
    assert_eq!(
        outcomes(&fleet.out).len() as u64,
        units,
        "each unit drawn recorded once"
    );
    assert_eq!(asked_whole, 2 * units, "two calls a unit");
    // The next wave ran while the last finished: a question was decided
    // with a wave in flight, whose units were recorded above all the same.
    let in_flight: u64 = first["quantities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|q| q["in_flight_items"].as_u64())
        .max()
        .unwrap_or(0);
    assert!(
        in_flight > 0,
        "no decision with a wave in flight: {first:#}"
    );
    assert_eq!(first["spend"]["calls"], 2 * units, "{first:#}");
    assert_eq!(first["spend"]["plan_calls"], 2 * plan, "{first:#}");

    // On one machine, with the same seed: the same waves, the same decisions.
    let local = fleet.dir.join("one-machine").to_string_lossy().into_owned();
    succeeded(
        &fleet.autoeval_output(&strs(&args(&local))),
        "the one-machine run",
    );
    let here = decided(Path::new(&local));
    assert_eq!(
        here["quantities"], first["quantities"],
        "the same decisions"
    );
    assert_eq!(here["units"], first["units"]);
    assert_eq!(here["waves"], first["waves"]);

    // On the fleet, the coordinator killed mid-way, then resumed.
    let killed = fleet.dir.join("killed");
    let killed_out = killed.to_string_lossy().into_owned();
    let asked_before = requests(&fleet);
    let mut coordinator = fleet.autoeval(&strs(&on_fleet(&killed_out)));
    let lines = || {
        std::fs::read_to_string(killed.join("results.jsonl"))
            .map(|t| t.matches('\n').count())
            .unwrap_or(0)
    };
    autoeval_e2e::fleet::wait_for(
        "40 rounds recorded",
        std::time::Duration::from_secs(300),
        || {
            assert!(
                coordinator.try_wait().unwrap().is_none(),
                "the run ended before it was killed"
            );
            lines() >= 40
        },
    );
    coordinator.kill().unwrap(); // SIGKILL
    coordinator.wait().unwrap();
    let waves_published = fleet
        .block_on(
            autoeval_redis_store::RunStore::new(
                fleet
                    .block_on(autoeval_redis_store::connect(REDIS))
                    .unwrap(),
                &autoeval_e2e::fleet::run_of(&killed),
            )
            .meta(),
        )
        .unwrap()
        .get(autoeval_proto::meta::WAVES)
        .cloned();
    eprintln!(
        "decided after {units} of {plan} units in {} waves; the coordinator killed at {} rounds, {waves_published:?} waves published",
        first["waves"],
        lines()
    );
    let mut resume = vec!["resume".to_string(), killed_out.clone(), "--quiet".into()];
    resume.extend(fleet_flags().into_iter().map(String::from));
    succeeded(&fleet.autoeval_output(&strs(&resume)), "the resumed run");
    let second = decided(&killed);
    assert_eq!(
        second["quantities"], first["quantities"],
        "the same decisions"
    );
    assert_eq!(second["units"], first["units"]);
    assert_eq!(
        outcomes(&killed).len() as u64,
        units,
        "each unit recorded once"
    );
    // The workers went on while no coordinator followed: nothing was asked twice.
    let asked_killed = requests(&fleet) - asked_before;
    assert_eq!(asked_killed, 2 * units, "no unit paid twice");
    let report = std::fs::read_to_string(killed.join("report.html")).unwrap();
    assert!(report.contains("Decided with fewer calls"));
}

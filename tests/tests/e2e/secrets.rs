//! A key and two passwords planted in every place a fleet takes them (the
//! environment, the broker's and Redis's URLs, a provider that echoes the
//! `Authorization` header back in a 401's body) appear in none of the
//! places it writes: the coordinator's stdout and stderr, the services'
//! logs, the run directories, Redis, the broker's messages and queue names,
//! `/metrics` and every process's command line. It runs alone (its turn): it taps the
//! shared verify queue's routing key.

use autoeval_e2e::fleet::{free_port, Fleet, AMQP};
use autoeval_proto::fleet::Topology;
use futures_util::StreamExt;
use lapin::options::{BasicConsumeOptions, QueueBindOptions, QueueDeclareOptions};
use lapin::types::FieldTable;
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

const KEY: &str = "sk-planted-key-7f3a9c1e";
const AMQP_PASSWORD: &str = "planted-amqp-pw-51d2";
const REDIS_PASSWORD: &str = "planted-redis-pw-8e0b";
const USER: &str = "autoeval-planted";

/// Every place searched, with its bytes.
#[derive(Default)]
struct Outputs(BTreeMap<String, Vec<u8>>);

impl Outputs {
    fn add(&mut self, place: impl Into<String>, bytes: impl AsRef<[u8]>) {
        self.0
            .entry(place.into())
            .or_default()
            .extend_from_slice(bytes.as_ref());
    }

    /// Each place and the secrets found in it.
    fn hits(&self) -> Vec<(String, &'static str)> {
        let mut found = Vec::new();
        for (place, bytes) in &self.0 {
            for secret in [KEY, AMQP_PASSWORD, REDIS_PASSWORD] {
                if bytes.windows(secret.len()).any(|w| w == secret.as_bytes()) {
                    found.push((place.clone(), secret));
                }
            }
        }
        found
    }
}

/// A broker user and a Redis user with the planted passwords, removed on drop.
struct PlantedUsers;

impl PlantedUsers {
    /// The guard comes first, so that a failure halfway still removes both users.
    fn create() -> PlantedUsers {
        let guard = PlantedUsers;
        let ctl = |args: &[&str]| {
            let done = Command::new("rabbitmqctl")
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("rabbitmqctl runs");
            assert!(done.success(), "rabbitmqctl {}", args[0]);
        };
        let _ = Command::new("rabbitmqctl")
            .args(["delete_user", USER])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        ctl(&["add_user", USER, AMQP_PASSWORD]);
        ctl(&["set_permissions", "-p", "/", USER, ".*", ".*", ".*"]);
        let acl = Command::new("redis-cli")
            .args(["ACL", "SETUSER", USER, "reset", "on"])
            .arg(format!(">{REDIS_PASSWORD}"))
            .args(["~*", "&*", "+@all"])
            .output()
            .expect("redis-cli runs");
        assert_eq!(String::from_utf8_lossy(&acl.stdout).trim(), "OK");
        guard
    }
}

impl Drop for PlantedUsers {
    fn drop(&mut self) {
        let _ = Command::new("rabbitmqctl")
            .args(["delete_user", USER])
            .stdout(Stdio::null())
            .status();
        let _ = Command::new("redis-cli")
            .args(["ACL", "DELUSER", USER])
            .stdout(Stdio::null())
            .status();
    }
}

/// Every key of the Redis and what it holds, as text.
fn redis_contents() -> Vec<(String, Vec<u8>)> {
    let client = redis::Client::open("redis://127.0.0.1:6379").expect("a client");
    let mut conn = client.get_connection().expect("redis");
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut conn).expect("KEYS");
    let mut all = Vec::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE").arg(&key).query(&mut conn).expect("TYPE");
        let values: Vec<Vec<u8>> = match kind.as_str() {
            "string" => vec![redis::cmd("GET")
                .arg(&key)
                .query(&mut conn)
                .unwrap_or_default()],
            "hash" => redis::cmd("HGETALL")
                .arg(&key)
                .query(&mut conn)
                .unwrap_or_default(),
            "list" => redis::cmd("LRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query(&mut conn)
                .unwrap_or_default(),
            "set" => redis::cmd("SMEMBERS")
                .arg(&key)
                .query(&mut conn)
                .unwrap_or_default(),
            "zset" => redis::cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query(&mut conn)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        all.push((key, values.concat()));
    }
    all
}

/// Every file under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// The command line of process `pid`.
fn cmdline(pid: u32) -> Vec<u8> {
    std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()
}

/// Runs `fleet`'s small run with the URLs in the environment only,
/// collecting its output, its `/metrics` and its command line as it goes.
fn run_and_collect(fleet: &Fleet, outputs: &mut Outputs, tag: &str) -> bool {
    let out = fleet.out.display().to_string();
    let port = free_port();
    let health = format!("127.0.0.1:{port}");
    // First-order logic, with answers that differ from φ0, goes to the provers.
    let mut args = fleet.small_run(&fleet.model, "fol", &out);
    args.extend(["--fleet", "--worker-wait-s", "60", "--health-addr", &health]);
    let child = fleet.autoeval(&args);
    outputs.add(
        format!("{tag} coordinator's command line"),
        cmdline(child.id()),
    );
    let metrics = format!("http://{health}/metrics");
    let scraper = std::thread::spawn(move || {
        let mut last = String::new();
        for _ in 0..3000 {
            match reqwest::blocking::get(&metrics).and_then(|r| r.text()) {
                Ok(text) => last = text,
                Err(_) if !last.is_empty() => break,
                Err(_) => {}
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        last
    });
    let ended = child.wait_with_output().expect("the run ends");
    outputs.add(format!("{tag} coordinator's stdout"), &ended.stdout);
    outputs.add(format!("{tag} coordinator's stderr"), &ended.stderr);
    outputs.add(
        format!("{tag} coordinator's /metrics"),
        scraper.join().unwrap_or_default(),
    );
    eprintln!("{tag}: {}", String::from_utf8_lossy(&ended.stderr));
    let status = fleet.autoeval_output(&["status", &out, "--fleet"]);
    outputs.add(format!("{tag} status's stdout"), &status.stdout);
    outputs.add(format!("{tag} status's stderr"), &status.stderr);
    ended.status.success()
}

#[test]
fn planted_credentials_never_reach_an_output() {
    let _turn = autoeval_e2e::turn(module_path!());
    let _users = PlantedUsers::create();
    let amqp = format!("amqp://{USER}:{AMQP_PASSWORD}@127.0.0.1:5672/%2f");
    let redis = format!("redis://{USER}:{REDIS_PASSWORD}@127.0.0.1:6379");
    // One model served with the planted key, one whose server refuses it
    // and echoes it back in its 401.
    let mut served = Fleet::new(
        "secrets",
        &["--require-key", KEY, "--model", "reference-noisy:0.5"],
    );
    let mut refused = Fleet::new("secrets-refused", &["--require-key", "another-key"]);
    for fleet in [&mut served, &mut refused] {
        fleet.amqp = amqp.clone();
        fleet.redis = redis.clone();
        fleet.env = vec![("OPENAI_COMPATIBLE_API_KEY".into(), KEY.into())];
    }

    // A tap on the routing keys of every message the runs send.
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let tap = format!("autoeval-test-tap-{}", std::process::id());
    let keys = [
        autoeval_proto::fleet::translate_key(&served.model),
        autoeval_proto::fleet::translate_key(&refused.model),
        autoeval_proto::fleet::VERIFY_KEY.to_string(),
    ];
    let tapped = runtime.block_on(async {
        let conn = lapin::Connection::connect(AMQP, lapin::ConnectionProperties::default())
            .await
            .expect("the broker");
        let ch = conn.create_channel().await.expect("a channel");
        let options = QueueDeclareOptions {
            exclusive: true,
            auto_delete: true,
            ..QueueDeclareOptions::default()
        };
        ch.queue_declare(tap.as_str().into(), options, FieldTable::default())
            .await
            .expect("the tap");
        for key in &keys {
            ch.queue_bind(
                tap.as_str().into(),
                Topology::default().tasks_exchange().as_str().into(),
                key.as_str().into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind the tap");
        }
        let consumer = ch
            .basic_consume(
                tap.as_str().into(),
                "tap".into(),
                BasicConsumeOptions {
                    no_ack: true,
                    ..BasicConsumeOptions::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("consume the tap");
        (conn, consumer)
    });
    let (_tap_connection, mut consumer) = tapped;

    served.start_worker(2);
    served.start_verifier(1);
    refused.start_worker(2);
    let mut outputs = Outputs::default();
    for process in served
        .workers
        .iter()
        .chain(&served.verifiers)
        .chain(&refused.workers)
    {
        outputs.add(
            format!("command line of process {}", process.child.id()),
            cmdline(process.child.id()),
        );
    }

    assert!(
        run_and_collect(&served, &mut outputs, "served run"),
        "the served run failed"
    );
    run_and_collect(&refused, &mut outputs, "refused run");
    let stats = served.mock_stats();
    assert!(
        stats["completions"].as_u64().unwrap_or(0) > 0,
        "the planted key was never used: {stats}"
    );
    let refusals = refused.mock_stats();
    assert!(
        refusals["unauthorized"].as_u64().unwrap_or(0) > 0,
        "no 401 was answered: {refusals}"
    );

    // Messages the tap saw.
    let messages = runtime.block_on(async {
        let mut bodies = Vec::new();
        while let Ok(Some(Ok(delivery))) =
            tokio::time::timeout(Duration::from_secs(2), consumer.next()).await
        {
            bodies.push(delivery.data);
        }
        bodies
    });
    assert!(!messages.is_empty(), "the tap saw no message");
    for (i, body) in messages.iter().enumerate() {
        outputs.add(format!("broker message {i}"), body);
    }
    let queues = Command::new("rabbitmqctl")
        .args(["list_queues", "name", "-q"])
        .output()
        .expect("rabbitmqctl runs");
    outputs.add("the broker's queue names", &queues.stdout);
    // The verifier's provers are its children: their environment is an output too.
    let verifier = served.verifiers[0].child.id();
    // Any of its threads may have started one: each thread lists its own children.
    let provers: Vec<String> = std::fs::read_dir(format!("/proc/{verifier}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|task| {
            std::fs::read_to_string(task.path().join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!provers.is_empty(), "the verifier started no prover");
    for pid in &provers {
        outputs.add(
            format!("environment of prover {pid}"),
            std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default(),
        );
    }
    for (key, value) in redis_contents() {
        outputs.add(
            format!("redis key {key}"),
            [key.as_bytes(), &value].concat(),
        );
    }
    for fleet in [&served, &refused] {
        for file in files(&fleet.dir) {
            outputs.add(
                file.display().to_string(),
                std::fs::read(&file).unwrap_or_default(),
            );
        }
    }
    for process in served
        .workers
        .iter()
        .chain(&served.verifiers)
        .chain(&refused.workers)
    {
        let health = process.health.clone().unwrap_or_default();
        let metrics = reqwest::blocking::get(format!("{health}/metrics"))
            .and_then(|r| r.text())
            .unwrap_or_default();
        assert!(metrics.contains("autoeval_"), "no metrics at {health}");
        outputs.add(format!("/metrics of {health}"), metrics);
    }
    // A refused key halts the backend at its first reply: the server's echo
    // of the key reaches the line that stops the run, redacted, and no record.
    let stopped = outputs
        .0
        .get("refused run coordinator's stderr")
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    assert!(
        stopped.contains(r#"Incorrect API key provided: Bearer ***"#),
        "the 401's echo is not in the stop line, redacted: {stopped}"
    );

    // The search finds what is there: the workers hold the key in their environment.
    let mut environment = Outputs::default();
    let worker = served.workers[0].child.id();
    environment.add(
        "a worker's environment",
        std::fs::read(format!("/proc/{worker}/environ")).unwrap_or_default(),
    );
    assert!(
        environment.hits().iter().any(|(_, s)| *s == KEY),
        "the search cannot find the planted key where it is"
    );

    let hits = outputs.hits();
    eprintln!(
        "searched {} places ({} broker messages, {} files, {} Redis keys): {} hits",
        outputs.0.len(),
        messages.len(),
        outputs.0.keys().filter(|k| k.starts_with('/')).count(),
        outputs
            .0
            .keys()
            .filter(|k| k.starts_with("redis key"))
            .count(),
        hits.len()
    );
    for place in outputs.0.keys() {
        eprintln!("  searched: {place}");
    }
    assert!(hits.is_empty(), "secrets found: {hits:?}");
}

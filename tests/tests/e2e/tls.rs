//! The fleet over TLS: `amqps://` and `rediss://` to a RabbitMQ node and a
//! Redis that listen only for TLS and ask every client for a certificate,
//! all from an authority made for the test; and a TLS URL refused, never
//! spoken in plaintext, against a plaintext port. It runs alone (its turn): it starts
//! its own broker node and Redis, and sets the TLS variables for itself
//! while it runs.

use autoeval_e2e::fleet::{Fleet, AMQP, REDIS};
use autoeval_e2e::tls::{Pki, TlsRabbit, TlsRedis};

/// TLS variables set in this process's environment until dropped.
struct ClientEnv(Vec<(String, String)>);

impl ClientEnv {
    fn set(vars: Vec<(String, String)>) -> ClientEnv {
        for (name, value) in &vars {
            std::env::set_var(name, value);
        }
        ClientEnv(vars)
    }
}

impl Drop for ClientEnv {
    fn drop(&mut self) {
        for (name, _) in &self.0 {
            std::env::remove_var(name);
        }
    }
}

/// Lines of a results file.
fn records(fleet: &Fleet) -> usize {
    std::fs::read_to_string(fleet.out.join("results.jsonl"))
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

#[test]
fn a_fleet_runs_over_amqps_and_rediss_and_a_tls_url_never_falls_back_to_plaintext() {
    let _turn = autoeval_e2e::turn(module_path!());
    // The servers outlive the fleet (dropped in reverse order), so that its
    // processes stop and its run is cleaned up while they still answer.
    let dir = autoeval_e2e::scratch("tls-servers");
    let pki = Pki::new(&dir);
    let rabbit = TlsRabbit::start(&pki, &dir);
    let redis = TlsRedis::start(&pki, &dir);
    // This process talks to them too (to look at the run and clean up).
    // While this module has the turn no other module's test reads the
    // environment, and the variables go when the test ends, after the
    // fleet has cleaned up (dropped before them).
    let _env = ClientEnv::set(pki.client_env());
    let mut fleet = Fleet::new("tls", &[]);
    fleet.amqp = rabbit.url();
    fleet.redis = redis.url();
    fleet.env = pki.client_env();
    fleet.start_worker(4);
    fleet.start_verifier(1);

    let out = fleet.out.display().to_string();
    let model = fleet.model.clone();
    let mut args = fleet.small_run(&model, "ksat", &out);
    args.extend(fleet.on_fleet());
    let ran = fleet.autoeval_output(&args);
    let said = String::from_utf8_lossy(&ran.stderr).into_owned();
    eprintln!("{said}");
    assert!(ran.status.success(), "the run over TLS failed: {said}");
    let written = records(&fleet);
    let stored = fleet.stored().len();
    eprintln!(
        "over {} and {}: {written} records written, {stored} rounds in Redis",
        autoeval_proto::fleet::redact_url(&fleet.amqp),
        fleet.redis
    );
    assert!(written > 0, "no record: {said}");
    assert_eq!(written, stored, "every round recorded in Redis is written");

    // A run to these URLs, refused: what it said.
    let refused = |amqp: &str, redis: &str, tag: &str| {
        let out = format!("{out}-{tag}");
        let mut args = fleet.small_run(&model, "ksat", &out);
        args.extend(["--fleet", "--amqp", amqp, "--redis", redis]);
        let ran = fleet.autoeval_output(&args);
        let told = String::from_utf8_lossy(&ran.stderr).into_owned();
        eprintln!("{tag}: {told}");
        assert!(!ran.status.success(), "{told}");
        told
    };

    // An amqps:// URL to the machine's plaintext broker port is refused.
    let plaintext_broker = AMQP.replacen("amqp://", "amqps://", 1);
    let told = refused(&plaintext_broker, &redis.url(), "amqps-to-plaintext");
    assert!(
        told.contains(
            "cannot reach the broker at amqps://guest:***@127.0.0.1:5672/%2f (TLS failed: "
        ),
        "{told}"
    );
    assert!(
        told.contains(
            "is that port a TLS listener? amqps:// needs one, a plaintext port takes amqp://"
        ),
        "{told}"
    );

    // A rediss:// URL to the machine's plaintext Redis is refused.
    let plaintext_redis = REDIS.replacen("redis://", "rediss://", 1);
    let told = refused(&rabbit.url(), &plaintext_redis, "rediss-to-plaintext");
    assert!(
        told.contains("cannot reach Redis at rediss://127.0.0.1:6379 (TLS failed: "),
        "{told}"
    );
    assert!(
        told.contains("rediss:// needs one, a plaintext port takes redis://"),
        "{told}"
    );
}

/// Runs `binary ARGS` until it exits (within `limit`); its status, stderr and time.
fn exits_within(
    binary: &str,
    args: &[&str],
    limit: std::time::Duration,
) -> (Option<i32>, String, std::time::Duration) {
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(autoeval_e2e::fleet::binary(binary))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the service starts");
    let status = loop {
        if let Some(status) = child.try_wait().expect("a child") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{binary} {args:?} still runs after {limit:?}: a connection no retry can make must end it");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut stderr = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .expect("piped")
        .read_to_string(&mut stderr)
        .expect("its stderr");
    (status.code(), stderr, started.elapsed())
}

#[test]
fn a_worker_and_a_verifier_exit_when_the_broker_or_redis_can_never_take_them() {
    let _turn = autoeval_e2e::turn(module_path!());
    let limit = std::time::Duration::from_secs(60);
    let tls_to_plaintext = AMQP.replacen("amqp://", "amqps://", 1);
    let wrong_password = AMQP.replacen("guest:guest@", "guest:wrong@", 1);
    let no_vhost = AMQP.replacen("/%2f", "/no-such-vhost", 1);
    let rediss_to_plaintext = REDIS.replacen("redis://", "rediss://", 1);
    let cases = [
        (
            "amqps:// to a plaintext port",
            tls_to_plaintext.as_str(),
            REDIS,
            "TLS failed",
        ),
        (
            "a refused password",
            wrong_password.as_str(),
            REDIS,
            "ACCESS_REFUSED",
        ),
        (
            "an unknown vhost",
            no_vhost.as_str(),
            REDIS,
            "vhost no-such-vhost not found",
        ),
        (
            "rediss:// to a plaintext port",
            AMQP,
            rediss_to_plaintext.as_str(),
            "TLS failed",
        ),
    ];
    for service in ["autoeval-worker", "autoeval-verifier"] {
        for (what, amqp, redis, words) in cases {
            let mut args = vec!["--amqp", amqp, "--redis", redis];
            if service == "autoeval-worker" {
                args.extend(["--model", "reference"]);
            }
            let (code, stderr, took) = exits_within(service, &args, limit);
            let last = stderr.lines().last().unwrap_or_default();
            eprintln!(
                "{service}, {what}: exit {code:?} after {:.1} s: {last}",
                took.as_secs_f64()
            );
            assert_eq!(code, Some(1), "{stderr}");
            assert!(last.contains(words), "{last}");
        }
    }
}

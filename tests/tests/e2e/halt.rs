//! A backend that halts (nothing listens on its port) stops a fleet run the
//! way it stops a one-machine run: the same one-line cause, the same exit
//! status, the unsent units left pending; and the command that line names
//! finishes the run once the server is back.

use autoeval_e2e::fleet::{binary, Fleet, AMQP, REDIS};
use autoeval_proto::{ResultRecord, Verdict};
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

/// The records of a run directory.
fn records(dir: &Path) -> Vec<ResultRecord> {
    std::fs::read_to_string(dir.join("results.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect()
}

/// `autoeval run` of `plan` on the fleet's model, quietly, into the fleet's
/// run directory through its broker and Redis.
fn run_on_fleet(fleet: &Fleet, plan: &[&str]) -> std::process::Output {
    let (out, model) = (
        fleet.out.to_string_lossy().into_owned(),
        fleet.model.clone(),
    );
    let mut args = vec!["run", "--model", &model];
    args.extend_from_slice(plan);
    args.extend([
        "--quiet", "--out", &out, "--fleet", "--amqp", AMQP, "--redis", REDIS,
    ]);
    fleet.autoeval_output(&args)
}

/// The cause a stopped run printed: its one line up to the recovery hint.
fn cause(stderr: &str) -> &str {
    stderr
        .split_once(". Nothing is lost")
        .map_or(stderr, |(cause, _)| cause)
}

#[test]
fn a_fleet_run_against_a_closed_port_stops_like_a_one_machine_run_and_rerun_finishes_it() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("halt", &[]);
    fleet.stop_mock();
    // One call at a time on both sides: the failures come one after another
    // until the backend halts, and the rest are never sent.
    fleet.start_worker(1);
    fleet.start_verifier(1);
    let one_machine = fleet.dir.join("one-machine");
    let plan = [
        "run",
        "--model",
        &fleet.model,
        "--dataset",
        "ksat",
        "--prompt",
        "few-shot",
        "--per-bucket",
        "1",
        "--batches",
        "1",
        "--max-attempts",
        "1",
        "--concurrency",
        "1",
        "--quiet",
    ];
    let with_out = |out: &Path, extra: &[&str]| {
        let mut args: Vec<String> = plan.iter().map(|s| s.to_string()).collect();
        args.extend(["--out".into(), out.to_string_lossy().into_owned()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let one = Command::new(binary("autoeval"))
        .args(with_out(&one_machine, &[]))
        .output()
        .expect("autoeval runs");
    let fleet_args = with_out(&fleet.out, &["--fleet", "--amqp", AMQP, "--redis", REDIS]);
    let fleet_args: Vec<&str> = fleet_args.iter().map(String::as_str).collect();
    let on_fleet = fleet.autoeval_output(&fleet_args);

    let (said_one, said_fleet) = (
        String::from_utf8_lossy(&one.stderr).into_owned(),
        String::from_utf8_lossy(&on_fleet.stderr).into_owned(),
    );
    eprintln!("one machine: {said_one}fleet:       {said_fleet}");
    assert_eq!(one.status.code(), Some(1), "{said_one}");
    assert_eq!(on_fleet.status.code(), one.status.code(), "{said_fleet}");
    assert_eq!(said_one.lines().count(), 1, "one line: {said_one}");
    assert_eq!(said_fleet.lines().count(), 1, "one line: {said_fleet}");
    assert!(
        cause(&said_one).contains(&format!("connection refused to 127.0.0.1:{}", fleet.port)),
        "{said_one}"
    );
    assert_eq!(cause(&said_fleet), cause(&said_one));
    let hint = format!("autoeval rerun {} --failed --fleet", fleet.out.display());
    assert!(said_fleet.contains(&hint), "{said_fleet}");

    // Nothing ever reached a server: no round is a failure on either side,
    // the tasks in hand included, and every unit stays pending (no record).
    let (here, there) = (records(&one_machine), records(&fleet.out));
    eprintln!(
        "records: one machine {}, fleet {} (api failures {} and {}) of {} units",
        here.len(),
        there.len(),
        here.iter()
            .filter(|r| r.verdict == Verdict::ApiFailure)
            .count(),
        there
            .iter()
            .filter(|r| r.verdict == Verdict::ApiFailure)
            .count(),
        unit_count(&fleet)
    );
    assert!(
        here.is_empty(),
        "one machine records nothing: {}",
        here.len()
    );
    assert!(
        there.is_empty(),
        "the fleet records nothing: {}",
        there.len()
    );

    // The line's command, once the server is back, finishes the run.
    rerun_once_the_server_is_back(&mut fleet);
}

#[test]
fn after_a_provider_outage_rerun_on_the_fleet_completes_every_unit_with_the_same_workers() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("outage", &[]);
    fleet.stop_mock();
    // Many calls at once: every task in hand is sent before the backend
    // halts, so the halt may set nothing aside.
    fleet.start_worker(16);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let first = run_on_fleet(
        &fleet,
        &[
            "--dataset",
            "ksat",
            "--per-bucket",
            "2",
            "--batches",
            "1",
            "--max-attempts",
            "2",
        ],
    );
    let said = String::from_utf8_lossy(&first.stderr).into_owned();
    assert!(!first.status.success(), "{said}");
    let hint = format!("autoeval rerun {out} --failed --fleet");
    assert!(said.contains(&hint), "the hint names the fleet: {said}");
    let before = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap_or_default();

    // Without --fleet, a fleet run is not redone on this machine.
    let here = fleet.autoeval_output(&["rerun", &out, "--failed", "--quiet"]);
    let refused = String::from_utf8_lossy(&here.stderr).into_owned();
    assert_eq!(here.status.code(), Some(1), "{refused}");
    assert!(refused.contains(&hint), "{refused}");
    assert_eq!(
        std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap_or_default(),
        before,
        "a refused rerun changes nothing"
    );

    // The provider is back: the printed command finishes the run, with the
    // workers that saw the outage.
    rerun_once_the_server_is_back(&mut fleet);
    // Logs that go to a file or a pipe carry no colour codes.
    let worker_log = std::fs::read(fleet.dir.join("worker-0.log")).expect("the worker's log");
    assert!(
        !worker_log.is_empty() && !worker_log.contains(&0x1b),
        "escape bytes in the worker's log"
    );
    assert!(
        !first.stderr.contains(&0x1b),
        "escape bytes in the coordinator's output"
    );
    // A reader that stops early (`| head -1`) ends `status` quietly.
    let piped = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "set -o pipefail; {} status {out} --fleet --amqp {AMQP} --redis {REDIS} | head -1",
            binary("autoeval").display()
        ))
        .output()
        .expect("bash runs");
    let said = String::from_utf8_lossy(&piped.stderr);
    assert!(piped.status.success(), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert_eq!(String::from_utf8_lossy(&piped.stdout).lines().count(), 1);
    for service in fleet.workers.iter_mut().chain(fleet.verifiers.iter_mut()) {
        assert!(
            service.child.try_wait().expect("a service").is_none(),
            "no service was restarted"
        );
    }
}

/// The run's unit count, as its registration in Redis says.
fn unit_count(fleet: &Fleet) -> usize {
    fleet
        .block_on(fleet.store().meta())
        .expect("the run's meta")
        .get(autoeval_proto::meta::UNITS)
        .and_then(|u| u.parse().ok())
        .expect("the run's unit count")
}

/// Starts the mock server again and runs `autoeval rerun DIR --failed
/// --fleet`: it must succeed and leave every unit of the run equivalent.
fn rerun_once_the_server_is_back(fleet: &mut Fleet) {
    fleet.start_mock(&[]);
    let kept = records(&fleet.out)
        .iter()
        .filter(|r| !r.verdict.is_retryable())
        .count();
    let out = fleet.out.to_string_lossy().into_owned();
    let rerun = [
        "rerun", &out, "--failed", "--fleet", "--amqp", AMQP, "--redis", REDIS, "--quiet",
    ];
    let finished = fleet.autoeval_output(&rerun);
    assert!(
        finished.status.success(),
        "{}",
        String::from_utf8_lossy(&finished.stderr)
    );
    let last = records(&fleet.out);
    let ended: HashSet<_> = last.iter().map(ResultRecord::unit).collect();
    assert_eq!(ended.len(), unit_count(fleet), "every unit has its outcome");
    assert!(last.iter().all(|r| r.verdict == Verdict::Equivalent));
    // The summary counts the rounds this rerun recorded, not the run's.
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fleet.out.join("summary.json")).expect("the summary"),
    )
    .expect("JSON");
    let redone = summary["this_session"]["stages"]["records"].as_u64();
    assert_eq!(redone, Some((last.len() - kept) as u64), "{summary}");
}

#[test]
fn a_spent_quota_or_an_absurd_retry_after_stops_a_fleet_run_of_a_thousand_units_in_seconds() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/llm-client/tests/fixtures/provider-errors/openai");
    let mut endless: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("rate-limit-requests.json")).expect("a fixture"),
    )
    .expect("JSON");
    endless["headers"]["retry-after"] = serde_json::Value::String("1e20".into());
    let endless_file =
        std::env::temp_dir().join(format!("retry-after-1e20-{}.json", std::process::id()));
    std::fs::write(&endless_file, endless.to_string()).expect("a scratch file");
    let quota_file = fixtures.join("insufficient-quota.json");
    for (what, fixture, words) in [
        ("quota", quota_file.as_path(), "refused (quota exhausted)"),
        (
            "retry-after",
            endless_file.as_path(),
            "Retry-After asks for",
        ),
    ] {
        let mut fleet = Fleet::new(what, &["--refuse-with", fixture.to_str().unwrap()]);
        fleet.start_worker(16);
        fleet.start_verifier(1);
        let started = std::time::Instant::now();
        let stopped = run_on_fleet(
            &fleet,
            &[
                "--dataset",
                "plogic",
                "--prompt",
                "zero-shot",
                "--per-bucket",
                "25",
                "--batches",
                "2",
                "--max-attempts",
                "6",
            ],
        );
        let took = started.elapsed();
        let said = String::from_utf8_lossy(&stopped.stderr).into_owned();
        let requests = reqwest::blocking::get(format!("http://127.0.0.1:{}/stats", fleet.port))
            .and_then(|r| r.json::<serde_json::Value>())
            .expect("the mock's counts")["requests"]
            .as_u64()
            .unwrap();
        let units = unit_count(&fleet);
        eprintln!(
            "fleet, {what}: {units} units stopped after {requests} requests in {:.1} s, exit {:?}: {said}",
            took.as_secs_f64(),
            stopped.status.code()
        );
        assert!(units >= 1000, "{units} units");
        assert_eq!(stopped.status.code(), Some(1), "{said}");
        assert!(said.contains(words), "{said}");
        assert!(took < std::time::Duration::from_secs(30), "{took:?}");
        assert!(requests <= 16 + 6, "{requests} requests");
        assert!(
            records(&fleet.out).is_empty(),
            "every unit is pending, none failed"
        );
        fleet.stop_mock();
        rerun_once_the_server_is_back(&mut fleet);
    }
}

/// Waits until `dir` holds at least `n` records, or `child` ended.
fn wait_for_records(dir: &Path, n: usize, child: &mut std::process::Child) {
    autoeval_e2e::fleet::wait_for(
        "the run records its first rounds",
        std::time::Duration::from_secs(300),
        || records(dir).len() >= n || child.try_wait().ok().flatten().is_some(),
    );
}

#[test]
fn a_server_that_stops_mid_run_halts_the_run_on_one_machine_and_on_the_fleet_with_no_round_failed()
{
    let _turn = autoeval_e2e::turn(module_path!());
    let slow = ["--latency-ms", "200"];
    let mut fleet = Fleet::new("outage", &slow);
    fleet.start_worker(4);
    fleet.start_verifier(1);
    let one_machine = fleet.dir.join("one-machine");
    let model = fleet.model.clone();
    let plan = |out: &Path| -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--model",
            &model,
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "10",
            "--batches",
            "1",
            "--concurrency",
            "4",
            "--quiet",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(out.to_string_lossy().into_owned());
        args
    };
    let mut said = Vec::new();
    for on_fleet in [false, true] {
        let (dir, mut args) = match on_fleet {
            false => (one_machine.clone(), plan(&one_machine)),
            true => {
                let out = fleet.out.clone();
                let args = plan(&out);
                (out, args)
            }
        };
        if on_fleet {
            args.extend(["--fleet", "--amqp", AMQP, "--redis", REDIS].map(String::from));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = fleet.autoeval(&args);
        wait_for_records(&dir, 8, &mut child);
        fleet.stop_mock();
        let ended = child.wait_with_output().expect("the run ends");
        let stderr = String::from_utf8_lossy(&ended.stderr).into_owned();
        let kept = records(&dir);
        let failed = kept
            .iter()
            .filter(|r| r.verdict == Verdict::ApiFailure)
            .count();
        eprintln!(
            "{}: exit {:?}, {} rounds recorded, {failed} API failures: {stderr}",
            if on_fleet { "fleet" } else { "one machine" },
            ended.status.code(),
            kept.len()
        );
        assert_eq!(ended.status.code(), Some(1), "the outage halts: {stderr}");
        assert_eq!(failed, 0, "an outage fails no round: {stderr}");
        assert!(kept.len() >= 8, "the rounds before the outage are kept");
        assert!(
            cause(&stderr).contains(&format!("connection refused to 127.0.0.1:{}", fleet.port)),
            "{stderr}"
        );
        let hint = format!(
            "autoeval rerun {} --failed{}",
            dir.display(),
            if on_fleet { " --fleet" } else { "" }
        );
        assert!(stderr.contains(&hint), "{stderr}");
        said.push(cause(&stderr).to_string());
        if on_fleet {
            // `status` says the run halted, and the command that goes on.
            let out = dir.to_string_lossy().into_owned();
            let status = fleet.autoeval_output(&["status", &out]);
            let shown = String::from_utf8_lossy(&status.stdout);
            assert!(shown.contains("HALTED: stopped after"), "{shown}");
            assert!(
                shown.contains(&format!("autoeval rerun {out} --failed --fleet")),
                "{shown}"
            );
        }
        fleet.start_mock(&slow);
    }
    assert_eq!(said[0], said[1], "the same line in both modes");
    fleet.stop_mock();
    rerun_once_the_server_is_back(&mut fleet);
}

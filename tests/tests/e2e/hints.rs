//! Every command that `run`, `status`, `rerun` and `resume` print as advice
//! works when pasted: each scenario makes a command print its advice, then
//! runs every command it advises, split as a shell would split it. (The
//! budget's advice is pasted in the budget test.)

use autoeval_e2e::advised;
use autoeval_e2e::fleet::{binary, wait_for, Fleet, REDIS};
use autoeval_redis_store::RunStore;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A service started from a pasted command, stopped at the end.
struct Service(Child);

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a command said, on stderr and stdout.
fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

/// The commands `out` advises, of which there must be some.
fn advice_of(out: &Output) -> Vec<Vec<String>> {
    let text = said(out);
    let advice = advised(&text);
    assert!(!advice.is_empty(), "no advice in: {text}");
    advice
}

/// Runs a pasted command to its end; it must succeed. Answers what it said.
fn paste(fleet: &Fleet, command: &[String]) -> String {
    eprintln!("pasted: {}", command.join(" "));
    let out = Command::new(binary(&command[0]))
        .args(&command[1..])
        .current_dir(&fleet.dir)
        .output()
        .expect("the pasted command starts");
    let text = said(&out);
    assert!(
        out.status.success(),
        "`{}` failed: {text}",
        command.join(" ")
    );
    text
}

/// `autoeval run --quiet` on a few ksat items of the fleet's model into `out`.
fn run_args<'a>(fleet: &'a Fleet, out: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = fleet.small_run(&fleet.model, "ksat", out);
    args.push("--quiet");
    args.extend_from_slice(more);
    args
}

#[test]
fn the_advice_of_a_run_on_one_machine_works_when_pasted() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("hints-here", &[]);
    fleet.stop_mock();
    let out = fleet.out.to_string_lossy().into_owned();

    // A server that is down: the run stops and says what redoes it.
    let stopped = fleet.autoeval_output(&run_args(&fleet, &out, &[]));
    assert_eq!(stopped.status.code(), Some(1), "{}", said(&stopped));
    let advice = advice_of(&stopped);
    fleet.start_mock(&[]);
    for command in &advice {
        paste(&fleet, command);
    }

    // A server that fails half the calls: rounds are left to redo (exit 3).
    fleet.stop_mock();
    fleet.start_mock(&["--error-rate", "0.5"]);
    let flaky = format!("{out}-flaky");
    let incomplete = fleet.autoeval_output(&run_args(&fleet, &flaky, &["--max-attempts", "1"]));
    assert_eq!(incomplete.status.code(), Some(3), "{}", said(&incomplete));
    let advice = advice_of(&incomplete);
    fleet.stop_mock();
    fleet.start_mock(&[]);
    for command in &advice {
        paste(&fleet, command);
    }

    // `resume` goes on from this machine's records: nothing is left to do.
    let resumed = fleet.autoeval_output(&["resume", &flaky]);
    assert_eq!(resumed.status.code(), Some(0), "{}", said(&resumed));
    assert!(said(&resumed).contains("0 to do"), "{}", said(&resumed));
}

#[test]
fn the_advice_of_a_run_on_the_fleet_works_when_pasted() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("hints-fleet", &[]);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();

    // No worker serves the model: the run says which worker to start and
    // what to run then, and ends with its units among the dead letters.
    let dead = fleet.autoeval_output(&run_args(
        &fleet,
        &out,
        &["--fleet", "--worker-wait-s", "0"],
    ));
    assert_eq!(dead.status.code(), Some(1), "{}", said(&dead));
    let advice = advice_of(&dead);
    let mut services = Vec::new();
    for command in advice.iter().filter(|c| c[0] == "autoeval-worker") {
        eprintln!("pasted: {}", command.join(" "));
        let child = Command::new(binary(&command[0]))
            .args(&command[1..])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the pasted worker starts");
        services.push(Service(child));
    }
    assert_eq!(services.len(), 1, "a worker to start: {advice:?}");
    for command in advice.iter().filter(|c| c[0] == "autoeval") {
        let text = paste(&fleet, command);
        // What `status` advises in turn works too.
        for more in advised(&text) {
            paste(&fleet, &more);
        }
    }
    let units: usize = fleet
        .block_on(fleet.store().meta())
        .expect("the run's meta")
        .get(autoeval_proto::meta::UNITS)
        .and_then(|u| u.parse().ok())
        .expect("the run's unit count");
    let finals = fleet.block_on(fleet.store().final_count()).expect("finals");
    assert_eq!(finals as usize, units, "every unit has its outcome");

    // Without --fleet, rerun says how to redo the run on the fleet.
    let here = fleet.autoeval_output(&["rerun", &out, "--failed"]);
    assert_eq!(here.status.code(), Some(1), "{}", said(&here));
    for command in &advice_of(&here) {
        paste(&fleet, command);
    }

    // A server that fails half the calls: the run ends with rounds to redo
    // (exit 3), and status says why and what redoes them.
    fleet.stop_mock();
    fleet.start_mock(&["--error-rate", "0.5"]);
    let flaky = format!("{out}-flaky");
    let incomplete = fleet.autoeval_output(&run_args(
        &fleet,
        &flaky,
        &["--fleet", "--max-attempts", "1"],
    ));
    assert_eq!(incomplete.status.code(), Some(3), "{}", said(&incomplete));
    let mut advice = advice_of(&incomplete);
    let status = fleet.autoeval_output(&["status", &flaky]);
    assert!(status.status.success(), "{}", said(&status));
    assert!(
        said(&status).contains("failed units by reason"),
        "{}",
        said(&status)
    );
    advice.extend(advice_of(&status));
    fleet.stop_mock();
    fleet.start_mock(&[]);
    for command in &advice {
        paste(&fleet, command);
    }

    // Ctrl-C while following: the fleet goes on, and the advice says where the run is.
    fleet.stop_mock();
    fleet.start_mock(&["--latency-ms", "200"]);
    let slow = format!("{out}-slow");
    let args = run_args(&fleet, &slow, &["--fleet"]);
    let following = fleet.autoeval(&args);
    let results = std::path::Path::new(&slow).join("results.jsonl");
    wait_for("a round recorded", Duration::from_secs(120), || {
        std::fs::metadata(&results).is_ok_and(|m| m.len() > 0)
    });
    let interrupted = Command::new("kill")
        .args(["-INT", &following.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let detached = following.wait_with_output().expect("it ends");
    assert_eq!(detached.status.code(), Some(130), "{}", said(&detached));
    assert!(
        said(&detached).contains("the fleet goes on"),
        "{}",
        said(&detached)
    );
    for command in &advice_of(&detached) {
        paste(&fleet, command);
    }
    // As it says, the same command attaches again and sees the run to its end.
    let attached = fleet.autoeval_output(&args);
    assert!(attached.status.success(), "{}", said(&attached));

    // Redis lost the run: status says what restores it.
    let run = autoeval_e2e::fleet::run_of(std::path::Path::new(&slow));
    fleet
        .block_on(async {
            let conn = autoeval_redis_store::connect(REDIS).await?;
            RunStore::new(conn, &run).delete().await
        })
        .expect("the run is deleted from Redis");
    let lost = fleet.autoeval_output(&["status", &slow]);
    assert_eq!(lost.status.code(), Some(1), "{}", said(&lost));
    // It names the Redis it asked, so a user can tell a wrong one.
    assert!(
        said(&lost).contains("the Redis asked, redis://"),
        "{}",
        said(&lost)
    );
    for command in &advice_of(&lost) {
        paste(&fleet, command);
    }
    let restored = fleet.autoeval_output(&["status", &slow]);
    assert!(restored.status.success(), "{}", said(&restored));
}

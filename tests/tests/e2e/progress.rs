//! The progress line of a run names what the run waits on: a stage whose
//! tasks nobody takes, a rate limit (on the fleet, where `status` names it
//! too, and on one machine).

use autoeval_e2e::fleet::Fleet;
use autoeval_e2e::progress::{first_line, follow, lines_of, progress_line, status};
use std::time::Duration;

#[test]
fn a_stage_nobody_serves_is_named_in_the_progress_line_until_a_worker_comes() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("unserved", &[]);
    // A worker declares the model's queue and goes: its tasks will wait there.
    fleet.start_worker(4);
    fleet.workers.pop().expect("the worker").kill9();
    fleet.start_verifier(1);
    let mut coordinator = follow(&fleet);
    let said = lines_of(&mut coordinator);
    let fix = format!("start `autoeval-worker --model '{}'`", fleet.model);
    let named = progress_line(&said, "naming the stage nobody serves", |l| {
        l.contains(&fix)
    });
    assert!(named.starts_with("run: 0 translated"), "{named}");
    assert!(
        named.contains("waiting: ") && named.contains("nothing takes them"),
        "{named}"
    );

    fleet.start_worker(4);
    let ended = coordinator.wait().expect("the run ends");
    let rest: Vec<String> = said.try_iter().collect();
    assert!(ended.success(), "{}", rest.join("\n"));
}

#[test]
fn a_rate_limited_model_is_named_in_the_progress_line_and_in_status() {
    let _turn = autoeval_e2e::turn(module_path!());
    // One request a second, then 429s that ask for a 4 s wait.
    let mut fleet = Fleet::new(
        "rate-limited",
        &["--rate-limit", "60", "--retry-after", "4"],
    );
    fleet.start_worker(8);
    fleet.start_verifier(1);
    let mut coordinator = follow(&fleet);
    let said = lines_of(&mut coordinator);
    let wait = format!("rate-limited: {}", fleet.model);
    let line = progress_line(&said, "naming the rate limit", |l| l.contains(&wait));
    assert!(line.contains("answered 429"), "{line}");
    // The wait shows in status while it lasts: the worker keeps meeting it.
    autoeval_e2e::fleet::wait_for("status to name the wait", Duration::from_secs(60), || {
        status(&fleet).contains(&wait)
    });
    let _ = coordinator.kill();
    let _ = coordinator.wait();
}

#[test]
fn a_rate_limited_model_is_named_in_the_progress_line_of_a_run_on_one_machine() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fleet = Fleet::new(
        "rate-limited-here",
        &["--rate-limit", "60", "--retry-after", "4"],
    );
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = fleet.small_run(&fleet.model, "ksat", &out);
    args.extend(["--plain", "--log-every", "1"]);
    let mut run = fleet.autoeval(&args);
    let said = lines_of(&mut run);
    let wait = format!("rate-limited: {} waits", fleet.model);
    let line = progress_line(&said, "naming the rate limit", |l| l.contains(&wait));
    assert!(line.contains("answered 429"), "{line}");
    let _ = run.kill();
    let _ = run.wait();
}

#[test]
fn a_misspelt_model_is_answered_with_the_models_workers_serve() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("misspelt", &[]);
    fleet.start_worker(2);
    let misspelt = fleet.model.replace("reference@", "refrence@");
    let out = fleet.out.to_string_lossy().into_owned();
    // The coordinator's first word on a spec nobody serves, and what it said
    // after it until it was stopped.
    let waiting_line = || {
        let mut args = fleet.small_run(&misspelt, "ksat", &out);
        args.extend(fleet.on_fleet());
        args.push("--plain");
        let mut run = fleet.autoeval(&args);
        let said = lines_of(&mut run);
        let line = first_line(&said, "saying what the coordinator waits for", |l| {
            l.starts_with("fleet: waiting for a worker serving")
        });
        let _ = run.kill();
        let _ = run.wait();
        (line, said.try_iter().collect::<Vec<String>>())
    };
    let (line, rest) = waiting_line();
    // The worker stamps what it serves each second: the first look may come before it.
    assert!(
        line.contains(&misspelt) && line.contains("workers serve: ")
            || line.contains("no worker serves any model now"),
        "{line}"
    );
    assert!(rest.len() < 5, "one line per cause, not a flood: {rest:?}");
    // Asked again once the worker has said what it serves, the list names it.
    autoeval_e2e::fleet::wait_for(
        "the worker to say what it serves",
        Duration::from_secs(30),
        || {
            let (line, _) = waiting_line();
            line.contains("workers serve: ") && line.contains(&fleet.model)
        },
    );
}

#[test]
fn the_consumer_timeout_warning_comes_only_for_settings_past_the_defaults_and_once_per_run() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("consumer-timeout", &[]);
    fleet.start_worker(4);
    fleet.start_verifier(1);
    let warning = "could outlast the broker's consumer timeout";
    let log = fleet.dir.join("worker-0.log");
    let out = fleet.out.to_string_lossy().into_owned();
    let run = |out: &str, more: &[&str]| {
        let mut args = fleet.small_run(&fleet.model, "ksat", out);
        args.extend(fleet.on_fleet());
        args.push("--quiet");
        args.extend_from_slice(more);
        let done = fleet.autoeval_output(&args);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    };
    run(&out, &[]);
    let said = std::fs::read_to_string(&log).expect("the worker's log");
    assert_eq!(said.matches(warning).count(), 0, "defaults fit: {said}");
    // A request time limit past the default's: warned once for the run.
    run(&format!("{out}-long"), &["--request-timeout-s", "3000"]);
    let said = std::fs::read_to_string(&log).expect("the worker's log");
    assert_eq!(said.matches(warning).count(), 1, "{said}");
}

//! A report pulled from the fleet's Redis never discards a round that only
//! the run directory holds (done off the fleet, or lost by Redis): the
//! directory is the run's record, and Redis adds only what it has not taken.

use autoeval_e2e::fleet::{Fleet, REDIS};
use serde_json::Value;

#[test]
fn a_report_pulled_from_redis_keeps_the_rounds_only_the_directory_holds() {
    let _turn = autoeval_e2e::turn(module_path!());
    let mut fleet = Fleet::new("pull-keeps", &[]);
    fleet.start_worker(4);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = fleet.small_run(&fleet.model, "ksat", &out);
    args.extend(fleet.on_fleet());
    args.push("--quiet");
    let run = fleet.autoeval_output(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results = fleet.out.join("results.jsonl");
    let text = std::fs::read_to_string(&results).expect("the results");
    let mut rows = autoeval_e2e::jsonl(&text);
    let before = rows.len();
    // A round of a repeat the fleet never ran: only this directory has it.
    let mut extra: Value = rows[0].clone();
    extra["repeat"] = Value::from(7);
    std::fs::write(&results, format!("{text}{extra}\n")).unwrap();

    let report = fleet.autoeval_output(&["report", &out, "--fleet", "--redis", REDIS]);
    let said = String::from_utf8_lossy(&report.stderr);
    assert!(report.status.success(), "{said}");
    // The coordinator took every round into the directory: Redis holds none of their records.
    assert!(
        said.contains(": 0 rounds not yet in a run directory"),
        "{said}"
    );
    rows = autoeval_e2e::jsonl(&std::fs::read_to_string(&results).unwrap());
    assert_eq!(rows.len(), before + 1, "every round kept");
    assert!(
        rows.iter().any(|r| r["repeat"] == 7),
        "the directory's own round is kept"
    );
}

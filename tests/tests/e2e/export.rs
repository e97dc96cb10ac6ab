//! `autoeval export` read by the tools evaluators already use, run for real
//! from a cached virtual environment (`scripts/readers-venv`), on a
//! one-machine run and on a fleet run of the same plan (two models, two
//! prompt styles, two rounds, some API failures): Inspect reads every log
//! and holds it to the run's `results.jsonl` and `summary.json`
//! (`tests/readers/check_inspect.py`), Inspect's own viewer, bundled and
//! opened in headless Chromium, lists each log's samples and shows one
//! (`check_viewer.py`), and pyarrow and DuckDB read the Parquet file and
//! hold it to `results.jsonl` (`check_parquet.py`).

#![allow(clippy::unwrap_used)] // a test fails loudly on what it did not expect

use autoeval_e2e::fleet::{Fleet, ONE_AT_A_TIME};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The readers' python, its environment created the first time.
fn readers_python() -> PathBuf {
    let out = Command::new(root().join("scripts/readers-venv"))
        .output()
        .expect("scripts/readers-venv runs");
    assert!(
        out.status.success(),
        "the readers' environment could not be made: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Runs a reader's check script on `args`; fails the test with its output
/// unless it passes, and gives its output.
fn check(script: &str, args: &[&Path]) -> String {
    let out = Command::new(readers_python())
        .arg(root().join("tests/readers").join(script))
        .args(args)
        .output()
        .expect("the check runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{script} found differences:\n{text}");
    text
}

/// The plan both runs share: two models (the mock server's, priced so
/// that costs add up, and failing some calls for good; and a built-in
/// one), two prompt styles, two rounds.
fn plan<'a>(fleet: &'a Fleet, out: &'a str, prices: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "--quiet",
        "--out",
        out,
        "--prices",
        prices,
        "--model",
        &fleet.model,
        "--model",
        "reference-noisy:0.3",
        "--prompt",
        "zero-shot",
        "--prompt",
        "few-shot",
        "--rounds",
        "2",
        "--dataset",
        "plogic",
        "--dataset",
        "regex",
        "--per-bucket",
        "1",
        "--batches",
        "1",
        "--seed",
        "3",
        "--max-attempts",
        "1",
        "--worker-wait-s",
        "0",
    ]
}

/// Exports `dir` as Inspect logs and as Parquet, and has the readers read
/// them; gives what they printed.
fn export_and_read(fleet: &Fleet, dir: &Path) -> String {
    let mut read = String::new();
    for (format, script) in [
        ("inspect", "check_inspect.py"),
        ("parquet", "check_parquet.py"),
    ] {
        let to = dir.join(format);
        let out = fleet.autoeval_output(&[
            "export",
            dir.to_str().unwrap(),
            "--format",
            format,
            "--out",
            to.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        read.push_str(&check(script, &[&to, dir]));
    }
    read.push_str(&check("check_viewer.py", &[&dir.join("inspect"), dir]));
    read
}

/// Runs `args` into `dir`, which must end with failed units (exit 3) and
/// API failures among its records: the exports must carry them.
fn run_with_failures(fleet: &Fleet, args: &[&str], dir: &Path) {
    let run = fleet.autoeval_output(args);
    assert_eq!(
        run.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let failures = autoeval_e2e::jsonl(&text)
        .iter()
        .filter(|r| r["verdict"] == "api_failure")
        .count();
    assert!(failures > 0);
}

#[test]
fn inspect_pyarrow_and_duckdb_read_the_exports_of_a_one_machine_run_and_of_a_fleet_run_of_the_same_plan(
) {
    let _turn = autoeval_e2e::turn(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut fleet = Fleet::new("export-readers", &["--error-rate", "0.1"]);
    let prices = fleet.dir.join("prices.json");
    std::fs::write(&prices, r#"{"reference": {"input": 2.5, "output": 10.0}}"#).unwrap();
    let prices = prices.to_string_lossy().into_owned();
    let local = fleet.dir.join("one-machine");
    let local_str = local.to_string_lossy().into_owned();
    let mut args = plan(&fleet, &local_str, &prices);
    args.push("--parquet");
    run_with_failures(&fleet, &args, &local);
    // Judged twice (two judges, two styles): the exports carry each judgement.
    for (judge, style) in [
        ("reference-judge-noisy:0.2", "cot"),
        ("reference-judge-noisy:0.4", "yesno"),
    ] {
        let judged = fleet.autoeval_output(&[
            "judge",
            &local_str,
            "--judge",
            judge,
            "--prompt",
            style,
            "--source-model",
            "reference-noisy:0.3",
            "--quiet",
        ]);
        assert!(
            judged.status.success(),
            "{}",
            String::from_utf8_lossy(&judged.stderr)
        );
    }
    let read = export_and_read(&fleet, &local);
    eprintln!("one machine:\n{read}");
    assert!(read.contains("judgements: "), "{read}");
    // `--parquet` wrote at the run's end the file `export` writes.
    assert_eq!(
        std::fs::read(local.join("results.parquet")).unwrap(),
        std::fs::read(local.join("parquet/results.parquet")).unwrap()
    );

    fleet.start_worker_with(8, &["--model", "reference-noisy:0.3"]);
    fleet.start_verifier(1);
    let out = fleet.out.to_string_lossy().into_owned();
    let mut args = plan(&fleet, &out, &prices);
    args.extend(fleet.on_fleet());
    run_with_failures(&fleet, &args, &fleet.out);
    let read = export_and_read(&fleet, &fleet.out);
    eprintln!("fleet:\n{read}");
}

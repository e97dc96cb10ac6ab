//! The verifier worker from the outside: a stream of requests on stdio.

use autoeval_e2e::jsonl;
use std::io::Write;
use std::process::{Command, Stdio};

#[test]
fn the_verifier_worker_answers_a_stream_on_stdio() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_autoeval-verifier-stdio"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"id": "a", "kind": "fol", "phi0": "∀ x1.pred1(x1)", "phi1": "∀ y. pred1(y)"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"id": "b", "kind": "ksat", "phi0": "(p1 ∨ p2 ∨ p3)", "phi1": "(p1 ∨ p2)"}}"#
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let results = jsonl(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(results[0]["id"], "a");
    assert_eq!(results[0]["verdict"], "equivalent");
    assert_eq!(results[1]["verdict"], "not_equivalent");
    assert_eq!(results[1]["counterexample"]["assignment"]["p3"], true);
}

#[test]
fn no_verifier_takes_zero_jobs() {
    for exe in [
        env!("CARGO_BIN_EXE_autoeval-verifier-stdio"),
        env!("CARGO_BIN_EXE_autoeval-verifier"),
    ] {
        let out = Command::new(exe).args(["--jobs", "0"]).output().unwrap();
        assert!(!out.status.success(), "{exe} took --jobs 0");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--jobs") && err.contains("1.."),
            "{exe}: {err}"
        );
    }
}

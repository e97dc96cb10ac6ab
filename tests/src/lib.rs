//! Shared helpers for the end-to-end tests of the `autoeval` command and the
//! services: run a built binary, read JSONL, make scratch directories, and
//! bring up a fleet (mock model server, workers, verifiers) against the real
//! RabbitMQ and Redis.

pub mod conformance;
pub mod deploy;
pub mod faults;
pub mod fleet;
pub mod progress;
mod sweep;
pub mod tls;
mod turn;

pub use turn::{turn, Turn};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `program` with `args`; panics with its stderr when it fails.
pub fn run_ok(program: &Path, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .output()
        .expect("the program starts");
    assert!(
        out.status.success(),
        "{} {args:?} failed: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The JSON objects of a JSONL text.
pub fn jsonl(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// A fresh temporary directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("autoeval-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Every command `text` advises: each backticked `autoeval…` command, split
/// as a shell would split it when pasted.
pub fn advised(text: &str) -> Vec<Vec<String>> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|c| c.starts_with("autoeval"))
        .filter_map(shlex::split)
        .collect()
}

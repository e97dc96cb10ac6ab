//! Batch mode on one machine, from the outside, through the mock server's
//! OpenAI Batch API: the same verdicts as direct calls at half the cost, a
//! run killed with batches in flight that resumes without submitting any
//! request twice (through the Batch API for chat completions and for the
//! Responses API, and through Gemini's Batch Mode), and expired and failed
//! requests retried, then left to `rerun --failed`.

use crate::common::{free_port, get_json, mock_server, records, BIN};
use autoeval_e2e::scratch;
use autoeval_proto::{ResultRecord, Verdict};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MODEL: &str = "openai:gpt-4o-mini";

/// The run's files: a secrets file and, for batch mode, a config file.
struct Setup {
    dir: PathBuf,
    port: u16,
    model: String,
}

impl Setup {
    fn new(name: &str, port: u16) -> Setup {
        Setup::with_model(name, port, MODEL.to_string())
    }

    /// The files of a run of `model`.
    fn with_model(name: &str, port: u16, model: String) -> Setup {
        let dir = scratch(name);
        std::fs::write(
            dir.join("secrets.json"),
            r#"{"OPENAI_API_KEY": "sk-test", "GEMINI_API_KEY": "gm-test"}"#,
        )
        .unwrap();
        std::fs::write(
            dir.join("batch.toml"),
            format!(
                "[model.\"{model}\"]\nbatch = true\nbatch-size = 400\nbatch-wait-s = 0.3\nbatch-poll-s = 0.1\n"
            ),
        )
        .unwrap();
        // The mock plays the provider at another address, where no list
        // price holds: the run is given the price, batched at half.
        std::fs::write(
            dir.join("prices.json"),
            r#"{"gpt-4o-mini": {"input": 0.15, "output": 0.6, "batch_input": 0.075, "batch_output": 0.3}}"#,
        )
        .unwrap();
        Setup { dir, port, model }
    }

    /// `autoeval ARGS` with the mock server as OpenAI's address.
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env(
                "OPENAI_BASE_URL",
                format!("http://127.0.0.1:{}/v1", self.port),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }

    /// The arguments of a run into `out`, batched or not.
    fn run_args(&self, out: &Path, batched: bool, extra: &[&str]) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--model",
            &self.model,
            "--secrets",
            self.dir.join("secrets.json").to_str().unwrap(),
            "--prices",
            self.dir.join("prices.json").to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if batched {
            args.push("--config".into());
            args.push(self.dir.join("batch.toml").to_str().unwrap().into());
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    }

    fn run(&self, out: &Path, batched: bool, extra: &[&str]) -> Output {
        let args = self.run_args(out, batched, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.command(&args).output().unwrap()
    }
}

fn journal_lines(dir: &Path, kind: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.join("batches.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get(kind).cloned())
        .collect()
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_batched_run_gives_the_direct_runs_verdicts_unit_by_unit_at_exactly_half_the_cost() {
    let port = free_port();
    let _server = mock_server(port, &["--model", "reference-noisy:0.3"]);
    let setup = Setup::new("batch-vs-direct", port);
    let items = ["--batches", "3", "--prompt", "zero-shot"];
    let (direct, batched) = (setup.dir.join("direct"), setup.dir.join("batched"));
    ok(&setup.run(&direct, false, &items), "the direct run");
    let after_direct = get_json(port, "/stats");
    ok(&setup.run(&batched, true, &items), "the batched run");
    let after_batched = get_json(port, "/stats");

    let (d, b) = (records(&direct), records(&batched));
    let datasets: BTreeSet<&str> = d.iter().map(|r| r.dataset.as_str()).collect();
    assert_eq!(datasets.len(), 5, "all five datasets: {datasets:?}");
    assert!(d.len() >= 2000, "{} units", d.len());
    assert_eq!(d.len(), b.len());
    let by_unit: HashMap<_, _> = b.iter().map(|r| (r.unit(), r)).collect();
    let (mut direct_cost, mut batch_cost, mut differ) = (0.0, 0.0, 0);
    for r in &d {
        let other = by_unit[&r.unit()];
        assert_eq!(r.verdict, other.verdict, "{}", r.unit());
        assert_eq!(r.phi1, other.phi1);
        assert_eq!(r.usage, other.usage);
        let (dc, bc) = (r.cost.unwrap(), other.cost.unwrap());
        assert_eq!(bc * 2.0, dc, "{}: half the price", r.unit());
        direct_cost += dc;
        batch_cost += bc;
        differ += usize::from(r.verdict != Verdict::Equivalent);
    }
    assert!(
        differ > 0,
        "the noisy model gives verdicts other than equivalent"
    );
    assert_eq!(batch_cost * 2.0, direct_cost);

    // Every call of the batched run went through a batch, each request once.
    let calls = 2 * b.len() as u64;
    let direct_calls = after_direct["completions"].as_u64().unwrap();
    assert_eq!(direct_calls, calls);
    assert_eq!(after_batched["completions"].as_u64().unwrap(), direct_calls);
    assert_eq!(after_batched["batch_requests"].as_u64().unwrap(), calls);
    let submissions: HashMap<String, u64> =
        serde_json::from_value(get_json(port, "/batch-submissions")).unwrap();
    assert_eq!(submissions.len() as u64, calls);
    assert!(submissions.values().all(|n| *n == 1));
    let submitted = journal_lines(&batched, "submitted");
    let server_batches = after_batched["batches"].as_u64().unwrap();
    assert_eq!(submitted.len() as u64, server_batches);
    assert!(submitted
        .iter()
        .all(|s| s["calls"].as_array().unwrap().len() <= 400));
    eprintln!(
        "{} units over {} datasets; verdicts identical unit by unit ({differ} not equivalent); cost direct ${direct_cost:.6}, batched ${batch_cost:.6} (ratio {}); server: {} direct completions, then {server_batches} batches holding {} requests, {} files, {} polls",
        d.len(),
        datasets.len(),
        batch_cost / direct_cost,
        direct_calls,
        after_batched["batch_requests"],
        after_batched["files"],
        after_batched["batch_polls"],
    );
}

#[test]
fn a_run_killed_with_batches_in_flight_resumes_without_submitting_any_request_twice() {
    killed_twice_then_resumed("batch-killed", |_| MODEL.to_string());
}

#[test]
fn a_run_through_the_responses_batch_api_killed_in_flight_resumes_without_paying_twice() {
    killed_twice_then_resumed("batch-killed-responses", |port| {
        format!("openai-responses:o4-mini@http://127.0.0.1:{port}/v1")
    });
}

#[test]
fn a_run_through_gemini_batch_mode_killed_in_flight_resumes_without_paying_twice() {
    killed_twice_then_resumed("batch-killed-gemini", |port| {
        format!("gemini:gemini-2.5-flash@http://127.0.0.1:{port}")
    });
}

/// A batched run of the model `model_at` names for the mock's port,
/// killed twice with a batch of its own in flight, then resumed: each
/// call submitted once in all, none sent directly.
fn killed_twice_then_resumed(name: &str, model_at: fn(u16) -> String) {
    let port = free_port();
    let _server = mock_server(port, &["--batch-delay-ms", "1500"]);
    let setup = Setup::with_model(name, port, model_at(port));
    let out = setup.dir.join("run");
    let items = [
        "--batches",
        "1",
        "--prompt",
        "zero-shot",
        "--dataset",
        "plogic",
        "--dataset",
        "regex",
    ];
    let args = setup.run_args(&out, true, &items);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut kills = Vec::new();
    for k in 0..2 {
        let mut child = setup.command(&args).spawn().unwrap();
        // Killed once this run has a batch of its own in flight.
        let before = journal_lines(&out, "submitted").len();
        let deadline = Instant::now() + Duration::from_secs(120);
        while journal_lines(&out, "submitted").len() <= before {
            assert!(child.try_wait().unwrap().is_none(), "run {k} ended early");
            assert!(Instant::now() < deadline, "run {k} submitted no batch");
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (submitted, ended) = (
            journal_lines(&out, "submitted").len(),
            journal_lines(&out, "ended").len(),
        );
        assert!(ended < submitted, "a batch was in flight at the kill");
        kills.push((submitted, ended));
    }
    // The resumed run logs its progress each second, batches included.
    let plain: Vec<&str> = args
        .iter()
        .flat_map(|a| match *a {
            "--quiet" => vec!["--plain", "--log-every", "1"],
            a => vec![a],
        })
        .collect();
    let resumed = setup.command(&plain).output().unwrap();
    ok(&resumed, "the resumed run");
    let logged = String::from_utf8_lossy(&resumed.stderr);
    let batch_line = logged
        .lines()
        .find(|l| {
            l.starts_with("run: ") && l.contains("; batches: ") && l.contains(" in progress (")
        })
        .unwrap_or_else(|| panic!("a progress line names the batches: {logged}"));
    eprintln!("a progress line of the resumed run: {batch_line}");
    let rs = records(&out);
    let units: BTreeSet<_> = rs.iter().map(|r| r.unit()).collect();
    assert_eq!(units.len(), rs.len(), "each unit recorded once");
    let calls = 2 * rs.len() as u64;
    let stats = get_json(port, "/stats");
    let submissions: HashMap<String, u64> =
        serde_json::from_value(get_json(port, "/batch-submissions")).unwrap();
    assert_eq!(stats["batch_requests"].as_u64().unwrap(), calls, "{stats}");
    assert_eq!(submissions.len() as u64, calls);
    assert!(
        submissions.values().all(|n| *n == 1),
        "no request submitted twice"
    );
    assert_eq!(stats["completions"].as_u64().unwrap(), 0);
    eprintln!(
        "{}: killed twice with batches in flight (journal after each kill: submitted, ended = {kills:?}); the resumed run recorded {} units; server: {} batches, {} requests submitted for {calls} calls, each custom_id once, {} direct completions",
        setup.model,
        rs.len(),
        stats["batches"],
        stats["batch_requests"],
        stats["completions"]
    );
}

#[test]
fn expired_and_failed_batch_requests_are_retried_then_api_failures_that_rerun_completes() {
    let port = free_port();
    let server = mock_server(
        port,
        &["--expire-batches", "0", "--batch-failure-rate", "0.1"],
    );
    let setup = Setup::new("batch-failures", port);
    let out = setup.dir.join("run");
    let items = [
        "--batches",
        "1",
        "--prompt",
        "zero-shot",
        "--max-attempts",
        "2",
    ];
    let first = setup.run(&out, true, &items);
    assert_eq!(first.status.code(), Some(3), "the run ends incomplete");
    let stats = get_json(port, "/stats");
    let rs = records(&out);
    let failed: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.verdict == Verdict::ApiFailure)
        .collect();
    let retried = rs
        .iter()
        .filter(|r| r.verdict != Verdict::ApiFailure && r.attempts > 2)
        .count();
    assert!(!failed.is_empty());
    for r in &failed {
        let why = r.reason.as_deref().unwrap();
        assert!(
            why.contains("injected failure") || why.contains("expired"),
            "{why}"
        );
    }
    // What the journal says of each try, against the server's counts.
    let ended = journal_lines(&out, "ended");
    let ended_ids: BTreeSet<&str> = ended.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(
        ended_ids.len(),
        ended.len(),
        "each batch followed to its end once"
    );
    let outcomes: Vec<&Value> = ended
        .iter()
        .flat_map(|e| e["outcomes"].as_array().unwrap())
        .collect();
    let failed_tries = outcomes
        .iter()
        .filter(|o| o[2].get("failed").is_some())
        .count() as u64;
    assert_eq!(
        failed_tries,
        stats["batch_failed"].as_u64().unwrap() + stats["batch_expired"].as_u64().unwrap()
    );
    let first_batch = &ended[0]["end"];
    assert_eq!(first_batch["status"], "expired");
    assert!(first_batch["expired"].as_u64().unwrap() > 0);
    let gave_up = outcomes
        .iter()
        .filter(|o| o[2].get("failed").is_some() && o[1] == 2)
        .count();
    assert!(
        gave_up >= failed.len(),
        "each API failure failed its second try"
    );
    eprintln!(
        "first run: {} units, {} retried in a later batch and answered, {} api_failure; server: {} batches, {} requests, {} expired, {} failed",
        rs.len(),
        retried,
        failed.len(),
        stats["batches"],
        stats["batch_requests"],
        stats["batch_expired"],
        stats["batch_failed"]
    );
    assert!(retried > 0);

    // The provider recovers: rerun --failed completes the run.
    drop(server);
    let _server = mock_server(port, &[]);
    let rerun = setup
        .command(&["rerun", out.to_str().unwrap(), "--failed", "--quiet"])
        .output()
        .unwrap();
    ok(&rerun, "rerun --failed");
    let after = records(&out);
    assert!(after.iter().all(|r| r.verdict != Verdict::ApiFailure));
    let units: BTreeSet<_> = after.iter().map(|r| r.unit()).collect();
    assert_eq!(units.len(), rs.len());
    let stats = get_json(port, "/stats");
    eprintln!(
        "rerun --failed: {} units redone with {} requests in {} batches; no API failure left",
        failed.len(),
        stats["batch_requests"],
        stats["batches"]
    );
}

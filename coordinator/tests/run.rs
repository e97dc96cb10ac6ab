//! `autoeval run` and the commands on a run directory, from the outside:
//! the default run, resume after kill -9, rerun of failures, the noisy
//! model's accuracy, exports. Models are the built-in reference ones, in
//! process or behind the local mock server over real HTTP.

use autoeval_e2e::{jsonl, run_ok, scratch};
use autoeval_prompts::{Family, Shots, Templates};
use autoeval_proto::{ResultRecord, Verdict};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_autoeval");

fn autoeval_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("autoeval starts");
    assert!(
        out.status.success(),
        "autoeval {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn records(dir: &Path) -> Vec<ResultRecord> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).expect("results file");
    // A run killed mid-write may leave a torn last line; it is not a record.
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str(l).expect("each complete line is a record"))
        .collect()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn mock_server(port: u16, extra: &[&str]) -> Server {
    let port_text = port.to_string();
    let mut args = vec!["mock-llm", "--port", &port_text];
    args.extend_from_slice(extra);
    let child = Command::new(BIN)
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .expect("mock server starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the mock server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server(child)
}

fn get_json(port: u16, path: &str) -> Value {
    reqwest::blocking::get(format!("http://127.0.0.1:{port}{path}"))
        .unwrap()
        .json()
        .unwrap()
}

#[test]
fn the_default_run_records_every_unit_resumes_and_reports() {
    let cwd = scratch("default-run");
    let out = autoeval_in(&cwd, &["run", "--plain"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = stdout
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .expect("the run says where the report is");
    assert!(report.starts_with("runs/"), "{report}");
    let dir = cwd.join(report).parent().unwrap().to_path_buf();
    let rs = records(&dir);
    let s = summary(&dir);
    assert_eq!(rs.len() as u64, s["units"].as_u64().unwrap());
    let lines = jsonl(&std::fs::read_to_string(dir.join("results.jsonl")).unwrap());
    for field in [
        "dataset", "model", "prompt", "round", "repeat", "verdict", "phi0", "english", "phi1",
        "metrics",
    ] {
        assert!(
            lines.iter().all(|l| l.get(field).is_some()),
            "every line has {field}"
        );
    }
    let datasets: HashSet<&str> = rs.iter().map(|r| r.dataset.as_str()).collect();
    assert_eq!(datasets.len(), 5);
    assert!(rs
        .iter()
        .all(|r| r.model == "reference" && r.verdict == Verdict::Equivalent));
    let keys: HashSet<_> = rs.iter().map(|r| (r.unit(), r.round)).collect();
    assert_eq!(keys.len(), rs.len(), "one line per unit and round");
    let html = std::fs::read_to_string(cwd.join(report)).unwrap();
    assert!(
        html.matches("<svg").count() >= 20,
        "the report has its plots"
    );
    for d in ["ksat", "plogic", "fol", "fol-english", "regex"] {
        assert!(
            html.contains(&format!("{d}: accuracy (A3)")),
            "{d} has an accuracy plot"
        );
    }
    assert!(
        !html.contains("src=") && !html.contains("<link") && !html.contains("href=\"http"),
        "the report fetches nothing"
    );

    // The same command again finds everything done and sends nothing.
    let again = autoeval_in(&cwd, &["run", "--plain"]);
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(
        err.contains(&format!("{} already done, 0 to do", rs.len())),
        "{err}"
    );
    assert_eq!(records(&dir).len(), rs.len());

    let csv = autoeval_in(&cwd, &["export", dir.to_str().unwrap(), "--format", "csv"]);
    assert!(String::from_utf8_lossy(&csv.stdout).contains(&format!("{} rows", rs.len())));
    let exported = autoeval_in(
        &cwd,
        &["export", dir.to_str().unwrap(), "--format", "reference"],
    );
    assert_eq!(
        String::from_utf8_lossy(&exported.stdout).lines().count(),
        10
    );
    let file = dir.join("export/regex/reference-zero-shot.json");
    let audit = autoeval_in(&cwd, &["reverify", file.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&audit.stdout);
    assert!(table.contains("regex"), "{table}");
    assert!(
        !table.contains("published"),
        "our own export agrees with our verifier: {table}"
    );

    // A different plan may not reuse the directory.
    let clash = Command::new(BIN)
        .args(["run", "--out", dir.to_str().unwrap(), "--per-bucket", "1"])
        .output()
        .unwrap();
    assert!(!clash.status.success());
    assert!(String::from_utf8_lossy(&clash.stderr).contains("holds a run with other settings"));
}

#[test]
fn noisy_accuracy_is_within_three_points_and_the_failures_shown_are_injected() {
    use autoeval_reference_model::noise;
    let dir = scratch("noisy-run");
    let out = dir.join("run");
    run_ok(
        Path::new(BIN),
        &[
            "run",
            "--model",
            "reference-noisy:0.2",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "5",
            "--batches",
            "3",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let rs = records(&out);
    let s = summary(&out);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for group in s["summary"]["groups"].as_array().unwrap() {
        let dataset = group["dataset"].as_str().unwrap();
        let kind: autoeval_verify::Kind = dataset.parse().unwrap();
        let regex = dataset == "regex";
        let mine: Vec<&ResultRecord> = rs.iter().filter(|r| r.dataset == dataset).collect();
        let (mut injected, mut kept) = (0, 0);
        for r in &mine {
            if let Some(inj) = noise::injection(&r.phi0, regex, 0.2) {
                injected += 1;
                kept += (noise::preserves_meaning(&r.phi0, &inj, kind) == Some(true)) as usize;
            }
        }
        let n = mine.len() as f64;
        let expected = 1.0 - (injected - kept) as f64 / n;
        let measured = group["accuracy"].as_f64().unwrap();
        eprintln!("{dataset}: report accuracy {measured:.3}, expected {expected:.3} ({injected} of {n} injected, {kept} kept the meaning)");
        assert!(
            (measured - expected).abs() <= 0.03,
            "{dataset}: {measured} vs {expected}"
        );
        for r in mine.iter().filter(|r| r.verdict != Verdict::Equivalent) {
            assert!(
                noise::injection(&r.phi0, regex, 0.2).is_some(),
                "{} failed without an injection",
                r.id
            );
        }
        let shown = autoeval_report::failing_examples(&rs, dataset, 4);
        assert!(!shown.is_empty(), "{dataset} shows failing examples");
        for r in shown {
            assert!(
                html.contains(&format!("<b>{}</b>", r.id)),
                "the report shows {}",
                r.id
            );
            assert!(
                noise::injection(&r.phi0, regex, 0.2).is_some(),
                "{} is an injected failure",
                r.id
            );
            assert!(r.counterexample.is_some(), "{} has a counterexample", r.id);
        }
    }
}

/// Digests of the two prompts of a recorded round, as the mock server counts them.
fn prompt_digests(r: &ResultRecord) -> [String; 2] {
    let t = Templates::builtin();
    let family = Family::of_dataset(&r.dataset).unwrap();
    let alphabet = ['0', '1'];
    let i = t
        .informalize(family, &r.input, Shots::ZeroShot, &alphabet)
        .unwrap();
    let a = t
        .autoformalize(
            family,
            &r.input,
            r.english.as_deref().unwrap(),
            Shots::ZeroShot,
            &alphabet,
        )
        .unwrap();
    [
        autoeval_mock_llm::prompt_digest(&i.text),
        autoeval_mock_llm::prompt_digest(&a.text),
    ]
}

/// What was recorded after a kill, and the server's prompt counts then.
type Snapshot = (
    HashSet<(autoeval_proto::UnitKey, u32)>,
    HashMap<String, u64>,
);

fn prompt_counts(port: u16) -> HashMap<String, u64> {
    serde_json::from_value(get_json(port, "/prompts")).unwrap()
}

#[test]
fn runs_killed_three_times_resume_without_translating_anything_twice() {
    let port = free_port();
    let _server = mock_server(port, &["--latency-ms", "40"]);
    let dir = scratch("killed-run");
    let out: PathBuf = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let concurrency = 8;
    let args = [
        "run",
        "--model",
        &model,
        "--dataset",
        "plogic",
        "--dataset",
        "fol",
        "--dataset",
        "regex",
        "--prompt",
        "zero-shot",
        "--per-bucket",
        "2",
        // One batch: its formulas are distinct, so each prompt belongs to one unit.
        "--batches",
        "1",
        "--concurrency",
        "8",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut snapshots: Vec<Snapshot> = Vec::new();
    let recorded_now = || {
        std::fs::read_to_string(out.join("results.jsonl"))
            .map(|t| t.matches('\n').count())
            .unwrap_or(0)
    };
    for k in 0..3usize {
        let before = recorded_now();
        let mut child = Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill once this run has recorded some rounds of its own (a few more
        // each time), however slowly the machine goes: progress, not a clock.
        let target = before + 5 + 7 * k;
        let deadline = Instant::now() + Duration::from_secs(300);
        while recorded_now() < target {
            assert!(
                child.try_wait().unwrap().is_none(),
                "run {k} ended before it was killed"
            );
            assert!(
                Instant::now() < deadline,
                "run {k} made no progress in 300 s"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let done: HashSet<_> = records(&out).iter().map(|r| (r.unit(), r.round)).collect();
        snapshots.push((done, prompt_counts(port)));
    }
    let recorded_before: Vec<usize> = snapshots.iter().map(|s| s.0.len()).collect();
    run_ok(Path::new(BIN), &args);
    let rs = records(&out);
    let units = summary(&out)["units"].as_u64().unwrap() as usize;
    let keys: HashSet<_> = rs.iter().map(|r| (r.unit(), r.round)).collect();
    eprintln!(
        "recorded after each kill: {recorded_before:?}; final {} lines for {units} units",
        rs.len()
    );
    assert!(
        recorded_before[0] > 0 && recorded_before[2] < units,
        "the kills landed mid-run: {recorded_before:?}"
    );
    assert_eq!(rs.len(), units, "exactly one line per unit");
    assert_eq!(keys.len(), units, "no unit recorded twice");
    assert!(rs.iter().all(|r| r.verdict == Verdict::Equivalent));

    let counts = prompt_counts(port);
    let by_unit: HashMap<_, _> = rs
        .iter()
        .map(|r| ((r.unit(), r.round), prompt_digests(r)))
        .collect();
    for (done, before) in &snapshots {
        for key in done {
            for d in &by_unit[key] {
                assert_eq!(
                    counts.get(d),
                    before.get(d),
                    "a recorded unit was asked again"
                );
            }
        }
    }
    let requests: u64 = counts.values().sum();
    // Each prompt belongs to one unit; a prompt sent twice was in flight at a kill.
    let resent: u64 = counts.values().map(|c| c - 1).sum();
    let stats = get_json(port, "/stats");
    eprintln!(
        "mock server: {requests} requests = {} distinct prompts for {units} units + {resent} re-sent calls that were in flight at a kill; stats {stats}",
        counts.len()
    );
    assert_eq!(stats["requests"].as_u64().unwrap(), requests);
    assert!(
        resent <= 3 * concurrency,
        "only calls in flight at a kill are sent again"
    );
    assert!(by_unit.values().flatten().all(|d| counts.contains_key(d)));
}

#[test]
fn every_unit_and_round_is_its_own_sample_and_a_rerun_pays_nothing() {
    let port = free_port();
    let _server = mock_server(port, &["--model", "reference-noisy:0.3"]);
    let dir = scratch("samples");
    let out = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let args = [
        "run",
        "--model",
        &model,
        "--dataset",
        "plogic",
        "--dataset",
        "regex",
        "--prompt",
        "zero-shot",
        "--per-bucket",
        "2",
        "--batches",
        "2",
        "--rounds",
        "3",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    run_ok(Path::new(BIN), &args);
    let rs = records(&out);
    let units = summary(&out)["units"].as_u64().unwrap() as usize;
    let reached: HashSet<_> = rs.iter().map(|r| (r.unit(), r.round)).collect();
    let requests = || get_json(port, "/stats")["requests"].as_u64().unwrap();
    let later_rounds = rs.iter().filter(|r| r.round > 1).count();
    eprintln!(
        "{units} units, {} (unit, round) pairs reached ({later_rounds} in rounds 2-3), {} requests",
        reached.len(),
        requests()
    );
    assert!(units >= 150, "{units} units");
    assert_eq!(reached.len(), rs.len(), "one record per (unit, round)");
    assert!(later_rounds > units / 2, "later rounds were reached");
    assert!(
        rs.iter().all(|r| !r.cached),
        "a first run answers nothing from the cache"
    );
    assert_eq!(
        requests(),
        2 * rs.len() as u64,
        "two requests per (unit, round)"
    );

    // The same command finds everything recorded: nothing is sent.
    run_ok(Path::new(BIN), &args);
    assert_eq!(requests(), 2 * rs.len() as u64);
    // Without the results, the reply cache answers every sample it holds.
    std::fs::remove_file(out.join("results.jsonl")).unwrap();
    run_ok(Path::new(BIN), &args);
    assert_eq!(
        requests(),
        2 * rs.len() as u64,
        "the cache pays nothing twice"
    );
    let again = records(&out);
    assert_eq!(again.len(), rs.len());
    assert!(again.iter().all(|r| r.cached && r.attempts == 0));
}

#[test]
fn rerun_failed_redoes_exactly_the_api_failures() {
    let port = free_port();
    let dir = scratch("rerun");
    let out = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    // Nothing listens yet: every round is an API failure, not non-compliance.
    let args = [
        "run",
        "--model",
        &model,
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
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    run_ok(Path::new(BIN), &args);
    let first = records(&out);
    assert!(!first.is_empty());
    assert!(
        first.iter().all(|r| r.verdict == Verdict::ApiFailure),
        "unreachable server gives api_failure"
    );
    let s = summary(&out);
    let g = &s["summary"]["groups"][0];
    assert!(
        g["accuracy"].is_null() && g["compliance"].is_null(),
        "API failures are not in the denominators"
    );

    let _server = mock_server(port, &[]);
    let rerun = run_ok(
        Path::new(BIN),
        &["rerun", out.to_str().unwrap(), "--failed", "--plain"],
    );
    assert!(String::from_utf8_lossy(&rerun.stderr)
        .contains(&format!("{} rounds ended in an API failure", first.len())));
    let second = records(&out);
    assert_eq!(second.len(), first.len());
    assert!(second.iter().all(|r| r.verdict == Verdict::Equivalent));
    assert_eq!(
        get_json(port, "/stats")["requests"].as_u64().unwrap(),
        2 * first.len() as u64
    );
    // Nothing is left to redo, and nothing is asked again.
    run_ok(
        Path::new(BIN),
        &["rerun", out.to_str().unwrap(), "--failed", "--quiet"],
    );
    assert_eq!(
        get_json(port, "/stats")["requests"].as_u64().unwrap(),
        2 * first.len() as u64
    );
}

#[test]
fn a_config_file_sets_the_run_and_flags_override_it() {
    let dir = scratch("config-run");
    let config = dir.join("run.toml");
    std::fs::write(
        &config,
        "datasets = [\"ksat\"]\nmodels = [\"reference\"]\nprompts = [\"few-shot\"]\nper-bucket = 2\nbatches = 3\nrounds = 2\n",
    )
    .unwrap();
    let out = dir.join("run");
    run_ok(
        Path::new(BIN),
        &[
            "run",
            "--config",
            config.to_str().unwrap(),
            "--batches",
            "1",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let rs = records(&out);
    assert!(rs
        .iter()
        .all(|r| r.dataset == "ksat" && r.prompt == "few-shot" && r.batch == 0));
    let units = summary(&out)["units"].as_u64().unwrap() as usize;
    assert_eq!(rs.iter().filter(|r| r.round == 1).count(), units);
    assert_eq!(
        rs.iter().filter(|r| r.round == 2).count(),
        units,
        "the reference model keeps every meaning"
    );
    let saved = std::fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(
        saved.contains("batches = 1") && saved.contains("per-bucket = 2"),
        "{saved}"
    );

    std::fs::write(&config, "per_bucket = 2\n").unwrap();
    let bad = Command::new(BIN)
        .args([
            "run",
            "--config",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("per_bucket") && err.contains("per-bucket = 5"),
        "{err}"
    );
}

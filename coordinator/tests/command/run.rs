//! `autoeval run` and the commands on a run directory, from the outside:
//! the default run, resume after kill -9, rerun of failures, the noisy
//! model's accuracy, exports. Models are the built-in reference ones, in
//! process or behind the local mock server over real HTTP.

use crate::common::{free_port, get_json, mock_server, records, BIN};
use autoeval_e2e::{jsonl, run_ok, scratch};
use autoeval_prompts::{Family, Shots, Templates};
use autoeval_proto::{ResultRecord, Verdict};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

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

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// Runs `autoeval run ARGS --quiet --out OUT`, which must succeed.
fn run_into(out: &Path, args: &[&str]) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend(["--quiet", "--out", out.to_str().unwrap()]);
    run_ok(Path::new(BIN), &all);
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
    // The default compares a perfect translator with one that errs on a tenth of the items.
    let models: HashSet<&str> = rs.iter().map(|r| r.model.as_str()).collect();
    assert_eq!(models, HashSet::from(["reference", "reference-noisy:0.1"]));
    assert!(rs
        .iter()
        .filter(|r| r.model == "reference")
        .all(|r| r.verdict == Verdict::Equivalent));
    assert!(rs
        .iter()
        .any(|r| r.model != "reference" && r.verdict != Verdict::Equivalent));
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
    // Five datasets × two models × two prompt styles.
    assert_eq!(
        String::from_utf8_lossy(&exported.stdout).lines().count(),
        20
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
    let said = String::from_utf8_lossy(&clash.stderr);
    assert!(said.contains("holds a run with other settings"), "{said}");
    // It names the setting that differs, with both values.
    assert!(said.contains("per-bucket: 1 asked, "), "{said}");
    assert!(
        !said.contains("seed:"),
        "only what differs is named: {said}"
    );
}

/// Whether φ0 and φ1 mean the same, by an oracle that shares no code with
/// the verifier: truth tables, Z3 on an SMT-LIB text, or for regexes the
/// words up to length 10 and, past that, the verifier's distinguishing word
/// checked by the oracle's own matcher (a word is a proof either way).
fn oracle_equivalent(
    dataset: &str,
    phi0: &str,
    phi1: &str,
    witness: Option<&Value>,
) -> Option<bool> {
    use autoeval_oracle as oracle;
    use autoeval_syntax::{alphabet, parse_formula_exact, parse_regex_exact, Mode};
    if dataset == "regex" {
        let sigma = alphabet(36);
        let (a, b) = (
            parse_regex_exact(phi0, Mode::Lenient, &sigma).ok()?,
            parse_regex_exact(phi1, Mode::Lenient, &sigma).ok()?,
        );
        let words = oracle::words(&['0', '1'], 10);
        if words
            .iter()
            .any(|w| oracle::matches(&a, w) != oracle::matches(&b, w))
        {
            return Some(false);
        }
        let long: Option<Vec<char>> = witness
            .and_then(|c| c["word"].as_str())
            .map(|w| w.chars().collect());
        return Some(long.is_none_or(|w| oracle::matches(&a, &w) == oracle::matches(&b, &w)));
    }
    let (a, b) = (
        parse_formula_exact(phi0, Mode::Lenient).ok()?,
        parse_formula_exact(phi1, Mode::Lenient).ok()?,
    );
    // First-order formulas can hold dozens of ground atoms: Z3 on the
    // SMT-LIB text; propositional ones have at most 12 propositions.
    if dataset.starts_with("fol") {
        oracle::z3_text_equivalent(&a, &b)
    } else {
        Some(oracle::pl_equivalent(&a, &b))
    }
}

/// φ1 of a faithful round trip of φ0: the noise-free reference model's
/// answer, to tell an injected error from a faithful translation.
fn faithful(dataset: &str, phi0: &str) -> String {
    use autoeval_reference_model::{autoformalize, informalize};
    let regex = dataset == "regex";
    autoformalize(&informalize(phi0, regex).unwrap(), regex).unwrap()
}

#[test]
fn noisy_accuracy_matches_the_injected_rate_by_an_independent_oracle() {
    const RATE: f64 = 0.2;
    let dir = scratch("noisy-run");
    let out = dir.join("run");
    run_into(
        &out,
        &[
            "--model",
            "reference-noisy:0.2",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "6",
            "--batches",
            "3",
            // A wall-clock budget generous enough for a machine whose cores are busy.
            "--timeout-ms",
            "60000",
        ],
    );
    let rs = records(&out);
    let s = summary(&out);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // A φ1 that differs from the noise-free model's carries an injected
    // error: the injected share is seen from the outside, not from the
    // injection code.
    let n = rs.len() as f64;
    let injected: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.phi1.as_deref() != Some(faithful(&r.dataset, &r.phi0).as_str()))
        .collect();
    assert!(
        rs.iter().all(|r| r.phi1.is_some()),
        "every noisy answer parses"
    );
    let share = injected.len() as f64 / n;
    let sd = (RATE * (1.0 - RATE) / n).sqrt();
    eprintln!(
        "{} of {n} rounds injected ({share:.4}; nominal {RATE}, sd {sd:.4})",
        injected.len()
    );
    assert!(
        (share - RATE).abs() <= 3.5 * sd,
        "injected share {share} vs {RATE}"
    );

    // Among injected rounds, those whose meaning changed (by the oracle) are
    // the only ones that may fail.
    let mut changed = 0usize;
    for r in &injected {
        let same = oracle_equivalent(
            &r.dataset,
            &r.phi0,
            r.phi1.as_deref().unwrap(),
            r.counterexample.as_ref(),
        )
        .unwrap_or_else(|| panic!("the oracle decides {}", r.id));
        changed += !same as usize;
        let expected = if same {
            Verdict::Equivalent
        } else {
            Verdict::NotEquivalent
        };
        // A check the prover could not finish (out of time, or gave up on a
        // hard ∃∀ pair) is undecided, never a wrong verdict.
        if !matches!(r.verdict, Verdict::Timeout | Verdict::Unknown) {
            assert_eq!(r.verdict, expected, "{}: {} vs {:?}", r.id, r.phi0, r.phi1);
        }
    }
    assert!(rs
        .iter()
        .filter(|r| !injected.iter().any(|i| std::ptr::eq(*i, *r)))
        .all(|r| r.verdict == Verdict::Equivalent));
    // Accuracy expected from the nominal rate: 1 − rate × P(an injection changes the meaning).
    let p_change = changed as f64 / injected.len() as f64;
    let expected = 1.0 - RATE * p_change;
    let measured: f64 = {
        let groups = s["summary"]["groups"].as_array().unwrap();
        let eq: f64 = groups
            .iter()
            .map(|g| {
                g["counts"]["verdicts"]["equivalent"]
                    .as_f64()
                    .unwrap_or(0.0)
            })
            .sum();
        eq / n
    };
    let sd_acc = (expected * (1.0 - expected) / n).sqrt();
    eprintln!("accuracy {measured:.4}, expected {expected:.4} from the nominal rate (sd {sd_acc:.4}); {changed} of {} injections changed the meaning", injected.len());
    assert!(
        (measured - expected).abs() <= 3.5 * sd_acc,
        "{measured} vs {expected}"
    );
    for group in s["summary"]["groups"].as_array().unwrap() {
        let dataset = group["dataset"].as_str().unwrap();
        let mine = rs.iter().filter(|r| r.dataset == dataset).count() as f64;
        let failed = injected
            .iter()
            .filter(|r| r.dataset == dataset && r.verdict != Verdict::Equivalent)
            .count() as f64;
        let acc = group["accuracy"].as_f64().unwrap();
        assert!(
            (acc - (1.0 - failed / mine)).abs() < 1e-9,
            "{dataset}: {acc}"
        );
        let all: Vec<&ResultRecord> = rs.iter().collect();
        let shown = autoeval_report::failing_examples(&all, dataset, 4);
        assert!(!shown.is_empty(), "{dataset} shows failing examples");
        for r in shown {
            assert!(
                html.contains(&format!("<b>{}</b>", r.id)),
                "the report shows {}",
                r.id
            );
            assert!(
                injected.iter().any(|i| i.id == r.id),
                "{} is an injected failure",
                r.id
            );
            assert!(r.counterexample.is_some(), "{} has a counterexample", r.id);
        }
    }
}

#[test]
fn recorded_attempts_are_the_requests_a_failing_server_saw_and_the_exit_status_says_so() {
    let port = free_port();
    let server = mock_server(port, &["--error-rate", "1"]);
    let out = scratch("failing-server").join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let done = Command::new(BIN)
        .args([
            "run",
            "--model",
            &model,
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "1",
            "--batches",
            "1",
            "--max-attempts",
            "3",
            "--concurrency",
            "2",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    // Errors alternate between 500 and dropped connections, so the run may
    // stop early (1) or finish with every round failed (3); never 0.
    match done.status.code() {
        Some(1) => assert!(stderr.contains("failed the same way"), "{stderr}"),
        Some(3) => assert!(
            stderr.contains(&format!("autoeval rerun {} --failed", out.display())),
            "{stderr}"
        ),
        other => panic!("exit status {other:?}: {stderr}"),
    }
    let rs = records(&out);
    assert!(!rs.is_empty() && rs.iter().all(|r| r.verdict == Verdict::ApiFailure));
    let attempts: u64 = rs.iter().map(|r| u64::from(r.attempts)).sum();
    let requests = get_json(port, "/stats")["requests"].as_u64().unwrap();
    if done.status.code() == Some(3) {
        assert_eq!(
            attempts, requests,
            "the records' attempts are the requests the server received"
        );
    } else {
        // The calls a halt stopped leave their units pending, unrecorded:
        // at most the two in flight, with their three attempts each.
        assert!(
            attempts <= requests && requests - attempts <= 2 * 3,
            "recorded {attempts} attempts of {requests} requests"
        );
    }
    drop(server);
}

#[test]
fn a_judge_with_a_known_error_rate_scores_as_computed_by_hand() {
    const FLIP: f64 = 0.2;
    let dir = scratch("noisy-judge");
    let out = dir.join("run");
    run_into(
        &out,
        &[
            "--model",
            "reference-noisy:0.4",
            "--prompt",
            "zero-shot",
            "--dataset",
            "plogic",
            "--dataset",
            "regex",
            "--dataset",
            "ksat",
            "--per-bucket",
            "12",
            "--batches",
            "2",
        ],
    );
    let rs = records(&out);
    let n_eq = rs
        .iter()
        .filter(|r| r.verdict == Verdict::Equivalent)
        .count() as f64;
    let n_ne = rs
        .iter()
        .filter(|r| r.verdict == Verdict::NotEquivalent)
        .count() as f64;
    let n_nc = rs
        .iter()
        .filter(|r| r.verdict == Verdict::NonCompliant)
        .count();
    let judge = format!("reference-judge-noisy:{FLIP}");
    let args = [
        "judge",
        out.to_str().unwrap(),
        "--judge",
        &judge,
        "--prompt",
        "yesno",
    ];
    let first = run_ok(Path::new(BIN), &args);
    let table = String::from_utf8_lossy(&first.stdout).to_string();
    // TP FP TN FN summed over the datasets' "all" lines, and F1 as printed.
    let (mut tp, mut fp, mut tn, mut fn_) = (0.0, 0.0, 0.0, 0.0);
    for line in table
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("all"))
    {
        // dataset complexity pos neg inc TP FP TN FN IP IN inc-yes cover prec recall TNR F1 F1-strict
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        let (t_p, f_p, f_n) = (num(5), num(6), num(8));
        tp += t_p;
        fp += f_p;
        tn += num(7);
        fn_ += f_n;
        // F1 as printed agrees with its own counts, worked out by hand.
        let printed_f1: f64 = f[16].trim_end_matches('%').parse().unwrap();
        let f1 = 100.0 * 2.0 * t_p / (2.0 * t_p + f_p + f_n);
        assert!((printed_f1 - f1).abs() <= 0.05 + 1e-9, "{line}");
    }
    assert_eq!(tp + fn_, n_eq, "every equivalent pair was judged once");
    assert_eq!(fp + tn, n_ne, "every inequivalent pair was judged once");
    // By hand, from the nominal rate: a flipped answer is a false negative on
    // an equivalent pair and a false positive on an inequivalent one.
    let n = n_eq + n_ne;
    let sd = (FLIP * (1.0 - FLIP) / n).sqrt();
    let flipped = (fp + fn_) / n;
    let (e_tp, e_fp, e_fn) = (n_eq * (1.0 - FLIP), n_ne * FLIP, n_eq * FLIP);
    let e_f1 = 2.0 * e_tp / (2.0 * e_tp + e_fp + e_fn);
    let f1 = 2.0 * tp / (2.0 * tp + fp + fn_);
    eprintln!("{n} pairs ({n_eq} equivalent): TP {tp} FP {fp} TN {tn} FN {fn_}; flipped {flipped:.4} (nominal {FLIP}, sd {sd:.4}); F1 {f1:.4}, by hand {e_f1:.4}");
    assert!(n >= 1500.0, "{n} pairs");
    assert!((flipped - FLIP).abs() <= 3.5 * sd, "flipped {flipped}");
    // F1 moves by about 0.8 × the rate's error here; allow 3.5 sd of that.
    assert!((f1 - e_f1).abs() <= 3.5 * 0.8 * sd, "F1 {f1} vs {e_f1}");

    // Asked again, the judge finds every pair answered and keeps its file.
    let file = out.join(format!("judge-reference-judge-noisy-{FLIP}-yesno.jsonl"));
    let before = std::fs::read_to_string(&file).unwrap();
    let again = run_ok(Path::new(BIN), &args);
    assert!(String::from_utf8_lossy(&again.stderr).contains(&format!(
        "{} pairs already judged, 0 to ask",
        n as usize + n_nc
    )));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "nothing rewritten"
    );
    // A line torn by a killed judge run is not a judgement, and what comes
    // after it is not swallowed.
    std::fs::write(&file, format!("{before}{{\"id\":\"torn")).unwrap();
    let torn = run_ok(Path::new(BIN), &args);
    assert!(String::from_utf8_lossy(&torn.stderr).contains(&format!(
        "{} pairs already judged, 0 to ask",
        n as usize + n_nc
    )));
    assert!(std::fs::read_to_string(&file).unwrap().starts_with(&before));
}

#[test]
fn a4_judges_the_first_models_round_one_answers_with_fig_20s_columns_and_coverage() {
    let dir = scratch("a4-pairs");
    let out = dir.join("run");
    run_into(
        &out,
        &[
            "--model",
            "reference-chatty:0.3",
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
            "fol",
            "--per-bucket",
            "3",
            "--batches",
            "1",
        ],
    );
    let rs = records(&out);
    assert!(rs.iter().any(|r| r.round == 2), "the run has second rounds");
    let judged = run_ok(
        Path::new(BIN),
        &[
            "judge",
            out.to_str().unwrap(),
            "--judge",
            "reference-judge-noisy:0.25",
        ],
    );
    let said = String::from_utf8_lossy(&judged.stderr).to_string();
    // The pairs, counted here: the first model's zero-shot round-1 answers,
    // decided or non-compliant.
    let source: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.model == "reference-chatty:0.3" && r.prompt == "zero-shot" && r.round == 1)
        .collect();
    let count = |v: Verdict| source.iter().filter(|r| r.verdict == v).count();
    let (pos, neg, inc) = (
        count(Verdict::Equivalent),
        count(Verdict::NotEquivalent),
        count(Verdict::NonCompliant),
    );
    assert!(pos > 0 && neg + inc > 0, "{pos} {neg} {inc}");
    assert!(
        said.contains(&format!(
            "the answers of reference-chatty:0.3 (zero-shot, round 1), every complexity, asked with the paper prompt set: {} pairs, {pos} equivalent, {neg} not, {inc} non-compliant",
            pos + neg + inc
        )),
        "{said}"
    );
    let file = out.join("judge-reference-judge-noisy-0.25-cot.jsonl");
    let judgements: Vec<autoeval_proto::JudgeRecord> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(judgements.len(), pos + neg + inc);
    for j in &judgements {
        let t = &j.task;
        assert_eq!(
            (t.model.as_str(), t.prompt.as_str(), t.round),
            ("reference-chatty:0.3", "zero-shot", 1)
        );
        let r = source.iter().find(|r| r.id == t.id).unwrap();
        // The judge saw the model's answer as written, not its canonical form.
        assert_eq!(Some(&t.phi1), r.raw_answer.as_ref());
        assert_eq!(t.non_compliant, r.verdict == Verdict::NonCompliant);
    }
    // Fig. 20's columns and coverage, from the judgements, by hand.
    let table = String::from_utf8_lossy(&judged.stdout).to_string();
    let (p, n, i) = fig_20_classes(&table);
    for line in all_lines(&table) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let of_dataset = judgements.iter().filter(|j| j.task.dataset == f[0]);
        let asked = of_dataset.clone().count();
        let answered = of_dataset
            .filter(|j| matches!(j.judgement.as_deref(), Some("yes" | "no")))
            .count();
        let coverage = 100.0 * answered as f64 / asked as f64;
        let printed: f64 = f[12].trim_end_matches('%').parse().unwrap();
        assert!(
            (printed - coverage).abs() <= 0.05 + 1e-9,
            "{line}: by hand {coverage}"
        );
    }
    assert_eq!((p, n, i), (pos, neg, inc), "{table}");
    eprintln!("{table}");
    // Another source's answers, judged into the same file, are scored apart.
    let second = run_ok(
        Path::new(BIN),
        &[
            "judge",
            out.to_str().unwrap(),
            "--judge",
            "reference-judge-noisy:0.25",
            "--source-model",
            "reference-noisy:0.3",
            "--source-round",
            "2",
        ],
    );
    let round2: Vec<&ResultRecord> = rs
        .iter()
        .filter(|r| r.model == "reference-noisy:0.3" && r.prompt == "zero-shot" && r.round == 2)
        .collect();
    let labelled = |v: Verdict| round2.iter().filter(|r| r.verdict == v).count();
    let table = String::from_utf8_lossy(&second.stdout).to_string();
    let (p, n, i) = fig_20_classes(&table);
    assert_eq!(
        (p, n, i),
        (
            labelled(Verdict::Equivalent),
            labelled(Verdict::NotEquivalent),
            labelled(Verdict::NonCompliant)
        ),
        "{table}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for source in [
        "reference-chatty:0.3 · zero-shot · round 1",
        "reference-noisy:0.3 · zero-shot · round 2",
    ] {
        assert!(html.contains(source), "the report names the pairs {source}");
    }
    assert!(html.contains("incompliant"));
}

#[test]
fn a_reply_cut_at_the_token_cap_is_non_compliant_as_truncated_and_counted_apart() {
    const RATE: f64 = 0.3;
    let port = free_port();
    let _server = mock_server(port, &["--truncate-rate", &RATE.to_string()]);
    let dir = scratch("truncated");
    let out = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    run_into(
        &out,
        &[
            "--model",
            &model,
            "--prompt",
            "zero-shot",
            "--dataset",
            "plogic",
            "--dataset",
            "regex",
            "--per-bucket",
            "2",
            "--batches",
            "1",
        ],
    );
    let rs = records(&out);
    let t = Templates::builtin();
    let (mut cut, mut whole) = (0, 0);
    for r in &rs {
        // Which call the server cut, worked out from its rule here.
        let family = Family::of_dataset(&r.dataset).unwrap();
        let i = t
            .informalize(family, &r.phi0, Shots::ZeroShot, &['0', '1'])
            .unwrap();
        let i_cut = autoeval_mock_llm::prompt_share(&i.text) < RATE;
        if i_cut {
            assert_eq!(r.finish_reasons, ["truncated"], "{r:?}");
        } else {
            let a = t
                .autoformalize(
                    family,
                    &r.phi0,
                    r.english.as_deref().unwrap(),
                    Shots::ZeroShot,
                    &['0', '1'],
                )
                .unwrap();
            let a_cut = autoeval_mock_llm::prompt_share(&a.text) < RATE;
            let second = if a_cut { "truncated" } else { "complete" };
            assert_eq!(r.finish_reasons, ["complete", second], "{r:?}");
            if !a_cut {
                whole += 1;
                assert_eq!(r.verdict, Verdict::Equivalent, "{r:?}");
                continue;
            }
        }
        cut += 1;
        assert_eq!(r.verdict, Verdict::NonCompliant, "{r:?}");
        assert_eq!(r.reason.as_deref(), Some("truncated"));
        assert_eq!(r.lenient_verdict(), Verdict::NonCompliant, "both readings");
    }
    assert!(cut > 0 && whole > 0, "{cut} cut, {whole} whole");
    // The summary counts them apart.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let counted: u64 = summary["summary"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["truncated"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, cut as u64);
}

#[test]
fn a_reasoning_model_that_thinks_to_its_cap_is_counted_truncated_its_thinking_priced_and_the_run_ends_with_advice(
) {
    // The mock thinks until the cap on this share of prompts (by its hash).
    const RATE: f64 = 0.33;
    const CAP: u64 = 256;
    const THOUGHT_PER_WORD: u64 = 3;
    const OUTPUT_PRICE: f64 = 4.4;
    let port = free_port();
    let _server = mock_server(port, &["--thinking-rate", &RATE.to_string()]);
    let dir = scratch("thinking");
    let out = dir.join("run");
    let prices = dir.join("prices.json");
    std::fs::write(
        &prices,
        format!(r#"{{"o4-mini": {{"input": 1.1, "output": {OUTPUT_PRICE}}}}}"#),
    )
    .unwrap();
    let secrets = dir.join("secrets.json");
    std::fs::write(&secrets, r#"{"OPENAI_API_KEY": "sk-test"}"#).unwrap();
    let model = format!(
        "openai-responses:o4-mini@http://127.0.0.1:{port}/v1?reasoning-effort=high&max-tokens={CAP}"
    );
    let done = autoeval_in(
        &dir,
        &[
            "run",
            "--model",
            &model,
            "--prompt",
            "zero-shot",
            "--dataset",
            "plogic",
            "--per-bucket",
            "2",
            "--batches",
            "1",
            "--prices",
            prices.to_str().unwrap(),
            "--secrets",
            secrets.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let rs = records(&out);
    let t = Templates::builtin();
    let thinks_to_cap =
        |prompt: &str| autoeval_mock_llm::prompt_share(&format!("think:{prompt}")) < RATE;
    let words = |text: &str| text.split_whitespace().count() as u64;
    let (mut cut, mut thought) = (0, 0u64);
    for r in &rs {
        // Which call thought until the cap, and what each thought, worked out from the mock's rule here.
        let family = Family::of_dataset(&r.dataset).unwrap();
        let i = t
            .informalize(family, &r.phi0, Shots::ZeroShot, &['0', '1'])
            .unwrap();
        let expected = if thinks_to_cap(&i.text) {
            assert_eq!(r.finish_reasons, ["truncated"], "{r:?}");
            CAP
        } else {
            let english = r.english.as_deref().unwrap();
            let a = t
                .autoformalize(family, &r.phi0, english, Shots::ZeroShot, &['0', '1'])
                .unwrap();
            let first = THOUGHT_PER_WORD * words(english).max(1);
            if thinks_to_cap(&a.text) {
                assert_eq!(r.finish_reasons, ["complete", "truncated"], "{r:?}");
                first + CAP
            } else {
                assert_eq!(r.finish_reasons, ["complete", "complete"], "{r:?}");
                first + THOUGHT_PER_WORD * words(r.raw_answer.as_deref().unwrap()).max(1)
            }
        };
        if r.finish_reasons.last().map(String::as_str) == Some("truncated") {
            cut += 1;
            assert_eq!(r.reason.as_deref(), Some("truncated"), "{r:?}");
        }
        assert_eq!(r.usage.reasoning_tokens, expected, "{r:?}");
        let cost = r.reasoning_cost.unwrap();
        assert!(
            (cost - expected as f64 * OUTPUT_PRICE / 1e6).abs() < 1e-12,
            "{r:?}"
        );
        thought += expected;
    }
    assert!(cut > 0 && cut < rs.len(), "{cut} of {} cut", rs.len());
    let summary = summary(&out);
    let group = &summary["summary"]["groups"][0];
    assert_eq!(group["truncated"].as_u64().unwrap(), cut as u64);
    assert_eq!(group["reasoning_tokens"].as_u64().unwrap(), thought);
    let share = format!("{:.1}%", 100.0 * cut as f64 / rs.len() as f64);
    let stdout = String::from_utf8_lossy(&done.stdout);
    let row = stdout.lines().find(|l| l.starts_with("plogic")).unwrap();
    assert!(row.contains(&share), "the cut share beside A2: {row}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("of them thinking") && html.contains(&thought.to_string()));
    let said = String::from_utf8_lossy(&done.stderr);
    let last = said.lines().last().unwrap();
    assert!(
        last.contains(&model) && last.contains(&share) && last.contains("max-tokens"),
        "the run ends with advice naming the model, the share and the setting: {last}"
    );
    eprintln!(
        "{cut} of {} rounds cut; {thought} thinking tokens; last line: {last}",
        rs.len()
    );
}

/// The judge table's per-dataset total lines.
fn all_lines(table: &str) -> impl Iterator<Item = &str> {
    table
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("all"))
}

/// Fig. 20's classes (positive, negative, incompliant) summed over the
/// judge table's total lines, as printed.
fn fig_20_classes(table: &str) -> (usize, usize, usize) {
    let mut sums = (0, 0, 0);
    for line in all_lines(table) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let cell = |k: usize| f[k].parse::<usize>().unwrap();
        sums = (sums.0 + cell(2), sums.1 + cell(3), sums.2 + cell(4));
    }
    sums
}

/// Digests of the two prompts of a recorded round, as the mock server counts them.
fn prompt_digests(r: &ResultRecord) -> [String; 2] {
    let t = Templates::builtin();
    let family = Family::of_dataset(&r.dataset).unwrap();
    let alphabet = ['0', '1'];
    let i = t
        .informalize(family, r.input(), Shots::ZeroShot, &alphabet)
        .unwrap();
    let a = t
        .autoformalize(
            family,
            r.input(),
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
fn a_run_against_a_closed_port_stops_at_once_and_rerun_redoes_what_failed() {
    let port = free_port();
    let dir = scratch("rerun");
    let out = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    // Nothing listens: the run stops after a few identical failures with
    // one line that names the cause and the fix.
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
    let started = Instant::now();
    let stopped = Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.starts_with("error: stopped after 8 attempts")
            && stderr.contains(&format!("connection refused to 127.0.0.1:{port}"))
            && stderr.contains("start the server")
            && stderr.contains(&format!("autoeval rerun {} --failed", out.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("backtrace") && !stderr.contains("panicked"));
    eprintln!("stopped in {:?}", started.elapsed());
    // Nothing was ever sent: no round is a failure, every unit is pending.
    assert!(
        records(&out).is_empty(),
        "a closed port records no API failure"
    );

    let _server = mock_server(port, &[]);
    let rerun = run_ok(
        Path::new(BIN),
        &["rerun", out.to_str().unwrap(), "--failed", "--plain"],
    );
    assert!(String::from_utf8_lossy(&rerun.stderr).contains("running the units never sent"));
    // The units never sent are done now, each once.
    let first = records(&out);
    assert!(!first.is_empty());
    let units: HashSet<_> = first.iter().map(|r| r.unit()).collect();
    assert_eq!(units.len(), first.len());
    assert!(first.iter().all(|r| r.verdict == Verdict::Equivalent));
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
        "dataset = [\"ksat\"]\nmodel = [\"reference\"]\nprompt = [\"few-shot\"]\nper-bucket = 2\nbatches = 3\nrounds = 2\n",
    )
    .unwrap();
    let out = dir.join("run");
    run_into(
        &out,
        &["--config", config.to_str().unwrap(), "--batches", "1"],
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

#[test]
fn items_from_a_file_the_prompt_set_and_the_papers_protocol() {
    let dir = scratch("items-run");
    let items = dir.join("items.jsonl");
    run_ok(
        Path::new(BIN),
        &[
            "generate",
            "--dataset",
            "plogic",
            "--per-bucket",
            "1",
            "--batches",
            "1",
            "--seed",
            "5",
            "--quiet",
            "--out",
            items.to_str().unwrap(),
        ],
    );
    let n_items = std::fs::read_to_string(&items).unwrap().lines().count();
    let out = dir.join("run");
    run_into(
        &out,
        &[
            "--items",
            items.to_str().unwrap(),
            "--model",
            "reference",
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--prompt-set",
            "extended",
        ],
    );
    let rs = records(&out);
    assert_eq!(rs.len(), n_items, "one unit per item of the file");
    assert!(rs
        .iter()
        .all(|r| r.id.starts_with("plogic-5-0-") && r.prompt_set.starts_with("extended@")));
    assert!(rs.iter().all(|r| r.lenient_verdict() == r.verdict));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("Prompt set: <b>extended@"),
        "the report header names the prompt set"
    );

    // The paper's protocol sets the defaults: zero-shot, the paper's prompts.
    let paper = dir.join("paper");
    run_into(
        &paper,
        &[
            "--protocol",
            "paper",
            "--dataset",
            "ksat",
            "--per-bucket",
            "1",
            "--batches",
            "1",
        ],
    );
    let saved = std::fs::read_to_string(paper.join("config.toml")).unwrap();
    for line in [
        "prompt = [\"zero-shot\"]",
        "prompt-set = \"paper\"",
        "protocol = \"paper\"",
        "rounds = 1",
        "repeats = 1",
    ] {
        assert!(saved.contains(line), "{line} not in {saved}");
    }
    assert!(records(&paper)
        .iter()
        .all(|r| r.prompt_set.starts_with("paper@") && r.prompt == "zero-shot"));
}

#[test]
fn strict_and_lenient_reading_of_dressed_answers() {
    const RATE: f64 = 0.3;
    let dir = scratch("chatty-run");
    let out = dir.join("run");
    run_into(
        &out,
        &[
            "--model",
            "reference-chatty:0.3",
            "--prompt",
            "zero-shot",
            "--dataset",
            "plogic",
            "--dataset",
            "fol",
            "--dataset",
            "regex",
            "--per-bucket",
            "4",
            "--batches",
            "2",
        ],
    );
    let rs = records(&out);
    let n = rs.len() as f64;
    let (mut plain, mut dressed, mut equations) = (0.0, 0.0, 0.0);
    for r in &rs {
        let raw = r.raw_answer.as_deref().unwrap();
        let lenient = r.lenient_reading();
        // Classified here from the answer's text alone.
        if raw.contains(" = ") {
            equations += 1.0;
            assert_eq!(r.verdict, Verdict::NonCompliant, "{raw}");
            assert_eq!(lenient.verdict, Verdict::NonCompliant, "{raw}");
            assert!(
                lenient
                    .reason
                    .as_deref()
                    .unwrap()
                    .contains("ambiguous answer"),
                "{raw}"
            );
        } else if raw.starts_with("The formula")
            || raw.starts_with("Regex:")
            || raw.contains(['&', '|', '~'])
        {
            dressed += 1.0;
            assert_eq!(r.verdict, Verdict::NonCompliant, "strict refuses {raw}");
            assert_eq!(lenient.verdict, Verdict::Equivalent, "lenient reads {raw}");
        } else {
            plain += 1.0;
            assert_eq!(
                (r.verdict, lenient.verdict),
                (Verdict::Equivalent, Verdict::Equivalent),
                "{raw}"
            );
        }
    }
    let s = summary(&out);
    let groups = s["summary"]["groups"].as_array().unwrap();
    let total = |key: &str| -> f64 {
        groups
            .iter()
            .map(|g| {
                g[key].as_f64().unwrap()
                    * g["counts"]["verdicts"]
                        .as_object()
                        .unwrap()
                        .values()
                        .map(|v| v.as_f64().unwrap())
                        .sum::<f64>()
            })
            .sum::<f64>()
            / n
    };
    let (strict_a2, lenient_a2) = (total("compliance"), total("lenient_compliance"));
    eprintln!(
        "{n} rounds: {plain} plain, {dressed} dressed (prose, ASCII, code), {equations} equations; \
         A2 strict {strict_a2:.3}, lenient {lenient_a2:.3}; A3 strict {:.3}, lenient {:.3}",
        total("accuracy"),
        total("lenient_accuracy")
    );
    assert!((strict_a2 - plain / n).abs() < 1e-9);
    assert!((lenient_a2 - (plain + dressed) / n).abs() < 1e-9);
    let sd = (RATE * (1.0 - RATE) / n).sqrt();
    assert!(
        ((dressed + equations) / n - RATE).abs() <= 3.5 * sd,
        "dressed share"
    );
}

/// A recorded provider error, as the model client's fixtures hold it.
fn provider_error(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/llm-client/tests/fixtures/provider-errors")
        .join(name)
}

/// `autoeval run` of `units_args` against the mock at `port`, into `out`.
fn run_against(port: u16, out: &Path, extra: &[&str]) -> Output {
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let mut args = vec![
        "run",
        "--model",
        &model,
        "--dataset",
        "plogic",
        "--prompt",
        "zero-shot",
        "--per-bucket",
        "25",
        "--batches",
        "2",
        "--concurrency",
        "16",
        "--plain",
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap()]);
    Command::new(BIN).args(&args).output().unwrap()
}

#[test]
fn a_spent_quota_or_an_absurd_retry_after_stops_a_run_of_a_thousand_units_in_seconds() {
    let dir = scratch("refusals");
    let mut endless: Value = serde_json::from_str(
        &std::fs::read_to_string(provider_error("openai/rate-limit-requests.json")).unwrap(),
    )
    .unwrap();
    endless["headers"]["retry-after"] = Value::String("1e20".into());
    let endless_file = dir.join("retry-after-1e20.json");
    std::fs::write(&endless_file, endless.to_string()).unwrap();
    let quota_file = provider_error("openai/insufficient-quota.json");
    for (what, fixture, words) in [
        ("quota", quota_file.as_path(), "quota exhausted"),
        (
            "Retry-After 1e20",
            endless_file.as_path(),
            "Retry-After asks for",
        ),
    ] {
        let port = free_port();
        let out = dir.join(what.replace(' ', "-"));
        let server = mock_server(port, &["--refuse-with", fixture.to_str().unwrap()]);
        let started = Instant::now();
        let stopped = run_against(port, &out, &["--max-attempts", "6"]);
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&stopped.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        let requests = get_json(port, "/stats")["requests"].as_u64().unwrap();
        let first_line = stderr.lines().next().unwrap_or_default();
        eprintln!("{what}: {first_line}\n  stopped after {requests} requests in {:.1} s, exit {:?}: {last}", took.as_secs_f64(), stopped.status.code());
        let units: usize = first_line
            .split(" units")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the run says its units: {first_line}"));
        assert!(units >= 1000, "{units} units");
        assert_eq!(stopped.status.code(), Some(1), "{stderr}");
        assert!(
            last.starts_with("error: stopped at once") && last.contains(words),
            "{last}"
        );
        assert!(
            last.contains(&format!("autoeval rerun {} --failed", out.display())),
            "{last}"
        );
        assert!(took < Duration::from_secs(30), "{took:?}");
        assert!(requests <= 16 + 6, "{requests} requests");
        assert!(
            records(&out).is_empty(),
            "{what}: every unit is pending, none failed"
        );
        drop(server);
        // Once the server answers, the run is completed, each unit paid once.
        let _server = mock_server(port, &[]);
        run_ok(
            Path::new(BIN),
            &["rerun", out.to_str().unwrap(), "--failed", "--quiet"],
        );
        let done = records(&out);
        let fresh = get_json(port, "/stats")["requests"].as_u64().unwrap();
        eprintln!(
            "  rerun --failed: {} rounds recorded, {fresh} requests",
            done.len()
        );
        assert_eq!(
            done.iter().map(|r| r.unit()).collect::<HashSet<_>>().len(),
            units
        );
        assert_eq!(fresh, 2 * done.len() as u64);
    }
}

#[test]
fn a_run_on_this_machine_pauses_at_its_cost_cap_and_resumes_paying_each_unit_once() {
    let dir = scratch("budget-one-machine");
    let port = free_port();
    let _server = mock_server(port, &[]);
    let prices = dir.join("prices.json");
    // A dollar per thousand tokens: the mock counts words as tokens.
    std::fs::write(
        &prices,
        r#"{"reference": {"input": 1000.0, "output": 1000.0}}"#,
    )
    .unwrap();
    let out = dir.join("run");
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let args = |cap: &str| -> Vec<String> {
        [
            "--model",
            &model,
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "4",
            "--batches",
            "1",
            "--concurrency",
            "4",
            "--prices",
            prices.to_str().unwrap(),
            "--budget-usd",
            cap,
            "--plain",
            "--out",
            out.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let mut first = vec!["run".to_string()];
    first.extend(args("1.0"));
    let paused = Command::new(BIN).args(&first).output().unwrap();
    let stderr = String::from_utf8_lossy(&paused.stderr);
    let at_pause = get_json(port, "/stats")["requests"].as_u64().unwrap();
    let kept = records(&out);
    let spent: f64 = kept.iter().filter_map(|r| r.cost).sum();
    eprintln!(
        "paused: exit {:?}, {} rounds recorded costing ${spent:.4}, {at_pause} requests: {}",
        paused.status.code(),
        kept.len(),
        stderr.lines().last().unwrap_or_default()
    );
    assert_eq!(paused.status.code(), Some(75), "{stderr}");
    assert!(
        stderr.contains("the cost cap of $1.0000 is reached"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("autoeval resume {} --budget-usd", out.display())),
        "{stderr}"
    );
    assert!(spent >= 1.0, "the cap was spent: ${spent}");
    assert_eq!(
        at_pause,
        2 * kept.len() as u64,
        "every call made is recorded"
    );
    // Charged from the records, the run does not start again at the same cap.
    let again = Command::new(BIN).args(&first).output().unwrap();
    assert_eq!(again.status.code(), Some(75));
    assert_eq!(
        get_json(port, "/stats")["requests"].as_u64().unwrap(),
        at_pause
    );
    let resumed = run_ok(
        Path::new(BIN),
        &[
            "resume",
            out.to_str().unwrap(),
            "--budget-usd",
            "1000000",
            "--quiet",
        ],
    );
    assert!(resumed.status.success());
    let all = records(&out);
    let total = get_json(port, "/stats")["requests"].as_u64().unwrap();
    eprintln!("resumed: {} rounds, {total} requests in all", all.len());
    assert!(all.len() > kept.len());
    assert_eq!(
        all.iter().map(|r| r.unit()).collect::<HashSet<_>>().len(),
        all.len()
    );
    assert_eq!(
        total,
        2 * all.len() as u64,
        "exactly two requests per unit in all"
    );
}

/// `autoeval run ARGS` against the mock at `port` with the model it serves.
fn run_on_mock(port: u16, out: &Path, args: &[&str]) -> Output {
    let model = format!("openai-compatible:reference@http://127.0.0.1:{port}/v1");
    let mut all = vec!["run", "--model", &model, "--plain"];
    all.extend_from_slice(args);
    all.extend(["--out", out.to_str().unwrap()]);
    Command::new(BIN).args(&all).output().unwrap()
}

#[test]
fn a4_under_the_reference_protocol_asks_the_public_prompt_in_fig_20s_range_and_leaves_a_cut_reply_unanswered(
) {
    let dir = scratch("a4-reference");
    let out = dir.join("run");
    let run_port = free_port();
    let _run_server = mock_server(run_port, &[]);
    let ran = run_on_mock(
        run_port,
        &out,
        &[
            "--protocol",
            "reference",
            "--dataset",
            "plogic",
            "--dataset",
            "regex",
            "--per-bucket",
            "1",
            "--batches",
            "1",
            "--quiet",
        ],
    );
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let rs = records(&out);
    let labelled = |r: &&ResultRecord| {
        matches!(
            r.verdict,
            Verdict::Equivalent | Verdict::NotEquivalent | Verdict::NonCompliant
        )
    };
    let within: Vec<&ResultRecord> = rs
        .iter()
        .filter(labelled)
        .filter(|r| r.complexity <= 20)
        .collect();
    let beyond = rs
        .iter()
        .filter(labelled)
        .filter(|r| r.complexity > 20)
        .count();
    assert!(
        !within.is_empty() && beyond > 0,
        "{} within, {beyond} beyond",
        within.len()
    );
    // The judge is another server, whose replies are cut for 30% of prompts
    // while it explains, after its verdict.
    let judge_port = free_port();
    let _judge_server = mock_server(judge_port, &["--truncate-rate", "0.3"]);
    let judge = format!("openai-compatible:reference@http://127.0.0.1:{judge_port}/v1");
    let judged = run_ok(
        Path::new(BIN),
        &["judge", out.to_str().unwrap(), "--judge", &judge],
    );
    let said = String::from_utf8_lossy(&judged.stderr);
    assert!(
        said.contains("complexity up to 20 (Fig. 20's range; --all-complexities for every pair), asked with the reference prompt set"),
        "{said}"
    );
    let file = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("judge-")
        })
        .unwrap();
    let read = |f: &Path| -> Vec<autoeval_proto::JudgeRecord> {
        std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let judgements = read(&file);
    assert_eq!(
        judgements.len(),
        within.len(),
        "the pairs of Fig. 20's range"
    );
    assert!(judgements.iter().all(|j| j.task.complexity <= 20));
    // Every question is the public implementation's judge prompt.
    let asked = prompt_counts(judge_port);
    let reference = Templates::of_set(autoeval_prompts::PromptSet::Reference);
    for j in &judgements {
        let family = Family::of_dataset(&j.task.dataset).unwrap();
        let q = reference.judge(
            family,
            &j.task.phi0,
            &j.task.phi1,
            autoeval_prompts::JudgeStyle::Cot,
        );
        assert!(q.text.starts_with("Your task is to say whether two "));
        assert!(
            asked.contains_key(&autoeval_mock_llm::prompt_digest(&q.text)),
            "{} was not asked as {:?}",
            j.task.id,
            q.text
        );
    }
    // A reply cut at the cap is unanswered, though its verdict is there to read.
    let cut = get_json(judge_port, "/stats")["truncated"]
        .as_u64()
        .unwrap();
    let unanswered = judgements
        .iter()
        .filter(|j| j.judgement.as_deref() == Some("unparseable"))
        .count() as u64;
    eprintln!(
        "{} pairs judged, {cut} replies cut, {unanswered} unanswered",
        judgements.len()
    );
    assert!(cut > 0);
    assert_eq!(unanswered, cut);
    // Asked for, every pair is judged.
    run_ok(
        Path::new(BIN),
        &[
            "judge",
            out.to_str().unwrap(),
            "--judge",
            &judge,
            "--all-complexities",
        ],
    );
    let all = read(&file);
    assert_eq!(all.len(), within.len() + beyond);
}

#[test]
fn the_papers_protocol_runs_on_a_local_server_whose_context_is_short() {
    let dir = scratch("short-context");
    let port = free_port();
    let _server = mock_server(port, &["--context-length", "4096"]);
    let plan = ["--dataset", "plogic", "--per-bucket", "2", "--batches", "1"];
    // A cap above the context halts at once, with the fix named.
    let capped = dir.join("capped");
    let mut args = plan.to_vec();
    args.extend(["--max-tokens", "16384"]);
    let halted = run_on_mock(port, &capped, &args);
    let stderr = String::from_utf8_lossy(&halted.stderr);
    assert_eq!(halted.status.code(), Some(1), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.contains("context length") && last.contains("max-tokens"),
        "{last}"
    );
    let refused = get_json(port, "/stats")["over_context"].as_u64().unwrap();
    assert!(refused > 0);
    // The paper's protocol sends a local server no cap, as the public code did.
    let paper = dir.join("paper");
    let mut args = plan.to_vec();
    args.extend(["--protocol", "paper", "--quiet"]);
    let done = run_on_mock(port, &paper, &args);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let rs = records(&paper);
    assert!(rs.len() > 40, "{} records", rs.len());
    assert!(rs.iter().all(|r| r.verdict != Verdict::ApiFailure));
    let after = get_json(port, "/stats")["over_context"].as_u64().unwrap();
    eprintln!(
        "capped: {refused} requests refused, then halted: {last}\npaper: {} rounds, none refused",
        rs.len()
    );
    assert_eq!(after, refused, "no request of the paper's run was refused");
}

/// What one run did against a server that answers one fixture.
struct Outcome {
    fixture: String,
    status: u64,
    class: String,
    cause: String,
    /// Requests answered before the refusals began.
    answered_first: u64,
    requests: u64,
    seconds: f64,
    exit: Option<i32>,
    /// Rounds recorded, and of those the API failures.
    rounds: usize,
    failed_rounds: usize,
    last_line: String,
}

/// Units of each run (plogic, one batch of one item per complexity value).
const REFUSED_RUN_UNITS: usize = 40;

/// `autoeval run` of `spec` (`{base}` standing for the mock's address)
/// against a mock answering with `fixture` after `after` requests.
fn run_refused(dir: &Path, fixture: &str, spec: &str, after: u64) -> Outcome {
    let file = provider_error(fixture);
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let port = free_port();
    let after_text = after.to_string();
    let _server = mock_server(
        port,
        &[
            "--refuse-with",
            file.to_str().unwrap(),
            "--refuse-after",
            &after_text,
        ],
    );
    let spec = spec.replace("{base}", &format!("http://127.0.0.1:{port}"));
    let out = dir.join(format!(
        "{}-after-{after}",
        fixture.replace(['/', '.'], "-")
    ));
    let started = Instant::now();
    let done = Command::new(BIN)
        .args([
            "run",
            "--model",
            &spec,
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
        ])
        .args(["--per-bucket", "1", "--batches", "1", "--concurrency", "2"])
        .args([
            "--max-attempts",
            "2",
            "--plain",
            "--out",
            out.to_str().unwrap(),
        ])
        .env("OPENAI_API_KEY", "sk-test")
        .env("GEMINI_API_KEY", "gm-test")
        .env("AZURE_OPENAI_API_KEY", "az-test")
        .env("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
        .env(
            "AWS_SECRET_ACCESS_KEY",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        )
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK")
        .output()
        .unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&done.stderr);
    let recorded = records(&out);
    assert!(
        stderr.contains(&format!("{REFUSED_RUN_UNITS} units")),
        "{stderr}"
    );
    Outcome {
        fixture: fixture.to_string(),
        status: json["status"].as_u64().unwrap(),
        class: json["class"].as_str().unwrap().to_string(),
        cause: json["cause"].as_str().unwrap().to_string(),
        answered_first: after,
        requests: get_json(port, "/stats")["requests"].as_u64().unwrap(),
        seconds,
        exit: done.status.code(),
        rounds: recorded.len(),
        failed_rounds: recorded
            .iter()
            .filter(|r| r.verdict == Verdict::ApiFailure)
            .count(),
        last_line: stderr.lines().last().unwrap_or_default().to_string(),
    }
}

/// Whether a refusal of `cause` is of the request's shape, which halts a
/// backend that never worked and fails one unit of one that did.
fn refused_shape(cause: &str) -> bool {
    matches!(cause, "bad_request" | "context_length")
}

/// Why `o` is not what its fixture's class says a run does, if it is not.
fn unlike_its_class(o: &Outcome) -> Option<String> {
    let stopped_at_once = o.exit == Some(1)
        && o.last_line.starts_with("error: stopped at once")
        && o.failed_rounds == 0
        // Past the answered requests: at most the two in flight.
        && o.requests <= o.answered_first + 2;
    // Each call refused fails its unit alone, after one attempt, and the
    // run goes on to its end (every unit recorded), saying what to redo.
    let each_unit_fails = o.exit == Some(3)
        && o.rounds == REFUSED_RUN_UNITS
        && o.requests == o.answered_first + o.failed_rounds as u64
        && o.last_line.contains("after 1 attempt(s)");
    // A refused shape halts a backend that never worked and fails one unit
    // of one that did (the fixtures' README).
    let shape = refused_shape(&o.cause);
    let holds = match (o.class.as_str(), shape, o.answered_first) {
        ("halt" | "per_unit", true, 0) => stopped_at_once,
        ("halt" | "per_unit", true, _) => each_unit_fails,
        ("halt", false, _) => stopped_at_once,
        ("per_unit", false, _) => each_unit_fails,
        // Busy: each call tries its two attempts and fails alone, or the
        // run stops once it was told "later" past the policy's patience.
        ("retry_later", _, _) => {
            (o.exit == Some(3) && o.last_line.contains("after 2 attempt(s)"))
                || (o.exit == Some(1) && o.last_line.contains("answered nothing but \"later\""))
        }
        (other, _, _) => panic!("unknown class {other}"),
    };
    (!holds).then(|| format!("{} after {}: {}", o.fixture, o.answered_first, o.last_line))
}

#[test]
fn each_new_providers_documented_errors_end_a_run_as_their_class_says() {
    let dir = scratch("provider-errors");
    let specs = [
        ("gemini", "gemini:gemini-2.5-flash@{base}"),
        ("openai-responses", "openai-responses:o4-mini@{base}/v1"),
        ("azure", "azure:gpt-4o@{base}"),
        (
            "bedrock",
            "bedrock:anthropic.claude-3-haiku-20240307-v1:0@{base}",
        ),
    ];
    // Each fixture once the backend has answered four calls; a refused
    // shape and a filtered prompt also from the first request.
    let mut cases = Vec::new();
    for (provider, spec) in specs {
        let mut names: Vec<String> = std::fs::read_dir(provider_error(provider))
            .unwrap()
            .map(|f| format!("{provider}/{}", f.unwrap().file_name().to_string_lossy()))
            .collect();
        names.sort();
        for name in names {
            let fixture: Value =
                serde_json::from_str(&std::fs::read_to_string(provider_error(&name)).unwrap())
                    .unwrap();
            // A refused shape halts a fresh backend; a filtered prompt never does.
            let cause = fixture["cause"].as_str().unwrap();
            if refused_shape(cause) || cause == "filtered" {
                cases.push((name.clone(), spec, 0));
            }
            cases.push((name, spec, 4));
        }
    }
    assert!(cases.len() >= 25, "{} cases", cases.len());
    // The runs wait on their servers' refusals and Retry-Afters, not on the
    // cores: eight at a time, each runner taking the next case as it ends one.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut outcomes: Vec<(usize, Outcome)> = std::thread::scope(|s| {
        let runners: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((fixture, spec, after)) = cases.get(i) else {
                            return mine;
                        };
                        mine.push((i, run_refused(&dir, fixture, spec, *after)));
                    }
                })
            })
            .collect();
        runners
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect()
    });
    outcomes.sort_by_key(|(i, _)| *i);
    let outcomes: Vec<Outcome> = outcomes.into_iter().map(|(_, o)| o).collect();
    println!(
        "| fixture | status | cause | class | answered first | requests | seconds | exit | failed rounds |\n|---|---|---|---|---|---|---|---|---|"
    );
    for o in &outcomes {
        println!(
            "| `{}` | {} | {} | {} | {} | {} | {:.1} | {} | {} |",
            o.fixture,
            o.status,
            o.cause,
            o.class,
            o.answered_first,
            o.requests,
            o.seconds,
            o.exit.map_or("signal".into(), |c| c.to_string()),
            o.failed_rounds,
        );
    }
    let wrong: Vec<String> = outcomes.iter().filter_map(unlike_its_class).collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

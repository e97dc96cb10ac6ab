//! `run --until decided` on one machine: it stops once decided, after part
//! of its plan, and a run killed mid-way and resumed decides the same
//! after the same units, paying for none twice.

use crate::common::{free_port, get_json, mock_server, records, BIN};
use autoeval_e2e::{run_ok, scratch};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The units recorded in `dir`, each checked to be recorded once.
fn units_once(dir: &Path) -> BTreeSet<String> {
    let mut units = BTreeSet::new();
    for r in records(dir) {
        assert!(
            units.insert(r.unit().to_string()),
            "{} recorded twice",
            r.unit()
        );
    }
    units
}

fn decided(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("decided.json")).expect("decided.json");
    serde_json::from_str(&text).expect("decided.json is JSON")
}

#[test]
fn a_run_until_decided_orders_two_models_after_part_of_its_plan_and_a_killed_one_resumes_to_the_same(
) {
    // Two servers: a perfect translator and one that errs on 30% of the items.
    let (good, noisy) = (free_port(), free_port());
    let _good = mock_server(good, &["--latency-ms", "20"]);
    let _noisy = mock_server(
        noisy,
        &["--latency-ms", "20", "--model", "reference-noisy:0.3"],
    );
    let dir = scratch("until-decided");
    let models = [
        format!("openai-compatible:reference@http://127.0.0.1:{good}/v1"),
        format!("openai-compatible:reference-noisy@http://127.0.0.1:{noisy}/v1"),
    ];
    let args = |out: &Path| -> Vec<String> {
        let mut a: Vec<String> = [
            "run",
            "--until",
            "decided",
            "--decide",
            "order",
            "--dataset",
            "plogic",
            "--prompt",
            "zero-shot",
            "--per-bucket",
            "10",
            "--batches",
            "2",
            "--concurrency",
            "4",
            "--quiet",
            "--out",
        ]
        .map(String::from)
        .to_vec();
        a.push(out.display().to_string());
        for m in &models {
            a.extend(["--model".to_string(), m.clone()]);
        }
        a
    };
    let requests = || -> u64 {
        [good, noisy]
            .iter()
            .map(|p| get_json(*p, "/stats")["requests"].as_u64().unwrap())
            .sum()
    };

    let whole = dir.join("whole");
    let a = args(&whole);
    run_ok(
        Path::new(BIN),
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let first = decided(&whole);
    assert_eq!(first["all_decided"], true, "{first:#}");
    let pair = first["quantities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["asked"] == true)
        .expect("the pair is asked");
    // The perfect translator is the better one, whatever the draw.
    assert_eq!(pair["order"], ">", "{pair:#}");
    let (units, plan) = (
        first["units"].as_u64().unwrap(),
        first["plan_units"].as_u64().unwrap(),
    );
    assert!(units * 2 < plan, "decided after {units} of {plan} units");
    let recorded = units_once(&whole);
    assert_eq!(
        recorded.len() as u64,
        units,
        "every unit drawn is recorded once"
    );
    let report = std::fs::read_to_string(whole.join("report.html")).unwrap();
    assert!(
        report.contains("Decided with fewer calls") && report.contains("anytime-valid"),
        "the report says what was decided, and how valid its intervals are"
    );
    let asked_whole = requests();
    assert_eq!(asked_whole, 2 * units, "two calls a unit");
    assert_eq!(
        first["spend"]["calls"],
        2 * units,
        "the calls it paid, told"
    );
    assert_eq!(first["spend"]["plan_calls"], 2 * plan, "and the plan's");

    // The same run, killed once it has recorded some rounds, then resumed.
    let killed = dir.join("killed");
    let b = args(&killed);
    let mut child = Command::new(BIN)
        .args(&b)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let count = || {
        std::fs::read_to_string(killed.join("results.jsonl"))
            .map(|t| t.matches('\n').count())
            .unwrap_or(0)
    };
    while count() < 40 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it was killed"
        );
        assert!(Instant::now() < deadline, "no progress in 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    run_ok(
        Path::new(BIN),
        &b.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let second = decided(&killed);
    assert_eq!(
        second["quantities"], first["quantities"],
        "the same decisions"
    );
    assert_eq!(second["units"], first["units"]);
    assert_eq!(units_once(&killed), recorded, "the same units, each once");
    // What was in flight at the kill may be asked again, nothing else.
    let asked_killed = requests() - asked_whole;
    assert!(
        asked_killed <= 2 * units + 2 * 4,
        "{asked_killed} requests for {units} units"
    );
}

/// What `run --dry-run --until decided` prints with `args` for plogic and
/// two models, once it succeeded.
fn dry_run_decided(args: &[&str]) -> String {
    let mut all = vec![
        "run",
        "--dry-run",
        "--until",
        "decided",
        "--dataset",
        "plogic",
    ];
    all.extend(["--model", "reference", "--model", "reference-noisy:0.3"]);
    all.extend(args);
    let out = crate::common::autoeval(&all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

/// The items `--dry-run --until decided` says a dataset is likely to draw
/// to decide levels to `precision` pp, and the share of the plan it names.
fn foreseen(precision: &str) -> (usize, f64) {
    let text = dry_run_decided(&[
        "--decide",
        "accuracy",
        "--precision",
        precision,
        "--baseline",
        "0.5",
        "--per-bucket",
        "50",
        "--batches",
        "4",
        "--prompt",
        "zero-shot",
    ]);
    let row: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("until decided"))
        .find(|l| l.starts_with("plogic"))
        .unwrap_or_else(|| panic!("a plogic row: {text}"))
        .split_whitespace()
        .collect();
    let likely = text.lines().find(|l| l.starts_with("likely:")).unwrap();
    let share: f64 = likely
        .split("about ")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .unwrap()
        .parse()
        .unwrap();
    (row[2].parse().unwrap(), share)
}

#[test]
fn a_dry_run_until_decided_says_how_much_of_the_plan_it_is_likely_to_draw() {
    let (tight, tight_share) = foreseen("2");
    let (loose, loose_share) = foreseen("5");
    assert!(
        loose < tight && loose_share < tight_share,
        "{loose} vs {tight}"
    );
    // At 50% a fixed-time 95% interval of ±5 pp needs 1.96² · 0.25 / 0.05²
    // = 385 items; an interval valid at every wave needs more.
    assert!(loose > 385, "{loose}");
    assert!(loose_share < 100.0, "{loose_share}");
}

#[test]
fn a_dry_run_likely_to_spend_its_plan_says_which_question_needs_it_and_what_draws_fewer() {
    // 80 items: levels to ±2 pp need them all; pairs 20 pp apart do not.
    // (--detect is a share: 0.2 is 20 pp.)
    let hint = |decide: &str, detect: &str| -> Option<String> {
        let text = dry_run_decided(&[
            "--decide",
            decide,
            "--detect",
            detect,
            "--per-bucket",
            "2",
            "--batches",
            "1",
        ]);
        text.lines()
            .find(|l| l.starts_with("hint:"))
            .map(str::to_string)
    };
    let levels = hint("accuracy", "0.2").expect("a hint when the levels need the plan");
    assert!(
        levels.contains("levels to ±2.0 pp need most of this plan"),
        "{levels}"
    );
    assert!(!levels.contains("pairs"), "{levels}");
    // Pairs 1 pp apart need the plan too; far apart, they leave most of it.
    let close = hint("order", "0.01").expect("a hint when the pairs need the plan");
    assert!(
        close.contains("pairs this close") && !close.contains("levels"),
        "{close}"
    );
    assert_eq!(hint("order", "0.6"), None);
}

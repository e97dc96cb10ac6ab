//! The autoeval command from the outside: generate, check, the reference format.

use autoeval_e2e::{jsonl, run_ok, scratch};
use std::path::Path;
use std::process::{Command, Output};

fn autoeval(args: &[&str]) -> Output {
    run_ok(Path::new(env!("CARGO_BIN_EXE_autoeval")), args)
}

#[test]
fn generate_writes_items_with_the_promised_fields_and_is_reproducible() {
    let dir = scratch("generate");
    for dataset in ["ksat", "plogic", "fol", "fol-english", "regex"] {
        let out = dir.join(format!("{dataset}.jsonl"));
        let out_s = out.to_str().unwrap();
        autoeval(&[
            "generate",
            "--dataset",
            dataset,
            "--batches",
            "2",
            "--per-bucket",
            "5",
            "--seed",
            "9",
            "--quiet",
            "--out",
            out_s,
        ]);
        let text = std::fs::read_to_string(&out).unwrap();
        let items = jsonl(&text);
        assert!(items.len() > 100, "{dataset}: {} items", items.len());
        for item in &items {
            for field in ["id", "dataset", "batch", "fs", "depth"] {
                assert!(item.get(field).is_some(), "{dataset}: no {field} in {item}");
            }
            if dataset != "regex" {
                assert!(item.get("num_operators").is_some());
            }
        }
        assert!(items.iter().any(|i| i["batch"] == 1));
        let again = dir.join("again.jsonl");
        autoeval(&[
            "generate",
            "--dataset",
            dataset,
            "--batches",
            "2",
            "--per-bucket",
            "5",
            "--seed",
            "9",
            "--quiet",
            "--out",
            again.to_str().unwrap(),
        ]);
        assert_eq!(
            std::fs::read(&again).unwrap(),
            text.as_bytes(),
            "{dataset}: same seed, other bytes"
        );
    }
}

#[test]
fn generate_reference_format_and_bad_flags() {
    let dir = scratch("reference");
    let out = dir.join("plogic.json");
    autoeval(&[
        "generate",
        "--dataset",
        "plogic",
        "--batches",
        "1",
        "--per-bucket",
        "3",
        "--format",
        "reference",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["info"]["sample_count"], 3);
    assert!(doc["data"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["fs"].is_string() && i["num_operators"].is_number()));
    let back = dir.join("back.jsonl");
    autoeval(&[
        "import",
        out.to_str().unwrap(),
        "--out",
        back.to_str().unwrap(),
    ]);
    let items = jsonl(&std::fs::read_to_string(&back).unwrap());
    assert_eq!(items.len(), doc["data"].as_array().unwrap().len());
    assert!(items
        .iter()
        .all(|i| i["dataset"] == "plogic" && !i["fs"].as_str().unwrap().contains(" v ")));
    let bad = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args([
            "generate",
            "--dataset",
            "plogic",
            "--min-arity",
            "3",
            "--max-arity",
            "2",
            "--out",
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("min-arity"));
    let unknown = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args(["generate", "--dataset", "cnf", "--out", "x"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&unknown.stderr)
        .contains("[possible values: ksat, plogic, fol, fol-english, regex]"));
}

#[test]
fn check_streams_verdicts_in_input_order_and_survives_bad_lines() {
    let dir = scratch("check");
    let pairs = dir.join("pairs.jsonl");
    let mut lines = Vec::new();
    for i in 0..300 {
        lines.push(match i % 6 {
            0 => format!(r#"{{"n": {i}, "kind": "plogic", "phi0": "(p1 ∧ p2)", "phi1": "p2 & p1"}}"#),
            1 => format!(r#"{{"n": {i}, "kind": "fol", "phi0": "∀ x1.∃ x2.pred2(x1, x2)", "phi1": "∃ x2.∀ x1.pred2(x1, x2)"}}"#),
            2 => format!(r#"{{"n": {i}, "kind": "regex", "phi0": "(00)*", "phi1": "0(00)*"}}"#),
            3 => "this is not json".to_string(),
            4 => format!(r#"{{"n": {i}, "kind": "plogic", "phi0": "p1", "phi1": "(p1 ∧"}}"#),
            _ => format!(r#"{{"n": {i}, "kind": "regex", "phi0": "0*", "phi1": "1*"}}"#),
        });
    }
    std::fs::write(&pairs, lines.join("\n")).unwrap();
    let out = dir.join("verdicts.jsonl");
    autoeval(&[
        "check",
        "--pairs",
        pairs.to_str().unwrap(),
        "--timeout-ms",
        "5000",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let results = jsonl(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(results.len(), 300);
    for (i, r) in results.iter().enumerate() {
        let want = [
            "equivalent",
            "not_equivalent",
            "not_equivalent",
            "unknown",
            "non_compliant",
            "not_equivalent",
        ][i % 6];
        assert_eq!(r["verdict"], want, "line {i}: {r}");
        if i % 6 != 3 {
            assert_eq!(r["n"], i, "results must keep input order and fields");
            assert!(r["ms"].is_number() && r["method"].is_string());
        }
    }
    assert!(
        results[1]["counterexample"]["domain"].is_array(),
        "{}",
        results[1]
    );
    assert_eq!(results[2]["counterexample"]["word"], "");
    assert!(results[4]["reason"]
        .as_str()
        .unwrap()
        .contains("end of the answer"));
}

/// A number printed after `label` on a line of `text`.
fn printed_number(text: &str, label: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in {text}"));
    line[label.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn correlate_matches_an_independent_computation_on_tables_8_to_14() {
    // expected.json: ρ and p from scipy.stats.pearsonr, predictive power by
    // counting ordered pairs, computed outside this project from the tables.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/a1");
    let expected: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("expected.json")).unwrap())
            .unwrap();
    assert_eq!(expected.len(), 10, "Tables 8-12, 13 (four scores) and 14");
    for e in &expected {
        let name = e["fixture"].as_str().unwrap();
        let file = |side: &str| fixtures.join(format!("{name}-{side}.csv"));
        let out = autoeval(&[
            "correlate",
            "--ours",
            file("ours").to_str().unwrap(),
            "--other",
            file("other").to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("models: 16"), "{name}: {text}");
        let rho = printed_number(&text, "pearson rho:");
        assert!(
            (rho - e["rho"].as_f64().unwrap()).abs() < 5e-4,
            "{name}: {text}"
        );
        let p = printed_number(&text, "p-value:");
        let want = e["p_value"].as_f64().unwrap();
        assert!((p - want).abs() <= 1e-3 * want, "{name}: p {p} vs {want}");
        let pp = &e["pp"];
        let needle = format!(
            "P(other1 >= other2 | ours1 >= ours2): {:.3} ({} of {} ordered pairs)",
            pp[0].as_f64().unwrap() / pp[1].as_f64().unwrap(),
            pp[0],
            pp[1]
        );
        assert!(text.contains(&needle), "{name}: {needle} not in {text}");
        eprintln!("{name}: rho {rho}, p {p:e}, {}/{}", pp[0], pp[1]);
    }
    // Table 8 as the paper states it.
    let t8 = &expected[0];
    assert_eq!(t8["fixture"], "table8");
    assert_eq!(
        (t8["pp"][0].as_u64(), t8["pp"][1].as_u64()),
        (Some(107), Some(120))
    );
}

#[test]
fn a1_from_a_run_uses_one_dataset_zero_shot_round_one_up_to_the_cut_off() {
    use autoeval_proto::{ResultRecord, Verdict};
    let dir = scratch("a1-run");
    let out = dir.join("run");
    let mut args = vec![
        "run",
        "--dataset",
        "plogic",
        "--dataset",
        "regex",
        "--per-bucket",
        "3",
        "--batches",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    let models = ["reference", "reference-noisy:0.3", "reference-noisy:0.6"];
    for m in models {
        args.extend(["--model", m]);
    }
    autoeval(&args);
    let records: Vec<ResultRecord> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The other benchmark ranks the models the opposite way.
    let other = dir.join("other.csv");
    std::fs::write(
        &other,
        "model,score\nreference,0.2\nreference-noisy:0.3,0.5\nreference-noisy:0.6,0.7\n",
    )
    .unwrap();
    let corr = autoeval(&[
        "correlate",
        "--run",
        out.to_str().unwrap(),
        "--dataset",
        "plogic",
        "--other",
        other.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&corr.stdout);
    assert!(
        text.contains("ours: plogic, zero-shot, round 1, complexity <= 6, the FOLIO-style comparison's cut-off (App. K.4)"),
        "{text}"
    );
    // Our scores, counted here: plogic, zero-shot, round 1, at most `cut` operators.
    let score_up_to = |m: &str, cut: u32| {
        let rs: Vec<&ResultRecord> = records
            .iter()
            .filter(|r| {
                r.model == m
                    && r.dataset == "plogic"
                    && r.prompt == "zero-shot"
                    && r.complexity <= cut
            })
            .collect();
        rs.iter()
            .filter(|r| r.verdict == Verdict::Equivalent)
            .count() as f64
            / rs.len() as f64
    };
    let rho_up_to = |cut: u32| {
        let ours: Vec<f64> = models.iter().map(|m| score_up_to(m, cut)).collect();
        let theirs = [0.2, 0.5, 0.7];
        let mean = |v: &[f64]| v.iter().sum::<f64>() / 3.0;
        let (mo, mt) = (mean(&ours), mean(&theirs));
        let cov: f64 = (0..3).map(|i| (ours[i] - mo) * (theirs[i] - mt)).sum();
        let sd = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>().sqrt();
        cov / (sd(&ours, mo) * sd(&theirs, mt))
    };
    let printed = printed_number(&text, "pearson rho:");
    assert!(
        (printed - rho_up_to(6)).abs() < 5e-4,
        "{printed} vs {}",
        rho_up_to(6)
    );
    // LogiEval's comparison counts up to 30 operators (Tables 10–11).
    let logieval = autoeval(&[
        "correlate",
        "--run",
        out.to_str().unwrap(),
        "--dataset",
        "plogic",
        "--compared-with",
        "logieval",
        "--other",
        other.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&logieval.stdout);
    assert!(
        text.contains("complexity <= 30, LogiEval's cut-off (Tables 10–11)"),
        "{text}"
    );
    let printed = printed_number(&text, "pearson rho:");
    assert!(
        (printed - rho_up_to(30)).abs() < 5e-4,
        "{printed} vs {}",
        rho_up_to(30)
    );
    // The report computes A1 per dataset with the paper's cut-offs.
    let report = autoeval(&[
        "report",
        out.to_str().unwrap(),
        "--other",
        other.to_str().unwrap(),
        "--other-name",
        "Other",
    ]);
    let said = String::from_utf8_lossy(&report.stdout);
    assert!(
        said.contains("A1 plogic: zero-shot, round 1, complexity <= 6, the FOLIO-style comparison's cut-off (App. K.4)"),
        "{said}"
    );
    assert!(
        said.contains(
            "A1 regex: zero-shot, round 1, complexity <= 7, HumanEval's cut-off (App. K.4)"
        ),
        "{said}"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Correlation with Other (A1): regex"));
}

#[test]
fn reverify_finds_where_the_published_regex_verdicts_are_wrong() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = scratch("reverify");
    let details = dir.join("disagreements.jsonl");
    let out = autoeval(&[
        "reverify",
        fixtures.join("regex_verified.json").to_str().unwrap(),
        "--out",
        details.to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    // The reference compared automaton shapes: 0* and 1*, (00)* and 0(00)* look alike.
    assert!(table.contains("published equivalent, is not: 1"), "{table}");
    let rows = jsonl(&std::fs::read_to_string(&details).unwrap());
    let found: Vec<(i64, &str)> = rows
        .iter()
        .map(|r| (r["idx"].as_i64().unwrap(), r["finding"].as_str().unwrap()))
        .collect();
    assert_eq!(
        found,
        [
            (0, "published equivalent, is not"),
            (1, "published equivalent, is not")
        ],
        "{rows:?}"
    );
    assert_eq!(rows[0]["counterexample"]["word"], "0");
}

#[test]
fn a_user_error_is_one_clean_line_even_with_backtraces_asked_for() {
    let out = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args(["run", "--model", "no-such-backend:x", "--quiet"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: invalid value 'no-such-backend:x' for '--model")
            && err.contains(
                "invalid model \"no-such-backend:x\": unknown backend; expected reference"
            ),
        "{err}"
    );
    assert!(
        !err.contains("backtrace") && !err.contains('\u{1b}'),
        "{err}"
    );
}

#[test]
fn a_dry_run_prints_the_plan_and_its_cost_and_sends_nothing() {
    let dir = scratch("dry-run");
    let items = dir.join("plogic.jsonl");
    let i = items.to_str().unwrap();
    autoeval(&[
        "generate",
        "--dataset",
        "plogic",
        "--per-bucket",
        "1",
        "--batches",
        "1",
        "--out",
        i,
    ]);
    let n = std::fs::read_to_string(&items).unwrap().lines().count();
    let out = dir.join("run");
    // Nothing listens on port 9 and no key is set: a dry run needs neither.
    let plan = autoeval(&[
        "run",
        "--dry-run",
        "--items",
        i,
        "--prompt",
        "zero-shot",
        "--rounds",
        "2",
        "--model",
        "openai-compatible:llama3:8b@http://127.0.0.1:9/v1",
        "--model",
        "openai:gpt-4o-mini",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(!out.exists(), "a dry run writes nothing");
    let row = |model: &str| -> Vec<String> {
        text.lines()
            .find(|l| l.starts_with(model))
            .unwrap_or_else(|| panic!("a row for {model}: {text}"))
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let llama = row("openai-compatible:llama3:8b");
    let mini = row("openai:gpt-4o-mini");
    // units, then requests: two calls per round, two rounds at most.
    assert_eq!(llama[1], n.to_string());
    assert_eq!(llama[2], (4 * n).to_string());
    assert_eq!(
        (llama[5].as_str(), llama[6].as_str()),
        ("unknown", "unknown"),
        "no price for a local model"
    );
    let (prompt_tokens, answer_tokens): (f64, f64) =
        (mini[3].parse().unwrap(), mini[4].parse().unwrap());
    let cost: f64 = mini[5].parse().unwrap();
    let batch_cost: f64 = mini[6].parse().unwrap();
    // gpt-4o-mini's list price: 0.15 and 0.60 USD per million tokens; its
    // Batch API price: 0.075 and 0.30.
    let expected = (prompt_tokens * 0.15 + answer_tokens * 0.60) / 1e6;
    let expected_batch = (prompt_tokens * 0.075 + answer_tokens * 0.30) / 1e6;
    assert!((cost - expected).abs() <= 1e-4, "{cost} vs {expected}");
    assert!(
        (batch_cost - expected_batch).abs() <= 1e-4,
        "{batch_cost} vs {expected_batch}"
    );
    assert_eq!(mini[7], "direct", "sent directly unless batch = true");
    assert!(
        text.contains("estimated cost: unknown: no price for llama3:8b"),
        "a sum that leaves a model out is not the run's cost: {text}"
    );
}

/// `autoeval` run with `args`, expected to fail: its stderr.
fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args(args)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} was not refused");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_items_file_with_a_repeated_id_is_refused_before_anything_runs_naming_the_ids() {
    let dir = scratch("repeated-ids");
    let items = dir.join("items.jsonl");
    autoeval(&[
        "generate",
        "--dataset",
        "plogic",
        "--batches",
        "1",
        "--per-bucket",
        "1",
        "--quiet",
        "--out",
        items.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&items).unwrap();
    let first = jsonl(&text)[0]["id"].as_str().unwrap().to_string();
    let repeated = dir.join("repeated.jsonl");
    std::fs::write(
        &repeated,
        format!("{text}{}\n", text.lines().next().unwrap()),
    )
    .unwrap();
    for fleet in [false, true] {
        let out = dir.join(format!("run-{fleet}"));
        let mut args = vec![
            "run",
            "--items",
            repeated.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if fleet {
            args.push("--fleet");
        }
        let err = refused(&args);
        assert!(
            err.contains("repeats 1 item id") && err.contains(&first),
            "fleet {fleet}: {err}"
        );
        assert!(
            !out.join("results.jsonl").exists(),
            "fleet {fleet}: nothing ran"
        );
    }
}

#[test]
fn numbers_out_of_range_are_refused_with_the_flag_and_its_range() {
    let dir = scratch("ranges");
    for (flag, value) in [
        ("--timeout-ms", "0"),
        ("--request-timeout-s", "100000000000"),
        ("--jobs", "0"),
        ("--concurrency", "0"),
        ("--max-attempts", "0"),
        ("--temperature", "2.5"),
    ] {
        let out = dir.join(flag.trim_start_matches('-'));
        let err = refused(&["run", flag, value, "--out", out.to_str().unwrap()]);
        assert!(
            err.contains(&format!("'{value}' for '{flag}"))
                && err.contains(&format!("{value} is out of range: it must lie in")),
            "{flag} {value}: {err}"
        );
    }
}

#[test]
fn help_never_shows_the_credentials_an_environment_variable_holds() {
    for command in [["run", "--help"], ["status", "--help"], ["rerun", "--help"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_autoeval"))
            .args(command)
            .env("AUTOEVAL_AMQP", "amqp://user:planted-amqp-pw@10.0.0.1/%2f")
            .env("AUTOEVAL_REDIS", "redis://:planted-redis-pw@10.0.0.1")
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        assert!(help.contains("AUTOEVAL_AMQP"), "{help}");
        assert!(
            !help.contains("planted-amqp-pw") && !help.contains("planted-redis-pw"),
            "{command:?}: {help}"
        );
    }
}

#[test]
fn a_url_may_come_from_a_file_named_by_its_variable() {
    let dir = scratch("file-variables");
    let file = dir.join("redis-url");
    std::fs::write(&file, "redis://:from-a-file@127.0.0.1:1\n").unwrap();
    let out = dir.join("run");
    let run = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args([
            "run",
            "--model",
            "reference",
            "--dataset",
            "ksat",
            "--per-bucket",
            "1",
        ])
        .args(["--batches", "1", "--fleet", "--out", out.to_str().unwrap()])
        .env_remove("AUTOEVAL_REDIS")
        .env("AUTOEVAL_REDIS_FILE", &file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    // The file's URL was used (its port answers nothing), and its password is not shown.
    assert!(
        said.contains("cannot reach Redis at redis://:***@127.0.0.1:1"),
        "{said}"
    );
    assert!(!said.contains("from-a-file"), "{said}");
    let missing = Command::new(env!("CARGO_BIN_EXE_autoeval"))
        .args(["status", out.to_str().unwrap()])
        .env_remove("AUTOEVAL_REDIS")
        .env("AUTOEVAL_REDIS_FILE", dir.join("no-such-file"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(1), "{said}");
    assert!(said.contains("cannot read AUTOEVAL_REDIS_FILE"), "{said}");
}

/// The subcommands a help text lists under `Commands:` (`help` left out).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

/// The help of `autoeval SUB` and of its own subcommands, whole.
fn help_of(sub: &str) -> String {
    let text = |args: &[&str]| String::from_utf8(autoeval(args).stdout).unwrap();
    let mut help = text(&[sub, "--help"]);
    for inner in subcommands(&help.clone()) {
        help.push_str(&text(&[sub, &inner, "--help"]));
    }
    help
}

/// The flags written in `text` (`--name`, not inside a longer word).
fn flags_in(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("--") {
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '-') {
            continue;
        }
        let name_len = text[i + 2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(text.len() - i - 2);
        if name_len > 0 && text[i + 2..].starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push(&text[i..i + 2 + name_len]);
        }
    }
    out
}

/// The README and the user's guide, as one text: what a user reads.
fn user_docs() -> String {
    let pages = crate::common::user_doc_pages();
    let texts: Vec<String> = pages
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    texts.join("\n\n")
}

#[test]
fn the_readme_names_every_command_and_no_flag_its_help_does_not_list() {
    let readme = user_docs();
    let top = String::from_utf8(autoeval(&["--help"]).stdout).unwrap();
    let commands = subcommands(&top);
    assert!(commands.len() >= 15, "{top}");
    let unnamed: Vec<&String> = commands
        .iter()
        .filter(|c| !readme.contains(&format!("autoeval {c}")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "commands the README never names: {unnamed:?}"
    );
    // Each `autoeval SUB …` the README writes, up to the end of its code
    // span, the next command, or its line (a code block's indented lines
    // continue it): every flag there is one SUB's help lists.
    let helps: std::collections::HashMap<&String, String> =
        commands.iter().map(|c| (c, help_of(c))).collect();
    let (mut checked, mut unknown) = (0, Vec::new());
    for (at, _) in readme.match_indices("autoeval ") {
        let rest = &readme[at + "autoeval ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '-')
            .collect();
        let Some(help) = helps.get(&name) else {
            continue;
        };
        let rest = &rest[name.len()..];
        let mut end = rest.len();
        for stop in ["`", "autoeval ", "\n\n"] {
            end = end.min(rest.find(stop).unwrap_or(rest.len()));
        }
        for (i, _) in rest.match_indices('\n') {
            if !rest[i + 1..].starts_with(' ') {
                end = end.min(i);
                break;
            }
        }
        for flag in flags_in(&rest[..end]) {
            checked += 1;
            let listed = flags_in(help).contains(&flag);
            if !listed {
                unknown.push(format!("autoeval {name} {flag}"));
            }
        }
    }
    println!(
        "{} commands, {checked} flags written after them in the README",
        commands.len()
    );
    assert!(
        checked > 100,
        "the check reads the README's commands: {checked}"
    );
    assert!(
        unknown.is_empty(),
        "flags the README gives commands whose help does not list them:\n{}",
        unknown.join("\n")
    );
}

/// The `- \`KEY\`: TEXT` lines of a README list, as (KEY, TEXT).
fn readme_list(readme: &str) -> std::collections::BTreeMap<String, String> {
    readme
        .lines()
        .filter_map(|l| l.strip_prefix("- `")?.split_once("`: "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn each_commands_summary_and_every_exit_status_are_the_readmes() {
    let readme = user_docs();
    let listed = readme_list(&readme);
    let top = String::from_utf8(autoeval(&["--help"]).stdout).unwrap();
    // `  NAME  SUMMARY` under "Commands:", as clap prints it, one line each.
    let commands = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    let mut compared = 0;
    for line in commands.lines() {
        let Some((name, summary)) = line.trim().split_once(' ') else {
            continue;
        };
        if name == "help" {
            continue;
        }
        let key = format!("autoeval {name}");
        assert_eq!(
            listed.get(&key).map(String::as_str),
            Some(summary.trim()),
            "README's summary of {key}"
        );
        compared += 1;
    }
    assert!(compared >= 15, "{compared} commands compared");
    // `  N    TEXT` under "Exit status:".
    let statuses = top
        .split("Exit status:")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    let mut codes = Vec::new();
    for line in statuses.lines().filter(|l| !l.trim().is_empty()) {
        let (code, text) = line.trim().split_once(' ').unwrap();
        assert_eq!(
            listed.get(code).map(String::as_str),
            Some(text.trim()),
            "README's exit status {code}"
        );
        codes.push(code.to_string());
    }
    assert_eq!(codes, ["0", "1", "3", "75", "130"]);
}

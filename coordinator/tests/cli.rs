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
        .contains("expected ksat, plogic, fol, fol-english or regex"));
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

#[test]
fn correlate_on_the_papers_table_8() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let out = autoeval(&[
        "correlate",
        "--ours",
        fixtures.join("table8_autoeval.csv").to_str().unwrap(),
        "--other",
        fixtures.join("table8_folio.csv").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    // Independent computation: ρ = 0.80435, p = 0.000172 (t density integrated numerically).
    assert!(text.contains("models: 16"), "{text}");
    assert!(text.contains("pearson rho: 0.804"), "{text}");
    assert!(text.contains("p-value: 0.000172"), "{text}");
    assert!(
        text.contains("P(other1 >= other2 | ours1 >= ours2): 0.892 (107 of 120"),
        "{text}"
    );
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

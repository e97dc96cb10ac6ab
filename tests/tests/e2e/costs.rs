//! Costs that do not lie: a model the price table does not price costs
//! "unknown" (null in JSON, an empty cell in CSV) in the dry run, the
//! results, the summary, the CSV export and the report, never 0; a price file entry that prices no model of the run is a warning
//! naming it. (A budget on such a model is refused: see the budget test.)

use autoeval_e2e::fleet::Fleet;
use serde_json::Value;
use std::process::Output;

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

/// Every value of a `cost` key anywhere in `v`.
fn costs(v: &Value, found: &mut Vec<Value>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                if k == "cost" {
                    found.push(x.clone());
                }
                costs(x, found);
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| costs(x, found)),
        _ => {}
    }
}

#[test]
fn an_unpriced_model_costs_unknown_everywhere_and_a_price_for_no_model_warns() {
    let _turn = autoeval_e2e::turn(module_path!());
    let fleet = Fleet::new("costs", &[]);
    let out = fleet.out.to_string_lossy().into_owned();
    // The mock answers any model name; this one is in no price table.
    let model = fleet.model.replace("reference@", "unpriced-local@");
    // Keyed by a misspelt name: it prices nothing.
    let prices = fleet.dir.join("prices.json");
    std::fs::write(&prices, r#"{"refrence": {"input": 1.0, "output": 2.0}}"#).unwrap();
    let prices = prices.to_string_lossy().into_owned();
    let args = |more: &[&'static str]| {
        let mut a = fleet.small_run(&model, "ksat", &out);
        a.extend(["--prices", &prices]);
        a.extend_from_slice(more);
        a
    };

    let plan = fleet.autoeval_output(&args(&["--dry-run"]));
    let plan_said = said(&plan);
    assert!(plan.status.success(), "{plan_said}");
    assert!(
        plan_said.contains("estimated cost: unknown: no price for"),
        "{plan_said}"
    );
    assert!(
        plan_said.contains("prices no model of this run: refrence"),
        "the unmatched entry is named: {plan_said}"
    );

    let run = fleet.autoeval_output(&args(&[]));
    let run_said = said(&run);
    assert!(run.status.success(), "{run_said}");
    assert!(run_said.contains("prices no model of this run: refrence"));

    // results.jsonl: every record says its cost is not known.
    let results = std::fs::read_to_string(fleet.out.join("results.jsonl")).unwrap();
    let records = autoeval_e2e::jsonl(&results);
    assert!(!records.is_empty());
    for r in &records {
        assert_eq!(r.get("cost"), Some(&Value::Null), "{r}");
    }
    // summary.json: every cost in it is null.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(fleet.out.join("summary.json")).unwrap())
            .unwrap();
    let mut found = Vec::new();
    costs(&summary, &mut found);
    assert!(!found.is_empty(), "the summary has costs");
    assert!(found.iter().all(Value::is_null), "{found:?}");
    // The report says "unknown" in its cost columns.
    let report = std::fs::read_to_string(fleet.out.join("report.html")).unwrap();
    assert!(report.contains(">unknown<"), "the report's cost is unknown");
    // The CSV leaves the cost cell empty (null), never 0.
    let csv = fleet.out.join("results.csv");
    let export = fleet.autoeval_output(&["export", &out, "--format", "csv"]);
    assert!(export.status.success(), "{}", said(&export));
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let at = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "cost")
        .expect("a cost column");
    let mut rows = 0;
    for row in reader.records() {
        let row = row.unwrap();
        assert_eq!(&row[at], "", "{row:?}");
        rows += 1;
    }
    assert_eq!(rows, records.len());
}

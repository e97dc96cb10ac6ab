//! The paired statistics against values scipy and statsmodels computed
//! (`fixtures/paired.py` made `fixtures/paired.json`), small-n edge cases
//! included: no discordant pairs, all equal, one item.

use autoeval_metrics::paired::{
    clustered, detectable_difference, difference, holm, items_needed, sign_test, Outcomes,
};
use serde_json::Value;

fn fixture() -> Value {
    serde_json::from_str(include_str!("../fixtures/paired.json")).expect("the fixture is JSON")
}

fn outcomes(v: &Value) -> Outcomes {
    serde_json::from_value(v.clone()).expect("outcomes")
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-9, "{what}: {got} against {want}");
}

#[test]
fn paired_differences_match_scipy_and_statsmodels() {
    for case in fixture()["differences"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let want = &case["expected"];
        let got = difference(&outcomes(&case["a"]), &outcomes(&case["b"])).expect(name);
        assert_eq!(got.items as u64, want["items"].as_u64().unwrap(), "{name}");
        assert_eq!(
            got.a_better as u64,
            want["a_better"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            got.b_better as u64,
            want["b_better"].as_u64().unwrap(),
            "{name}"
        );
        close(got.difference, want["difference"].as_f64().unwrap(), name);
        close(got.p_value, want["p_value"].as_f64().unwrap(), name);
        match (got.low, want["low"].as_f64()) {
            (Some(low), Some(w)) => close(low, w, name),
            (None, None) => {}
            other => panic!("{name}: low {other:?}"),
        }
        match (got.high, want["high"].as_f64()) {
            (Some(high), Some(w)) => close(high, w, name),
            (None, None) => {}
            other => panic!("{name}: high {other:?}"),
        }
    }
}

#[test]
fn clustered_intervals_match_statsmodels_cluster_robust_errors() {
    for case in fixture()["clustered"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let got = clustered(&outcomes(&case["outcomes"]));
        match (got, case["expected"].as_object()) {
            (Some(c), Some(want)) => {
                close(c.mean, want["mean"].as_f64().unwrap(), name);
                close(c.se, want["se"].as_f64().unwrap(), name);
            }
            (None, None) => {}
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn sign_tests_and_holm_match_scipy_and_statsmodels() {
    let f = fixture();
    for case in f["sign_tests"].as_array().unwrap() {
        let (b, c) = (
            case["b"].as_u64().unwrap() as usize,
            case["c"].as_u64().unwrap() as usize,
        );
        close(
            sign_test(b, c),
            case["p_value"].as_f64().unwrap(),
            &format!("{b} against {c}"),
        );
    }
    for case in f["holm"].as_array().unwrap() {
        let p: Vec<f64> = serde_json::from_value(case["p_values"].clone()).unwrap();
        let want: Vec<f64> = serde_json::from_value(case["adjusted"].clone()).unwrap();
        for (got, want) in holm(&p).iter().zip(&want) {
            close(*got, *want, &format!("holm {p:?}"));
        }
    }
}

#[test]
fn the_power_figures_match_statsmodels_normal_power() {
    let f = fixture();
    for case in f["detectable"].as_array().unwrap() {
        let items = case["items"].as_u64().unwrap() as usize;
        let baseline = case["baseline"].as_f64().unwrap();
        let got = detectable_difference(items, baseline, 0.05, 0.8).unwrap();
        // statsmodels also counts the far tail's power, which moves the
        // figure in the sixth decimal at these sizes.
        let want = case["difference"].as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-6,
            "{items} items at {baseline}: {got} against {want}"
        );
    }
    for case in f["needed"].as_array().unwrap() {
        let d = case["difference"].as_f64().unwrap();
        let baseline = case["baseline"].as_f64().unwrap();
        let got = items_needed(d, baseline, 0.05, 0.8).unwrap();
        let want = case["items"].as_f64().unwrap().ceil() as u64;
        assert_eq!(got, want, "{d} at {baseline}");
    }
    assert_eq!(detectable_difference(0, 0.5, 0.05, 0.8), None);
    assert_eq!(items_needed(0.0, 0.5, 0.05, 0.8), None);
}

//! `autoeval run --dry-run` states the difference a plan detects, and
//! `--detect` proposes the items a difference needs; the expected numbers
//! come from statsmodels (crates/metrics/tests/fixtures/paired.json).

use crate::common::autoeval;

#[test]
fn a_dry_run_states_the_detectable_difference_and_the_items_a_difference_needs() {
    let out = autoeval(&[
        "run",
        "--dry-run",
        "--model",
        "reference",
        "--dataset",
        "ksat",
        "--batches",
        "2",
        "--per-bucket",
        "25",
        "--detect",
        "0.03",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 1000 items at 50%: statsmodels' NormalIndPower gives 6.26 points.
    let line = text
        .lines()
        .find(|l| l.starts_with("ksat "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(" 1000 ") && line.contains("±6.3 pp"),
        "{line}"
    );
    // 3 points at 50%: 4360.48 items, so 4361; over 20 values and 2 batches, 219 per value, 110 per batch.
    assert!(
        text.contains("to detect 3.0 pp: 4361 items per dataset overall"),
        "{text}"
    );
    assert!(text.contains("ksat         219 items per complexity value (20 values): --per-bucket 110 with --batches 2"), "{text}");
}

#[test]
fn detect_without_a_dry_run_and_a_baseline_outside_zero_and_one_are_refused() {
    for (args, why) in [
        (
            &["run", "--model", "reference", "--detect", "0.03"][..],
            "--detect plans a run's size: add --dry-run",
        ),
        (
            &["run", "--model", "reference", "--baseline", "0.7"][..],
            "--baseline sets the power figures of a plan: add --dry-run",
        ),
        (
            &["run", "--dry-run", "--baseline", "1.5"][..],
            "1.5 is not a share between 0 and 1",
        ),
    ] {
        let out = autoeval(args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was taken");
        assert!(said.contains(why), "{args:?}: {said}");
    }
}
